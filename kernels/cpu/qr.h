// The CPU QR factorization (qr.cpp), what the Qr entry (qr_op.cpp) calls once the inputs are checked.
#ifndef ORTCUSTOM_KERNELS_CPU_QR_H
#define ORTCUSTOM_KERNELS_CPU_QR_H

#include <stdint.h>

#include "../kernels.h"

/* A = Q R for `batch` row-major m x n matrices a (contiguous), k = min(m, n), by Householder
   reflections with LAPACK's conventions (geqrf's dlarfg reflectors, Q as orgqr forms it): q (batch,
   m, qcols), qcols = k or m (complete); r (batch, rrows, n), rrows = k or m, zero below the
   diagonal. Either of q, r may be NULL (not written). m, n >= 0 (k = 0: Q is the identity's first
   qcols columns), batch >= 1. NaN and infinities spread into their matrix's factors, never a crash.
   Parallel over the batch or, for few large matrices, over each panel's trailing columns and Q's
   columns. Returns 0 or OC_OUT_OF_MEMORY (a working copy per matrix in flight), in which case the
   outputs are not the result. */
int oc_qr_f32(const float* a, float* q, float* r, int64_t batch, int64_t m, int64_t n, int64_t qcols,
              int64_t rrows, oc_parallel par);
int oc_qr_f64(const double* a, double* q, double* r, int64_t batch, int64_t m, int64_t n, int64_t qcols,
              int64_t rrows, oc_parallel par);

#endif  // ORTCUSTOM_KERNELS_CPU_QR_H
