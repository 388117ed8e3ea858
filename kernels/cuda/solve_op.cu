// Solve, SolveEx and Slogdet on CUDA, as ortcustom kernels (ortcustom/kernel.h): one thread per
// matrix of A factors it (getrf's unblocked loop, as the CPU's small path) into scratch; then one
// thread per right-hand side (a column of X for A X = B, a row for vectors, a row of X A = B with
// A's own factors transposed: U^T, L^T, the swaps undone, so that info is A's as torch's) solves
// it, or one thread per matrix reads the determinant off U (of A^T, as the CPU's). Batch
// broadcasting as the CPU entry; on the host's stream, nothing synchronized. Solve cannot check for
// a singular matrix without a synchronization: its X is then inf/NaN (SolveEx reports it in info).
// Built for the batched small matrices of robotics and vision; a large single matrix gets one thread.
#include <cuda_runtime.h>
#include <string.h>

#include "../solve_op.h"
#include "common.cuh"
#include "status.cuh"

namespace {

constexpr int kThreads = 128;

template <class T>
__device__ __forceinline__ T absval(T v) { return v < T(0) ? -v : v; }

template <class T>
__global__ void __launch_bounds__(kThreads)
    lu_kernel(const T* __restrict__ A, T* __restrict__ LU, int32_t* __restrict__ piv, int32_t* __restrict__ info,
              int64_t count, int64_t n, bool transpose) {
  for (int64_t m = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; m < count; m += (int64_t)gridDim.x * blockDim.x) {
    const T* a = A + m * n * n;
    T* w = LU + m * n * n;
    int32_t* p = piv + m * n;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) w[i * n + j] = transpose ? a[j * n + i] : a[i * n + j];
    int32_t bad = 0;
    for (int64_t j = 0; j < n; ++j) {
      int64_t q = j;
      T best = absval(w[j * n + j]);
      if (!(best == best)) best = T(-1);
      for (int64_t i = j + 1; i < n; ++i) {
        const T v = absval(w[i * n + j]);
        if (v > best) {
          best = v;
          q = i;
        }
      }
      p[j] = (int32_t)q;
      if (q != j)
        for (int64_t c = 0; c < n; ++c) {
          const T t = w[j * n + c];
          w[j * n + c] = w[q * n + c];
          w[q * n + c] = t;
        }
      const T d = w[j * n + j];
      if (d == T(0)) {
        if (bad == 0) bad = (int32_t)(j + 1);
        continue;
      }
      for (int64_t i = j + 1; i < n; ++i) {
        const T l = w[i * n + j] / d;
        w[i * n + j] = l;
        for (int64_t c = j + 1; c < n; ++c) w[i * n + c] -= l * w[j * n + c];
      }
    }
    if (info != nullptr) info[m] = bad;
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    solve_kernel(const T* __restrict__ LU, const int32_t* __restrict__ piv, const T* __restrict__ B,
                 T* __restrict__ X, oc_ops::BatchBroadcast batch, int64_t n, int64_t k, bool rows, bool trans) {
  const int64_t total = batch.count * k;
  for (int64_t u = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; u < total; u += (int64_t)gridDim.x * blockDim.x) {
    const int64_t m = u / k, c = u - m * k;
    int64_t oa, ob;
    batch.offsets(m, &oa, &ob);
    const T* f = LU + oa * n * n;
    const int32_t* p = piv + oa * n;
    // element i of this right-hand side: x[i * step] (a column of an n x k block, or a row of k x n)
    const int64_t step = rows ? 1 : k, base = rows ? c * n : c;
    const T* b = B + ob * n * k + base;
    T* x = X + m * n * k + base;
    for (int64_t i = 0; i < n; ++i) x[i * step] = b[i * step];
    if (trans) {  // A^T x = b (a row of X A = B): A^T = U^T L^T P
      for (int64_t i = 0; i < n; ++i) {
        T v = x[i];
        for (int64_t j = 0; j < i; ++j) v -= f[j * n + i] * x[j];
        x[i] = v / f[i * n + i];
      }
      for (int64_t i = n - 2; i >= 0; --i) {
        T v = x[i];
        for (int64_t j = i + 1; j < n; ++j) v -= f[j * n + i] * x[j];
        x[i] = v;
      }
      for (int64_t i = n - 1; i >= 0; --i)
        if (p[i] != i) {
          const T t = x[i];
          x[i] = x[p[i]];
          x[p[i]] = t;
        }
      continue;
    }
    for (int64_t i = 0; i < n; ++i)
      if (p[i] != i) {
        const T t = x[i * step];
        x[i * step] = x[p[i] * step];
        x[p[i] * step] = t;
      }
    for (int64_t i = 1; i < n; ++i) {
      T v = x[i * step];
      for (int64_t j = 0; j < i; ++j) v -= f[i * n + j] * x[j * step];
      x[i * step] = v;
    }
    for (int64_t i = n - 1; i >= 0; --i) {
      T v = x[i * step];
      for (int64_t j = i + 1; j < n; ++j) v -= f[i * n + j] * x[j * step];
      x[i * step] = v / f[i * n + i];
    }
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    slogdet_kernel(const T* __restrict__ LU, const int32_t* __restrict__ piv, int64_t count, int64_t n,
                   T* __restrict__ sign, T* __restrict__ logabs) {
  for (int64_t m = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; m < count; m += (int64_t)gridDim.x * blockDim.x) {
    T s = T(1), l = T(0);
    for (int64_t i = 0; i < n; ++i) {
      const T d = LU[m * n * n + i * n + i];
      s *= d > T(0) ? T(1) : d < T(0) ? T(-1) : T(0);
      if (piv[m * n + i] != i) s = -s;
      l += log(absval(d));
    }
    if (sign) sign[m] = s == T(0) ? T(0) : s;
    if (logabs) logabs[m] = n == 0 ? T(0) : l;
  }
}

unsigned grid(int64_t units, const oc_cuda::DeviceInfo& dev) {
  int64_t blocks = oc_cuda::div_up(units, kThreads);
  if (blocks > (int64_t)dev.sms * 32) blocks = (int64_t)dev.sms * 32;
  return (unsigned)(blocks < 1 ? 1 : blocks);
}

// Factors A's matrices into scratch (info into `info` when given).
template <class T>
int factor(oc::Context& ctx, const T* a, int64_t count, int64_t n, bool transpose, int32_t* info, T** lu,
           int32_t** piv, const oc_cuda::DeviceInfo& dev) {
  void* p = nullptr;
  if (int rc = ctx.scratch((size_t)(count * n) * n * sizeof(T), &p)) return rc;
  *lu = static_cast<T*>(p);
  if (int rc = ctx.scratch((size_t)(count * n) * sizeof(int32_t), &p)) return rc;
  *piv = static_cast<int32_t*>(p);
  lu_kernel<T><<<grid(count, dev), kThreads, 0, static_cast<cudaStream_t>(ctx.stream())>>>(a, *lu, *piv, info, count,
                                                                                          n, transpose);
  if (cudaError_t e = cudaGetLastError()) return oc_cuda::failed(ctx, e);
  return OC_OK;
}

int solve_common(oc::Context& ctx, bool ex) {
  using Spec = oc_ops::SolveSpec;
  oc_ops::SolveArgs s;
  if (int rc = oc_ops::solve_prepare(ctx, ex, &s)) return rc;
  cudaStream_t stream = static_cast<cudaStream_t>(ctx.stream());
  if (s.n == 0 || s.a_count == 0) {
    if (s.info != nullptr && s.a_count > 0)
      if (cudaError_t e = cudaMemsetAsync(s.info, 0, (size_t)s.a_count * sizeof(int32_t), stream)) return oc_cuda::failed(ctx, e);
    return OC_OK;
  }
  if (s.x == nullptr && s.info == nullptr) return OC_OK;
  return oc::dispatch<Spec::types::T>(ctx, ctx.input(Spec::in::A).dtype, [&](auto tag) -> int {
    using T = decltype(tag);
    oc_cuda::DeviceInfo dev;
    if (cudaError_t e = oc_cuda::device_info(&dev)) return oc_cuda::failed(ctx, e);
    T* lu = nullptr;
    int32_t* piv = nullptr;
    if (int rc = factor<T>(ctx, static_cast<const T*>(s.a), s.a_count, s.n, false, s.info, &lu, &piv, dev)) return rc;
    if (s.x == nullptr) return OC_OK;
    solve_kernel<T><<<grid(s.batch.count * s.k, dev), kThreads, 0, stream>>>(
        lu, piv, static_cast<const T*>(s.b), static_cast<T*>(s.x), s.batch, s.n, s.k, s.vector || !s.left, !s.left);
    if (cudaError_t e = cudaGetLastError()) return oc_cuda::failed(ctx, e);
    return OC_OK;
  });
}

int solve_cuda(oc::Context& ctx) { return solve_common(ctx, false); }
int solve_ex_cuda(oc::Context& ctx) { return solve_common(ctx, true); }

int slogdet_cuda(oc::Context& ctx) {
  using Spec = oc_ops::SlogdetSpec;
  oc_ops::SlogdetArgs s;
  if (int rc = oc_ops::slogdet_prepare(ctx, &s)) return rc;
  if (s.batch == 0 || (s.sign == nullptr && s.logabs == nullptr)) return OC_OK;
  return oc::dispatch<Spec::types::T>(ctx, ctx.input(Spec::in::A).dtype, [&](auto tag) -> int {
    using T = decltype(tag);
    oc_cuda::DeviceInfo dev;
    if (cudaError_t e = oc_cuda::device_info(&dev)) return oc_cuda::failed(ctx, e);
    T* lu = nullptr;
    int32_t* piv = nullptr;
    if (s.n > 0)  // A^T's factors, as the CPU kernel's (solve.cpp: which equal lines give an exact zero)
      if (int rc = factor<T>(ctx, static_cast<const T*>(s.a), s.batch, s.n, true, nullptr, &lu, &piv, dev)) return rc;
    slogdet_kernel<T><<<grid(s.batch, dev), kThreads, 0, static_cast<cudaStream_t>(ctx.stream())>>>(
        lu, piv, s.batch, s.n, static_cast<T*>(s.sign), static_cast<T*>(s.logabs));
    if (cudaError_t e = cudaGetLastError()) return oc_cuda::failed(ctx, e);
    return OC_OK;
  });
}

}  // namespace

OC_KERNEL(solve, cuda, oc_ops::SolveSpec::spec, solve_cuda)
OC_KERNEL(solve_ex, cuda, oc_ops::SolveExSpec::spec, solve_ex_cuda)
OC_KERNEL(slogdet, cuda, oc_ops::SlogdetSpec::spec, slogdet_cuda)
