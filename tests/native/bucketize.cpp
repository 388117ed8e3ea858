// Bucketize, a native op whose output type is not its input's: X (float or double) and sorted
// boundaries of X's type -> Y int64 of X's shape, the index of each x's bucket (torch.bucketize:
// right=0 counts boundaries < x, right=1 boundaries <= x). Compiled by tests/test_export_bucketize.py.
#include <algorithm>

#include "ortcustom/kernel.hpp"

namespace {

const char* const kIn[] = {"X", "boundaries", nullptr};
const char* const kOut[] = {"Y", nullptr};
const oc_attr_spec kAttrs[] = {{"right", OC_ATTR_INT}, {nullptr, 0}};
constexpr int32_t kSignatures[][3] = {{OC_FLOAT, OC_FLOAT, OC_INT64}, {OC_DOUBLE, OC_DOUBLE, OC_INT64}};
constexpr oc::Spec kSpec = {kIn, kOut, kAttrs, OC_SIGNATURES(kSignatures), nullptr};

int bucketize(oc::Context& ctx) {
  const oc_tensor& x = ctx.input(0);
  const oc_tensor& b = ctx.input(1);
  int64_t* y;
  if (int rc = ctx.output(0, x, &y)) return rc;
  if (y == nullptr) return OC_OK;
  const bool right = ctx.attr_int(0) != 0;
  return oc::dispatch<float, double>(ctx, x.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* xs = static_cast<const T*>(x.data);
    const T* lo = static_cast<const T*>(b.data);
    const T* hi = lo + b.size;
    for (int64_t i = 0; i < x.size; ++i)
      y[i] = (right ? std::upper_bound(lo, hi, xs[i]) : std::lower_bound(lo, hi, xs[i])) - lo;
    return static_cast<int>(OC_OK);
  });
}

}  // namespace

OC_KERNEL(bucketize, cpu, kSpec, bucketize)
