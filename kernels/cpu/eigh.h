// The CPU symmetric eigensolver (eigh.cpp), what the Eigh and Eigvalsh entries (eigh_op.cpp) call
// once the inputs are checked.
#ifndef ORTCUSTOM_KERNELS_CPU_EIGH_H
#define ORTCUSTOM_KERNELS_CPU_EIGH_H

#include <stdint.h>

#include "../kernels.h"

/* The eigenvalues w (batch, n), ascending, of `batch` row-major n x n symmetric matrices a
   (contiguous) of which only the lower (upper: the upper) triangle is read; when v is not NULL,
   the eigenvectors as v's columns (batch, n, n), orthonormal, each with its largest-magnitude
   entry (the first of equal ones) positive. w may be NULL too. status[b]: 1 done, 0 the triangle
   read holds a NaN or an infinity, 2 no convergence within the iteration cap (outputs of that
   matrix are then not the result). n >= 1, batch >= 1. Returns 0 or OC_OUT_OF_MEMORY. */
int oc_eigh_f32(const float* a, float* w, float* v, uint8_t* status, int64_t batch, int64_t n, bool upper,
                oc_parallel par);
int oc_eigh_f64(const double* a, double* w, double* v, uint8_t* status, int64_t batch, int64_t n, bool upper,
                oc_parallel par);

#endif  // ORTCUSTOM_KERNELS_CPU_EIGH_H
