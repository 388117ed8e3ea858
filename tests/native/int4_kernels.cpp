// Kernels over ONNX's 4-bit integers (two per byte, oc::get4/set4), compiled by tests/test_int4.py
// (declarations: int4_ops.py): Neg4 writes them, Unpack4 reads them, Attr4 reads a tensor attribute.
#include "ortcustom/kernel.hpp"

namespace {

const char* const kX[] = {"X", nullptr};
const char* const kY[] = {"Y", nullptr};
const int32_t kSame[][2] = {{OC_INT4, OC_INT4}, {OC_UINT4, OC_UINT4}, {OC_FLOAT, OC_FLOAT}};
constexpr oc::Spec kNeg = {kX, kY, nullptr, OC_SIGNATURES(kSame), nullptr};

// Y = -X in 4 bits: int4 wraps (-(-8) is -8), uint4 is 15 - X; float (a type beside them) is -X.
int neg4(oc::Context& ctx) {
  const oc_tensor& x = ctx.input(0);
  return oc::dispatch<oc::int4x2, oc::uint4x2, float>(ctx, x.dtype, [&](auto tag) {
    using T = decltype(tag);
    T* y;
    if (int rc = ctx.output(0, x, &y)) return rc;
    const T* a = ctx.data<T>(0);
    for (int64_t j = 0; y && j < x.size; ++j) {
      if constexpr (std::is_same<T, float>::value) y[j] = -a[j];
      else if constexpr (std::is_same<T, oc::int4x2>::value) oc::set4(y, j, -oc::get4(a, j));
      else oc::set4(y, j, 15 - oc::get4(a, j));
    }
    return (int)OC_OK;
  });
}

// Y (int64, X's shape) = X's elements.
const int32_t kToInt64[][2] = {{OC_INT4, OC_INT64}, {OC_UINT4, OC_INT64}};
constexpr oc::Spec kUnpack = {kX, kY, nullptr, OC_SIGNATURES(kToInt64), nullptr};

int unpack4(oc::Context& ctx) {
  const oc_tensor& x = ctx.input(0);
  int64_t* y;
  if (int rc = ctx.output(0, x, &y)) return rc;
  for (int64_t j = 0; y && j < x.size; ++j)
    y[j] = x.dtype == OC_INT4 ? oc::get4(static_cast<const oc::int4x2*>(x.data), j)
                              : oc::get4(static_cast<const oc::uint4x2*>(x.data), j);
  return OC_OK;
}

// Y (int64, (n,)) = the elements of tensor attribute t (int4 or uint4), copied by the glue at
// creation (X is not read).
const oc_attr_spec kT[] = {{"t", OC_ATTR_TENSOR}, {nullptr, 0}};
const int32_t kInt64[][2] = {{OC_FLOAT, OC_INT64}};
constexpr oc::Spec kAttr = {kX, kY, kT, OC_SIGNATURES(kInt64), nullptr};

int attr4(oc::Context& ctx) {
  const oc_tensor& t = *ctx.attr(0).tensor;
  if (t.dtype != OC_INT4 && t.dtype != OC_UINT4)
    return ctx.fail(OC_INVALID_ARGUMENT, "t is %s", oc::dtype_name(t.dtype));
  const int64_t shape[] = {t.size};
  int64_t* y;
  if (int rc = ctx.output(0, shape, 1, &y)) return rc;
  for (int64_t j = 0; y && j < t.size; ++j)
    y[j] = t.dtype == OC_INT4 ? oc::get4(static_cast<const oc::int4x2*>(t.data), j)
                              : oc::get4(static_cast<const oc::uint4x2*>(t.data), j);
  return OC_OK;
}

}  // namespace

OC_KERNEL(neg4, cpu, kNeg, neg4)
OC_KERNEL(unpack4, cpu, kUnpack, unpack4)
OC_KERNEL(attr4, cpu, kAttr, attr4)
