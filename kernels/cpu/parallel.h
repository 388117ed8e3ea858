// Internal helpers for the CPU kernels: running lambdas through oc_parallel, chunking, a small
// SIMD vector type (GCC/clang vector extensions), and the x86 ISA dispatch switch.
#ifndef ORTCUSTOM_KERNELS_CPU_PARALLEL_H
#define ORTCUSTOM_KERNELS_CPU_PARALLEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <memory>
#include <type_traits>

#include "../kernels.h"

// OC_X86_DISPATCH: compile the hot code twice, once for the build's baseline (x86-64: SSE2) and
// once with #pragma GCC target("avx2,fma"), and pick at run time with __builtin_cpu_supports.
// GCC only (clang does not honour #pragma GCC target); define OC_NO_X86_DISPATCH to disable.
#if !defined(OC_NO_X86_DISPATCH) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__INTEL_COMPILER) && (defined(__x86_64__) || defined(__i386__))
#define OC_X86_DISPATCH 1
#else
#define OC_X86_DISPATCH 0
#endif

#if defined(__GNUC__)
#define OC_ALWAYS_INLINE inline __attribute__((always_inline))
#define OC_RESTRICT __restrict__
#else
#define OC_ALWAYS_INLINE inline
#define OC_RESTRICT
#endif

namespace oc {
namespace detail {

#if OC_X86_DISPATCH
inline bool cpu_has_avx2_fma() {
  // Reads libgcc's CPU model (filled by a constructor; checks OS support of the YMM state).
  // ORTCUSTOM_NO_AVX2 (any value, read once) forces the baseline pass: how the tests reach it on
  // AVX2 machines.
  static const bool no_avx2 = getenv("ORTCUSTOM_NO_AVX2") != nullptr;
  return !no_avx2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

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

inline int64_t div_up(int64_t a, int64_t b) { return (a + b - 1) / b; }

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
