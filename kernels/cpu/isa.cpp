// Which pass of the CPU kernels runs on this machine (isa.h, isa_passes.inc).
#include "isa.h"

#include <stdlib.h>
#include <string.h>
#if OC_X86_DISPATCH
#include <cpuid.h>
#endif

#include "../kernels.h"

namespace oc {
namespace detail {
namespace {

Isa supported() {
#if OC_X86_DISPATCH
  // libgcc's CPU model (filled by a constructor) includes the OS's support of the YMM / ZMM state.
  // F16C comes with every AVX2 CPU; BW/VL/DQ with every AVX-512 one but Xeon Phi.
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") ||
      !__builtin_cpu_supports("f16c"))
    return kBaseline;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    return kAvx512;
  return kAvx2;
#else
  return kBaseline;
#endif
}

// The cap the environment asks for: how the tests run every pass on one machine. An unknown
// ORTCUSTOM_ISA value caps nothing (the kernels cannot report an error; oc_cpu_isa() shows it).
Isa requested() {
  if (getenv("ORTCUSTOM_NO_AVX2") != nullptr) return kBaseline;  // the older switch
  const char* s = getenv("ORTCUSTOM_ISA");
  if (s == nullptr) return kAvx512;
  if (strcmp(s, "baseline") == 0) return kBaseline;
  if (strcmp(s, "avx2") == 0 || strcmp(s, "avx2+fma") == 0) return kAvx2;
  return kAvx512;
}

// AMD's L3 size from the cache topology leaf (0x8000001D: the L3 of this core's complex; the
// legacy leaf and glibc's sysconf give the whole socket's, 384 MiB on a Zen 5 EPYC); 0 elsewhere.
long long amd_l3_bytes() {
#if OC_X86_DISPATCH
  if (!__builtin_cpu_is("amd") || __get_cpuid_max(0x80000000u, nullptr) < 0x8000001Du) return 0;
  for (unsigned i = 0; i < 8; ++i) {
    unsigned a = 0, b = 0, c = 0, d = 0;
    __cpuid_count(0x8000001Du, i, a, b, c, d);
    if ((a & 31) == 0) break;  // no more caches
    if (((a >> 5) & 7) == 3)   // sets * line * partitions * ways
      return (long long)(c + 1) * ((b & 0xfff) + 1) * (((b >> 12) & 0x3ff) + 1) * (((b >> 22) & 0x3ff) + 1);
  }
#endif
  return 0;
}

}  // namespace

long long cache_keeps_bytes() {
  static const long long bytes = amd_l3_bytes();
  return bytes;
}

Isa cpu_isa() {
  static const Isa isa = supported() < requested() ? supported() : requested();
  return isa;
}

}  // namespace detail
}  // namespace oc

extern "C" long long oc_cache_keeps_bytes(void) { return oc::detail::cache_keeps_bytes(); }

extern "C" const char* oc_cpu_isa(void) {
  static const char* const names[] = {"baseline", "avx2+fma", "avx512"};
  return names[oc::detail::cpu_isa()];
}
