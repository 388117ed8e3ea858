// Solve's, SolveEx's and Slogdet's input checks, shared by their CPU and CUDA entries (their specs:
// ortcustom_spec.h, generated from the declarations, src/ortcustom/ops/solve.py). Solve and SolveEx
// read the same inputs and attribute, in the same order.
#ifndef ORTCUSTOM_SOLVE_OP_H
#define ORTCUSTOM_SOLVE_OP_H

#include <stdio.h>

#include "solve_triangular_op.h"  // BatchBroadcast

namespace oc_ops {

using SolveSpec = ortcustom::spec::solve;
using SolveExSpec = ortcustom::spec::solve_ex;
using SlogdetSpec = ortcustom::spec::slogdet;
static_assert((int)SolveSpec::in::A == (int)SolveExSpec::in::A && (int)SolveSpec::in::B == (int)SolveExSpec::in::B,
              "one input order");

struct SolveArgs {
  const void* a = nullptr;
  const void* b = nullptr;
  void* x = nullptr;        // nullptr: no X to compute (empty, or the node does not use it)
  int32_t* info = nullptr;  // SolveEx: per matrix of A (nullptr when the node does not use it)
  BatchBroadcast batch;
  int64_t a_count = 0, b_count = 0;  // matrices in A, right-hand side blocks in B
  int64_t n = 0, k = 0;              // A is n x n; each right-hand side block of B (and X) n x k (left) or k x n
  bool left = true;
  bool vector = false;  // B is a batch of vectors (*, N): each is an n x 1 block
};

// torch's rule: B holds vectors when it has one dim, or one dim less than A with A's shape but the last.
inline bool vector_rhs(const oc_tensor& a, const oc_tensor& b) {
  if (b.rank == 1) return true;
  if (b.rank != a.rank - 1) return false;
  for (int32_t d = 0; d < b.rank; ++d)
    if (b.shape[d] != a.shape[d]) return false;
  return true;
}

// Checks A (*, N, N) and B, broadcasts their batch dims, allocates X (and info: A's batch shape).
inline int solve_prepare(oc::Context& ctx, bool with_info, SolveArgs* s) {
  using S = SolveSpec;
  const oc_tensor& a = ctx.input(S::in::A);
  const oc_tensor& b = ctx.input(S::in::B);
  s->x = nullptr;
  s->info = nullptr;
  s->left = S::attr::left(ctx) != 0;
  if (a.rank < 2 || a.shape[a.rank - 1] != a.shape[a.rank - 2])
    return ctx.bad_shape(S::in::A, "A", "expected (*, N, N): square matrices in the last two dims");
  if (b.rank < 1) return ctx.bad_shape(S::in::B, "B", "expected (*, N, K), (*, K, N) or a batch of vectors (*, N)");
  s->n = a.shape[a.rank - 1];
  s->vector = vector_rhs(a, b);
  char sa[256], msg[512];
  if (s->vector && !s->left) {
    snprintf(msg, sizeof msg, "a batch of vectors (for A of shape %s), which X A = B (left=0) does not take: B "
             "must be (*, K, N)", oc::shape_str(a, sa, sizeof sa));
    return ctx.bad_shape(S::in::B, "B", msg);
  }
  if (!s->vector && b.rank < 2)
    return ctx.bad_shape(S::in::B, "B", "expected (*, N, K), (*, K, N) or a batch of vectors (*, N)");
  // the batch dims of B: all but its last (vectors) or last two; as a tensor view for BatchBroadcast
  oc_tensor bv = b;
  int64_t vshape[OC_MAX_RANK + 1];
  if (s->vector) {  // (*, N) -> (*, N, 1)
    for (int32_t d = 0; d < b.rank; ++d) vshape[d] = b.shape[d];
    vshape[b.rank] = 1;
    bv.shape = vshape;
    bv.rank = b.rank + 1;
  }
  const int64_t bn = bv.shape[bv.rank - (s->left ? 2 : 1)];
  if (bn != s->n) {
    snprintf(msg, sizeof msg, "incompatible with A of shape %s for %s (its dim %d must be N = %lld)",
             oc::shape_str(a, sa, sizeof sa), s->left ? "A X = B" : "X A = B",
             s->vector ? -1 : s->left ? -2 : -1, (long long)s->n);
    return ctx.bad_shape(S::in::B, "B", msg);
  }
  s->k = bv.shape[bv.rank - (s->left ? 1 : 2)];
  if (!s->batch.init(a, bv)) {
    snprintf(msg, sizeof msg, "its batch dims do not broadcast with those of A, of shape %s", oc::shape_str(a, sa, sizeof sa));
    return ctx.bad_shape(S::in::B, "B", msg);
  }
  int64_t shape[OC_MAX_RANK + 1];
  int32_t rank = s->batch.rank;
  for (int32_t d = 0; d < rank; ++d) shape[d] = s->batch.dims[d];
  if (s->vector) {
    shape[rank++] = s->n;
  } else {
    shape[rank++] = bv.shape[bv.rank - 2];
    shape[rank++] = bv.shape[bv.rank - 1];
  }
  if (rank > OC_MAX_RANK) return ctx.bad_shape(S::in::B, "B", "X would have more than 16 dims");
  if (int rc = ctx.output(S::out::X, shape, rank, &s->x)) return rc;
  if (with_info)
    if (int rc = ctx.output(SolveExSpec::out::info, a.shape, a.rank - 2, &s->info)) return rc;
  s->a_count = 1;
  for (int32_t d = 0; d < a.rank - 2; ++d) s->a_count *= a.shape[d];
  s->b_count = 1;
  for (int32_t d = 0; d < bv.rank - 2; ++d) s->b_count *= bv.shape[d];
  if (s->batch.count == 0 || s->n == 0 || s->k == 0) s->x = nullptr;
  s->a = a.data;
  s->b = b.data;
  return OC_OK;
}

struct SlogdetArgs {
  const void* a = nullptr;
  void* sign = nullptr;    // nullptr when the node does not use it
  void* logabs = nullptr;  // likewise
  int64_t batch = 0, n = 0;
};

inline int slogdet_prepare(oc::Context& ctx, SlogdetArgs* s) {
  using S = SlogdetSpec;
  const oc_tensor& a = ctx.input(S::in::A);
  if (a.rank < 2 || a.shape[a.rank - 1] != a.shape[a.rank - 2])
    return ctx.bad_shape(S::in::A, "A", "expected (*, N, N): square matrices in the last two dims");
  if (int rc = ctx.output(S::out::sign, a.shape, a.rank - 2, &s->sign)) return rc;
  if (int rc = ctx.output(S::out::logabsdet, a.shape, a.rank - 2, &s->logabs)) return rc;
  s->n = a.shape[a.rank - 1];
  s->batch = 1;
  for (int32_t d = 0; d < a.rank - 2; ++d) s->batch *= a.shape[d];
  s->a = a.data;
  return OC_OK;
}

}  // namespace oc_ops

#endif  // ORTCUSTOM_SOLVE_OP_H
