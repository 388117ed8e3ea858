// The CPU triangular solves (solve_triangular.cpp), what the SolveTriangular entry
// (solve_triangular_op.cpp) calls once the inputs are checked.
#ifndef ORTCUSTOM_KERNELS_CPU_SOLVE_TRIANGULAR_H
#define ORTCUSTOM_KERNELS_CPU_SOLVE_TRIANGULAR_H

#include <stdint.h>

/* One matrix: a is n x n row-major, triangular (upper or lower; unit: its diagonal taken as ones,
   not read). left: A X = B, b and x n x k row-major, the columns [c0, c1) of X solved; else X A =
   B, b and x k x n, the rows [c0, c1) of X. B's part is copied into X first (x may equal b). A
   zero on the diagonal gives inf/NaN (a division by it), never an error. packed: for left only,
   A's blocks as oc_solve_triangular_pack wrote them (the same results, without packing them again
   for each chunk), or NULL. */
void oc_solve_triangular_f32(const float* a, const float* b, float* x, int64_t n, int64_t k, int64_t c0, int64_t c1,
                             bool left, bool upper, bool unit, const float* packed);
void oc_solve_triangular_f64(const double* a, const double* b, double* x, int64_t n, int64_t k, int64_t c0,
                             int64_t c1, bool left, bool upper, bool unit, const double* packed);

/* Elements of the packed blocks of an n x n A (left solves), and A packed into them. */
int64_t oc_solve_triangular_packed_size(int64_t n, bool upper);
void oc_solve_triangular_pack_f32(const float* a, int64_t n, bool upper, float* packed);
void oc_solve_triangular_pack_f64(const double* a, int64_t n, bool upper, double* packed);

#endif  // ORTCUSTOM_KERNELS_CPU_SOLVE_TRIANGULAR_H
