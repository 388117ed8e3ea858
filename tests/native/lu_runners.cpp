// The CPU LU (kernels/cpu/solve.cpp: one Team region per large matrix, its update's items waiting
// on a counter for the row swaps and solves before them) under the runners of runners.h: built with
// solve.cpp into a test library (test_lu_runners.py), called through ctypes.
#include "../../kernels/cpu/lu.h"
#include "runners.h"

extern "C" {

__attribute__((visibility("default"))) void lu_f32_with(int kind, const float* a, float* lu, int32_t* piv,
                                                        int32_t* info, int64_t batch, int64_t n) {
  oc_lu_f32(a, lu, piv, info, batch, n, false, runner(kind));
}

__attribute__((visibility("default"))) void lu_f64_with(int kind, const double* a, double* lu, int32_t* piv,
                                                        int32_t* info, int64_t batch, int64_t n) {
  oc_lu_f64(a, lu, piv, info, batch, n, false, runner(kind));
}

__attribute__((visibility("default"))) void slogdet_f64_with(int kind, const double* a, double* lu, int32_t* piv,
                                                             int32_t* info, double* sign, double* logabs,
                                                             int64_t count, int64_t n) {
  oc_lu_slogdet_f64(a, lu, piv, info, sign, logabs, count, n, runner(kind));
}

}  // extern "C"
