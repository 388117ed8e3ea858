// Svd's and Svdvals' input checks and outputs, shared by their CPU and CUDA entries (their specs:
// ortcustom_spec.h, generated from the declarations, src/ortcustom/ops/svd.py). Both read the same
// input; Svdvals' S is Svd's S.
#ifndef ORTCUSTOM_SVD_OP_H
#define ORTCUSTOM_SVD_OP_H

#include "ortcustom_spec.h"

namespace oc_ops {

using SvdSpec = ortcustom::spec::svd;
using SvdvalsSpec = ortcustom::spec::svdvals;
static_assert((int)SvdSpec::in::A == (int)SvdvalsSpec::in::A, "one input index");

struct SvdArgs {
  const void* a = nullptr;
  void *u = nullptr, *s = nullptr, *vh = nullptr;  // nullptr: not used by the node (or empty); Svdvals: no u, vh
  int64_t batch = 0, m = 0, n = 0, k = 0;
  int64_t ucols = 0, vrows = 0;  // U is (m, ucols), Vh (vrows, n): full_matrices' m and n, else k
  bool full = false;
};

// Checks A is (..., M, N) and allocates the outputs (Svd: U, S, Vh; Svdvals: S) with torch's shapes.
inline int svd_prepare(oc::Context& ctx, bool vectors, SvdArgs* a) {
  const oc_tensor& x = ctx.input(SvdSpec::in::A);
  a->u = a->s = a->vh = nullptr;
  if (x.rank < 2)
    return ctx.bad_shape(SvdSpec::in::A, "A", "expected (..., M, N): matrices in the last two dims");
  const int32_t r = x.rank;
  a->m = x.shape[r - 2];
  a->n = x.shape[r - 1];
  a->k = a->m < a->n ? a->m : a->n;
  a->full = vectors && SvdSpec::attr::full_matrices(ctx) != 0;
  a->ucols = a->full ? a->m : a->k;
  a->vrows = a->full ? a->n : a->k;
  a->batch = 1;
  int64_t shape[OC_MAX_RANK];
  for (int32_t d = 0; d < r - 2; ++d) {
    a->batch *= x.shape[d];
    shape[d] = x.shape[d];
  }
  a->a = x.data;
  if (vectors) {
    shape[r - 2] = a->m;
    shape[r - 1] = a->ucols;
    if (int rc = ctx.output(SvdSpec::out::U, shape, r, &a->u)) return rc;
    shape[r - 2] = a->k;
    if (int rc = ctx.output(SvdSpec::out::S, shape, r - 1, &a->s)) return rc;
    shape[r - 2] = a->vrows;
    shape[r - 1] = a->n;
    return ctx.output(SvdSpec::out::Vh, shape, r, &a->vh);
  }
  shape[r - 2] = a->k;
  return ctx.output(SvdvalsSpec::out::S, shape, r - 1, &a->s);
}

}  // namespace oc_ops

#endif  // ORTCUSTOM_SVD_OP_H
