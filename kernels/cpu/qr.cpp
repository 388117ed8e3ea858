// Batched Householder QR with LAPACK's conventions, so that Q and R are torch's (geqrf + orgqr) up
// to rounding.
//
// The matrix is copied transposed (its columns contiguous, length m). Column j's reflector is
// dlarfg's: alpha = x[0], beta = -sign(alpha) ||x||, tau = (beta - alpha) / beta, v = [1, x[1:] /
// (alpha - beta)], R's diagonal entry beta; a column whose rest is zero gets tau = 0 (H = I, beta =
// alpha). Norms are plain sums of squares, rescaled by the largest entry only when that sum could
// have overflowed or lost precision to underflow (dnrm2's guarantee, without its cost per entry).
// Applying H = I - tau v v^T to a column is a dot product and an axpy along contiguous memory.
//
// Factorization by panels of kPanel columns, left-looking inside the panel (each panel column gets
// the panel's earlier reflectors, then makes its own); then the trailing columns get the panel's
// reflectors, kGroup columns at a time (each reflector read once per group while the group stays in
// L1), groups split across tasks for a large matrix. Q = H_0 ... H_{k-1} applied to the identity's
// columns, each column independent (reflector p only to columns >= p: the others are still unit
// vectors that it leaves alone), by groups of kGroup columns again. The same steps for every size:
// square matrices up to 8 get them with the sizes known at compile time (unrolled), many per task.
//
// Compiled once per instruction set (isa_passes.inc, as inverse.cpp).

#ifndef OC_ISA_PASS

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <limits>

#include "parallel.h"
#include "qr.h"

namespace oc {
#define OC_ISA_PASS_FILE "qr.cpp"
#define OC_ISA_PASS_NS qr
#include "isa_passes.inc"  // oc::qr_base, _avx2, _avx512
}  // namespace oc

int oc_qr_f32(const float* a, float* q, float* r, int64_t batch, int64_t m, int64_t n, int64_t qcols,
              int64_t rrows, oc_parallel par) {
  return OC_ISA_CALL(oc::qr, run<float>, a, q, r, batch, m, n, qcols, rrows, par);
}

int oc_qr_f64(const double* a, double* q, double* r, int64_t batch, int64_t m, int64_t n, int64_t qcols,
              int64_t rrows, oc_parallel par) {
  return OC_ISA_CALL(oc::qr, run<double>, a, q, r, batch, m, n, qcols, rrows, par);
}

#else  // OC_ISA_PASS: the per-instruction-set body, included inside a namespace

using ::oc::detail::div_up;
using ::oc::detail::num_tasks;
using ::oc::detail::parallel_for;
using ::oc::detail::split_range;

enum : int64_t { kPanel = 32, kGroup = 8, kSmall = 8, kLarge = 48, kMaxInnerTasks = 64 };

template <class T>
struct Vec {
  enum { W = OC_VEC_BYTES / (int)sizeof(T) };
  typedef typename ::oc::detail::Simd<T, W>::type type;
};

template <class V, class T>
static OC_ALWAYS_INLINE V vload(const T* p) {
  V v;
  memcpy(&v, p, sizeof v);
  return v;
}

template <class V, class T>
static OC_ALWAYS_INLINE void vstore(T* p, const V& v) {
  memcpy(p, &v, sizeof v);
}

template <class T>
static OC_ALWAYS_INLINE T dot(const T* OC_RESTRICT x, const T* OC_RESTRICT y, int64_t len) {
  typedef typename Vec<T>::type V;
  enum { W = Vec<T>::W };
  int64_t i = 0;
  T r = T(0);
  if (len >= W) {
    V a0 = {}, a1 = {};
    for (; i + 2 * W <= len; i += 2 * W) {
      a0 += vload<V>(x + i) * vload<V>(y + i);
      a1 += vload<V>(x + i + W) * vload<V>(y + i + W);
    }
    for (; i + W <= len; i += W) a0 += vload<V>(x + i) * vload<V>(y + i);
    const V s = a0 + a1;
    for (int l = 0; l < W; ++l) r += s[l];
  }
  for (; i < len; ++i) r += x[i] * y[i];
  return r;
}

// y[0:len] -= f x[0:len]
template <class T>
static OC_ALWAYS_INLINE void axpy_sub(T* OC_RESTRICT y, const T* OC_RESTRICT x, T f, int64_t len) {
  typedef typename Vec<T>::type V;
  enum { W = Vec<T>::W };
  int64_t i = 0;
  for (; i + W <= len; i += W) vstore(y + i, vload<V>(y + i) - f * vload<V>(x + i));
  for (; i < len; ++i) y[i] -= f * x[i];
}

// sqrt(head^2 + sum x[i]^2), and (*rest) the same without head: the fast sum of squares when it is
// in range, else rescaled by the largest magnitude (no overflow, no underflow). A NaN or an
// infinity in x gives NaN (it spreads).
template <class T>
static OC_ALWAYS_INLINE T norms(T head, const T* x, int64_t len, T* rest) {
  const T small = std::numeric_limits<T>::min() / std::numeric_limits<T>::epsilon();
  const T big = std::numeric_limits<T>::max();
  const T s = dot(x, x, len);
  const T all = s + head * head;
  if (s >= small && all <= big) {
    *rest = sqrt(s);
    return sqrt(all);
  }
  T amax = T(0);
  for (int64_t i = 0; i < len; ++i) {
    const T v = fabs(x[i]);
    amax = v > amax ? v : amax;
  }
  if (s != s || amax > big) {
    *rest = std::numeric_limits<T>::quiet_NaN();
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
  if (!(h <= big)) return h;  // NaN or infinity
  const T g = h > *rest ? h : *rest;
  return g * sqrt((h / g) * (h / g) + (*rest / g) * (*rest / g));
}

// dlarfg on x[0:len): x[0] becomes beta (R's diagonal), x[1:] v's tail; returns tau.
template <class T>
static OC_ALWAYS_INLINE T householder(T* x, int64_t len) {
  const T alpha = x[0];
  T xnorm;
  const T full = norms(alpha, x + 1, len - 1, &xnorm);
  if (xnorm == T(0)) return T(0);  // H = I: beta = alpha
  const T beta = -copysign(full, alpha);  // Fortran's SIGN, -0 included
  const T tau = (beta - alpha) / beta;
  const T d = alpha - beta, f = T(1) / d;
  if (fabs(f) <= std::numeric_limits<T>::max()) {
    for (int64_t i = 1; i < len; ++i) x[i] *= f;
  } else {  // d so small that its reciprocal overflows: divide instead
    for (int64_t i = 1; i < len; ++i) x[i] /= d;
  }
  x[0] = beta;
  return tau;
}

// y[0:len) = H y, H = I - tau v v^T, v = [1, x[1:len)] (x[0] is R's entry, not v's).
template <class T>
static OC_ALWAYS_INLINE void reflect(const T* OC_RESTRICT x, T tau, T* OC_RESTRICT y, int64_t len) {
  if (tau == T(0)) return;  // as LAPACK's dlarf: H = I
  const T f = tau * (y[0] + dot(x + 1, y + 1, len - 1));
  y[0] -= f;
  axpy_sub(y + 1, x + 1, f, len - 1);
}

// Columns [c0, c1) of w (each of length m, stride m) get reflectors [p0, p1) in order.
template <class T>
static OC_ALWAYS_INLINE void apply_forward(const T* w, const T* tau, int64_t m, int64_t p0, int64_t p1, T* cols,
                                           int64_t c0, int64_t c1) {
  for (int64_t g = c0; g < c1; g += kGroup) {
    const int64_t ge = g + kGroup < c1 ? g + kGroup : c1;
    for (int64_t p = p0; p < p1; ++p)
      for (int64_t c = g; c < ge; ++c) reflect(w + p * m + p, tau[p], cols + c * m + p, m - p);
  }
}

// Columns [p0, p1) of w: the panel, left-looking (each column gets the panel's earlier reflectors,
// then makes its own).
template <class T>
static OC_ALWAYS_INLINE void factor_panel(T* w, T* tau, int64_t m, int64_t p0, int64_t p1) {
  for (int64_t j = p0; j < p1; ++j) {
    T* col = w + j * m;
    for (int64_t p = p0; p < j; ++p) reflect(w + p * m + p, tau[p], col + p, m - p);
    tau[j] = householder(col + j, m - j);
  }
}

// Columns [c0, c1) of Q = H_0 ... H_{k-1} I (m x qcols) into y (column c at y + (c - c0) * m).
template <class T>
static OC_ALWAYS_INLINE void form_q(const T* w, const T* tau, int64_t m, int64_t k, T* y, int64_t c0, int64_t c1) {
  memset(y, 0, (size_t)((c1 - c0) * m) * sizeof(T));
  for (int64_t c = c0; c < c1; ++c) y[(c - c0) * m + c] = T(1);
  for (int64_t g = c0; g < c1; g += kGroup) {
    const int64_t ge = g + kGroup < c1 ? g + kGroup : c1;
    for (int64_t p = std::min(ge - 1, k - 1); p >= 0; --p)
      for (int64_t c = std::max(g, p); c < ge; ++c) reflect(w + p * m + p, tau[p], y + (c - c0) * m + p, m - p);
  }
}

// y's columns [0, c1 - c0) into q's columns [c0, c1) (q row-major, qcols per row).
template <class T>
static OC_ALWAYS_INLINE void store_q(const T* y, T* q, int64_t m, int64_t qcols, int64_t c0, int64_t c1) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t c = c0; c < c1; ++c) q[i * qcols + c] = y[(c - c0) * m + i];
}

template <class T>
static OC_ALWAYS_INLINE void store_r(const T* w, T* r, int64_t m, int64_t n, int64_t rrows) {
  for (int64_t i = 0; i < rrows; ++i)
    for (int64_t j = 0; j < n; ++j) r[i * n + j] = i <= j ? w[j * m + i] : T(0);
}

template <class T>
static OC_ALWAYS_INLINE void load_t(const T* a, T* w, int64_t m, int64_t n) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) w[j * m + i] = a[i * n + j];
}

// One matrix, serially; MF, NF: m and n when known at compile time (0: not). Scratch: w (m n), tau
// (k), y (m qcols).
template <class T, int MF, int NF>
static OC_ALWAYS_INLINE void one(const T* a, T* q, T* r, int64_t m_, int64_t n_, int64_t qcols, int64_t rrows, T* w,
                                 T* tau, T* y) {
  const int64_t m = MF ? MF : m_, n = NF ? NF : n_;
  const int64_t k = m < n ? m : n;
  load_t(a, w, m, n);
  for (int64_t p0 = 0; p0 < k; p0 += kPanel) {
    const int64_t p1 = p0 + kPanel < k ? p0 + kPanel : k;
    factor_panel(w, tau, m, p0, p1);
    apply_forward(w, tau, m, p0, p1, w, p1, n);
  }
  if (r) store_r(w, r, m, n, rrows);
  if (q) {
    form_q(w, tau, m, k, y, 0, qcols);
    store_q(y, q, m, qcols, 0, qcols);
  }
}

// Square n x n, n <= kSmall, known at compile time: the matrices [b0, b1), the scratch on the stack.
template <class T, int N>
static void small(const T* a, T* q, T* r, int64_t b0, int64_t b1) {
  T w[N * N], tau[N], y[N * N];
  for (int64_t b = b0; b < b1; ++b)
    one<T, N, N>(a + b * N * N, q ? q + b * N * N : nullptr, r ? r + b * N * N : nullptr, N, N, N, N, w, tau, y);
}

// One large matrix, its steps split across tasks.
template <class T>
static int large(const T* a, T* q, T* r, int64_t m, int64_t n, int64_t qcols, int64_t rrows, const oc_parallel& par) {
  const int64_t k = m < n ? m : n;
  T* w = (T*)malloc((size_t)(m * n + k + 1) * sizeof(T));
  if (!w) return OC_OUT_OF_MEMORY;
  T* tau = w + m * n;
  load_t(a, w, m, n);
  for (int64_t p0 = 0; p0 < k; p0 += kPanel) {
    const int64_t p1 = p0 + kPanel < k ? p0 + kPanel : k;
    factor_panel(w, tau, m, p0, p1);
    const int64_t groups = div_up(n - p1, kGroup);
    if (groups <= 0) continue;
    const int64_t nt = num_tasks(groups, 4.0 * (double)kGroup * (double)(p1 - p0) * (double)(m - p0), 1 << 16,
                                 kMaxInnerTasks);
    auto task = [&](size_t t) {
      int64_t g0, g1;
      split_range(groups, nt, (int64_t)t, g0, g1);
      apply_forward(w, tau, m, p0, p1, w, p1 + g0 * kGroup, std::min(n, p1 + g1 * kGroup));
    };
    parallel_for(par, (size_t)nt, task);
  }
  if (r) store_r(w, r, m, n, rrows);
  int rc = 0;
  if (q) {
    // columns in groups; a task's groups interleaved with the others' (later columns cost more)
    const int64_t groups = div_up(qcols, kGroup);
    const int64_t nt = num_tasks(groups, 4.0 * (double)kGroup * (double)k * (double)m, 1 << 16, kMaxInnerTasks);
    std::atomic<bool> failed{false};
    auto task = [&](size_t t) {
      T* y = (T*)malloc((size_t)(kGroup * m) * sizeof(T) + 1);
      if (!y) {
        failed.store(true, std::memory_order_relaxed);
        return;
      }
      for (int64_t g = (int64_t)t; g < groups; g += nt) {
        const int64_t c0 = g * kGroup, c1 = std::min(qcols, c0 + kGroup);
        form_q(w, tau, m, k, y, c0, c1);
        store_q(y, q, m, qcols, c0, c1);
      }
      free(y);
    };
    parallel_for(par, (size_t)nt, task);
    rc = failed.load(std::memory_order_relaxed) ? (int)OC_OUT_OF_MEMORY : 0;
  }
  free(w);
  return rc;
}

template <class T>
int run(const T* a, T* q, T* r, int64_t batch, int64_t m, int64_t n, int64_t qcols, int64_t rrows, oc_parallel par) {
  const int64_t k = m < n ? m : n;
  if (k >= kLarge && batch < 4 && par.run != nullptr) {  // parallelism inside each matrix
    for (int64_t b = 0; b < batch; ++b)
      if (int rc = large<T>(a + b * m * n, q ? q + b * m * qcols : nullptr, r ? r + b * rrows * n : nullptr, m, n,
                            qcols, rrows, par))
        return rc;
    return 0;
  }
  const double work = 4.0 * (double)m * (double)n * (double)k + (q ? 4.0 * (double)m * (double)qcols * (double)k : 0) +
                      2.0 * (double)m * (double)(n + qcols) + 1;
  const int64_t nt = num_tasks(batch, work, 1 << 15, 1024);
  if (m == n && m >= 1 && m <= kSmall) {
    auto task = [&](size_t t) {
      int64_t b0, b1;
      split_range(batch, nt, (int64_t)t, b0, b1);
      switch (m) {
#define OC_SMALL(s)                   \
  case s:                             \
    small<T, s>(a, q, r, b0, b1);     \
    break;
        OC_SMALL(1) OC_SMALL(2) OC_SMALL(3) OC_SMALL(4) OC_SMALL(5) OC_SMALL(6) OC_SMALL(7) OC_SMALL(8)
#undef OC_SMALL
        default: break;
      }
    };
    parallel_for(par, (size_t)nt, task);
    return 0;
  }
  std::atomic<bool> failed{false};
  auto task = [&](size_t t) {
    int64_t b0, b1;
    split_range(batch, nt, (int64_t)t, b0, b1);
    T* w = (T*)malloc((size_t)(m * n + k + m * qcols + 1) * sizeof(T));
    if (!w) {
      failed.store(true, std::memory_order_relaxed);
      return;
    }
    for (int64_t b = b0; b < b1; ++b)
      one<T, 0, 0>(a + b * m * n, q ? q + b * m * qcols : nullptr, r ? r + b * rrows * n : nullptr, m, n, qcols,
                   rrows, w, w + m * n, w + m * n + k);
    free(w);
  };
  parallel_for(par, (size_t)nt, task);
  return failed.load(std::memory_order_relaxed) ? (int)OC_OUT_OF_MEMORY : 0;
}

#endif  // OC_ISA_PASS
