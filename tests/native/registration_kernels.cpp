// Kernels of the plain libraries tests/plain_library.py builds for the registration tests
// (declarations: registration_ops.py): Scale by 2 and by 3 (two versions of one op), and Pick,
// which takes four inputs of any element type each and reports the binding it was given,
// Dtypes (a heterogeneous variadic input) and Splat (a heterogeneous variadic output).
#include <string.h>

#include "ortcustom/kernel.hpp"

namespace {

const char* const kX[] = {"X", nullptr};
const char* const kY[] = {"Y", nullptr};
constexpr int32_t kFloat[][2] = {{OC_FLOAT, OC_FLOAT}};
constexpr oc::Spec kScale = {kX, kY, nullptr, OC_SIGNATURES(kFloat), nullptr};

template <int F>
int scale(oc::Context& ctx) {
  float* y;
  if (int rc = ctx.output(0, ctx.input(0), &y)) return rc;
  const float* x = static_cast<const float*>(ctx.input(0).data);
  for (int64_t i = 0; y != nullptr && i < ctx.input(0).size; ++i) y[i] = F * x[i];
  return OC_OK;
}

// Pick: Y (8,) float = the element type of each input in the binding (ctx.dtypes), then each
// input tensor's own element type: the two halves agree when the glue found the right binding.
const char* const kPickIn[] = {"A", "B", "C", "D", nullptr};
constexpr int32_t kAny[][5] = {{OC_UNDEFINED, OC_UNDEFINED, OC_UNDEFINED, OC_UNDEFINED, OC_FLOAT}};
constexpr oc::Spec kPick = {kPickIn, kY, nullptr, OC_SIGNATURES(kAny), nullptr};

int pick(oc::Context& ctx) {
  const int64_t shape[] = {8};
  float* y;
  if (int rc = ctx.output(0, shape, 1, &y)) return rc;
  for (int j = 0; y != nullptr && j < 4; ++j) {
    y[j] = (float)ctx.raw()->dtypes[j];
    y[4 + j] = (float)ctx.input(j).dtype;
  }
  return OC_OK;
}

// Dtypes: Y (n,) float = each tensor's element type of the variadic xs, as the kernel sees it:
// a heterogeneous variadic's tensors each have their own (oc_tensor.dtype).
const char* const kXs[] = {"xs", nullptr};
constexpr int32_t kAnyXs[][2] = {{OC_UNDEFINED, OC_FLOAT}};
constexpr oc::Spec kDtypes = {kXs, kY, nullptr, OC_SIGNATURES(kAnyXs), nullptr};

int dtypes(oc::Context& ctx) {
  const int64_t shape[] = {ctx.n_inputs()};
  float* y;
  if (int rc = ctx.output(0, shape, 1, &y)) return rc;
  for (int32_t j = 0; y != nullptr && j < ctx.n_inputs(); ++j) y[j] = (float)ctx.input(j).dtype;
  return OC_OK;
}

// Splat: ys (variadic, heterogeneous) = X (float) converted to each output tensor's own element
// type, the node's (oc_context.output_dtypes): each tensor written with the type it is allocated as.
const char* const kYs[] = {"ys", nullptr};
constexpr int32_t kFloatAny[][2] = {{OC_FLOAT, OC_UNDEFINED}};
constexpr oc::Spec kSplat = {kX, kYs, nullptr, OC_SIGNATURES(kFloatAny), nullptr};

int splat(oc::Context& ctx) {
  const oc_tensor& x = ctx.input(0);
  const float* xd = static_cast<const float*>(x.data);
  for (int32_t j = 0; j < ctx.n_outputs(); ++j) {
    const int rc = oc::dispatch<float, int64_t, double>(ctx, ctx.output_dtype(j), [&](auto tag) {
      using T = decltype(tag);
      T* y;
      if (int r = ctx.output(j, x, &y)) return r;
      for (int64_t i = 0; y != nullptr && i < x.size; ++i) y[i] = (T)xd[i] + (T)j;
      return (int)OC_OK;
    });
    if (rc != OC_OK) return rc;
  }
  return OC_OK;
}

}  // namespace

OC_KERNEL(scale2, cpu, kScale, scale<2>)
OC_KERNEL(scale3, cpu, kScale, scale<3>)
OC_KERNEL(pick, cpu, kPick, pick)
OC_KERNEL(dtypes, cpu, kDtypes, dtypes)
OC_KERNEL(splat, cpu, kSplat, splat)
