// The CPU Cholesky factorization (cholesky.cpp), what the Cholesky and CholeskyEx entries
// (cholesky_op.cpp) call once the inputs are checked.
#ifndef ORTCUSTOM_KERNELS_CPU_CHOLESKY_H
#define ORTCUSTOM_KERNELS_CPU_CHOLESKY_H

#include <stdint.h>

#include "../kernels.h"

/* Cholesky factors of `batch` row-major n x n matrices a (contiguous), into l (the same layout):
   lower L with A = L L^T from a's lower triangle, or (upper) U = L^T from a's upper triangle; the
   other triangle of l is zero, the other triangle of a is not read. info[b]: 0, or the 1-based order
   of the first leading minor of matrix b that is not positive-definite (NaN included), whose l is
   then the partial factorization. n >= 1, batch >= 1; l never overlaps a. n > 16: recursive
   (products of register tiles) on a column-major copy; n <= 16: a vector's width of matrices at a
   time, one per lane. Parallel over the batch or, for few large matrices, inside each; the results
   do not depend on the thread count. Returns 0 or OC_OUT_OF_MEMORY (scratch: a padded copy per
   matrix in flight for n > 16), in which case l and info are not the result. */
int oc_cholesky_f32(const float* a, float* l, int32_t* info, int64_t batch, int64_t n, bool upper,
                    oc_parallel par);
int oc_cholesky_f64(const double* a, double* l, int32_t* info, int64_t batch, int64_t n,
                    bool upper, oc_parallel par);

#endif  // ORTCUSTOM_KERNELS_CPU_CHOLESKY_H
