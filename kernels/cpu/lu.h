// The CPU LU factorization with partial pivoting and its solves (solve.cpp), what the Solve,
// SolveEx and Slogdet entries (solve_op.cpp) call once the inputs are checked.
#ifndef ORTCUSTOM_KERNELS_CPU_LU_H
#define ORTCUSTOM_KERNELS_CPU_LU_H

#include <stdint.h>

#include "../kernels.h"

/* Factors `batch` row-major n x n matrices a (contiguous; transpose: factors each one's transpose)
   into lu (n x n each, never overlapping a; row-major for n <= 64, column-major above: an internal
   layout that oc_lu_solve and oc_lu_slogdet read) as LAPACK's getrf: P A = L U, L unit lower (below
   the diagonal), U upper; piv[m * n + k]: the row swapped with row k at step k (0-based); info[m]:
   0, or the 1-based step of the first exact zero pivot (the factorization goes on past it, as
   getrf). The pivot is the largest magnitude of its column (NaN never wins). n >= 1. Recursive (as
   getrf2) for n > 64, a single large matrix in parallel inside (on two threads: blocked steps, each
   block of columns kept by one thread; the same bits); many matrices per task for small ones. */
void oc_lu_f32(const float* a, float* lu, int32_t* piv, int32_t* info, int64_t batch, int64_t n,
               bool transpose, oc_parallel par);
void oc_lu_f64(const double* a, double* lu, int32_t* piv, int32_t* info, int64_t batch, int64_t n,
               bool transpose, oc_parallel par);

/* `count` solves with the factors of oc_lu: block m of x (n x k, rows contiguous) is the solution
   of A X = B for A = the factors at lu + a_index[m] * n * n and B = the block at b + b_index[m] *
   n * k (a_index, b_index NULL: m; rows = false: columns of the block are the right-hand sides;
   rows = true: the block is k x n and each row is one right-hand side, as getrs with k vectors;
   trans (rows only): each row x solves A^T x = b with A's factors (X A = B; getrs with trans 'T').
   A zero pivot gives inf/NaN (a division by it), never an error. */
void oc_lu_solve_f32(const float* lu, const int32_t* piv, const float* b, float* x, const int64_t* a_index,
                     const int64_t* b_index, int64_t count, int64_t n, int64_t k, bool rows, bool trans,
                     oc_parallel par);
void oc_lu_solve_f64(const double* lu, const int32_t* piv, const double* b, double* x, const int64_t* a_index,
                     const int64_t* b_index, int64_t count, int64_t n, int64_t k, bool rows, bool trans,
                     oc_parallel par);

/* oc_lu and oc_lu_solve fused, for no broadcast (block m of b and x with matrix m of a) and either
   n <= OC_LU_FUSED_MAX_N (each matrix factored and solved while in cache) or count 1 (factored into
   a working copy and solved from it): the factors never stored; info as oc_lu's. Returns 0, or
   OC_OUT_OF_MEMORY (count 1 only) when the working copy could not be allocated: nothing written.
   rows, trans: as oc_lu_solve's (A itself is factored, never its transpose). */
#define OC_LU_FUSED_MAX_N 8
int oc_lu_factor_solve_f32(const float* a, const float* b, float* x, int32_t* info, int64_t count, int64_t n,
                           int64_t k, bool rows, bool trans, oc_parallel par);
int oc_lu_factor_solve_f64(const double* a, const double* b, double* x, int32_t* info, int64_t count, int64_t n,
                           int64_t k, bool rows, bool trans, oc_parallel par);

/* sign and log|det| of `count` n x n matrices a (either output may be NULL), as torch.linalg.slogdet
   (a zero pivot: sign 0, logabsdet -inf; NaN: sign 0, logabsdet NaN); n >= 1. lu, piv, info: scratch
   for oc_lu (count n x n, count * n, count), unused (may be NULL) for n <= OC_LU_FUSED_MAX_N, whose
   matrices are factored in cache. */
void oc_lu_slogdet_f32(const float* a, float* lu, int32_t* piv, int32_t* info, float* sign, float* logabs,
                       int64_t count, int64_t n, oc_parallel par);
void oc_lu_slogdet_f64(const double* a, double* lu, int32_t* piv, int32_t* info, double* sign, double* logabs,
                       int64_t count, int64_t n, oc_parallel par);

#endif  // ORTCUSTOM_KERNELS_CPU_LU_H
