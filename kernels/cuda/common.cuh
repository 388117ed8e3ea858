// Shared helpers of the ortcustom CUDA kernels (device code only; no Python, no ORT).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include <atomic>
#include <type_traits>

namespace oc_cuda {

constexpr unsigned kFullMask = 0xffffffffu;

// Storage <-> compute conversion (float16 storage is IEEE binary16 bits, computed in float).
template <class S, class T>
struct Conv {
  static __device__ __forceinline__ T load(S v) { return (T)v; }
  static __device__ __forceinline__ S store(T v) { return (S)v; }
};
template <>
struct Conv<uint16_t, float> {
  static __device__ __forceinline__ float load(uint16_t v) {
    return __half2float(__ushort_as_half(v));
  }
  static __device__ __forceinline__ uint16_t store(float v) {
    return __half_as_ushort(__float2half_rn(v));
  }
};

// The IEEE limits of a compute type, in device code (std::numeric_limits is host-only there).
template <class T>
struct Limits;
template <>
struct Limits<float> {
  static __device__ float eps() { return 1.1920929e-7f; }
  static __device__ float min() { return 1.17549435e-38f; }
  static __device__ float max() { return 3.402823466e38f; }
};
template <>
struct Limits<double> {
  static __device__ double eps() { return 2.220446049250313e-16; }
  static __device__ double min() { return 2.2250738585072014e-308; }
  static __device__ double max() { return 1.7976931348623157e308; }
};

__host__ __device__ constexpr int64_t div_up(int64_t a, int64_t b) { return (a + b - 1) / b; }

// 2^e as two factors f1 f2 of T: f2 is 1 unless 2^e is out of T's range (the 2^-e that scales a matrix whose
// largest entry is subnormal), so x * f1 * f2 is x 2^e, exact where that is normal (as the CPU kernels').
template <class T>
__device__ void pow2_factors(int e, T& f1, T& f2) {
  const int hi = sizeof(T) == 4 ? 127 : 1023, lo = sizeof(T) == 4 ? -126 : -1022;
  const bool split = e > hi || e < lo;
  f1 = (T)ldexp(1.0, split ? e / 2 : e);
  f2 = (T)ldexp(1.0, split ? e - e / 2 : 0);
}

// Device properties of the calling thread's current device, cached per device (the queries are
// cheap and never synchronize, but the cache avoids them on every launch).
struct DeviceInfo {
  int sms;         // multiprocessor count
  int cc_major;    // compute capability major
  int smem_optin;  // max dynamic + static shared memory per block with opt-in, bytes
};

inline cudaError_t device_info(DeviceInfo* out) {
  constexpr int kMaxDev = 64;
  static std::atomic<int> cache_sms[kMaxDev], cache_cc[kMaxDev], cache_smem[kMaxDev];
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  if (dev >= 0 && dev < kMaxDev) {
    const int s = cache_sms[dev].load(std::memory_order_acquire);
    if (s > 0) {
      out->sms = s;
      out->cc_major = cache_cc[dev].load(std::memory_order_relaxed);
      out->smem_optin = cache_smem[dev].load(std::memory_order_relaxed);
      return cudaSuccess;
    }
  }
  int sms = 0, cc = 0, smem = 0;
  if ((e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess)
    return e;
  if ((e = cudaDeviceGetAttribute(&cc, cudaDevAttrComputeCapabilityMajor, dev)) != cudaSuccess)
    return e;
  if ((e = cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) !=
      cudaSuccess)
    return e;
  if (sms < 1) sms = 1;
  if (smem < 48 * 1024) smem = 48 * 1024;
  out->sms = sms;
  out->cc_major = cc;
  out->smem_optin = smem;
  if (dev >= 0 && dev < kMaxDev) {
    cache_cc[dev].store(cc, std::memory_order_relaxed);
    cache_smem[dev].store(smem, std::memory_order_relaxed);
    cache_sms[dev].store(sms, std::memory_order_release);
  }
  return cudaSuccess;
}

// Lets the kernel `Kernel` use `bytes` of dynamic shared memory on the current device (a launch
// above 48 KiB needs it raised first).
//
// The limit is an attribute of the function, shared by every thread and stream of the process.
// Setting it to each launch's own size was a race: a thread could lower it between another's
// set and launch, which then failed with "invalid argument". So it is set once per (kernel,
// device), to the most the device allows with opt-in (less the kernel's static shared memory),
// and never changed again. Threads racing on first use all write that same value (harmless),
// and a launch follows either its own successful set or an acquire-load of another's
// completed one. A failed set is not recorded: the next launch tries again.
template <auto Kernel>
inline cudaError_t allow_smem(size_t bytes) {
  constexpr size_t kDefaultLimit = 48 * 1024;
  constexpr int kMaxDev = 64;
  static std::atomic<int> limit[kMaxDev];  // per device: the limit set, 0 until then
  if (bytes <= kDefaultLimit) return cudaSuccess;
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return e;
  }
  const bool cached = dev >= 0 && dev < kMaxDev;
  int lim = cached ? limit[dev].load(std::memory_order_acquire) : 0;
  if (lim == 0) {
    const void* fn = reinterpret_cast<const void*>(Kernel);
    int optin = 0;
    cudaFuncAttributes fa;
    if ((e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) !=
            cudaSuccess ||
        (e = cudaFuncGetAttributes(&fa, fn)) != cudaSuccess) {
      (void)cudaGetLastError();  // returned here; not left for the next launch
      return e;
    }
    lim = optin - (int)fa.sharedSizeBytes;
    if (lim < (int)kDefaultLimit) return cudaErrorInvalidValue;
    e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, lim);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      return e;
    }
    if (cached) limit[dev].store(lim, std::memory_order_release);
  }
  return bytes <= (size_t)lim ? cudaSuccess : cudaErrorInvalidValue;
}

// A kernel as a type, for generic lambdas that call allow_smem<Kernel> (C++17 has no template
// parameter lists on lambdas): launch(kernel_c<my_kernel<float>>{}).
template <auto Kernel>
using kernel_c = std::integral_constant<decltype(Kernel), Kernel>;

inline int launch_status() { return (int)cudaGetLastError(); }

}  // namespace oc_cuda
