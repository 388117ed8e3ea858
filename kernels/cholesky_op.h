// Cholesky's and CholeskyEx's input checks, shared by their CPU and CUDA entries (their specs:
// ortcustom_spec.h, generated from the declarations, src/ortcustom/ops/cholesky.py). The two ops
// read the same input and attribute, in the same order.
#ifndef ORTCUSTOM_CHOLESKY_OP_H
#define ORTCUSTOM_CHOLESKY_OP_H

#include "ortcustom_spec.h"

namespace oc_ops {

using CholeskySpec = ortcustom::spec::cholesky;
using CholeskyExSpec = ortcustom::spec::cholesky_ex;
static_assert((int)CholeskySpec::in::A == (int)CholeskyExSpec::in::A, "one input index");

struct CholeskyArgs {
  const void* a;
  void* l;        // nullptr: nothing to compute (empty, or the output is not used)
  int32_t* info;  // CholeskyEx: per matrix (nullptr when the node does not use it)
  int64_t batch, n;
  bool upper;
};

// Checks A is (..., N, N) and allocates L (and, with_info, info of A's batch shape; its entry
// writes info, also for N = 0).
inline int cholesky_prepare(oc::Context& ctx, bool with_info, CholeskyArgs* a) {
  const oc_tensor& x = ctx.input(CholeskySpec::in::A);
  a->l = nullptr;
  a->info = nullptr;
  if (x.rank < 2 || x.shape[x.rank - 1] != x.shape[x.rank - 2])
    return ctx.bad_shape(CholeskySpec::in::A, "A", "expected (..., N, N): square matrices in the last two dims");
  if (int rc = ctx.output(CholeskySpec::out::L, x, &a->l)) return rc;
  if (with_info)
    if (int rc = ctx.output(CholeskyExSpec::out::info, x.shape, x.rank - 2, &a->info)) return rc;
  a->n = x.shape[x.rank - 1];
  a->batch = 1;
  for (int32_t d = 0; d < x.rank - 2; ++d) a->batch *= x.shape[d];
  if (x.size == 0) a->l = nullptr;
  a->a = x.data;
  a->upper = CholeskySpec::attr::upper(ctx) != 0;
  return OC_OK;
}

}  // namespace oc_ops

#endif  // ORTCUSTOM_CHOLESKY_OP_H
