// Svd and Svdvals on CUDA, as ortcustom kernels (ortcustom/kernel.h): one thread per matrix runs the
// CPU kernel's one-sided Jacobi (kernels/cpu/svd.cpp: the same steps, scalar) in a working copy in
// scratch memory, on the host's stream, nothing synchronized. Made for batches of small matrices;
// large ones run, slowly. A matrix holding a NaN or an infinity cannot fail the run without a
// synchronization: its outputs are NaN instead.
#include <cuda_runtime.h>
#include <math.h>

#include "../svd_op.h"
#include "common.cuh"
#include "status.cuh"

namespace {

constexpr int kThreads = 64;
constexpr int kMaxSweeps = 60;

template <class T>
__device__ T dot(const T* x, const T* y, int64_t len) {
  T s = T(0);
  for (int64_t i = 0; i < len; ++i) s += x[i] * y[i];
  return s;
}

template <class T>
__device__ void rotate(T* x, T* y, int64_t len, T c, T s) {
  for (int64_t i = 0; i < len; ++i) {
    const T a = x[i], b = y[i];
    x[i] = a * c - b * s;
    y[i] = a * s + b * c;
  }
}

template <class T>
__device__ void axpy(T* y, const T* x, int64_t len, T f) {
  for (int64_t i = 0; i < len; ++i) y[i] -= f * x[i];
}

// Per matrix, in `work`: g (cols rows of L: the long vectors in rows 0..k-1, completion rows after),
// h (k rows of L, Householder copies), v (k rows of k, short vectors), norm (k), tau (k); in
// `orders`: k row indices (the rows by descending norm, once sorted).
inline __host__ __device__ int64_t work_elems(int64_t k, int64_t L, int64_t cols, bool vectors) {
  return cols * L + (vectors ? k * L + k * k : 0) + 2 * k;
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    svd_kernel(const T* __restrict__ a, T* __restrict__ u, T* __restrict__ s, T* __restrict__ vh, T* __restrict__ work,
               int64_t* __restrict__ orders, int64_t batch, int64_t m, int64_t n, int64_t ucols, int64_t vrows, bool vectors) {
  const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= batch) return;
  const bool tall = m > n;
  const int64_t k = tall ? n : m, L = tall ? m : n;
  const int64_t cols = !vectors ? k : tall ? ucols : vrows;
  const T* A = a + b * m * n;
  T* U = u ? u + b * m * ucols : nullptr;
  T* S = s ? s + b * k : nullptr;
  T* VH = vh ? vh + b * vrows * n : nullptr;
  T* g = work + b * work_elems(k, L, cols, vectors);
  T* h = g + cols * L;
  T* v = vectors ? h + k * L : h;
  T* norm = v + (vectors ? k * k : 0);
  T* tau = norm + k;
  int64_t* order = orders + b * k;
  T amax = T(0);
  bool ok = true;
  for (int64_t i = 0; i < m * n; ++i) {
    const T x = fabs(A[i]);
    ok = ok && x <= oc_cuda::Limits<T>::max();
    amax = x > amax ? x : amax;
  }
  if (!ok) {
    const T nan = T(NAN);
    if (S) for (int64_t j = 0; j < k; ++j) S[j] = nan;
    if (U) for (int64_t i = 0; i < m * ucols; ++i) U[i] = nan;
    if (VH) for (int64_t i = 0; i < vrows * n; ++i) VH[i] = nan;
    return;
  }
  int e = 0;
  if (amax > T(0)) frexp((double)amax, &e);
  const T up = (T)ldexp(1.0, e);
  T down, down2;
  oc_cuda::pow2_factors(-e, down, down2);
  for (int64_t j = 0; j < k; ++j) {
    T* gj = g + j * L;
    for (int64_t i = 0; i < L; ++i) gj[i] = (tall ? A[i * n + j] : A[j * n + i]) * down * down2;
    order[j] = j;
    if (vectors)
      for (int64_t i = 0; i < k; ++i) v[j * k + i] = i == j ? T(1) : T(0);
  }
  const T tol = sqrt((T)L) * oc_cuda::Limits<T>::eps();
  for (int sweep = 0; sweep < kMaxSweeps && k > 1; ++sweep) {
    bool rotated = false;
    for (int64_t p = 0; p < k - 1; ++p)
      for (int64_t q = p + 1; q < k; ++q) {
        T* x = g + p * L;
        T* y = g + q * L;
        T aa = T(0), bb = T(0), cc = T(0);
        for (int64_t i = 0; i < L; ++i) {
          aa += x[i] * x[i];
          bb += y[i] * y[i];
          cc += x[i] * y[i];
        }
        if (!(fabs(cc) > tol * sqrt(aa) * sqrt(bb))) continue;
        const T zeta = (bb - aa) / (2 * cc);
        const T t = fabs(zeta) > T(1) / oc_cuda::Limits<T>::eps()
                        ? T(0.5) / zeta
                        : (zeta >= 0 ? T(1) : T(-1)) / (fabs(zeta) + sqrt(T(1) + zeta * zeta));
        const T cs = T(1) / sqrt(T(1) + t * t), sn = cs * t;
        rotate(x, y, L, cs, sn);
        if (vectors) rotate(v + p * k, v + q * k, k, cs, sn);
        rotated = true;
      }
    if (!rotated) break;
  }
  for (int64_t j = 0; j < k; ++j) norm[j] = sqrt(dot(g + j * L, g + j * L, L));
  for (int64_t j = 1; j < k; ++j) {  // order: the rows by descending norm
    const int64_t o = order[j];
    int64_t i = j;
    for (; i > 0 && norm[order[i - 1]] < norm[o]; --i) order[i] = order[i - 1];
    order[i] = o;
  }
  if (S)
    for (int64_t j = 0; j < k; ++j) S[j] = norm[order[j]] * up;
  if (!vectors) return;
  const T small = norm[order[0]] * (T)L * oc_cuda::Limits<T>::eps();
  int64_t r = 0;
  for (; r < k && norm[order[r]] > small; ++r) {
    T* x = g + order[r] * L;
    const T f = T(1) / norm[order[r]];
    for (int64_t i = 0; i < L; ++i) x[i] *= f;
  }
  // the long vector of sorted position j lives in row order[j] (j < k) or row j (j >= k)
  auto row = [&](int64_t j) { return g + (j < k ? order[j] : j) * L; };
  if (r < cols) {  // completion: Q e_c, c >= r, for the Householder QR of the kept rows
    for (int64_t j = 0; j < r; ++j)
      for (int64_t i = 0; i < L; ++i) h[j * L + i] = row(j)[i];
    for (int64_t j = 0; j < r; ++j) {
      T* x = h + j * L + j;
      const int64_t len = L - j;
      const T sigma = sqrt(dot(x, x, len));
      x[0] -= x[0] >= 0 ? -sigma : sigma;
      const T vv = dot(x, x, len);
      tau[j] = vv > 0 ? T(2) / vv : T(0);
      for (int64_t i = j + 1; i < r; ++i) axpy(h + i * L + j, x, len, tau[j] * dot(x, h + i * L + j, len));
    }
    for (int64_t c = r; c < cols; ++c) {
      T* y = row(c);
      for (int64_t i = 0; i < L; ++i) y[i] = i == c ? T(1) : T(0);
      for (int64_t j = r - 1; j >= 0; --j) {
        const T* x = h + j * L + j;
        axpy(y + j, x, L - j, tau[j] * dot(x, y + j, L - j));
      }
    }
  }
  if (k >= 16)  // one modified Gram-Schmidt pass over the short vectors (as the CPU kernel)
    for (int64_t j = 0; j < k; ++j) {
      T* x = v + order[j] * k;
      for (int64_t i = 0; i < j; ++i) {
        const T* y = v + order[i] * k;
        axpy(x, y, k, dot(y, x, k));
      }
      const T f = T(1) / sqrt(dot(x, x, k));
      for (int64_t i = 0; i < k; ++i) x[i] *= f;
    }
  if (tall) {
    if (U)
      for (int64_t j = 0; j < ucols; ++j) {
        const T* x = row(j);
        for (int64_t i = 0; i < m; ++i) U[i * ucols + j] = x[i];
      }
    if (VH)
      for (int64_t j = 0; j < k; ++j)
        for (int64_t i = 0; i < n; ++i) VH[j * n + i] = v[order[j] * k + i];
  } else {
    if (U)
      for (int64_t j = 0; j < k; ++j)
        for (int64_t i = 0; i < m; ++i) U[i * m + j] = v[order[j] * k + i];
    if (VH)
      for (int64_t j = 0; j < vrows; ++j) {
        const T* x = row(j);
        for (int64_t i = 0; i < n; ++i) VH[j * n + i] = x[i];
      }
  }
}

// k == 0: no values; the full bases are identities (as torch)
template <class T>
__global__ void identities(T* __restrict__ x, int64_t batch, int64_t rows, int64_t cols) {
  const int64_t total = batch * rows * cols;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
    const int64_t within = e % (rows * cols);
    x[e] = within / cols == within % cols ? T(1) : T(0);
  }
}

int run(oc::Context& ctx, bool vectors) {
  oc_ops::SvdArgs a;
  if (int rc = oc_ops::svd_prepare(ctx, vectors, &a)) return rc;
  if (a.batch == 0 || (a.u == nullptr && a.s == nullptr && a.vh == nullptr)) return OC_OK;
  cudaStream_t stream = static_cast<cudaStream_t>(ctx.stream());
  const int32_t dtype = ctx.input(oc_ops::SvdSpec::in::A).dtype;
  return oc::dispatch<oc_ops::SvdSpec::types::T>(ctx, dtype, [&](auto tag) {
    using T = decltype(tag);
    if (a.k == 0) {
      if (a.u && a.m * a.ucols > 0) identities<T><<<256, 256, 0, stream>>>(static_cast<T*>(a.u), a.batch, a.m, a.ucols);
      if (a.vh && a.vrows * a.n > 0) identities<T><<<256, 256, 0, stream>>>(static_cast<T*>(a.vh), a.batch, a.vrows, a.n);
      return oc_cuda::launched(ctx);
    }
    const bool uv = a.u != nullptr || a.vh != nullptr;
    const bool tall = a.m > a.n;
    const int64_t L = tall ? a.m : a.n;
    const int64_t cols = !uv ? a.k : tall ? a.ucols : a.vrows;
    const size_t elems_bytes = ((size_t)(a.batch * work_elems(a.k, L, cols, uv)) * sizeof(T) + 15) & ~(size_t)15;
    void* work = nullptr;
    if (int rc = ctx.scratch(elems_bytes + (size_t)(a.batch * a.k) * sizeof(int64_t), &work)) return rc;
    int64_t* orders = reinterpret_cast<int64_t*>(static_cast<char*>(work) + elems_bytes);
    const unsigned blocks = (unsigned)((a.batch + kThreads - 1) / kThreads);
    svd_kernel<T><<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(a.a), static_cast<T*>(a.u),
                                                   static_cast<T*>(a.s), static_cast<T*>(a.vh), static_cast<T*>(work),
                                                   orders, a.batch, a.m, a.n, a.ucols, a.vrows, uv);
    return oc_cuda::launched(ctx);
  });
}

int svd_cuda(oc::Context& ctx) { return run(ctx, true); }
int svdvals_cuda(oc::Context& ctx) { return run(ctx, false); }

}  // namespace

OC_KERNEL(svd, cuda, oc_ops::SvdSpec::spec, svd_cuda)
OC_KERNEL(svdvals, cuda, oc_ops::SvdvalsSpec::spec, svdvals_cuda)
