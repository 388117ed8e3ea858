// How ortcustom's kernel libraries were built and what they see, for `python -m ortcustom info`
// (called through ctypes: the libraries hold no Python).
#include "kernels.h"
#if ORTCUSTOM_CUDA
#include "kernels_cuda.h"
#endif

extern "C" {

// The instruction set the CPU kernels run with here (oc_cpu_isa).
OC_EXPORT const char* ortcustom_info_cpu_isa(void) { return oc_cpu_isa(); }

// Runs `iterations` rounds of the float32 multiply-add loop of the kernels' instruction set on the
// calling thread; returns the flops done (the benchmark runner times it on 1 and on all threads
// for the machine's peak).
OC_EXPORT double ortcustom_info_fma_loop(int64_t iterations) { return oc_fma_loop(iterations); }

// Round trips of a counter between two threads (oc_handoff): the handoffs seen in order; in
// *ns_one_way the mean time of one (the benchmark runner's measure of how far apart its cores are).
OC_EXPORT int64_t ortcustom_info_handoff(int64_t rounds, double* ns_one_way) {
  return oc_handoff(rounds, ns_one_way);
}

// oc_cache_keeps_bytes(): what GroupNorm's choice of stores is measured against (tests size by it).
OC_EXPORT long long ortcustom_info_cache_keeps_bytes(void) { return oc_cache_keeps_bytes(); }

// Whether the CUDA kernels were compiled in.
OC_EXPORT int ortcustom_info_cuda_built(void) { return ORTCUSTOM_CUDA; }

// CUDA devices usable now (0 without a driver or a GPU, or when built without CUDA).
OC_EXPORT int ortcustom_info_cuda_device_count(void) {
#if ORTCUSTOM_CUDA
  return oc_cuda_device_count();
#else
  return 0;
#endif
}
}
