// SolveTriangular's input checks and batch broadcasting, shared by its CPU and CUDA entries (its
// spec: ortcustom_spec.h, generated from the declaration, src/ortcustom/ops/solve_triangular.py).
#ifndef ORTCUSTOM_SOLVE_TRIANGULAR_OP_H
#define ORTCUSTOM_SOLVE_TRIANGULAR_OP_H

#include <stdio.h>

#include "ortcustom_spec.h"

#if defined(__CUDACC__)
#define OC_HOST_DEVICE __host__ __device__
#else
#define OC_HOST_DEVICE
#endif

namespace oc_ops {

using SolveTriangularSpec = ortcustom::spec::solve_triangular;

// The broadcast batch dims of two operands: the matrix offsets (in matrices) of each for an
// output batch index.
struct BatchBroadcast {
  int32_t rank = 0;
  int64_t dims[OC_MAX_RANK];
  int64_t stride_a[OC_MAX_RANK], stride_b[OC_MAX_RANK];  // 0 along a broadcast dim
  int64_t count = 1;

  // a and b: the batch dims (all but the last two) of each operand; false if not broadcastable.
  bool init(const oc_tensor& a, const oc_tensor& b) {
    const int32_t ra = a.rank - 2, rb = b.rank - 2;
    rank = ra > rb ? ra : rb;
    int64_t sa = 1, sb = 1;
    for (int32_t d = rank - 1; d >= 0; --d) {
      const int64_t da = d - (rank - ra) >= 0 ? a.shape[d - (rank - ra)] : 1;
      const int64_t db = d - (rank - rb) >= 0 ? b.shape[d - (rank - rb)] : 1;
      if (da != db && da != 1 && db != 1) return false;
      dims[d] = da == 1 ? db : da;
      stride_a[d] = da == 1 ? 0 : sa;
      stride_b[d] = db == 1 ? 0 : sb;
      sa *= da;
      sb *= db;
    }
    count = 1;
    for (int32_t d = 0; d < rank; ++d) count *= dims[d];
    return true;
  }
  OC_HOST_DEVICE void offsets(int64_t t, int64_t* oa, int64_t* ob) const {
    int64_t a = 0, b = 0;
    for (int32_t d = rank - 1; d >= 0; --d) {
      const int64_t i = t % dims[d];
      t /= dims[d];
      a += i * stride_a[d];
      b += i * stride_b[d];
    }
    *oa = a;
    *ob = b;
  }
};

struct SolveTriangularArgs {
  const void* a;
  const void* b;
  void* x;  // nullptr: nothing to compute
  BatchBroadcast batch;
  int64_t n, k;  // A is n x n; B (and X) n x k (left) or k x n (right)
  bool upper, left, unit;
};

// Checks A (*, N, N) and B (*, N, K) (left) or (*, K, N), broadcasts their batch dims, allocates X.
inline int solve_triangular_prepare(oc::Context& ctx, SolveTriangularArgs* s) {
  using S = SolveTriangularSpec;
  const oc_tensor& a = ctx.input(S::in::A);
  const oc_tensor& b = ctx.input(S::in::B);
  s->x = nullptr;
  s->upper = S::attr::upper(ctx) != 0;
  s->left = S::attr::left(ctx) != 0;
  s->unit = S::attr::unitriangular(ctx) != 0;
  if (a.rank < 2 || a.shape[a.rank - 1] != a.shape[a.rank - 2])
    return ctx.bad_shape(S::in::A, "A", "expected (*, N, N): square matrices in the last two dims");
  if (b.rank < 2)
    return ctx.bad_shape(S::in::B, "B", "expected at least 2 dimensions");
  s->n = a.shape[a.rank - 1];
  const int64_t bn = b.shape[b.rank - (s->left ? 2 : 1)];
  if (bn != s->n) {
    char sa[256], msg[400];
    snprintf(msg, sizeof msg, "incompatible with A of shape %s for %s (its dim %d must be N = %lld)",
             oc::shape_str(a, sa, sizeof sa), s->left ? "A X = B" : "X A = B", s->left ? -2 : -1, (long long)s->n);
    return ctx.bad_shape(S::in::B, "B", msg);
  }
  s->k = b.shape[b.rank - (s->left ? 1 : 2)];
  if (!s->batch.init(a, b)) {
    char sa[256], msg[400];
    snprintf(msg, sizeof msg, "its batch dims do not broadcast with those of A, of shape %s", oc::shape_str(a, sa, sizeof sa));
    return ctx.bad_shape(S::in::B, "B", msg);
  }
  int64_t shape[OC_MAX_RANK];
  for (int32_t d = 0; d < s->batch.rank; ++d) shape[d] = s->batch.dims[d];
  shape[s->batch.rank] = b.shape[b.rank - 2];
  shape[s->batch.rank + 1] = b.shape[b.rank - 1];
  if (int rc = ctx.output(S::out::X, shape, s->batch.rank + 2, &s->x)) return rc;
  if (s->batch.count == 0 || s->n == 0 || s->k == 0) s->x = nullptr;
  s->a = a.data;
  s->b = b.data;
  return OC_OK;
}

}  // namespace oc_ops

#endif  // ORTCUSTOM_SOLVE_TRIANGULAR_OP_H
