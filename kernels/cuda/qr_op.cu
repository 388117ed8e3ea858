// Qr on CUDA, as an ortcustom kernel (ortcustom/kernel.h): one thread per matrix runs the CPU kernel's
// Householder QR (kernels/cpu/qr.cpp: LAPACK's dlarfg reflectors, Q = H_0 ... H_{k-1} I column by column,
// the same steps, scalar) on a transposed working copy in scratch memory, on the host's stream, nothing
// synchronized. Made for batches of small matrices; large ones run, slowly. A NaN or an infinity spreads
// into its matrix's factors (no error, as torch.linalg.qr and the CPU kernel).
#include <cuda_runtime.h>
#include <math.h>

#include "../qr_op.h"
#include "common.cuh"
#include "status.cuh"

namespace {

constexpr int kThreads = 64;

// sqrt(head^2 + sum x[i]^2) and (*rest) without head; rescaled when the plain sum is out of range (as the CPU).
template <class T>
__device__ T norms(T head, const T* x, int64_t len, T* rest) {
  T s = T(0);
  for (int64_t i = 0; i < len; ++i) s += x[i] * x[i];
  const T all = s + head * head;
  if (s >= oc_cuda::Limits<T>::min() / oc_cuda::Limits<T>::eps() && all <= oc_cuda::Limits<T>::max()) {
    *rest = sqrt(s);
    return sqrt(all);
  }
  T amax = T(0);
  for (int64_t i = 0; i < len; ++i) amax = fabs(x[i]) > amax ? fabs(x[i]) : amax;
  if (s != s || amax > oc_cuda::Limits<T>::max()) {
    *rest = T(NAN);
    return *rest;
  }
  if (amax == T(0)) {
    *rest = T(0);
    return fabs(head);
  }
  T t = T(0);
  for (int64_t i = 0; i < len; ++i) t += (x[i] / amax) * (x[i] / amax);
  *rest = amax * sqrt(t);
  const T h = fabs(head);
  if (!(h <= oc_cuda::Limits<T>::max())) return h;
  const T g = h > *rest ? h : *rest;
  return g * sqrt((h / g) * (h / g) + (*rest / g) * (*rest / g));
}

// dlarfg on x[0:len): x[0] becomes beta, x[1:] v's tail; returns tau.
template <class T>
__device__ T householder(T* x, int64_t len) {
  const T alpha = x[0];
  T xnorm;
  const T full = norms(alpha, x + 1, len - 1, &xnorm);
  if (xnorm == T(0)) return T(0);
  const T beta = -copysign(full, alpha);
  const T tau = (beta - alpha) / beta;
  const T d = alpha - beta, f = T(1) / d;
  if (fabs(f) <= oc_cuda::Limits<T>::max())
    for (int64_t i = 1; i < len; ++i) x[i] *= f;
  else
    for (int64_t i = 1; i < len; ++i) x[i] /= d;
  x[0] = beta;
  return tau;
}

// y[i * step], i in [0, len): H y, H = I - tau v v^T, v = [1, x[1:len)].
template <class T>
__device__ void reflect(const T* x, T tau, T* y, int64_t step, int64_t len) {
  if (tau == T(0)) return;
  T w = y[0];
  for (int64_t i = 1; i < len; ++i) w += x[i] * y[i * step];
  const T f = tau * w;
  y[0] -= f;
  for (int64_t i = 1; i < len; ++i) y[i * step] -= f * x[i];
}

// Per matrix: w (n columns of m, A transposed), tau (k).
template <class T>
__global__ void __launch_bounds__(kThreads)
    qr_kernel(const T* __restrict__ a, T* __restrict__ q, T* __restrict__ r, T* __restrict__ work, int64_t batch,
              int64_t m, int64_t n, int64_t qcols, int64_t rrows) {
  for (int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; b < batch; b += (int64_t)gridDim.x * blockDim.x) {
    const int64_t k = m < n ? m : n;
    const T* A = a + b * m * n;
    T* w = work + b * (m * n + k);
    T* tau = w + m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) w[j * m + i] = A[i * n + j];
    for (int64_t j = 0; j < k; ++j) {  // left-looking: column j gets the earlier reflectors, then makes its own
      T* col = w + j * m;
      for (int64_t p = 0; p < j; ++p) reflect(w + p * m + p, tau[p], col + p, 1, m - p);
      tau[j] = householder(col + j, m - j);
    }
    for (int64_t c = k; c < n; ++c)
      for (int64_t p = 0; p < k; ++p) reflect(w + p * m + p, tau[p], w + c * m + p, 1, m - p);
    if (r) {
      T* R = r + b * rrows * n;
      for (int64_t i = 0; i < rrows; ++i)
        for (int64_t j = 0; j < n; ++j) R[i * n + j] = i <= j ? w[j * m + i] : T(0);
    }
    if (q) {  // column c of Q = H_0 ... H_{min(c, k-1)} e_c, in place in Q (stride qcols)
      T* Q = q + b * m * qcols;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t c = 0; c < qcols; ++c) Q[i * qcols + c] = i == c ? T(1) : T(0);
      for (int64_t c = 0; c < qcols; ++c)
        for (int64_t p = (c < k - 1 ? c : k - 1); p >= 0; --p)
          reflect(w + p * m + p, tau[p], Q + p * qcols + c, qcols, m - p);
    }
  }
}

unsigned grid(int64_t units, const oc_cuda::DeviceInfo& dev) {
  int64_t blocks = oc_cuda::div_up(units, kThreads);
  if (blocks > (int64_t)dev.sms * 32) blocks = (int64_t)dev.sms * 32;
  return (unsigned)(blocks < 1 ? 1 : blocks);
}

int qr_cuda(oc::Context& ctx) {
  oc_ops::QrArgs a;
  if (int rc = oc_ops::qr_prepare(ctx, &a)) return rc;
  if (a.batch == 0 || (a.q == nullptr && a.r == nullptr)) return OC_OK;
  cudaStream_t stream = static_cast<cudaStream_t>(ctx.stream());
  const int32_t dtype = ctx.input(oc_ops::QrSpec::in::A).dtype;
  oc_cuda::DeviceInfo dev;
  if (cudaError_t e = oc_cuda::device_info(&dev)) return oc_cuda::failed(ctx, e);
  return oc::dispatch<oc_ops::QrSpec::types::T>(ctx, dtype, [&](auto tag) {
    using T = decltype(tag);
    void* work = nullptr;
    if (int rc = ctx.scratch((size_t)(a.batch * (a.m * a.n + a.k) + 1) * sizeof(T), &work)) return rc;
    qr_kernel<T><<<grid(a.batch, dev), kThreads, 0, stream>>>(static_cast<const T*>(a.a), static_cast<T*>(a.q),
                                                              static_cast<T*>(a.r), static_cast<T*>(work), a.batch,
                                                              a.m, a.n, a.qcols, a.rrows);
    return oc_cuda::launched(ctx);
  });
}

}  // namespace

OC_KERNEL_STATEFUL(qr, cuda, oc_ops::QrSpec::spec, oc_ops::qr_create, oc_ops::qr_destroy, qr_cuda)
