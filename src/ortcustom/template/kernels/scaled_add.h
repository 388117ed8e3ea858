// ScaledAdd's kernel spec (what ortcustom checks against the op's declaration in ops.py) and its
// input checks, shared by the CPU and the CUDA kernel.
#ifndef MYOPS_SCALED_ADD_H
#define MYOPS_SCALED_ADD_H

#include "ortcustom/kernel.hpp"

namespace myops {

// Names and order exactly as the declaration: inputs, outputs, attributes (with their kinds).
inline constexpr const char* kScaledAddInputs[] = {"X", "Y", nullptr};
inline constexpr const char* kScaledAddOutputs[] = {"Z", nullptr};
enum { kAlpha };  // index into kScaledAddAttrs, and into ctx.attr_*()
inline constexpr oc_attr_spec kScaledAddAttrs[] = {{"alpha", OC_ATTR_FLOAT}, {nullptr, 0}};
// The element types of X, Y and Z, one row per type the op's declaration binds T to.
inline constexpr int32_t kScaledAddSignatures[][3] = {
    {OC_FLOAT, OC_FLOAT, OC_FLOAT}, {OC_DOUBLE, OC_DOUBLE, OC_DOUBLE}, {OC_FLOAT16, OC_FLOAT16, OC_FLOAT16}};
inline constexpr int32_t kScaledAddInplace[] = {0};  // Z may be written over X: elementwise
inline constexpr oc::Spec kScaledAddSpec = {kScaledAddInputs, kScaledAddOutputs, kScaledAddAttrs,
                                            OC_SIGNATURES(kScaledAddSignatures), kScaledAddInplace};

struct ScaledAddArgs {
  const void* x;
  const void* y;
  void* z;  // nullptr: nothing to compute (empty, or the node does not use Z)
  int64_t n;
  double alpha;
};

// X and Y of one shape (ORT has already checked that both have the element type T); allocates Z.
inline int scaled_add_prepare(oc::Context& ctx, ScaledAddArgs* a) {
  const oc_tensor& x = ctx.input(0);
  const oc_tensor& y = ctx.input(1);
  bool same = x.rank == y.rank;
  for (int32_t d = 0; same && d < x.rank; ++d) same = x.shape[d] == y.shape[d];
  if (!same) {
    char xs[256], what[300];
    snprintf(what, sizeof what, "expected the shape of X, %s", oc::shape_str(x, xs, sizeof xs));
    return ctx.bad_shape(1, "Y", what);
  }
  if (int rc = ctx.output(0, x, &a->z)) return rc;
  if (x.size == 0) a->z = nullptr;
  a->x = x.data;
  a->y = y.data;
  a->n = x.size;
  a->alpha = ctx.attr_float(kAlpha);
  return OC_OK;
}

}  // namespace myops

#endif  // MYOPS_SCALED_ADD_H
