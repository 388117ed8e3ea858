// Kernels that break the kernel contract (ortcustom/kernel.h) on purpose, one way each, compiled by
// tests/test_contract.py: the glue must turn every breach into a clear error naming the op (and the
// node in a session), in a session and in a direct call alike, and the process must go on.
#include <string.h>

#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ortcustom/kernel.hpp"

namespace {

const char* const kIn[] = {"X", nullptr};
const char* const kOut[] = {"Y", nullptr};
const int32_t kFloat[][2] = {{OC_FLOAT, OC_FLOAT}};
constexpr oc::Spec kSpec = {kIn, kOut, nullptr, OC_SIGNATURES(kFloat), nullptr};

int copy_into(oc::Context& ctx, float* y) {
  if (y) memcpy(y, ctx.input(0).data, sizeof(float) * (size_t)ctx.input(0).size);
  return OC_OK;
}

int good(oc::Context& ctx) {
  float* y;
  if (int rc = ctx.output(0, ctx.input(0), &y)) return rc;
  return copy_into(ctx, y);
}

int rank_negative(oc::Context& ctx) {
  float* y;
  return ctx.output(0, ctx.input(0).shape, -1, &y);
}

int rank_17(oc::Context& ctx) {
  int64_t shape[17];
  for (auto& d : shape) d = 1;
  float* y;
  return ctx.output(0, shape, 17, &y);
}

int twice(oc::Context& ctx) {
  float *a, *b;
  if (int rc = ctx.output(0, ctx.input(0), &a)) return rc;
  copy_into(ctx, a);
  return ctx.output(0, ctx.input(0), &b);
}

int no_output(oc::Context&) { return OC_OK; }

int silent_fail(oc::Context&) { return OC_FAIL; }  // no oc_fail: the glue must still say so

int wrong_shape(oc::Context& ctx) {
  const int64_t shape[] = {ctx.input(0).size + 1};
  float* y;
  return ctx.output(0, shape, 1, &y);
}

int nine_scratch(oc::Context& ctx) {
  for (int i = 0; i < 9; ++i) {
    void* p;
    if (int rc = ctx.scratch(64, &p)) return rc;
  }
  return good(ctx);
}

// Each of 8 tasks takes its scratch (as the contract allows): safe from ORT's pool threads.
int scratch_in_tasks(oc::Context& ctx) {
  ctx.parallel_for(8, [&](size_t) {
    void* p = nullptr;
    if (ctx.scratch(1 << 16, &p) == OC_OK) memset(p, 1, 1 << 16);
  });
  return good(ctx);
}

int long_utf8_message(oc::Context& ctx) {
  std::string e;
  for (int i = 0; i < 1500; ++i) e += "\xc3\xa9";  // é: a 1024-byte buffer ends inside one
  return ctx.fail(OC_INVALID_ARGUMENT, "%s", e.c_str());
}

// hand-written entries (no kernel.hpp guard): what the glue itself must survive
int throw_compute(oc_context*) { throw std::runtime_error("compute went wrong"); }
int throw_create(oc_context*, void**) { throw std::runtime_error("create went wrong"); }
int plain_create(oc_context*, void** state) {
  *state = new int(1);
  return OC_OK;
}
void throw_destroy(void* state) {
  delete static_cast<int*>(state);
  throw std::runtime_error("destroy went wrong");
}
int plain_compute(oc_context* c) {
  oc::Context ctx(c);
  return good(ctx);
}

// create sees every declared input (20 here), not a capped number
const char* const kIn20[] = {"I0", "I1", "I2", "I3", "I4", "I5", "I6", "I7", "I8", "I9", "I10", "I11",
                             "I12", "I13", "I14", "I15", "I16", "I17", "I18", "I19", nullptr};
int32_t kFloat21[1][21];
int count_create(oc_context* c, void** state) {
  *state = nullptr;
  if (c->n_inputs != 20) {
    char msg[64];
    snprintf(msg, sizeof msg, "create saw %d inputs", c->n_inputs);
    return oc_fail(c, OC_FAIL, msg);
  }
  return OC_OK;
}
int first_input(oc_context* c) {
  oc::Context ctx(c);
  return good(ctx);
}

const int32_t kBadInplace[] = {5};

}  // namespace

OC_KERNEL(good, cpu, kSpec, good)
OC_KERNEL(rank_negative, cpu, kSpec, rank_negative)
OC_KERNEL(rank_17, cpu, kSpec, rank_17)
OC_KERNEL(twice, cpu, kSpec, twice)
OC_KERNEL(no_output, cpu, kSpec, no_output)
OC_KERNEL(silent_fail, cpu, kSpec, silent_fail)
OC_KERNEL(wrong_shape, cpu, kSpec, wrong_shape)
OC_KERNEL(nine_scratch, cpu, kSpec, nine_scratch)
OC_KERNEL(scratch_in_tasks, cpu, kSpec, scratch_in_tasks)
OC_KERNEL(long_utf8_message, cpu, kSpec, long_utf8_message)

extern "C" {
OC_EXPORT const oc_kernel* ortcustom_kernel_throw_compute_cpu(void) {
  static const oc_kernel k = {OC_ABI_VERSION, OC_CPU, "throw_compute", kIn, kOut, nullptr, kFloat[0], 1,
                              nullptr, nullptr, nullptr, throw_compute};
  return &k;
}
OC_EXPORT const oc_kernel* ortcustom_kernel_throw_create_cpu(void) {
  static const oc_kernel k = {OC_ABI_VERSION, OC_CPU, "throw_create", kIn, kOut, nullptr, kFloat[0], 1,
                              nullptr, throw_create, nullptr, plain_compute};
  return &k;
}
OC_EXPORT const oc_kernel* ortcustom_kernel_throw_destroy_cpu(void) {
  static const oc_kernel k = {OC_ABI_VERSION, OC_CPU, "throw_destroy", kIn, kOut, nullptr, kFloat[0], 1,
                              nullptr, plain_create, throw_destroy, plain_compute};
  return &k;
}
OC_EXPORT const oc_kernel* ortcustom_kernel_no_signatures_cpu(void) {
  static const oc_kernel k = {OC_ABI_VERSION, OC_CPU, "no_signatures", kIn, kOut, nullptr, nullptr, 0,
                              nullptr, nullptr, nullptr, plain_compute};
  return &k;
}
OC_EXPORT const oc_kernel* ortcustom_kernel_bad_inplace_cpu(void) {
  static const oc_kernel k = {OC_ABI_VERSION, OC_CPU, "bad_inplace", kIn, kOut, nullptr, kFloat[0], 1,
                              kBadInplace, nullptr, nullptr, plain_compute};
  return &k;
}
OC_EXPORT const oc_kernel* ortcustom_kernel_twenty_inputs_cpu(void) {
  for (auto& t : kFloat21[0]) t = OC_FLOAT;
  static const oc_kernel k = {OC_ABI_VERSION, OC_CPU, "twenty_inputs", kIn20, kOut, nullptr, kFloat21[0], 1,
                              nullptr, count_create, nullptr, first_input};
  return &k;
}
}

// Which thread ran each task: one task per element of X, task i sleeping X[i] microseconds; Y[i] is
// 0 for the calling thread, k for the k-th other thread seen, -1 if task i ran other than once. Direct
// calls must use the caller's cores (OpenMP), not run serially.
namespace {
int task_threads(oc::Context& ctx) {
  const oc_tensor& x = ctx.input(0);
  const float* us = static_cast<const float*>(x.data);
  const size_t n = (size_t)x.size;
  const std::thread::id caller = std::this_thread::get_id();
  std::mutex mu;
  std::vector<std::thread::id> others;
  std::vector<int> who(n, 0), runs(n, 0);
  ctx.parallel_for(n, [&](size_t i) {
    std::this_thread::sleep_for(std::chrono::microseconds((int64_t)us[i]));
    std::lock_guard<std::mutex> lock(mu);
    ++runs[i];
    const std::thread::id me = std::this_thread::get_id();
    if (me == caller) return;
    size_t k = 0;
    while (k < others.size() && others[k] != me) ++k;
    if (k == others.size()) others.push_back(me);
    who[i] = (int)k + 1;
  });
  float* y;
  if (int rc = ctx.output(0, x, &y)) return rc;
  for (size_t i = 0; y && i < n; ++i) y[i] = runs[i] == 1 ? (float)who[i] : -1.0f;
  return OC_OK;
}
const char* const kInT[] = {"X", nullptr};
const char* const kOutT[] = {"Y", nullptr};
constexpr oc::Spec kThreadsSpec = {kInT, kOutT, nullptr, OC_SIGNATURES(kFloat), nullptr};
}  // namespace
OC_KERNEL(task_threads, cpu, kThreadsSpec, task_threads)

// Two optional inputs of two type constraints (A: T, B: U): Y = the binding's element types of A
// and B, as the host hands them to create/compute (ctx->dtypes), so a test sees which row it got.
namespace {
int binding_row(oc::Context& ctx) {
  float* y;
  const int64_t two[] = {2};
  if (int rc = ctx.output(0, two, 1, &y)) return rc;
  if (y) {
    y[0] = static_cast<float>(ctx.raw()->dtypes[0]);
    y[1] = static_cast<float>(ctx.raw()->dtypes[1]);
  }
  return OC_OK;
}
const char* const kInAB[] = {"A", "B", nullptr};
constexpr int32_t kRowsAB[][3] = {{OC_FLOAT, OC_FLOAT, OC_FLOAT}, {OC_FLOAT, OC_DOUBLE, OC_FLOAT},
                                  {OC_DOUBLE, OC_FLOAT, OC_FLOAT}, {OC_DOUBLE, OC_DOUBLE, OC_FLOAT}};
constexpr oc::Spec kRowSpec = {kInAB, kOutT, nullptr, OC_SIGNATURES(kRowsAB), nullptr};
}  // namespace
OC_KERNEL(binding_row, cpu, kRowSpec, binding_row)
