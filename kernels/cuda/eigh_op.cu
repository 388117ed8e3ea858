// Eigh and Eigvalsh on CUDA, as ortcustom kernels (ortcustom/kernel.h): one thread per matrix runs
// cyclic two-sided Jacobi on a symmetric working copy (the UPLO triangle mirrored, scaled by a power
// of two) in scratch memory, on the host's stream, nothing synchronized. Made for batches of small
// matrices; large ones run, slowly. The results follow the CPU kernel's conventions (ascending
// eigenvalues; each eigenvector's largest-magnitude entry, the first of equal ones, positive). A NaN
// or an infinity in the triangle read cannot fail the run without a synchronization: that matrix's
// outputs are NaN instead.
#include <cuda_runtime.h>
#include <math.h>

#include "../eigh_op.h"
#include "common.cuh"
#include "status.cuh"

namespace {

constexpr int kThreads = 64;
constexpr int kMaxSweeps = 60;  // Jacobi converges quadratically: ~6-10 sweeps in practice

// Per matrix: W (n x n), V (n x n, vectors only) in `work`, n sorted indices in `orders`.
template <class T>
__global__ void __launch_bounds__(kThreads)
    eigh_kernel(const T* __restrict__ a, T* __restrict__ w, T* __restrict__ v, T* __restrict__ work,
                int64_t* __restrict__ orders, int64_t batch, int64_t n, bool upper) {
  const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= batch) return;
  const bool vectors = v != nullptr;
  const T* A = a + b * n * n;
  T* W = work + b * n * n * (vectors ? 2 : 1);
  T* V = W + n * n;
  int64_t* order = orders + b * n;
  T* wout = w ? w + b * n : nullptr;
  T* vout = vectors ? v + b * n * n : nullptr;
  T amax = T(0);
  bool ok = true;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) {  // (i, j) of the lower triangle; U: read at (j, i)
      const T x = upper ? A[j * n + i] : A[i * n + j];
      ok = ok && fabs(x) <= oc_cuda::Limits<T>::max();
      amax = fabs(x) > amax ? fabs(x) : amax;
      W[i * n + j] = W[j * n + i] = x;
    }
  if (!ok) {
    const T nan = T(NAN);
    if (wout) for (int64_t j = 0; j < n; ++j) wout[j] = nan;
    if (vout) for (int64_t i = 0; i < n * n; ++i) vout[i] = nan;
    return;
  }
  int e = 0;
  if (amax > T(0)) frexp((double)amax, &e);
  const T up = (T)ldexp(1.0, e);
  T down, down2;
  oc_cuda::pow2_factors(-e, down, down2);
  for (int64_t i = 0; i < n * n; ++i) W[i] = W[i] * down * down2;
  if (vectors)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) V[i * n + j] = i == j ? T(1) : T(0);
  const T eps = oc_cuda::Limits<T>::eps();
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    bool rotated = false;
    for (int64_t p = 0; p + 1 < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        const T apq = W[p * n + q], app = W[p * n + p], aqq = W[q * n + q];
        // negligible next to the diagonal (or both tiny next to the scaled matrix's ~1 entries)
        if (!(fabs(apq) > eps * T(0.5) * (fabs(app) + fabs(aqq))) || fabs(apq) < eps * eps) continue;
        rotated = true;
        const T tau = (aqq - app) / (2 * apq);
        const T t = (tau >= 0 ? T(1) : T(-1)) / (fabs(tau) + sqrt(T(1) + tau * tau));
        const T c = T(1) / sqrt(T(1) + t * t), s = t * c;
        for (int64_t k = 0; k < n; ++k) {  // W <- W J (columns p, q)
          const T x = W[k * n + p], y = W[k * n + q];
          W[k * n + p] = c * x - s * y;
          W[k * n + q] = s * x + c * y;
        }
        for (int64_t k = 0; k < n; ++k) {  // W <- J^T W (rows p, q)
          const T x = W[p * n + k], y = W[q * n + k];
          W[p * n + k] = c * x - s * y;
          W[q * n + k] = s * x + c * y;
        }
        W[p * n + q] = W[q * n + p] = T(0);
        if (vectors)
          for (int64_t k = 0; k < n; ++k) {  // V <- V J
            const T x = V[k * n + p], y = V[k * n + q];
            V[k * n + p] = c * x - s * y;
            V[k * n + q] = s * x + c * y;
          }
      }
    if (!rotated) break;
  }
  for (int64_t j = 0; j < n; ++j) {  // ascending: insertion sort of the indices
    int64_t i = j;
    for (; i > 0 && W[order[i - 1] * (n + 1)] > W[j * (n + 1)]; --i) order[i] = order[i - 1];
    order[i] = j;
  }
  if (wout)
    for (int64_t j = 0; j < n; ++j) wout[j] = W[order[j] * (n + 1)] * up;
  if (!vectors) return;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t c = order[j];
    int64_t big = 0;
    for (int64_t i = 1; i < n; ++i)
      if (fabs(V[i * n + c]) > fabs(V[big * n + c])) big = i;
    const T sign = V[big * n + c] < T(0) ? T(-1) : T(1);
    for (int64_t i = 0; i < n; ++i) vout[i * n + j] = sign * V[i * n + c];
  }
}

int run(oc::Context& ctx, bool vectors) {
  oc_ops::EighArgs a;
  if (int rc = oc_ops::eigh_prepare(ctx, vectors, &a)) return rc;
  if (a.batch == 0 || a.n == 0 || (a.w == nullptr && a.v == nullptr)) return OC_OK;
  cudaStream_t stream = static_cast<cudaStream_t>(ctx.stream());
  const int32_t dtype = ctx.input(oc_ops::EighSpec::in::A).dtype;
  return oc::dispatch<oc_ops::EighSpec::types::T>(ctx, dtype, [&](auto tag) {
    using T = decltype(tag);
    const bool uv = a.v != nullptr;
    const size_t elems_bytes = ((size_t)(a.batch * a.n * a.n * (uv ? 2 : 1)) * sizeof(T) + 15) & ~(size_t)15;
    void* work = nullptr;
    if (int rc = ctx.scratch(elems_bytes + (size_t)(a.batch * a.n) * sizeof(int64_t), &work)) return rc;
    int64_t* orders = reinterpret_cast<int64_t*>(static_cast<char*>(work) + elems_bytes);
    const unsigned blocks = (unsigned)((a.batch + kThreads - 1) / kThreads);
    eigh_kernel<T><<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(a.a), static_cast<T*>(a.w),
                                                    static_cast<T*>(a.v), static_cast<T*>(work), orders, a.batch,
                                                    a.n, a.upper);
    return oc_cuda::launched(ctx);
  });
}

int eigh_cuda(oc::Context& ctx) { return run(ctx, true); }
int eigvalsh_cuda(oc::Context& ctx) { return run(ctx, false); }

}  // namespace

OC_KERNEL_STATEFUL(eigh, cuda, oc_ops::EighSpec::spec, oc_ops::eigh_create<oc_ops::EighSpec>, oc_ops::eigh_destroy,
                   eigh_cuda)
OC_KERNEL_STATEFUL(eigvalsh, cuda, oc_ops::EigvalshSpec::spec, oc_ops::eigh_create<oc_ops::EigvalshSpec>,
                   oc_ops::eigh_destroy, eigvalsh_cuda)
