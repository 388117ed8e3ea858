// Kernels of one op name declared several times (tests/test_op_siblings.py; declarations:
// sibling_ops.py): Measure for float (Y = 2 X), int64 (Y = -X) and string (Y = byte length), and
// Route, whose two declarations differ only in an input that types no output (Y = X + 100 for
// K int32/int16, Y = X + 200 for K int64): which kernel ran shows in Y.
#include "ortcustom/kernel.hpp"

namespace {

const char* const kX[] = {"X", nullptr};
const char* const kY[] = {"Y", nullptr};

// Y[i] = F(X[i]) over the whole tensor.
template <class In, class Out, Out (*F)(const In&)>
int map(oc::Context& ctx) {
  Out* y;
  if (int rc = ctx.output(0, ctx.input(0), &y)) return rc;
  const In* x = ctx.data<In>(0);
  for (int64_t i = 0; y != nullptr && i < ctx.input(0).size; ++i) y[i] = F(x[i]);
  return OC_OK;
}
float twice(const float& x) { return 2 * x; }
int64_t negate(const int64_t& x) { return -x; }
int64_t byte_len(const oc_string& x) { return x.size; }

const int32_t kFloat[][2] = {{OC_FLOAT, OC_FLOAT}};
const int32_t kInt64[][2] = {{OC_INT64, OC_INT64}};
const int32_t kString[][2] = {{OC_STRING, OC_INT64}};
constexpr oc::Spec kTwice = {kX, kY, nullptr, OC_SIGNATURES(kFloat), nullptr};
constexpr oc::Spec kNegate = {kX, kY, nullptr, OC_SIGNATURES(kInt64), nullptr};
constexpr oc::Spec kByteLen = {kX, kY, nullptr, OC_SIGNATURES(kString), nullptr};

const char* const kXK[] = {"X", "K", nullptr};
const int32_t kRouteA[][3] = {{OC_FLOAT, OC_INT32, OC_FLOAT}, {OC_FLOAT, OC_INT16, OC_FLOAT},
                              {OC_DOUBLE, OC_INT32, OC_DOUBLE}, {OC_DOUBLE, OC_INT16, OC_DOUBLE}};
const int32_t kRouteB[][3] = {{OC_FLOAT, OC_INT64, OC_FLOAT}, {OC_DOUBLE, OC_INT64, OC_DOUBLE}};
constexpr oc::Spec kSpecA = {kXK, kY, nullptr, OC_SIGNATURES(kRouteA), nullptr};
constexpr oc::Spec kSpecB = {kXK, kY, nullptr, OC_SIGNATURES(kRouteB), nullptr};

template <typename T, int Tag>
int shift(oc::Context& ctx) {
  T* y;
  if (int rc = ctx.output(0, ctx.input(0), &y)) return rc;
  const T* x = ctx.data<T>(0);
  for (int64_t i = 0; y != nullptr && i < ctx.input(0).size; ++i) y[i] = x[i] + Tag;
  return OC_OK;
}

template <int Tag>
int route(oc::Context& ctx) {
  return ctx.input(0).dtype == OC_FLOAT ? shift<float, Tag>(ctx) : shift<double, Tag>(ctx);
}

}  // namespace

OC_KERNEL(twice, cpu, kTwice, (map<float, float, twice>))
OC_KERNEL(negate, cpu, kNegate, (map<int64_t, int64_t, negate>))
OC_KERNEL(byte_len, cpu, kByteLen, (map<oc_string, int64_t, byte_len>))
OC_KERNEL(route_a, cpu, kSpecA, route<100>)
OC_KERNEL(route_b, cpu, kSpecB, route<200>)
