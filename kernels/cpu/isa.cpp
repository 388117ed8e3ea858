// Which pass of the CPU kernels runs on this machine (see OC_X86_DISPATCH in parallel.h).
#include "../kernels.h"
#include "parallel.h"

extern "C" const char* oc_cpu_isa(void) {
#if OC_X86_DISPATCH
  return oc::detail::cpu_has_avx2_fma() ? "avx2+fma" : "baseline";
#else
  return "baseline";
#endif
}
