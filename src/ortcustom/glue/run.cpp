// The kernel contract, checked at the boundary (run.hpp).
#include "run.hpp"

#include "utf8.hpp"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <exception>

namespace oc_glue {

namespace {
thread_local int t_in_task = 0;  // > 0 while this thread runs a parallel_for task
}

std::string vformat(const char* fmt, va_list ap) {
  va_list again;
  va_copy(again, ap);
  char small[256];
  int n = vsnprintf(small, sizeof small, fmt, ap);
  std::string out;
  if (n < 0) {
    out = "(unprintable message)";
  } else if ((size_t)n < sizeof small) {
    out.assign(small, (size_t)n);
  } else {
    out.resize((size_t)n + 1);
    vsnprintf(&out[0], out.size(), fmt, again);
    out.resize((size_t)n);
  }
  va_end(again);
  return out;
}

std::string format(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string out = vformat(fmt, ap);
  va_end(ap);
  return out;
}

std::string shape_text(const int64_t* shape, int32_t rank) {
  std::string s = "(";
  for (int32_t i = 0; i < rank; ++i) s += format(i ? ", %lld" : "%lld", (long long)shape[i]);
  return s + (rank == 1 ? ",)" : ")");
}

std::string where(const oc_op_def* op, const std::string& node, const std::string& message) {
  if (node.empty()) return std::string(op->name) + ": " + message;
  return std::string(op->name) + " (node '" + node + "'): " + message;
}

Run::Run(const oc_op_def* op, const oc_kernel* kernel, int32_t device) : op_(op), kernel_(kernel) {
  memset(&frame_.c, 0, sizeof frame_.c);
  frame_.self = this;
  c.host = &kHost;
  c.device = device;
  c.op_name = op->name;
  c.host_data = op->host_data;
  c.n_outputs = op->n_outputs;
}

const oc_host Run::kHost = {OC_ABI_VERSION, &Run::host_output, &Run::host_parallel_for,
                            &Run::host_scratch, &Run::host_fail, &Run::host_set_string, &Run::host_config};

int Run::fail(int code, std::string message) {
  std::lock_guard<std::mutex> lock(mu_);
  if (code_ == OC_OK) {
    code_ = code != OC_OK ? code : OC_FAIL;
    msg_ = std::move(message);
  }
  return code;
}

const char* Run::output_name(int32_t i) const {
  return op_->outputs[i < op_->n_outputs ? i : op_->n_outputs - 1].name;
}

int32_t Run::output_dtype(int32_t i) const {
  if (c.output_dtypes) return c.output_dtypes[i];  // each tensor's, a variadic output's one each
  return c.dtypes ? c.dtypes[op_->n_inputs + (i < op_->n_outputs ? i : op_->n_outputs - 1)] : OC_UNDEFINED;
}

bool Run::output_wanted(int32_t i) const {
  return op_->outputs[i < op_->n_outputs ? i : op_->n_outputs - 1].kind != OC_IO_OPTIONAL;
}

int Run::host_output(oc_context* ctx, int32_t i, const int64_t* shape, int32_t rank, void** data) {
  Run* r = of(ctx);
  *data = nullptr;
  if (t_in_task) return r->fail(OC_FAIL, "oc_output was called from a parallel_for task (not allowed)");
  if (i < 0 || i >= ctx->n_outputs)
    return r->fail(OC_FAIL, format("the kernel asked for output %d; the op has %d", i, ctx->n_outputs));
  const char* name = r->output_name(i);
  if (rank < 0 || rank > OC_MAX_RANK || (rank > 0 && shape == nullptr))
    return r->fail(OC_FAIL, format("output %s: the kernel gave rank %d; outputs have rank 0 to %d", name,
                                   rank, OC_MAX_RANK));
  for (int32_t d = 0; d < rank; ++d)
    if (shape[d] < 0)
      return r->fail(OC_FAIL, format("output %s: the kernel gave shape %s (a negative dim)", name,
                                     shape_text(shape, rank).c_str()));
  if (r->allocated(i)) return r->fail(OC_FAIL, format("output %s: the kernel asked for it twice", name));
  if (i < 64) {
    r->allocated_ |= uint64_t(1) << i;
  } else {
    if (r->allocated_more_.size() < (size_t)ctx->n_outputs - 64) r->allocated_more_.resize((size_t)ctx->n_outputs - 64);
    r->allocated_more_[(size_t)i - 64] = true;
  }
  if (i < r->op_->n_outputs && r->op_->outputs[i].shape_of >= 0) {
    const int32_t src = r->op_->outputs[i].shape_of;
    const oc_tensor& x = ctx->inputs[src];
    bool same = x.present && x.rank == rank;
    for (int32_t d = 0; same && d < rank; ++d) same = x.shape[d] == shape[d];
    if (x.present && !same)
      return r->fail(OC_FAIL, format("output %s: the kernel gave shape %s; the op declares it has the shape "
                                     "of input %s, %s", name, shape_text(shape, rank).c_str(),
                                     r->op_->inputs[src].name, shape_text(x.shape, x.rank).c_str()));
  }
  if (r->expect_ && i < r->op_->n_outputs) {
    const int64_t* e = r->expect_ + (size_t)i * (OC_MAX_RANK + 1);
    bool same = e[0] < 0 || e[0] == rank;
    for (int32_t d = 0; same && e[0] >= 0 && d < rank; ++d) same = e[1 + d] < 0 || e[1 + d] == shape[d];
    if (!same) {
      bool any = false;
      for (int64_t d = 0; d < e[0]; ++d) any |= e[1 + d] < 0;
      return r->fail(OC_FAIL, format("output %s: the kernel gave shape %s; the op's shape rule says %s%s", name,
                                     shape_text(shape, rank).c_str(), shape_text(e + 1, (int32_t)e[0]).c_str(),
                                     any ? " (-1: any size)" : ""));
    }
  }
  const int rc = r->alloc_output(i, shape, rank, data);
  if (rc == OC_OK && r->output_dtype(i) == OC_STRING) {
    int64_t n = 1;
    for (int32_t d = 0; d < rank; ++d) n *= shape[d];
    if (r->string_count_.size() < (size_t)ctx->n_outputs) r->string_count_.resize((size_t)ctx->n_outputs, -1);
    r->string_count_[(size_t)i] = n;
    *data = nullptr;  // a string output's elements are set with oc_set_string, never written
  }
  return rc;
}

int Run::host_set_string(oc_context* ctx, int32_t i, int64_t index, const char* bytes, int64_t size) {
  Run* r = of(ctx);
  if (i < 0 || i >= ctx->n_outputs)
    return r->fail(OC_FAIL, format("oc_set_string: the kernel named output %d; the op has %d", i, ctx->n_outputs));
  const char* name = r->output_name(i);
  if (r->output_dtype(i) != OC_STRING)
    return r->fail(OC_FAIL, format("oc_set_string: output %s is a %s tensor, not a string one", name,
                                   dtype_text(r->output_dtype(i))));
  const int64_t n = (size_t)i < r->string_count_.size() ? r->string_count_[(size_t)i] : -1;
  if (n < 0) return r->fail(OC_FAIL, format("oc_set_string: output %s was not allocated (oc_output first)", name));
  if (index < 0 || index >= n)
    return r->fail(OC_FAIL, format("oc_set_string: output %s has %lld elements; the kernel set element %lld", name,
                                   (long long)n, (long long)index));
  if (size < 0 || (size > 0 && bytes == nullptr))
    return r->fail(OC_FAIL, format("oc_set_string: output %s element %lld: the kernel gave %s", name,
                                   (long long)index, size < 0 ? "a negative size" : "no bytes"));
  const int64_t bad = r->within_checked(bytes, size) || utf8_valid(bytes, size) ? -1 : utf8_error_at(bytes, size);
  if (bad >= 0)
    return r->fail(OC_FAIL, format("output %s element %lld: the kernel set bytes that are not UTF-8 (byte %lld is "
                                   "0x%02x)", name, (long long)index, (long long)bad,
                                   (unsigned)(unsigned char)bytes[bad]));
  return r->store_string(i, index, bytes, size);
}

struct TaskCall {
  oc_task_fn fn;
  void* arg;
};

void Run::task(void* arg, size_t i) {
  const TaskCall* t = static_cast<const TaskCall*>(arg);
  ++t_in_task;
  t->fn(t->arg, i);
  --t_in_task;
}

void Run::host_parallel_for(oc_context* ctx, size_t n, oc_task_fn fn, void* arg) {
  Run* r = of(ctx);
  if (t_in_task) {
    r->fail(OC_FAIL, "oc_parallel_for was called from a parallel_for task (not allowed); its tasks ran serially");
    for (size_t i = 0; i < n; ++i) fn(arg, i);
    return;
  }
  TaskCall t = {fn, arg};
  if (n <= 1) {
    if (n == 1) task(&t, 0);
    return;
  }
  r->run_tasks(n, &Run::task, &t);
}

int Run::host_scratch(oc_context* ctx, size_t bytes, void** data) {
  Run* r = of(ctx);
  *data = nullptr;
  if (r->creating_) return r->fail(OC_FAIL, "create has no scratch memory (allocate what the kernel keeps itself)");
  std::unique_lock<std::mutex> lock(r->mu_);
  if (r->n_scratch_ == kMaxScratch) {
    lock.unlock();
    return r->fail(OC_FAIL, format("the kernel asked for more than %d scratch buffers", (int)kMaxScratch));
  }
  int rc = OC_OK;
  if (bytes > (size_t)PTRDIFF_MAX) {  // no allocator has it (a size computed negative), and the
    rc = OC_OUT_OF_MEMORY;            // round-up below would wrap it to 0
  } else if (ctx->device == OC_CPU) {
    *data = aligned_alloc(64, ((bytes ? bytes : 1) + 63) / 64 * 64);
    if (*data == nullptr) rc = OC_OUT_OF_MEMORY;
  } else {
    rc = r->alloc_device_scratch(bytes, data);
  }
  if (rc != OC_OK) {
    lock.unlock();
    *data = nullptr;
    return r->fail(rc, format("no scratch memory of %zu bytes", bytes));
  }
  r->scratch_[r->n_scratch_++] = *data;
  return OC_OK;
}

int Run::host_fail(oc_context* ctx, int code, const char* message) {
  return of(ctx)->fail(code, message ? message : "(no message)");
}

void Run::release_scratch() {
  for (int i = 0; i < n_scratch_; ++i) {
    if (c.device == OC_CPU)
      free(scratch_[i]);
    else
      free_device_scratch(scratch_[i]);
  }
  n_scratch_ = 0;
}

int Run::host_config(oc_context* ctx, const char* key, const char** value) {
  Run* r = of(ctx);
  *value = nullptr;
  if (key == nullptr) return r->fail(OC_FAIL, "oc_config: the kernel gave no key");
  if (r->config_ == nullptr) return OC_OK;
  if (!r->config_->unknown.empty())
    return r->fail(OC_FAIL, format("oc_config(\"%s\"): %s", key, r->config_->unknown.c_str()));
  for (const auto& e : r->config_->entries)
    if (e.first == key) {
      *value = e.second.c_str();
      break;
    }
  return OC_OK;
}

namespace {
// One stretch of a string input checked at once: elements k..end whose bytes follow each other
// (each one's NUL, then the next one: how both front ends lay them out), with the NULs between.
struct Span {
  const char* begin;
  const char* end;
};

struct SpanCheck {
  const Span* spans;
  std::atomic<bool>* bad;
  static void task(void* arg, size_t i) {
    const SpanCheck* c = static_cast<const SpanCheck*>(arg);
    const Span& s = c->spans[i];
    if (!utf8_valid(s.begin, s.end - s.begin)) c->bad->store(true, std::memory_order_relaxed);
  }
};
}  // namespace

int Run::check_string_inputs() {
  checked_.clear();
  std::vector<Span> pieces;
  bool bad = false;
  for (int32_t i = 0; i < c.n_inputs && !bad; ++i) {
    const oc_tensor& t = c.inputs[i];
    if (!t.present || t.dtype != OC_STRING || t.size == 0) continue;
    const oc_string* s = static_cast<const oc_string*>(t.data);
    // The input's elements, as few stretches as they allow (one, as both front ends lay them out).
    // The NULs between are UTF-8 too, and stop a character cut short at an element's end.
    int64_t j = 0;
    while (j < t.size) {
      const char* begin = s[j].data;
      const char* end = s[j].data + s[j].size;
      for (++j; j < t.size && s[j].data == end + 1 && *end == 0; ++j) end = s[j].data + s[j].size;
      if (end - begin < kCheckPiece) {
        if (!utf8_valid(begin, end - begin)) {
          bad = true;
          break;
        }
        if (checked_.size() < kMaxChecked) checked_.push_back({begin, end});
        continue;
      }
      // a long stretch: pieces for the intra-op pool, each cut before a character's first byte
      // (a piece that starts inside one is refused: its first byte is one no character starts with)
      const char* p = begin;
      while (p < end) {
        const char* q = end - p > kCheckPiece ? p + kCheckPiece : end;
        for (int k = 0; k < 3 && q < end && (static_cast<unsigned char>(*q) & 0xC0) == 0x80; ++k) ++q;
        pieces.push_back({p, q});
        p = q;
      }
      if (checked_.size() < kMaxChecked) checked_.push_back({begin, end});
    }
  }
  if (!bad && !pieces.empty()) {
    std::atomic<bool> any{false};
    SpanCheck check = {pieces.data(), &any};
    if (pieces.size() == 1) SpanCheck::task(&check, 0);
    else run_tasks(pieces.size(), &SpanCheck::task, &check);
    bad = any.load();
  }
  if (!bad) return OC_OK;
  checked_.clear();
  // Something is not UTF-8: find the first element that is not, element by element, for the message.
  for (int32_t i = 0; i < c.n_inputs; ++i) {
    const oc_tensor& t = c.inputs[i];
    if (!t.present || t.dtype != OC_STRING) continue;
    const oc_string* s = static_cast<const oc_string*>(t.data);
    for (int64_t j = 0; j < t.size; ++j) {
      const int64_t at = utf8_error_at(s[j].data, s[j].size);
      if (at >= 0)
        return fail(OC_INVALID_ARGUMENT,
                    format("input %s element %lld is not UTF-8 (byte %lld is 0x%02x)",
                           op_->inputs[i < op_->n_inputs ? i : op_->n_inputs - 1].name, (long long)j, (long long)at,
                           (unsigned)(unsigned char)s[j].data[at]));
    }
  }
  return OC_OK;  // only a byte between elements was not (elements not laid out with NULs between)
}

bool Run::within_checked(const char* bytes, int64_t size) const {
  for (const auto& r : checked_)
    if (bytes >= r.first && bytes <= r.second && size <= r.second - bytes) {
      // A slice of checked UTF-8 is UTF-8 when it starts and ends at a character's edge.
      const auto cont = [](const char* p) { return (static_cast<unsigned char>(*p) & 0xC0) == 0x80; };
      return size == 0 || (!cont(bytes) && (bytes + size == r.second || !cont(bytes + size)));
    }
  return false;
}

int Run::compute() {
  int rc = check_string_inputs();
  if (rc != OC_OK) return rc;
  try {  // a kernel not written with kernel.hpp may let an exception out: never past this frame
    rc = kernel_->compute(&c);
  } catch (const std::exception& e) {
    rc = fail(OC_FAIL, format("the kernel's compute threw a C++ exception: %s", e.what()));
  } catch (...) {
    rc = fail(OC_FAIL, "the kernel's compute threw a C++ exception");
  }
  release_scratch();
  if (rc != OC_OK && code_ == OC_OK)
    fail(rc, format("the kernel failed (status %d) without saying why", rc));
  if (code_ != OC_OK) return code_;
  for (int32_t i = 0; i < c.n_outputs; ++i)
    if (!allocated(i) && output_wanted(i))
      return fail(OC_FAIL, format("the kernel returned without allocating output %s", output_name(i)));
  return OC_OK;
}

}  // namespace oc_glue
