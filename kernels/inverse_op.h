// Inverse's input checks, shared by its CPU and CUDA entries (its spec: ortcustom_spec.h, generated
// from the declaration, src/ortcustom/ops/inverse.py).
#ifndef ORTCUSTOM_INVERSE_OP_H
#define ORTCUSTOM_INVERSE_OP_H

#include "ortcustom_spec.h"

namespace oc_ops {

using InverseSpec = ortcustom::spec::inverse;

struct InverseArgs {
  const void* x;
  void* y;  // nullptr: nothing to compute (empty, or the output is not used)
  int64_t batch, n;
};

// Checks X is (..., N, N) and allocates Y.
inline int inverse_prepare(oc::Context& ctx, InverseArgs* a) {
  const oc_tensor& x = ctx.input(InverseSpec::in::X);
  a->y = nullptr;
  if (x.rank < 2 || x.shape[x.rank - 1] != x.shape[x.rank - 2])
    return ctx.bad_shape(InverseSpec::in::X, "X", "expected (..., N, N): square matrices in the last two dims");
  if (int rc = ctx.output(InverseSpec::out::Y, x, &a->y)) return rc;
  if (x.size == 0) a->y = nullptr;
  a->x = x.data;
  a->n = x.shape[x.rank - 1];
  a->batch = x.size > 0 ? x.size / (a->n * a->n) : 0;
  return OC_OK;
}

}  // namespace oc_ops

#endif  // ORTCUSTOM_INVERSE_OP_H
