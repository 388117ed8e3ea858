// SearchSorted on CUDA, as an ortcustom kernel (ortcustom/kernel.h): one thread per value, the
// same bisection as the CPU kernel (torch's steps: equal answers for unsorted rows and NaNs), on
// the host's stream, nothing synchronized. A sorter cannot be checked before the launch without
// synchronizing: a search that meets an index outside [0, N) stops and writes -1 (never reads
// outside the row), where the CPU kernel fails.
#include <cuda_runtime.h>

#include "../searchsorted_op.h"
#include "common.cuh"
#include "status.cuh"

namespace {

constexpr int kThreads = 256;

template <class S, class T, bool Right, bool Indirect>
__global__ void __launch_bounds__(kThreads)
    search_kernel(const S* __restrict__ seq, const int64_t* __restrict__ sorter,
                  const S* __restrict__ values, int64_t* __restrict__ y, int64_t total,
                  int64_t per_row, int64_t n) {
  for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < total;
       j += (int64_t)gridDim.x * blockDim.x) {
    const int64_t r = j / per_row;
    const S* s = seq + r * n;
    const int64_t* so = Indirect ? sorter + r * n : nullptr;
    const T x = oc_cuda::Conv<S, T>::load(values[j]);
    int64_t start = 0, len = n;
    bool bad = false;
    while (len > 0) {
      const int64_t half = len >> 1, mid = start + half;
      int64_t at = mid;
      if (Indirect) {
        at = so[mid];
        if (at < 0 || at >= n) {
          bad = true;
          break;
        }
      }
      const T b = oc_cuda::Conv<S, T>::load(s[at]);
      const bool after = Right ? !(b > x) : !(b >= x);
      start = after ? mid + 1 : start;
      len = after ? len - half - 1 : half;
    }
    y[j] = bad ? -1 : start;
  }
}

template <class S, class T>
cudaError_t launch(const oc_ops::SearchSortedArgs& a, cudaStream_t stream) {
  const S* seq = static_cast<const S*>(a.seq);
  const S* val = static_cast<const S*>(a.values);
  const int64_t total = a.rows * a.per_row;
  if (a.n == 0) return cudaMemsetAsync(a.y, 0, (size_t)total * sizeof(int64_t), stream);
  oc_cuda::DeviceInfo info;
  if (cudaError_t e = oc_cuda::device_info(&info)) return e;
  int64_t blocks = oc_cuda::div_up(total, kThreads);
  const int64_t most = (int64_t)info.sms * 32;
  if (blocks > most) blocks = most;
#define OC_LAUNCH(R, I) \
  search_kernel<S, T, R, I><<<(unsigned)blocks, kThreads, 0, stream>>>(seq, a.sorter, val, a.y, total, a.per_row, a.n)
  if (a.right) {
    if (a.sorter) OC_LAUNCH(true, true); else OC_LAUNCH(true, false);
  } else {
    if (a.sorter) OC_LAUNCH(false, true); else OC_LAUNCH(false, false);
  }
#undef OC_LAUNCH
  return cudaGetLastError();
}

int searchsorted_cuda(oc::Context& ctx) {
  using Spec = oc_ops::SearchSortedSpec;
  oc_ops::SearchSortedArgs a;
  if (int rc = oc_ops::searchsorted_prepare(ctx, &a)) return rc;
  if (a.y == nullptr) return OC_OK;
  cudaStream_t s = static_cast<cudaStream_t>(ctx.stream());
  return oc::dispatch<Spec::types::T>(ctx, ctx.input(Spec::in::values).dtype, [&](auto tag) {
    using T = decltype(tag);
    cudaError_t e;
    if constexpr (std::is_same_v<T, oc::half>)
      e = launch<uint16_t, float>(a, s);  // compared in float: the same order
    else
      e = launch<T, T>(a, s);
    return oc_cuda::status(ctx, e);
  });
}

}  // namespace

OC_KERNEL_STATEFUL(searchsorted, cuda, oc_ops::SearchSortedSpec::spec, oc_ops::searchsorted_create,
                   oc_ops::searchsorted_destroy, searchsorted_cuda)
