// A float32 multiply-add loop at the machine's peak, for the benchmark runner's "fraction of
// peak" (ortcustom_info_fma_loop, library_info.cpp): many independent accumulator chains, so the
// loop is bound by the FMA units' throughput, not their latency. Compiled once per instruction set
// (isa_passes.inc) and run with the pass the kernels use: the peak is the one they can reach.
#ifndef OC_ISA_PASS

#include <stdint.h>

#include "../kernels.h"
#include "parallel.h"

namespace oc {
#define OC_ISA_PASS_FILE "fma_peak.cpp"
#define OC_ISA_PASS_NS fma_peak
#include "isa_passes.inc"  // oc::fma_peak_base, _avx2, _avx512
}  // namespace oc

extern "C" double oc_fma_loop(int64_t iterations) {
  return OC_ISA_CALL(oc::fma_peak, fma_loop, iterations);
}

#else  // OC_ISA_PASS

// 12 chains: enough for 2 FMA ports x 4-5 cycles of latency (Intel, AMD Zen 3/4) and few enough
// for the 16 registers of SSE/AVX2. The multiplier is 1 and the addend tiny, so the values stay
// finite however long it runs. Baseline (no FMA): a multiply and an add per element (2 flops).
double fma_loop(int64_t iterations) {
  enum { kChains = 12, W = OC_VEC_BYTES / 4 };
  typedef ::oc::detail::Simd<float, W>::type V;
  V acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = V{} + (float)c;
  V m = V{} + 1.0f, d = V{} + 1e-30f;
  // the asm keeps the compiler from folding the constants into the loop (m*x + d with m = 1)
  __asm__ volatile("" : "+x"(m), "+x"(d));
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = acc[c] * m + d;
  }
  float sum = 0;
  for (int c = 0; c < kChains; ++c)
    for (int j = 0; j < W; ++j) sum += acc[c][j];
  volatile float sink = sum;  // the result is used: the loop cannot be dropped
  (void)sink;
  return 2.0 * kChains * W * (double)iterations;
}

#endif  // OC_ISA_PASS
