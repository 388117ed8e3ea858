// Cholesky and CholeskyEx on CUDA, as ortcustom kernels (ortcustom/kernel.h): one block per matrix,
// factored in the output buffer column by column (the diagonal by a block reduction, the column
// below it one row per thread), on the host's stream, nothing synchronized. Upper factors are
// computed in place in the transposed positions (U[j][i] = L[i][j]). A matrix that is not
// positive-definite cannot fail Cholesky without a synchronization: its L is all NaN instead
// (CholeskyEx writes the matrix's info, as on the CPU).
#include <cuda_runtime.h>
#include <math.h>

#include "../cholesky_op.h"
#include "common.cuh"
#include "status.cuh"

namespace {

constexpr int kThreads = 128;

template <class T>
__global__ void __launch_bounds__(kThreads)
    cholesky_kernel(const T* __restrict__ a, T* __restrict__ l, int32_t* __restrict__ info,
                    int64_t batch, int64_t n, bool upper, bool nan_on_failure) {
  __shared__ T red[kThreads];
  __shared__ T piv;
  __shared__ int64_t failed;
  const int tid = threadIdx.x;
  for (int64_t b = blockIdx.x; b < batch; b += gridDim.x) {
    const T* src = a + b * n * n;
    T* dst = l + b * n * n;
    // element (i, j) of the lower factor lives at at(i, j); the triangle read is A's at the same place
    auto at = [&](int64_t i, int64_t j) { return upper ? j * n + i : i * n + j; };
    for (int64_t e = tid; e < n * n; e += kThreads) {
      const int64_t i = e / n, j = e - i * n;
      dst[at(i, j)] = j <= i ? src[at(i, j)] : T(0);
    }
    if (tid == 0) failed = 0;
    for (int64_t j = 0; j < n; ++j) {
      __syncthreads();
      T s = T(0);
      for (int64_t k = tid; k < j; k += kThreads) {
        const T v = dst[at(j, k)];
        s += v * v;
      }
      red[tid] = s;
      __syncthreads();
      for (int w = kThreads / 2; w > 0; w >>= 1) {
        if (tid < w) red[tid] += red[tid + w];
        __syncthreads();
      }
      if (tid == 0) {
        const T d = dst[at(j, j)] - red[0];
        if (!(d > T(0))) {
          failed = j + 1;
          dst[at(j, j)] = d;
        } else {
          piv = sqrt(d);
          dst[at(j, j)] = piv;
        }
      }
      __syncthreads();
      if (failed) break;
      for (int64_t i = j + 1 + tid; i < n; i += kThreads) {
        T t = dst[at(i, j)];
        for (int64_t k = 0; k < j; ++k) t -= dst[at(i, k)] * dst[at(j, k)];
        dst[at(i, j)] = t / piv;
      }
    }
    __syncthreads();
    if (info != nullptr && tid == 0) info[b] = (int32_t)failed;
    if (failed && nan_on_failure)
      for (int64_t e = tid; e < n * n; e += kThreads) dst[e] = (T)NAN;
    __syncthreads();  // `failed` is reused by the next matrix
  }
}

template <class T>
cudaError_t launch(const oc_ops::CholeskyArgs& a, T* l, int32_t* info, bool nan_on_failure,
                   cudaStream_t stream) {
  oc_cuda::DeviceInfo dev;
  if (cudaError_t e = oc_cuda::device_info(&dev)) return e;
  const int64_t most = (int64_t)dev.sms * 16;
  const unsigned blocks = (unsigned)(a.batch < most ? a.batch : most);
  cholesky_kernel<T><<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(a.a), l, info, a.batch,
                                                      a.n, a.upper, nan_on_failure);
  return cudaGetLastError();
}

int run(oc::Context& ctx, const oc_ops::CholeskyArgs& a, bool ex) {
  cudaStream_t s = static_cast<cudaStream_t>(ctx.stream());
  const int32_t dtype = ctx.input(oc_ops::CholeskySpec::in::A).dtype;
  return oc::dispatch<oc_ops::CholeskySpec::types::T>(ctx, dtype, [&](auto tag) {
    using T = decltype(tag);
    void* l = a.l;
    if (l == nullptr)  // CholeskyEx whose node uses info only
      if (int rc = ctx.scratch((size_t)(a.batch * a.n * a.n) * sizeof(T), &l)) return rc;
    const cudaError_t e = launch<T>(a, static_cast<T*>(l), a.info, !ex, s);
    return oc_cuda::status(ctx, e);
  });
}

int cholesky_cuda(oc::Context& ctx) {
  oc_ops::CholeskyArgs a;
  if (int rc = oc_ops::cholesky_prepare(ctx, false, &a)) return rc;
  if (a.l == nullptr) return OC_OK;
  return run(ctx, a, false);
}

int cholesky_ex_cuda(oc::Context& ctx) {
  oc_ops::CholeskyArgs a;
  if (int rc = oc_ops::cholesky_prepare(ctx, true, &a)) return rc;
  if (a.batch == 0 || (a.l == nullptr && a.info == nullptr)) return OC_OK;
  if (a.n == 0) {  // 0 x 0 matrices: factored
    if (a.info == nullptr) return OC_OK;
    const cudaError_t e = cudaMemsetAsync(a.info, 0, (size_t)a.batch * sizeof(int32_t),
                                          static_cast<cudaStream_t>(ctx.stream()));
    return oc_cuda::status(ctx, e, "cudaMemsetAsync");
  }
  return run(ctx, a, true);
}

}  // namespace

OC_KERNEL(cholesky, cuda, oc_ops::CholeskySpec::spec, cholesky_cuda)
OC_KERNEL(cholesky_ex, cuda, oc_ops::CholeskyExSpec::spec, cholesky_ex_cuda)
