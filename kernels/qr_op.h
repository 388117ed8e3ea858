// Qr's attribute and input checks and its outputs, shared by its CPU and CUDA entries (its spec:
// ortcustom_spec.h, generated from the declaration, src/ortcustom/ops/qr.py).
#ifndef ORTCUSTOM_QR_OP_H
#define ORTCUSTOM_QR_OP_H

#include <string.h>

#include "ortcustom_spec.h"

namespace oc_ops {

using QrSpec = ortcustom::spec::qr;

enum QrMode : int { kQrReduced = 0, kQrComplete = 1, kQrR = 2 };

// What create decides once per node: the mode (the plain library has no Python to check it first).
struct QrState {
  QrMode mode;
};

inline int qr_create(oc::Context& ctx, void** state) {
  const char* mode = QrSpec::attr::mode(ctx);
  QrMode m;
  if (strcmp(mode, "reduced") == 0) m = kQrReduced;
  else if (strcmp(mode, "complete") == 0) m = kQrComplete;
  else if (strcmp(mode, "r") == 0) m = kQrR;
  else
    return ctx.fail(OC_INVALID_ARGUMENT, "attribute mode can only be 'reduced', 'complete' or 'r', got '%s'", mode);
  *state = new QrState{m};
  return OC_OK;
}

inline void qr_destroy(void* state) { delete static_cast<QrState*>(state); }

struct QrArgs {
  const void* a = nullptr;
  void* q = nullptr;  // nullptr: not wanted (mode 'r', unused by the node, or empty)
  void* r = nullptr;  // likewise
  int64_t batch = 0, m = 0, n = 0, k = 0;
  int64_t qcols = 0, rrows = 0;  // Q is (m, qcols), R (rrows, n): 'complete' m and m, else k and k
};

// Checks A is (..., M, N) and allocates Q and R with torch's shapes (mode 'r': Q of shape (0,)).
inline int qr_prepare(oc::Context& ctx, QrArgs* a) {
  const oc_tensor& x = ctx.input(QrSpec::in::A);
  const QrMode mode = ctx.state<QrState>()->mode;
  a->q = a->r = nullptr;
  if (x.rank < 2)
    return ctx.bad_shape(QrSpec::in::A, "A", "expected (..., M, N): matrices in the last two dims");
  const int32_t r = x.rank;
  a->m = x.shape[r - 2];
  a->n = x.shape[r - 1];
  a->k = a->m < a->n ? a->m : a->n;
  a->qcols = mode == kQrComplete ? a->m : a->k;
  a->rrows = mode == kQrComplete ? a->m : a->k;
  a->batch = 1;
  int64_t shape[OC_MAX_RANK];
  for (int32_t d = 0; d < r - 2; ++d) {
    a->batch *= x.shape[d];
    shape[d] = x.shape[d];
  }
  a->a = x.data;
  if (mode == kQrR) {
    const int64_t none[1] = {0};
    if (int rc = ctx.output(QrSpec::out::Q, none, 1, &a->q)) return rc;
    a->q = nullptr;
  } else {
    shape[r - 2] = a->m;
    shape[r - 1] = a->qcols;
    if (int rc = ctx.output(QrSpec::out::Q, shape, r, &a->q)) return rc;
  }
  shape[r - 2] = a->rrows;
  shape[r - 1] = a->n;
  return ctx.output(QrSpec::out::R, shape, r, &a->r);
}

}  // namespace oc_ops

#endif  // ORTCUSTOM_QR_OP_H
