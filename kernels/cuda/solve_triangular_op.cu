// SolveTriangular on CUDA, as an ortcustom kernel (ortcustom/kernel.h): one thread per column of X
// (A X = B: forward or back substitution down the column, neighbouring threads on neighbouring
// columns) or per row of X (X A = B: as the CPU kernel, the row loses x_i times row i of A), batch
// broadcasting as the CPU entry; on the host's stream, nothing synchronized.
#include <cuda_runtime.h>

#include "../solve_triangular_op.h"
#include "common.cuh"
#include "status.cuh"

namespace {

constexpr int kThreads = 128;

template <class T>
__global__ void __launch_bounds__(kThreads)
    solve_kernel(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ X,
                 oc_ops::BatchBroadcast batch, int64_t n, int64_t k, bool upper, bool left, bool unit) {
  const int64_t total = batch.count * k;
  for (int64_t u = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; u < total;
       u += (int64_t)gridDim.x * blockDim.x) {
    const int64_t m = u / k, c = u - m * k;
    int64_t oa, ob;
    batch.offsets(m, &oa, &ob);
    const T* a = A + oa * n * n;
    const T* b = B + ob * n * k;
    T* x = X + m * n * k;
    if (left) {  // column c of X (n x k)
      for (int64_t s = 0; s < n; ++s) {
        const int64_t i = upper ? n - 1 - s : s;
        T v = b[i * k + c];
        const int64_t j0 = upper ? i + 1 : 0, j1 = upper ? n : i;
        for (int64_t j = j0; j < j1; ++j) v -= a[i * n + j] * x[j * k + c];
        x[i * k + c] = unit ? v : v / a[i * n + i];
      }
    } else {  // row c of X (k x n)
      T* xr = x + c * n;
      const T* br = b + c * n;
      for (int64_t j = 0; j < n; ++j) xr[j] = br[j];
      for (int64_t s = 0; s < n; ++s) {
        const int64_t i = upper ? s : n - 1 - s;
        if (!unit) xr[i] /= a[i * n + i];
        const T v = xr[i];
        const int64_t j0 = upper ? i + 1 : 0, j1 = upper ? n : i;
        for (int64_t j = j0; j < j1; ++j) xr[j] -= v * a[i * n + j];
      }
    }
  }
}

int solve_triangular_cuda(oc::Context& ctx) {
  using Spec = oc_ops::SolveTriangularSpec;
  oc_ops::SolveTriangularArgs s;
  if (int rc = oc_ops::solve_triangular_prepare(ctx, &s)) return rc;
  if (s.x == nullptr) return OC_OK;
  cudaStream_t stream = static_cast<cudaStream_t>(ctx.stream());
  return oc::dispatch<Spec::types::T>(ctx, ctx.input(Spec::in::A).dtype, [&](auto tag) {
    using T = decltype(tag);
    oc_cuda::DeviceInfo dev;
    cudaError_t e = oc_cuda::device_info(&dev);
    if (e == cudaSuccess) {
      int64_t blocks = oc_cuda::div_up(s.batch.count * s.k, kThreads);
      if (blocks > (int64_t)dev.sms * 32) blocks = (int64_t)dev.sms * 32;
      solve_kernel<T><<<(unsigned)blocks, kThreads, 0, stream>>>(
          static_cast<const T*>(s.a), static_cast<const T*>(s.b), static_cast<T*>(s.x), s.batch, s.n, s.k,
          s.upper, s.left, s.unit);
      e = cudaGetLastError();
    }
    return oc_cuda::status(ctx, e);
  });
}

}  // namespace

OC_KERNEL(solve_triangular, cuda, oc_ops::SolveTriangularSpec::spec, solve_triangular_cuda)
