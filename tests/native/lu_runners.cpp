// The CPU LU (kernels/cpu/solve.cpp: one Team region per large matrix, its update's items waiting
// on a counter for the row swaps and solves before them; on a team of two, blocked steps) under the
// runners of runners.h: built with solve.cpp into a test library (test_lu_runners.py), called
// through ctypes; lu_blocked_runs() counts (and resets) the blocked factorizations, lu_force_blocked(1)
// makes every team take them.
#include <atomic>

#include "../../kernels/cpu/lu.h"
#include "runners.h"

static std::atomic<long> blocked_runs{0};
static std::atomic<int> force_blocked{0};

extern "C" {

// Called by solve.cpp (built with OC_LU_TRACE) when a factorization took the blocked steps of a
// team of two (lu_recursive.inc's LuBlocks) to the end, rather than the recursion.
void oc_lu_trace_blocked(void) { blocked_runs.fetch_add(1); }
// Asked by solve.cpp: take the blocked steps whatever the team's size (set by lu_force_blocked).
int oc_lu_trace_force_blocked(void) { return force_blocked.load(); }

__attribute__((visibility("default"))) long lu_blocked_runs() { return blocked_runs.exchange(0); }
__attribute__((visibility("default"))) void lu_force_blocked(int on) { force_blocked.store(on); }

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
