// Eigh's and Eigvalsh's attribute and input checks and outputs, shared by their CPU and CUDA entries
// (their specs: ortcustom_spec.h, generated from the declarations, src/ortcustom/ops/eigh.py).
// Eigvalsh's eigenvalues are Eigh's.
#ifndef ORTCUSTOM_EIGH_OP_H
#define ORTCUSTOM_EIGH_OP_H

#include <string.h>

#include "ortcustom_spec.h"

namespace oc_ops {

using EighSpec = ortcustom::spec::eigh;
using EigvalshSpec = ortcustom::spec::eigvalsh;
static_assert((int)EighSpec::in::A == (int)EigvalshSpec::in::A, "one input index");

// What create decides once per node: which triangle is read (the plain library has no Python to
// check the attribute first).
struct EighState {
  bool upper;
};

template <class Spec>
inline int eigh_create(oc::Context& ctx, void** state) {
  const char* uplo = Spec::attr::UPLO(ctx);
  const bool upper = strcmp(uplo, "U") == 0 || strcmp(uplo, "u") == 0;  // either case, as torch
  if (!upper && strcmp(uplo, "L") != 0 && strcmp(uplo, "l") != 0)
    return ctx.fail(OC_INVALID_ARGUMENT, "attribute UPLO can only be 'L' or 'U' (or lowercase), got '%s'", uplo);
  *state = new EighState{upper};
  return OC_OK;
}

inline void eigh_destroy(void* state) { delete static_cast<EighState*>(state); }

struct EighArgs {
  const void* a = nullptr;
  void *w = nullptr, *v = nullptr;  // nullptr: not used by the node (or empty); Eigvalsh: no v
  int64_t batch = 0, n = 0;
  bool upper = false;
};

// Checks A is (..., N, N) and allocates the outputs (eigenvalues (..., N); Eigh: eigenvectors (..., N, N)).
inline int eigh_prepare(oc::Context& ctx, bool vectors, EighArgs* a) {
  const oc_tensor& x = ctx.input(EighSpec::in::A);
  a->w = a->v = nullptr;
  a->upper = ctx.state<EighState>()->upper;
  if (x.rank < 2 || x.shape[x.rank - 1] != x.shape[x.rank - 2])
    return ctx.bad_shape(EighSpec::in::A, "A", "expected (..., N, N): square matrices in the last two dims");
  const int32_t r = x.rank;
  a->n = x.shape[r - 1];
  a->batch = 1;
  int64_t shape[OC_MAX_RANK];
  for (int32_t d = 0; d < r; ++d) {
    if (d < r - 2) a->batch *= x.shape[d];
    shape[d] = x.shape[d];
  }
  a->a = x.data;
  if (int rc = ctx.output(vectors ? (int)EighSpec::out::eigenvalues : (int)EigvalshSpec::out::eigenvalues, shape,
                          r - 1, &a->w))
    return rc;
  return vectors ? ctx.output(EighSpec::out::eigenvectors, shape, r, &a->v) : OC_OK;
}

}  // namespace oc_ops

#endif  // ORTCUSTOM_EIGH_OP_H
