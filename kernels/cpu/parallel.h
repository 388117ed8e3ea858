// Internal helpers for the CPU kernels: running lambdas through oc_parallel, chunking, storage
// type conversion, a small SIMD vector type (GCC/clang vector extensions); includes the
// instruction-set dispatch (isa.h).
#ifndef ORTCUSTOM_KERNELS_CPU_PARALLEL_H
#define ORTCUSTOM_KERNELS_CPU_PARALLEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <memory>
#include <type_traits>

#include "ortcustom/half.h"
#include "../kernels.h"
#include "isa.h"

#if defined(__GNUC__)
#define OC_ALWAYS_INLINE inline __attribute__((always_inline))
#define OC_RESTRICT __restrict__
#else
#define OC_ALWAYS_INLINE inline
#define OC_RESTRICT
#endif

namespace oc {
namespace detail {

template <class F>
struct Trampoline {
  static void call(void* arg, size_t i) { (*static_cast<F*>(arg))(i); }
};

// Runs f(i) for i in [0, n) through the runner (serially when n <= 1 or no runner).
template <class F>
inline void parallel_for(const oc_parallel& par, size_t n, F& f) {
  if (n == 0) return;
  if (n == 1 || par.run == nullptr) {
    for (size_t i = 0; i < n; ++i) f(i);
    return;
  }
  using Fn = typename std::remove_const<F>::type;
  par.run(par.runner, &Trampoline<Fn>::call, n,
          const_cast<void*>(static_cast<const void*>(std::addressof(f))));
}

// Storage <-> compute conversion (float16 is computed in float). Always inlined: each pass gets
// it compiled with its own instructions.
template <class S, class T>
struct Conv {
  static OC_ALWAYS_INLINE T load(S v) { return (T)v; }
  static OC_ALWAYS_INLINE S store(T v) { return (S)v; }
};
template <>
struct Conv<uint16_t, float> {
  static OC_ALWAYS_INLINE float load(uint16_t v) { return oc_half_to_float(v); }
  static OC_ALWAYS_INLINE uint16_t store(float v) { return oc_float_to_half(v); }
};

inline int64_t div_up(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Batches whose matrices a task runs two at a time (eigvalsh's QL, svdvals' dqds: two chains of
// dependent divisions in flight): from kPairBatch matrices the tasks take whole pairs (matrices per
// task unit: 2); below, one task per matrix keeps the threads busy (a kernel does not know the pool's
// size). A task with several matrices pairs them either way.
constexpr int64_t kPairBatch = 32;
inline int64_t pair_unit(int64_t batch, bool pairs) { return pairs && batch >= kPairBatch ? 2 : 1; }

// Number of tasks for `units` independent units of `work_per_unit` each (arbitrary work
// measure), so that each task has at least `min_work` and there are at most `max_tasks`.
inline int64_t num_tasks(int64_t units, double work_per_unit, double min_work,
                         int64_t max_tasks) {
  if (units <= 1) return units < 1 ? 0 : 1;
  double total = work_per_unit * (double)units;
  int64_t t = (int64_t)(total / min_work);
  if (t < 1) t = 1;
  if (t > units) t = units;
  if (t > max_tasks) t = max_tasks;
  return t;
}

// [begin, end) of part `i` when splitting `total` items into `parts` near-equal parts.
inline void split_range(int64_t total, int64_t parts, int64_t i, int64_t& begin, int64_t& end) {
  int64_t q = total / parts, r = total % parts;
  begin = i * q + (i < r ? i : r);
  end = begin + q + (i < r ? 1 : 0);
}

// Simd<T, W>::type: a vector of W lanes of T with elementwise + - * / and comparisons (also with
// a scalar operand): GCC/clang vector extensions, lowered to whatever the enclosing function's
// target supports. The kernels are written for them; there is no portable fallback.
#if !defined(__GNUC__)
#error "ortcustom's CPU kernels need GCC or clang (vector extensions)"
#endif
template <class T, int W>
struct Simd {
  typedef T type __attribute__((vector_size(sizeof(T) * W)));
};

}  // namespace detail
}  // namespace oc

#endif  // ORTCUSTOM_KERNELS_CPU_PARALLEL_H
