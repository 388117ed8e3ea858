// Shared helpers of the ortcustom CUDA kernels (device code only; no Python, no ORT).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include <atomic>

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

__host__ __device__ constexpr int64_t div_up(int64_t a, int64_t b) { return (a + b - 1) / b; }

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

// Lets `kernel` use `bytes` of dynamic shared memory (needed above 48 KiB).
template <class K>
inline cudaError_t allow_smem(K kernel, size_t bytes) {
  if (bytes <= 48 * 1024) return cudaSuccess;
  const cudaError_t e = cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
  if (e != cudaSuccess) (void)cudaGetLastError();  // returned here; not left for the next launch
  return e;
}

inline int launch_status() { return (int)cudaGetLastError(); }

}  // namespace oc_cuda
