// ScaledAdd on CUDA: Z = X + alpha * Y, one grid-stride loop, launched on the stream ortcustom
// gives (ONNX Runtime's in a session, the array library's in a direct call).
#include <cuda_fp16.h>

#include <algorithm>

#include "../scaled_add.h"

namespace {

template <class T, class A>
__global__ void scaled_add(const T* x, const T* y, T* z, int64_t n, A alpha) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    z[i] = x[i] + alpha * y[i];
}

// float16: computed in float, rounded once
__global__ void scaled_add_f16(const __half* x, const __half* y, __half* z, int64_t n, float alpha) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    z[i] = __float2half(__half2float(x[i]) + alpha * __half2float(y[i]));
}

int scaled_add_cuda(oc::Context& ctx) {
  myops::ScaledAddArgs a;
  if (int rc = myops::scaled_add_prepare(ctx, &a)) return rc;
  if (a.z == nullptr) return OC_OK;
  cudaStream_t s = static_cast<cudaStream_t>(ctx.stream());
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<int64_t>((a.n + threads - 1) / threads, 65535));
  using Spec = myops::ScaledAddSpec;
  int rc = oc::dispatch<Spec::types::T>(ctx, ctx.input(Spec::in::X).dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, oc::half>)
      scaled_add_f16<<<blocks, threads, 0, s>>>(static_cast<const __half*>(a.x),
                                                static_cast<const __half*>(a.y),
                                                static_cast<__half*>(a.z), a.n, (float)a.alpha);
    else
      scaled_add<<<blocks, threads, 0, s>>>(static_cast<const T*>(a.x), static_cast<const T*>(a.y),
                                            static_cast<T*>(a.z), a.n, static_cast<T>(a.alpha));
    return static_cast<int>(OC_OK);
  });
  if (rc != OC_OK) return rc;
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return ctx.fail(OC_FAIL, "CUDA launch failed: %s", cudaGetErrorString(e));
  return OC_OK;
}

constexpr int32_t kInplace[] = {myops::ScaledAddSpec::in::X};  // Z may be written over X: elementwise

}  // namespace

// exports ortcustom_kernel_scaled_add_cuda(): the same op, on ORT's CUDA provider and GPU arrays
OC_KERNEL(scaled_add, cuda, myops::ScaledAddSpec::spec_inplace(kInplace), scaled_add_cuda)
