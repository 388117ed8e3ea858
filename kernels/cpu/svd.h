// The CPU singular value decomposition (svd.cpp), what the Svd and Svdvals entries (svd_op.cpp) call
// once the inputs are checked.
#ifndef ORTCUSTOM_KERNELS_CPU_SVD_H
#define ORTCUSTOM_KERNELS_CPU_SVD_H

#include <stdint.h>

#include "../kernels.h"

/* The SVD A = U diag(S) Vh of `batch` row-major m x n matrices a (contiguous), k = min(m, n):
   s (batch, k) descending and non-negative; when u and vh are not NULL, u (batch, m, ucols) and
   vh (batch, vrows, n) with orthonormal columns / rows, ucols = m or k and vrows = n or k
   (full: a completed basis). Either of u, vh may be NULL (not written), s too. finite[b] = 0 for a
   matrix holding a NaN or an infinity, whose outputs are then NaN; else 1. m, n >= 1, batch >= 1.
   One-sided Jacobi for k < 8 (6 without the vectors), else Householder bidiagonalization and implicit-shift QR on the
   bidiagonal; parallel over the batch or, for few large matrices, inside each. The results do not
   depend on the thread count on the bidiagonal path. Returns 0 or OC_OUT_OF_MEMORY (a working copy per matrix in flight), in which case
   the outputs are not the result. */
int oc_svd_f32(const float* a, float* u, float* s, float* vh, uint8_t* finite, int64_t batch,
               int64_t m, int64_t n, int64_t ucols, int64_t vrows, bool vectors, oc_parallel par);
int oc_svd_f64(const double* a, double* u, double* s, double* vh, uint8_t* finite, int64_t batch,
               int64_t m, int64_t n, int64_t ucols, int64_t vrows, bool vectors, oc_parallel par);

#endif  // ORTCUSTOM_KERNELS_CPU_SVD_H
