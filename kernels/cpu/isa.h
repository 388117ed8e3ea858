// The instruction-set passes of the CPU kernels: on GCC/x86 the hot code is compiled three times
// (isa_passes.inc: baseline x86-64, AVX2+FMA+F16C, AVX-512) and one pass is picked per process at
// run time (cpu_isa, isa.cpp); elsewhere there is only the baseline pass.
#ifndef ORTCUSTOM_KERNELS_CPU_ISA_H
#define ORTCUSTOM_KERNELS_CPU_ISA_H

// GCC only (clang does not honour #pragma GCC target); define OC_NO_X86_DISPATCH to disable.
#if !defined(OC_NO_X86_DISPATCH) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__INTEL_COMPILER) && (defined(__x86_64__) || defined(__i386__))
#define OC_X86_DISPATCH 1
#else
#define OC_X86_DISPATCH 0
#endif

namespace oc {
namespace detail {

enum Isa : int { kBaseline = 0, kAvx2 = 1, kAvx512 = 2 };

// The pass this process runs: the best the CPU and OS support, capped by the environment variable
// ORTCUSTOM_ISA=baseline|avx2|avx512 (ORTCUSTOM_NO_AVX2: baseline); read once.
Isa cpu_isa();

// The bytes a call's data (inputs and outputs together) may take and still be found in cache by the
// next call: an AMD core's L3 (a victim cache of its complex's L2s: every line they evict goes in);
// 0 elsewhere (an Intel Xeon's non-inclusive L3 keeps evicted lines selectively). Read once.
long long cache_keeps_bytes();

}  // namespace detail
}  // namespace oc

// OC_ISA_CALL(ns, fn, args...): ns_avx512::fn(args), ns_avx2::fn(args) or ns_base::fn(args),
// whichever pass runs here (ns: the prefix given to isa_passes.inc, qualified).
#if OC_X86_DISPATCH
#define OC_ISA_CALL(ns, fn, ...)                                                   \
  (::oc::detail::cpu_isa() == ::oc::detail::kAvx512 ? ns##_avx512::fn(__VA_ARGS__) \
   : ::oc::detail::cpu_isa() == ::oc::detail::kAvx2 ? ns##_avx2::fn(__VA_ARGS__)   \
                                                     : ns##_base::fn(__VA_ARGS__))
#else
#define OC_ISA_CALL(ns, fn, ...) ns##_base::fn(__VA_ARGS__)
#endif

#endif  // ORTCUSTOM_KERNELS_CPU_ISA_H
