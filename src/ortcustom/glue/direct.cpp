// Direct calls (ortcustom.kernels, torch ops): the same kernel and the same contract checks as in
// a session, with outputs from the caller's array library and tasks on OpenMP's thread pool.
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <new>

#include "attrs.hpp"
#include "glue.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace oc_glue {
namespace {

char* copy_message(const std::string& s) {
  char* p = static_cast<char*>(malloc(s.size() + 1));
  if (p) memcpy(p, s.c_str(), s.size() + 1);
  return p;
}

}  // namespace
}  // namespace oc_glue

using namespace oc_glue;

struct oc_direct_kernel {
  const oc_op_def* op;
  const oc_kernel* kernel;
  std::vector<int32_t> dtypes;  // each declared input's, then each output tensor's (oc_context.output_dtypes)
  int32_t n_outputs;
  Attrs attrs;  // in the kernel's order (copied: the caller's block need not outlive this)
  int32_t device;
  void* state = nullptr;
};

namespace oc_glue {
namespace {

class DirectRun : public Run {
 public:
  DirectRun(const oc_direct_kernel* k, int32_t device, int32_t threads, const oc_direct_host* host,
            const int64_t* expect)
      : Run(k->op, k->kernel, device), threads_(threads), host_(host) {
    expect_ = expect;
  }

 protected:
  int alloc_output(int32_t i, const int64_t* shape, int32_t rank, void** data) override {
    char* msg = nullptr;
    const int rc = host_->output(host_->self, i, shape, rank, data, &msg);
    if (rc != OC_OK) return take(rc, msg);
    if (output_dtype(i) == OC_STRING) {
      int64_t n = 1;
      for (int32_t d = 0; d < rank; ++d) n *= shape[d];
      if (strings_.size() < (size_t)c.n_outputs) strings_.resize((size_t)c.n_outputs);
      strings_[(size_t)i].assign((size_t)n, std::string());
      string_outputs_.push_back(i);
    }
    return OC_OK;
  }

 public:
  // The string outputs' elements to the caller, after a successful compute.
  int hand_strings() {
    std::vector<oc_string> elems;
    for (int32_t i : string_outputs_) {
      const std::vector<std::string>& s = strings_[(size_t)i];
      elems.resize(s.size());
      for (size_t j = 0; j < s.size(); ++j) elems[j] = {s[j].data(), (int64_t)s[j].size()};
      char* msg = nullptr;
      const int rc = host_->strings(host_->self, i, elems.data(), (int64_t)elems.size(), &msg);
      if (rc != OC_OK) return take(rc, msg);
    }
    return OC_OK;
  }

 protected:
  int alloc_device_scratch(size_t bytes, void** data) override {
    char* msg = nullptr;
    const int rc = host_->scratch(host_->self, bytes, data, &msg);
    return rc == OC_OK ? OC_OK : take(rc, msg);
  }
  void free_device_scratch(void*) override {}  // the caller's library keeps it until the call returns
  int store_string(int32_t i, int64_t j, const char* p, int64_t n) override {
    strings_[(size_t)i][(size_t)j].assign(p, (size_t)n);  // sized by alloc_output, on compute's thread
    return OC_OK;
  }
  // Each thread takes the tasks of its own contiguous shard first, then claims what is left of
  // the others' (as ONNX Runtime's pool does): on every call a thread gets the same part of the
  // data, which its cache may still hold. One shared counter (OpenMP's dynamic schedule) dealt
  // the tasks out anew each call: GroupNorm 2x320x64x64 float32 on 2 threads (AMD Zen 5) took
  // 280 us a direct call against 183 in a session with the same kernel; 175 with shards.
  void run_tasks(size_t n, oc_task_fn fn, void* arg) override {
#ifdef _OPENMP
    const size_t team = std::min((size_t)threads_, n), shards = std::min(team, kMaxShards);
    if (team > 1) {
      Shard s[kMaxShards];
      for (size_t k = 0; k < shards; ++k) {
        s[k].next.store(k * n / shards, std::memory_order_relaxed);
        s[k].end = (k + 1) * n / shards;
      }
#pragma omp parallel num_threads((int)team)
      {
        const size_t home = (size_t)omp_get_thread_num() % shards;
        for (size_t k = 0; k < shards; ++k) {
          Shard& h = s[(home + k) % shards];
          for (size_t i; (i = h.next.fetch_add(1, std::memory_order_relaxed)) < h.end;) fn(arg, i);
        }
      }  // (the region's end is a barrier: every task is done and its writes seen)
      return;
    }
#endif
    for (size_t i = 0; i < n; ++i) fn(arg, i);
  }

 private:
  int take(int rc, char* msg) {
    fail(rc, msg ? msg : "the caller could not allocate");
    free(msg);
    return rc;
  }
  struct alignas(64) Shard {
    std::atomic<size_t> next;
    size_t end;
  };
  static constexpr size_t kMaxShards = 64;  // threads past it share home shards
  int32_t threads_;
  const oc_direct_host* host_;
  std::vector<std::vector<std::string>> strings_;  // per output: a string output's elements
  std::vector<int32_t> string_outputs_;
};

}  // namespace
}  // namespace oc_glue

extern "C" oc_direct_kernel* oc_direct_create(const oc_op_def* op, const oc_kernel* kernel, const int32_t* dtypes,
                                              int32_t n_outputs, const oc_attr* attrs, int32_t n_attrs,
                                              const oc_tensor* consts, int* code, char** message) {
  *message = nullptr;
  *code = OC_OK;
  try {
    oc_direct_kernel* k = new oc_direct_kernel();
    k->op = op;
    k->kernel = kernel;
    k->device = kernel->device;
    k->n_outputs = n_outputs;
    k->dtypes.assign(dtypes, dtypes + op->n_inputs + n_outputs);
    k->dtypes.resize((size_t)(op->n_inputs + std::max(n_outputs, op->n_outputs)), OC_UNDEFINED);
    Attrs& a = k->attrs;
    a.values.assign(attrs, attrs + n_attrs);
    a.reserve((size_t)n_attrs);
    for (oc_attr& v : a.values) {
      if (v.kind == OC_ATTR_STRING && v.s) {
        a.strings.emplace_back(v.s, (size_t)v.count);
        v.s = a.strings.back().c_str();
      } else if (v.kind == OC_ATTR_INTS) {
        a.ints.emplace_back(v.ints, v.ints + v.count);
        v.ints = a.ints.back().data();
      } else if (v.kind == OC_ATTR_FLOATS) {
        a.floats.emplace_back(v.floats, v.floats + v.count);
        v.floats = a.floats.back().data();
      } else if (v.kind == OC_ATTR_TENSOR && v.tensor) {
        keep_tensor(&a, *v.tensor, &v);
      } else if (v.kind == OC_ATTR_STRINGS) {  // each element's bytes exactly (NULs kept)
        std::vector<std::string> s;
        for (int64_t j = 0; j < v.count; ++j) s.emplace_back(v.strings[j], (size_t)v.lengths[j]);
        a.strs.push_back(std::move(s));
        std::vector<const char*> ptrs;
        for (const std::string& e : a.strs.back()) ptrs.push_back(e.c_str());
        a.str_ptrs.push_back(std::move(ptrs));
        a.str_lens.emplace_back(v.lengths, v.lengths + v.count);
        v.strings = a.str_ptrs.back().data();
        v.lengths = a.str_lens.back().data();
      }
    }
    if (kernel->create) {
      CreateRun r(op, kernel, k->device, k->dtypes.data(), a.values, consts);
      r.c.n_outputs = n_outputs;
      r.c.output_dtypes = k->dtypes.data() + op->n_inputs;
      *code = r.create(&k->state);
      if (*code != OC_OK) {
        *message = copy_message(where(op, "", r.message()));
        delete k;
        return nullptr;
      }
    }
    return k;
  } catch (const std::bad_alloc&) {
    *code = OC_OUT_OF_MEMORY;
    *message = copy_message(std::string(op->name) + ": out of memory");
    return nullptr;
  }
}

extern "C" void oc_direct_destroy(oc_direct_kernel* k) {
  if (k == nullptr) return;
  destroy_state(k->kernel, k->state);
  delete k;
}

extern "C" int oc_direct_run(const oc_direct_kernel* k, const oc_tensor* inputs, int32_t n_inputs, int32_t device,
                             int32_t device_id, void* stream, int32_t threads, const oc_direct_host* host,
                             const int64_t* expect, char** message) {
  *message = nullptr;
  try {
    DirectRun r(k, device, threads, host, expect);
    r.c.inputs = inputs;
    r.c.n_inputs = n_inputs;
    r.c.attrs = k->attrs.values.data();
    r.c.n_attrs = (int32_t)k->attrs.values.size();
    r.c.device_id = device_id;
    r.c.stream = stream;
    r.c.state = k->state;
    r.c.dtypes = k->dtypes.data();
    r.c.n_outputs = k->n_outputs;
    r.c.output_dtypes = k->dtypes.data() + k->op->n_inputs;
    for (int32_t i = 0; i < n_inputs; ++i)
      if (inputs[i].rank < 0 || inputs[i].rank > OC_MAX_RANK) {
        const oc_io_def& d = k->op->inputs[i < k->op->n_inputs ? i : k->op->n_inputs - 1];
        *message = copy_message(where(k->op, "", format("input %s has rank %d; ortcustom kernels take at most %d dims",
                                                         d.name, inputs[i].rank, OC_MAX_RANK)));
        return OC_INVALID_ARGUMENT;
      }
    int rc = r.compute();
    if (rc == OC_OK) rc = r.hand_strings();
    if (rc != OC_OK) *message = copy_message(where(k->op, "", r.message()));
    return rc;
  } catch (const std::bad_alloc&) {
    *message = copy_message(std::string(k->op->name) + ": out of memory");
    return OC_OUT_OF_MEMORY;
  }
}
