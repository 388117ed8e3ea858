// Kernels that show what the glue hands them, compiled at test time (tests/test_glue_hands_kernels.py):
// each output written where it belongs, float and string attributes exactly as received, and one
// kernel whose second input's element type differs from what its op will declare.
#include <string.h>

#include "ortcustom/kernel.hpp"

namespace {

const char* const kX[] = {"X", nullptr};
const char* const kXK[] = {"X", "K", nullptr};
const char* const kY[] = {"Y", nullptr};
const char* const kAB[] = {"A", "B", nullptr};

// two_outputs: A = X + 1 (X's shape), B = -X twice over (2 * size elements, 1-D).
constexpr int32_t kTwo[][3] = {{OC_FLOAT, OC_FLOAT, OC_FLOAT}};
constexpr oc::Spec kTwoSpec = {kX, kAB, nullptr, OC_SIGNATURES(kTwo), nullptr};
int two_outputs(oc::Context& ctx) {
  const oc_tensor& x = ctx.input(0);
  float* a;
  if (int rc = ctx.output(0, x, &a)) return rc;
  const int64_t n2 = 2 * x.size;
  float* b;
  if (int rc = ctx.output(1, &n2, 1, &b)) return rc;
  const float* xd = ctx.data<float>(0);
  for (int64_t i = 0; a && i < x.size; ++i) a[i] = xd[i] + 1;
  for (int64_t i = 0; b && i < n2; ++i) b[i] = -xd[i % x.size];
  return OC_OK;
}

// echo_float: Y (double, 1 element) = the float attribute f as the kernel gets it (a double).
const oc_attr_spec kF[] = {{"f", OC_ATTR_FLOAT}, {nullptr, 0}};
constexpr int32_t kFloatToDouble[][2] = {{OC_FLOAT, OC_DOUBLE}};
constexpr oc::Spec kEchoFloat = {kX, kY, kF, OC_SIGNATURES(kFloatToDouble), nullptr};
int echo_float(oc::Context& ctx) {
  const int64_t one = 1;
  double* y;
  if (int rc = ctx.output(0, &one, 1, &y)) return rc;
  if (y) *y = ctx.attr_float(0);
  return OC_OK;
}

// echo_string: Y (uint8, count bytes) = the string attribute s's bytes; fails when count is not
// the NUL-terminated string's length (characters counted instead of UTF-8 bytes).
const oc_attr_spec kS[] = {{"s", OC_ATTR_STRING}, {nullptr, 0}};
constexpr int32_t kFloatToU8[][2] = {{OC_FLOAT, OC_UINT8}};
constexpr oc::Spec kEchoString = {kX, kY, kS, OC_SIGNATURES(kFloatToU8), nullptr};
int echo_string(oc::Context& ctx) {
  const oc_attr& s = ctx.attr(0);
  if ((size_t)s.count != strlen(s.s))
    return ctx.fail(OC_INVALID_ARGUMENT, "count %lld, strlen %zu", (long long)s.count, strlen(s.s));
  const int64_t n = s.count;
  uint8_t* y;
  if (int rc = ctx.output(0, &n, 1, &y)) return rc;
  if (y) memcpy(y, s.s, (size_t)n);
  return OC_OK;
}

constexpr int32_t kFloat1[][2] = {{OC_FLOAT, OC_FLOAT}};

// k_int64: Y = X; built for K int64 only (its op declares K int32: the signature check must see it).
constexpr int32_t kI64[][3] = {{OC_FLOAT, OC_INT64, OC_FLOAT}};
constexpr oc::Spec kKInt64 = {kXK, kY, nullptr, OC_SIGNATURES(kI64), nullptr};
int k_int64(oc::Context& ctx) {
  float* y;
  if (int rc = ctx.output(0, ctx.input(0), &y)) return rc;
  if (y) memcpy(y, ctx.input(0).data, sizeof(float) * (size_t)ctx.input(0).size);
  return OC_OK;
}

// k_any_int64: k_int64 whose one signature takes X of any type (a row with an "any": the check
// compares each of its other entries, K's int64 included).
constexpr int32_t kAnyI64[][3] = {{OC_UNDEFINED, OC_INT64, OC_FLOAT}};
constexpr oc::Spec kKAnyInt64 = {kXK, kY, nullptr, OC_SIGNATURES(kAnyI64), nullptr};

// inplace_past: Y may be written over input 1, and the op has one input: refused when attached.
constexpr int32_t kPast[] = {1};
constexpr oc::Spec kInplacePast = {kX, kY, nullptr, OC_SIGNATURES(kFloat1), kPast};
int inplace_past(oc::Context& ctx) { return k_int64(ctx); }

// to_double: Y (double, X's shape) = X: an output whose type is not its shape input's.
constexpr int32_t kToDouble[][2] = {{OC_FLOAT, OC_DOUBLE}};
constexpr oc::Spec kToDoubleSpec = {kX, kY, nullptr, OC_SIGNATURES(kToDouble), nullptr};
int to_double(oc::Context& ctx) {
  double* y;
  if (int rc = ctx.output(0, ctx.input(0), &y)) return rc;
  for (int64_t i = 0; y && i < ctx.input(0).size; ++i) y[i] = ctx.data<float>(0)[i];
  return OC_OK;
}

}  // namespace

OC_KERNEL(to_double, cpu, kToDoubleSpec, to_double)
OC_KERNEL(inplace_past, cpu, kInplacePast, inplace_past)
OC_KERNEL(two_outputs, cpu, kTwoSpec, two_outputs)
OC_KERNEL(echo_float, cpu, kEchoFloat, echo_float)
OC_KERNEL(echo_string, cpu, kEchoString, echo_string)
OC_KERNEL(k_int64, cpu, kKInt64, k_int64)
OC_KERNEL(k_any_int64, cpu, kKAnyInt64, k_int64)
