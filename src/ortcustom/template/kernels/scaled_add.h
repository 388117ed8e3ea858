// ScaledAdd's input checks, shared by the CPU and the CUDA kernel. Its interface (input, output
// and attribute names, the element types T takes, the spec ortcustom checks) is myops_spec.h,
// which the build generates from the declaration in src/myops/ops.py: change it there.
#ifndef MYOPS_SCALED_ADD_H
#define MYOPS_SCALED_ADD_H

#include "myops_spec.h"

namespace myops {

using ScaledAddSpec = spec::scaled_add;  // in::X, in::Y, out::Z, attr::alpha(ctx), types::T, spec

struct ScaledAddArgs {
  const void* x;
  const void* y;
  void* z;  // nullptr: nothing to compute (empty, or the node does not use Z)
  int64_t n;
  double alpha;
};

// X and Y of one shape (ORT has already checked that both have the element type T); allocates Z.
inline int scaled_add_prepare(oc::Context& ctx, ScaledAddArgs* a) {
  using in = ScaledAddSpec::in;
  const oc_tensor& x = ctx.input(in::X);
  const oc_tensor& y = ctx.input(in::Y);
  bool same = x.rank == y.rank;
  for (int32_t d = 0; same && d < x.rank; ++d) same = x.shape[d] == y.shape[d];
  if (!same) {
    char xs[256], what[300];
    snprintf(what, sizeof what, "expected the shape of X, %s", oc::shape_str(x, xs, sizeof xs));
    return ctx.bad_shape(in::Y, "Y", what);
  }
  if (int rc = ctx.output(ScaledAddSpec::out::Z, x, &a->z)) return rc;
  if (x.size == 0) a->z = nullptr;
  a->x = x.data;
  a->y = y.data;
  a->n = x.size;
  a->alpha = ScaledAddSpec::attr::alpha(ctx);
  return OC_OK;
}

}  // namespace myops

#endif  // MYOPS_SCALED_ADD_H
