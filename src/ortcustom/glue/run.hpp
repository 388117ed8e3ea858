// One kernel run, whoever runs it (an ORT session or a direct call): the oc_context a kernel sees,
// the host functions with every check of the kernel contract (ortcustom/kernel.h), and the one
// place an error message is made. A front end derives from Run and supplies the allocations.
#ifndef ORTCUSTOM_GLUE_RUN_HPP
#define ORTCUSTOM_GLUE_RUN_HPP

#include <stdarg.h>
#include <stdio.h>

#include <mutex>
#include <string>
#include <vector>

#include "ortcustom/kernel.hpp"
#include "ortcustom/op_def.h"

namespace oc_glue {

enum { kMaxScratch = 8 };  // scratch buffers one run may hold

// printf into a std::string (no truncation: a message never ends inside a UTF-8 character).
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string vformat(const char* fmt, va_list ap);
// "(2, 3)", as Python prints a shape ("(4,)" for one dim).
std::string shape_text(const int64_t* shape, int32_t rank);
inline const char* dtype_text(int32_t dtype) { return oc::dtype_name(dtype); }  // kernel.hpp's
// "Op (node 'name'): message"; node may be empty (a direct call): "Op: message".
std::string where(const oc_op_def* op, const std::string& node, const std::string& message);

// The session configuration entries a kernel may read (oc_host.config), copied when it is created.
struct Config {
  std::string unknown;  // why the runtime cannot tell (ORT < 1.24); empty: it can
  std::vector<std::pair<std::string, std::string>> entries;
};

class Run {
  // The context a kernel gets, first in a standard-layout frame: the host functions get their Run
  // back from it (a Run itself has a vtable before its members).
  struct Frame {
    oc_context c;
    Run* self;
  } frame_;

 public:
  oc_context& c = frame_.c;

  Run(const oc_op_def* op, const oc_kernel* kernel, int32_t device);
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;
  virtual ~Run() = default;

  // Calls compute and checks what it left: returns OC_OK, or the code with message() set.
  int compute();
  int code() const { return code_; }
  const std::string& message() const { return msg_; }
  // Records an error (the first one is kept: it explains the others); returns code.
  int fail(int code, std::string message);

  static const oc_host kHost;

 protected:
  // what the front end provides
  virtual int alloc_output(int32_t i, const int64_t* shape, int32_t rank, void** data) = 0;
  virtual int alloc_device_scratch(size_t bytes, void** data) = 0;
  virtual void free_device_scratch(void* p) = 0;
  virtual void run_tasks(size_t n, oc_task_fn fn, void* arg) = 0;
  // element j of string output i (allocated, j in range, UTF-8: checked) := n bytes from p; may run
  // on several threads at once for distinct elements
  virtual int store_string(int32_t i, int64_t j, const char* p, int64_t n) = 0;
  // whether output i must be allocated by compute (the node uses it)
  virtual bool output_wanted(int32_t i) const;
  // the element type of output i (c.output_dtypes; else c.dtypes, a variadic output's tensors sharing its entry)
  int32_t output_dtype(int32_t i) const;
  const char* output_name(int32_t i) const;
  // every element of every string input is UTF-8 (else an error naming the input and element);
  // long inputs in pieces of kCheckPiece bytes on the intra-op pool
  int check_string_inputs();
  // whether bytes[0..size) is a slice of the string inputs' checked bytes that is UTF-8 as it is
  // (a kernel setting an output to an input element, or part of one: no second check)
  bool within_checked(const char* bytes, int64_t size) const;
  enum : int64_t { kCheckPiece = 1 << 20 };
  enum : size_t { kMaxChecked = 8 };  // stretches kept for within_checked (elements laid out apart: the first few)

  const oc_op_def* op_;
  const oc_kernel* kernel_;
  bool creating_ = false;  // a create: no outputs, no scratch
  const Config* config_ = nullptr;  // nullptr: no session (a direct call): every entry unset
  // Per declared output, its rank (-1: any) then OC_MAX_RANK dims (-1: any), what the output must
  // be (the Python shape rules' word at kernel creation; nullptr: nothing said)
  const int64_t* expect_ = nullptr;

 private:
  static int host_output(oc_context* ctx, int32_t i, const int64_t* shape, int32_t rank, void** data);
  static void host_parallel_for(oc_context* ctx, size_t n, oc_task_fn fn, void* arg);
  static int host_scratch(oc_context* ctx, size_t bytes, void** data);
  static int host_fail(oc_context* ctx, int code, const char* message);
  static int host_set_string(oc_context* ctx, int32_t i, int64_t index, const char* bytes, int64_t size);
  static int host_config(oc_context* ctx, const char* key, const char** value);
  static void task(void* arg, size_t i);
  static Run* of(oc_context* ctx) { return reinterpret_cast<Frame*>(ctx)->self; }
  void release_scratch();

  std::mutex mu_;  // fail and scratch may be called from parallel_for tasks
  int code_ = OC_OK;
  std::string msg_;
  void* scratch_[kMaxScratch];
  int n_scratch_ = 0;
  // outputs given out: 0..63 in a mask (no allocation per run), any more beside it
  uint64_t allocated_ = 0;
  std::vector<bool> allocated_more_;
  // per output, its element count once allocated as a string output (-1: none such); sized by
  // oc_output, which tasks never call, and only read by set_string
  std::vector<int64_t> string_count_;
  // the string inputs' bytes that check_string_inputs found UTF-8, per stretch (from, to)
  std::vector<std::pair<const char*, const char*>> checked_;
  bool allocated(int32_t i) const {
    return i < 64 ? (allocated_ >> i) & 1 : (size_t)i - 64 < allocated_more_.size() && allocated_more_[(size_t)i - 64];
  }
};

}  // namespace oc_glue

#endif  // ORTCUSTOM_GLUE_RUN_HPP
