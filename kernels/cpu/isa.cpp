// Which pass of the CPU kernels runs on this machine (isa.h, isa_passes.inc).
#include "isa.h"

#include <stdlib.h>
#include <string.h>

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

}  // namespace

Isa cpu_isa() {
  static const Isa isa = supported() < requested() ? supported() : requested();
  return isa;
}

}  // namespace detail
}  // namespace oc

extern "C" const char* oc_cpu_isa(void) {
  static const char* const names[] = {"baseline", "avx2+fma", "avx512"};
  return names[oc::detail::cpu_isa()];
}
