// Batched symmetric eigensolver: Householder tridiagonalization, then implicit QL with Wilkinson-
// style shifts on the tridiagonal matrix, both in double (float inputs too: batches of tiny float
// matrices are the main use, and double costs them little while giving LAPACK-level accuracy).
//
// The triangle read is mirrored into a full working copy, scaled by a power of two so its largest
// entry is in [0.5, 1) (no overflow or underflow in the norms; exact), and reduced to T = Q^T A Q
// by n - 2 reflections H = I - 2 u u^T applied from both sides (a rank-2 update). The transposed
// basis R = Q^T is kept so that every later update is on contiguous rows: the QL rotations of T's
// eigensystem, T = Z diag(d) Z^T, turn R into (Q Z)^T, whose rows are the eigenvectors. About
// 4/3 n^3 flops for the reduction, ~6 n^3 more with vectors (a sweep of rotations per eigenvalue,
// a couple of sweeps each). Unblocked: for n in the hundreds LAPACK's blocked reduction is faster
// (benchmarks/eigh_cases.py). Every inner loop is an axpy or a rotation along contiguous memory
// (vectorized by the compiler in each instruction set's pass: isa_passes.inc), and the rotations'
// lengths are plain square roots (the scaled entries keep squares far from overflow; hypot's
// care costs more than the rest of a small matrix's QL).
//
// Batches run in parallel over the host's pool; each task has its own working memory.

#ifndef OC_ISA_PASS

#include <math.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <limits>

#include "eigh.h"
#include "parallel.h"

namespace oc {
#define OC_ISA_PASS_FILE "eigh.cpp"
#define OC_ISA_PASS_NS eigh
#include "isa_passes.inc"  // oc::eigh_base, _avx2, _avx512
}  // namespace oc

int oc_eigh_f32(const float* a, float* w, float* v, uint8_t* status, int64_t batch, int64_t n, bool upper,
                oc_parallel par) {
  return OC_ISA_CALL(oc::eigh, run<float>, a, w, v, status, batch, n, upper, par);
}

int oc_eigh_f64(const double* a, double* w, double* v, uint8_t* status, int64_t batch, int64_t n, bool upper,
                oc_parallel par) {
  return OC_ISA_CALL(oc::eigh, run<double>, a, w, v, status, batch, n, upper, par);
}

#else  // OC_ISA_PASS: the per-instruction-set body, included inside a namespace

// per-eigenvalue QL iteration cap: LAPACK's steqr allows 30; far more than a finite matrix needs
constexpr int kMaxIterations = 60;

// sqrt(a^2 + b^2): plain where the squares are safely in range (always, for the scaled matrix's
// values), hypot only outside.
static inline double pythag(double a, double b) {
  const double m = std::max(fabs(a), fabs(b));
  return m > 1e-150 && m < 1e150 ? sqrt(a * a + b * b) : hypot(a, b);
}

struct Work {
  double *a, *r, *d, *e, *u, *p, *t;
  int64_t* order;
  static size_t bytes(int64_t n) { return (size_t)(2 * n * n + 5 * n) * sizeof(double) + (size_t)n * sizeof(int64_t); }
  void carve(void* buf, int64_t n) {
    double* x = static_cast<double*>(buf);
    a = x, x += n * n;
    r = x, x += n * n;
    d = x, x += n;
    e = x, x += n;
    u = x, x += n;
    p = x, x += n;
    t = x, x += n;
    order = reinterpret_cast<int64_t*>(x);
  }
};

// Reduces the symmetric w.a (n x n, scaled) to tridiagonal (d, e: e[i] couples i and i + 1), and,
// with vectors, sets w.r = Q^T.
static void tridiagonalize(Work& w, int64_t n, bool vectors) {
  double* A = w.a;
  if (vectors) {
    std::fill(w.r, w.r + n * n, 0.0);
    for (int64_t i = 0; i < n; ++i) w.r[i * n + i] = 1.0;
  }
  for (int64_t k = 0; k + 2 < n; ++k) {
    const int64_t m = n - k - 1;  // the reflection acts on rows and columns k + 1 ..
    const double* x = A + k * n + k + 1;  // row k past the diagonal = column k below it
    double sigma = 0;
    for (int64_t i = 1; i < m; ++i) sigma += x[i] * x[i];
    if (sigma == 0) {  // column already reduced: H = I
      w.e[k] = x[0];
      continue;
    }
    const double norm = sqrt(x[0] * x[0] + sigma);
    const double alpha = x[0] > 0 ? -norm : norm;  // no cancellation in x0 - alpha
    double* u = w.u;
    for (int64_t i = 0; i < m; ++i) u[i] = x[i];
    u[0] -= alpha;
    const double f = 1.0 / sqrt(u[0] * u[0] + sigma);
    for (int64_t i = 0; i < m; ++i) u[i] *= f;
    // B = A[k+1:, k+1:] <- H B H = B - u q^T - q u^T, q = 2 B u - 2 (u^T B u) u
    double* B = A + (k + 1) * n + (k + 1);
    double* q = w.p;
    std::fill(q, q + m, 0.0);
    for (int64_t i = 0; i < m; ++i) {  // B symmetric: B u = sum_i u_i B[i, :], axpys on rows
      const double* OC_RESTRICT bi = B + i * n;
      double* OC_RESTRICT qq = q;
      const double ui = u[i];
      for (int64_t j = 0; j < m; ++j) qq[j] += ui * bi[j];
    }
    double K = 0;
    for (int64_t i = 0; i < m; ++i) K += u[i] * q[i];
    for (int64_t i = 0; i < m; ++i) q[i] = 2 * q[i] - 2 * K * u[i];
    for (int64_t i = 0; i < m; ++i) {
      double* bi = B + i * n;
      const double ui = u[i], qi = q[i];
      for (int64_t j = 0; j < m; ++j) bi[j] -= ui * q[j] + qi * u[j];
    }
    w.e[k] = alpha;
    if (vectors) {  // R[k+1:, :] <- H R[k+1:, :]
      double* R = w.r + (k + 1) * n;
      double* t = w.t;
      std::fill(t, t + n, 0.0);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t c = 0; c < n; ++c) t[c] += u[i] * R[i * n + c];
      for (int64_t i = 0; i < m; ++i) {
        const double g = 2 * u[i];
        for (int64_t c = 0; c < n; ++c) R[i * n + c] -= g * t[c];
      }
    }
  }
  for (int64_t i = 0; i < n; ++i) w.d[i] = A[i * n + i];
  if (n >= 2) w.e[n - 2] = A[(n - 2) * n + n - 1];
  w.e[n - 1] = 0;
}

// Implicit QL on (d, e), rotating w.r's rows when vectors. false: the iteration cap was reached.
static bool ql(Work& w, int64_t n, bool vectors) {
  double *d = w.d, *e = w.e;
  const double eps = std::numeric_limits<double>::epsilon();
  for (int64_t l = 0; l < n; ++l) {
    for (int iter = 0;; ++iter) {
      int64_t m = l;
      for (; m + 1 < n; ++m)  // first negligible coupling at or past l
        if (fabs(e[m]) <= eps * (fabs(d[m]) + fabs(d[m + 1])) || fabs(e[m]) < std::numeric_limits<double>::min())
          break;
      if (m == l) break;
      if (iter == kMaxIterations) return false;
      // shift: the eigenvalue of the leading 2 x 2 block nearer d[l]
      double g = (d[l + 1] - d[l]) / (2 * e[l]);
      double r = pythag(g, 1.0);
      g = d[m] - d[l] + e[l] / (g + copysign(r, g));
      double s = 1, c = 1, p = 0;
      bool split = false;
      for (int64_t i = m - 1; i >= l; --i) {
        const double f = s * e[i], b = c * e[i];
        r = pythag(f, g);
        e[i + 1] = r;
        if (r == 0) {  // an exact zero coupling appeared: deflate there
          d[i + 1] -= p;
          e[m] = 0;
          split = true;
          break;
        }
        s = f / r;
        c = g / r;
        g = d[i + 1] - p;
        r = (d[i] - g) * s + 2 * c * b;
        p = s * r;
        d[i + 1] = g + p;
        g = c * r - b;
        if (vectors) {
          double* OC_RESTRICT x = w.r + i * n;
          double* OC_RESTRICT y = x + n;
          for (int64_t k = 0; k < n; ++k) {
            const double yk = y[k], xk = x[k];
            y[k] = s * xk + c * yk;
            x[k] = c * xk - s * yk;
          }
        }
      }
      if (split) continue;
      d[l] -= p;
      e[l] = g;
      e[m] = 0;
    }
  }
  return true;
}

template <class T>
static uint8_t one(const T* a, T* wout, T* v, int64_t n, bool upper, Work& w) {
  double amax = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) {  // (i, j) of the lower triangle; U: read at (j, i)
      const double x = (double)(upper ? a[j * n + i] : a[i * n + j]);
      if (!std::isfinite(x)) return 0;
      w.a[i * n + j] = w.a[j * n + i] = x;
      amax = std::max(amax, fabs(x));
    }
  int ex = 0;
  if (amax > 0) {
    frexp(amax, &ex);
    const double f = ldexp(1.0, -ex);
    for (int64_t i = 0; i < n * n; ++i) w.a[i] *= f;
  }
  const bool vectors = v != nullptr;
  tridiagonalize(w, n, vectors);
  if (!ql(w, n, vectors)) return 2;
  int64_t* order = w.order;
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order, order + n, [&](int64_t x, int64_t y) { return w.d[x] < w.d[y]; });
  if (wout)
    for (int64_t j = 0; j < n; ++j) wout[j] = (T)ldexp(w.d[order[j]], ex);
  if (vectors)
    for (int64_t j = 0; j < n; ++j) {
      const double* x = w.r + order[j] * n;
      int64_t big = 0;
      for (int64_t i = 1; i < n; ++i)
        if (fabs(x[i]) > fabs(x[big])) big = i;
      const double sign = x[big] < 0 ? -1.0 : 1.0;
      for (int64_t i = 0; i < n; ++i) v[i * n + j] = (T)(sign * x[i]);
    }
  return 1;
}

template <class T>
static int run(const T* a, T* wout, T* v, uint8_t* status, int64_t batch, int64_t n, bool upper,
               const oc_parallel& par) {
  const size_t bytes = Work::bytes(n);
  const double cost = (v ? 8.0 : 2.0) * (double)n * n * n + 64.0 * n;
  const int64_t nt = oc::detail::num_tasks(batch, cost, 1 << 16, 1024);
  std::atomic<bool> failed{false};
  auto task = [&](size_t t) {
    int64_t b0, b1;
    oc::detail::split_range(batch, nt, (int64_t)t, b0, b1);
    void* buf = malloc(bytes);
    if (!buf) {
      failed.store(true, std::memory_order_relaxed);
      return;
    }
    Work w;
    w.carve(buf, n);
    for (int64_t b = b0; b < b1; ++b)
      status[b] = one<T>(a + b * n * n, wout ? wout + b * n : nullptr, v ? v + b * n * n : nullptr, n, upper, w);
    free(buf);
  };
  oc::detail::parallel_for(par, (size_t)nt, task);
  return failed.load(std::memory_order_relaxed) ? OC_OUT_OF_MEMORY : 0;
}

#endif  // OC_ISA_PASS
