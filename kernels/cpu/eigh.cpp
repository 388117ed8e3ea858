// Batched symmetric eigensolver: Householder tridiagonalization, then implicit QL with Wilkinson-
// style shifts on the tridiagonal matrix, both in double (float inputs too: batches of tiny float
// matrices are the main use, and double costs them little while giving LAPACK-level accuracy).
//
// The triangle read is mirrored into a working copy (rows padded off power-of-two strides), scaled
// by a power of two so its largest entry is in [0.5, 1) (no overflow or underflow in the norms;
// exact), and reduced to T = Q^T A Q by n - 2 reflections H = I - 2 u u^T applied from both sides
// (a rank-2 update), on the lower triangle only and in one pass over it per reflection: each row is
// brought up to date with the previous reflection's update and multiplied by the next u while in
// cache (about 4/3 n^3 flops over half the matrix, which stays in L2 up to n ~ 500; below n = 32 a
// plain product and rank-2 update on the full matrix, with less bookkeeping per step). With vectors,
// the transposed basis R = Q^T = H_{n-3} ... H_0 is then formed from the kept u's backward (each
// reflection touches only the trailing block: 4/3 n^3 flops), row by row, so that every later update
// is on contiguous rows: the QL rotations of T's eigensystem, T = Z diag(d) Z^T, turn R into
// (Q Z)^T, whose rows are the eigenvectors (~6 n^3 flops: a sweep of rotations per eigenvalue, a
// couple of sweeps each). From n = 32 the rotations are queued and the queue is applied a column
// chunk of R at a time (each chunk takes every rotation in order, staying in cache; along a sweep
// the rotated row stays in registers). Unblocked: LAPACK's blocked reduction and divide and conquer
// do fewer flops for n in the hundreds (benchmarks/eigh_cases.py). The rotations' lengths are plain
// square roots (the scaled entries keep squares far from overflow; hypot's care costs more than the
// rest of a small matrix's QL).
//
// Batches run in parallel over the host's pool; each task has its own working memory. A batch of
// fewer than 4 matrices of n >= 128 splits each matrix's work into tasks instead: the reduction's
// fixed row blocks (each sums its part of B u into its own vector, added in block order), the basis'
// rows and the rotations' column chunks. Every entry is computed by the same operations in the same
// order whatever the split: the results do not depend on the number of threads.

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

enum : int64_t {
  kParallelN = 128,     // a matrix this large, in a batch of fewer than 4, splits its own work into tasks
  kMaxInnerTasks = 16,  // at most this many tasks per split
  kQueueN = 32,         // from this n the QL rotations are queued and applied a column chunk at a time
  kChunk = 32,          // columns of the basis per chunk (fixed: each column's arithmetic is one path)
  kRowBlock = 32,       // the reduction's fixed row blocks, each with its own partial sums
};

// sqrt(a^2 + b^2): plain where the squares are safely in range (always, for the scaled matrix's
// values), hypot only outside.
static inline double pythag(double a, double b) {
  const double m = std::max(fabs(a), fabs(b));
  return m > 1e-150 && m < 1e150 ? sqrt(a * a + b * b) : hypot(a, b);
}

// Unaligned vectors of doubles, as wide as the pass's registers.
typedef double Vd __attribute__((vector_size(OC_VEC_BYTES), __aligned__(8)));
constexpr int64_t kLanes = OC_VEC_BYTES / 8;

// x . y with 4 vector accumulators (a fixed order: the same bits for the same inputs).
static inline double dot(const double* x, const double* y, int64_t m) {
  Vd s0 = {}, s1 = {}, s2 = {}, s3 = {};
  int64_t j = 0;
  for (; j + 4 * kLanes <= m; j += 4 * kLanes) {
    s0 += *(const Vd*)(x + j) * *(const Vd*)(y + j);
    s1 += *(const Vd*)(x + j + kLanes) * *(const Vd*)(y + j + kLanes);
    s2 += *(const Vd*)(x + j + 2 * kLanes) * *(const Vd*)(y + j + 2 * kLanes);
    s3 += *(const Vd*)(x + j + 3 * kLanes) * *(const Vd*)(y + j + 3 * kLanes);
  }
  for (; j + kLanes <= m; j += kLanes) s0 += *(const Vd*)(x + j) * *(const Vd*)(y + j);
  const Vd v = (s0 + s1) + (s2 + s3);
  double s = 0;
  for (int64_t l = 0; l < kLanes; ++l) s += v[l];
  for (; j < m; ++j) s += x[j] * y[j];
  return s;
}

// y += a x
static inline void axpy(double* OC_RESTRICT y, const double* OC_RESTRICT x, double a, int64_t m) {
  for (int64_t j = 0; j < m; ++j) y[j] += a * x[j];
}

// Runs f(begin, end) over [0, units) in tasks on par (one call when par is serial or the work is
// small). A unit's arithmetic never depends on the task that runs it, so the results do not
// depend on the number of threads.
template <class F>
static void in_tasks(const oc_parallel& par, int64_t units, double work_per_unit, F&& f) {
  const int64_t nt = par.run ? oc::detail::num_tasks(units, work_per_unit, 1 << 15, kMaxInnerTasks) : 1;
  if (nt <= 1) {
    f((int64_t)0, units);
    return;
  }
  auto task = [&](size_t t) {
    int64_t b, e;
    oc::detail::split_range(units, nt, (int64_t)t, b, e);
    f(b, e);
  };
  oc::detail::parallel_for(par, (size_t)nt, task);
}

struct Work {
  double *a, *r, *d, *e, *u, *p, *t, *up, *qp, *part, *qc, *qs;
  int64_t *order, *qi;
  int64_t ld, queued, cap;  // ld: the row stride of a and r
  static int64_t capacity(int64_t n) { return 32 * n + 64; }
  // Rows of 64 or more are padded to whole cache lines, and off a multiple of 512 bytes: a column chunk
  // of a power-of-two-sized matrix would otherwise fall in a few cache sets.
  static int64_t stride(int64_t n) {
    if (n < 64) return n;
    const int64_t ld = oc::detail::div_up(n, 8) * 8;
    return ld % 64 == 0 ? ld + 8 : ld;
  }
  static int64_t blocks(int64_t n) { return oc::detail::div_up(n, kRowBlock); }
  static size_t bytes(int64_t n) {
    return (size_t)(2 * n * stride(n) + 7 * n + blocks(n) * n + 2 * capacity(n) + 8) * sizeof(double) +
           (size_t)(n + capacity(n)) * sizeof(int64_t);
  }
  void carve(void* buf, int64_t n) {
    double* x = reinterpret_cast<double*>(((uintptr_t)buf + 63) & ~(uintptr_t)63);
    ld = stride(n);
    a = x, x += n * ld;
    r = x, x += n * ld;
    d = x, x += n;
    e = x, x += n;
    u = x, x += n;
    p = x, x += n;
    t = x, x += n;
    up = x, x += n;
    qp = x, x += n;
    part = x, x += blocks(n) * n;
    cap = capacity(n);
    qc = x, x += cap;
    qs = x, x += cap;
    order = reinterpret_cast<int64_t*>(x);
    qi = order + n;
    queued = 0;
  }
};

// The reduction for small n (below kQueueN), on the full matrix (its rows hold both triangles): per
// reflection a product B u by axpys on rows and a rank-2 update, with less bookkeeping per step
// than the fused pass, which pays off from a few dozen rows. Leaves what tridiagonalize does.
static void tridiagonalize_small(Work& w, int64_t n) {
  double* A = w.a;
  const int64_t ld = w.ld;
  for (int64_t k = 0; k + 2 < n; ++k) {
    const int64_t m = n - k - 1;
    double* x = A + k * ld + k + 1;  // row k past the diagonal = column k below it
    double sigma = 0;
    for (int64_t i = 1; i < m; ++i) sigma += x[i] * x[i];
    w.t[k] = sigma != 0 ? 1 : 0;
    if (sigma == 0) {  // column already reduced: H = I
      w.e[k] = x[0];
      std::fill(x, x + m, 0.0);
      continue;
    }
    const double norm = sqrt(x[0] * x[0] + sigma);
    const double alpha = x[0] > 0 ? -norm : norm;  // no cancellation in x0 - alpha
    double* u = w.u;
    for (int64_t i = 0; i < m; ++i) u[i] = x[i];
    u[0] -= alpha;
    const double f = 1.0 / sqrt(u[0] * u[0] + sigma);
    for (int64_t i = 0; i < m; ++i) u[i] *= f;
    double* B = A + (k + 1) * ld + (k + 1);
    double* q = w.p;
    std::fill(q, q + m, 0.0);
    for (int64_t i = 0; i < m; ++i) {
      const double* OC_RESTRICT bi = B + i * ld;
      double* OC_RESTRICT qq = q;
      const double ui = u[i];
      for (int64_t j = 0; j < m; ++j) qq[j] += ui * bi[j];
    }
    double K = 0;
    for (int64_t i = 0; i < m; ++i) K += u[i] * q[i];
    for (int64_t i = 0; i < m; ++i) q[i] = 2 * q[i] - 2 * K * u[i];
    for (int64_t i = 0; i < m; ++i) {
      double* OC_RESTRICT bi = B + i * ld;
      const double ui = u[i], qi = q[i];
      for (int64_t j = 0; j < m; ++j) bi[j] -= ui * q[j] + qi * u[j];
    }
    w.e[k] = alpha;
    std::copy(u, u + m, x);
  }
  for (int64_t i = 0; i < n; ++i) w.d[i] = A[i * ld + i];
  if (n >= 2) w.e[n - 2] = A[(n - 1) * ld + n - 2];
  w.e[n - 1] = 0;
}

// One row of the reduction's fused pass, over its len entries a[0 .. len) (the last one on the
// diagonal), offsets into the trailing block: brings them up to date with the pending update
// a -= up_i qp + qp_i up (when up), then, when u, adds their part of B u: returns the row's own
// (B's row times u), adds u_i a into part (the transposed part: entries left of the diagonal).
static inline double fused_row(double* OC_RESTRICT a, int64_t len, const double* up, const double* qp, double upi,
                               double qpi, const double* u, double* OC_RESTRICT part) {
  const int64_t off = len - 1;  // entries left of the diagonal
  const double ui = u ? u[off] : 0;
  Vd s0 = {}, s1 = {};
  int64_t j = 0;
  if (up && u) {
    for (; j + 2 * kLanes <= off; j += 2 * kLanes) {
      Vd x0 = *(const Vd*)(a + j), x1 = *(const Vd*)(a + j + kLanes);
      x0 -= upi * *(const Vd*)(qp + j) + qpi * *(const Vd*)(up + j);
      x1 -= upi * *(const Vd*)(qp + j + kLanes) + qpi * *(const Vd*)(up + j + kLanes);
      *(Vd*)(a + j) = x0, *(Vd*)(a + j + kLanes) = x1;
      s0 += x0 * *(const Vd*)(u + j), s1 += x1 * *(const Vd*)(u + j + kLanes);
      *(Vd*)(part + j) += ui * x0, *(Vd*)(part + j + kLanes) += ui * x1;
    }
  } else if (u) {
    for (; j + 2 * kLanes <= off; j += 2 * kLanes) {
      const Vd x0 = *(const Vd*)(a + j), x1 = *(const Vd*)(a + j + kLanes);
      s0 += x0 * *(const Vd*)(u + j), s1 += x1 * *(const Vd*)(u + j + kLanes);
      *(Vd*)(part + j) += ui * x0, *(Vd*)(part + j + kLanes) += ui * x1;
    }
  } else {
    for (; j < off; ++j) a[j] -= upi * qp[j] + qpi * up[j];
  }
  const Vd v = s0 + s1;
  double s = 0;
  for (int64_t l = 0; l < kLanes; ++l) s += v[l];
  for (; j < len; ++j) {  // the tail and the diagonal
    double x = a[j];
    if (up) x -= upi * qp[j] + qpi * up[j];
    a[j] = x;
    if (u) {
      s += x * u[j];
      if (j < off) part[j] += ui * x;
    }
  }
  return s;
}

// Reduces the symmetric w.a (n x n, scaled; its lower triangle is read) to tridiagonal (d, e: e[i]
// couples i and i + 1) by reflections H_k = I - 2 u u^T, B <- H B H = B - u q^T - q u^T with
// q = 2 B u - 2 (u^T B u) u on the trailing block B (rows and columns k + 1 ..). On the lower
// triangle only, and in one pass per reflection: a row is brought up to date with the previous
// reflection's update and multiplied by u while in cache (only column k, which gives u, is updated
// ahead). Rows go in fixed blocks of kRowBlock, each summing its transposed part of B u into its own
// vector, added in block order: tasks over blocks give the same bits whatever the split.
// Reflection k's u is left in row k of w.a past the diagonal (zeros where H = I), and w.t[k] says
// whether there was one, for form_basis.
static void tridiagonalize(Work& w, int64_t n, const oc_parallel& par) {
  double* A = w.a;
  const int64_t ld = w.ld;
  double *up = w.up, *qp = w.qp;  // the pending update, indexed by row
  bool pending = false;
  for (int64_t k = 0; k + 2 < n; ++k) {
    const int64_t m = n - k - 1;  // the reflection acts on rows and columns k + 1 ..
    if (pending)                  // column k (rows k ..) up to date
      for (int64_t i = k; i < n; ++i) A[i * ld + k] -= up[i] * qp[k] + qp[i] * up[k];
    double* u = w.u;
    for (int64_t i = 0; i < m; ++i) u[i] = A[(k + 1 + i) * ld + k];
    double sigma = 0;
    for (int64_t i = 1; i < m; ++i) sigma += u[i] * u[i];
    double* x = A + k * ld + k + 1;  // row k past the diagonal: unused by the lower triangle, keeps u
    const bool reflect = sigma != 0;  // else the column is already reduced: H = I
    w.t[k] = reflect ? 1 : 0;
    if (!reflect) {
      w.e[k] = u[0];
      std::fill(x, x + m, 0.0);
    } else {
      const double norm = sqrt(u[0] * u[0] + sigma);
      const double alpha = u[0] > 0 ? -norm : norm;  // no cancellation in x0 - alpha
      u[0] -= alpha;
      const double f = 1.0 / sqrt(u[0] * u[0] + sigma);
      for (int64_t i = 0; i < m; ++i) u[i] *= f;
      std::copy(u, u + m, x);
      w.e[k] = alpha;
    }
    if (!reflect && !pending) continue;
    // the fused pass over rows k + 1 ..: row i's entries k + 1 .. i
    double* q = w.p;  // B u, offsets into the block
    const int64_t b0 = (k + 1) / kRowBlock, nb = Work::blocks(n) - b0;
    const double* ur = reflect ? u : nullptr;
    const double *upr = pending ? up + k + 1 : nullptr, *qpr = qp + k + 1;
    auto blocks = [&](int64_t c0, int64_t c1) {
      for (int64_t c = b0 + c0; c < b0 + c1; ++c) {
        const int64_t r0 = std::max(k + 1, c * kRowBlock), r1 = std::min(n, (c + 1) * kRowBlock);
        double* part = w.part + c * n + k + 1;
        if (ur) std::fill(part, part + (r1 - k - 1), 0.0);
        for (int64_t i = r0; i < r1; ++i)
          q[i - k - 1] = fused_row(A + i * ld + k + 1, i - k, upr, qpr, pending ? up[i] : 0, pending ? qp[i] : 0,
                                   ur, part);
      }
    };
    const double per_block = 4.0 * kRowBlock * (double)m / 2 + 1;
    const int64_t nt = par.run ? oc::detail::num_tasks(nb, per_block, 1 << 15, kMaxInnerTasks) : 1;
    if (nt <= 1) {
      blocks(0, nb);
    } else {
      // block c (offset from b0) costs about its rows' lengths: boundaries at equal shares of the sum
      auto bound = [&](int64_t part) {
        if (part >= nt) return nb;
        const double want = (double)m * m * (double)part / (double)nt;
        int64_t lo = 0, hi = nb;
        while (lo < hi) {
          const int64_t mid = (lo + hi) / 2;
          const double r = (double)std::min(n, (b0 + mid) * kRowBlock) - (double)(k + 1);
          if (r * r < want)
            lo = mid + 1;
          else
            hi = mid;
        }
        return lo;
      };
      auto task = [&](size_t t) { blocks(bound((int64_t)t), bound((int64_t)t + 1)); };
      oc::detail::parallel_for(par, (size_t)nt, task);
    }
    pending = reflect;
    if (!reflect) continue;
    // B u: each entry's own row, then the blocks below it in order
    for (int64_t c = b0; c < b0 + nb; ++c) {
      const double* part = w.part + c * n + k + 1;
      const int64_t end = std::min(n, (c + 1) * kRowBlock) - k - 1;
      for (int64_t j = 0; j < end; ++j) q[j] += part[j];
    }
    double K = 0;
    for (int64_t i = 0; i < m; ++i) K += u[i] * q[i];
    for (int64_t i = 0; i < m; ++i) {
      up[k + 1 + i] = u[i];
      qp[k + 1 + i] = 2 * q[i] - 2 * K * u[i];
    }
  }
  if (pending)  // the last reflection's update, on the trailing 2 x 2
    for (int64_t i = n - 2; i < n; ++i)
      for (int64_t j = n - 2; j <= i; ++j) A[i * ld + j] -= up[i] * qp[j] + qp[i] * up[j];
  for (int64_t i = 0; i < n; ++i) w.d[i] = A[i * ld + i];
  if (n >= 2) w.e[n - 2] = A[(n - 1) * ld + n - 2];
  w.e[n - 1] = 0;
}

// Sets w.r = Q^T = H_{n-3} ... H_1 H_0 from the reflections tridiagonalize left in w.a, accumulated
// backward (X <- X H_k for k descending: X = H_{n-3} ... H_{k+1} is I outside rows and columns
// k + 2 .., so H_k touches only rows and columns k + 1 ..: 4/3 n^3 flops, not the forward 2 n^3).
// Each row of X is independent of the others (a dot and an axpy per reflection, k descending):
// tasks over rows, split so that each has about the same work.
static void form_basis(Work& w, int64_t n, const oc_parallel& par) {
  double* R = w.r;
  const double* A = w.a;
  const int64_t ld = w.ld;
  // a block of rows (about 32 KiB) takes each reflection in turn: u is read once per block
  const int64_t block = std::max<int64_t>(1, std::min<int64_t>(64, 4096 / std::max<int64_t>(n, 1)));
  auto rows = [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      std::fill(R + i * ld, R + i * ld + n, 0.0);
      R[i * ld + i] = 1.0;
    }
    for (int64_t b0 = i0; b0 < i1; b0 += block) {
      const int64_t b1 = std::min(i1, b0 + block);
      for (int64_t k = std::min(b1 - 2, n - 3); k >= 0; --k) {
        if (w.t[k] == 0) continue;
        const int64_t m = n - k - 1;
        const double* u = A + k * ld + k + 1;
        for (int64_t i = std::max(b0, k + 1); i < b1; ++i) {  // rows past k only: the others have zeros there
          double* y = R + i * ld + k + 1;
          const double g = 2 * dot(y, u, m);
          axpy(y, u, -g, m);
        }
      }
    }
  };
  const double total = 2.0 * (double)n * n * n / 3 + 1;
  const int64_t nt = par.run ? oc::detail::num_tasks(n, total / (double)n, 1 << 15, kMaxInnerTasks) : 1;
  if (nt <= 1) {
    rows(0, n);
    return;
  }
  // row i costs about 4 (i n - i^2 / 2): boundaries at equal shares of the cumulative cost
  auto cost = [&](double i) { return i * i * (double)n - i * i * i / 3; };
  auto bound = [&](int64_t part) {
    if (part >= nt) return n;
    const double want = cost((double)n) * (double)part / (double)nt;
    int64_t lo = 0, hi = n;
    while (lo < hi) {
      const int64_t mid = (lo + hi) / 2;
      if (cost((double)mid) < want)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  };
  auto task = [&](size_t t) { rows(bound((int64_t)t), bound((int64_t)t + 1)); };
  oc::detail::parallel_for(par, (size_t)nt, task);
}

// Applies the queued rotations to w.r in order: rotation q mixes rows qi[q] (x) and qi[q] + 1 (y),
// y <- s x + c y, x <- c x - s y. Column chunks of kChunk are independent: each takes every rotation,
// in order, on its columns (it stays in cache across the queue); tasks over chunks. A sweep's
// rotations go up the rows one at a time, so the rotated x is the next rotation's y: it stays in
// registers, and each row of a chunk is loaded and stored once per sweep.
static void flush(Work& w, int64_t n, const oc_parallel& par) {
  const int64_t nq = w.queued;
  if (nq == 0) return;
  w.queued = 0;
  const int64_t* qi = w.qi;
  const double *qc = w.qc, *qs = w.qs;
  double* R = w.r;
  const int64_t ld = w.ld;
  const int64_t full = n / kChunk, chunks = oc::detail::div_up(n, kChunk);
  constexpr int64_t V = kChunk / kLanes;
  in_tasks(par, chunks, 6.0 * kChunk * nq, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      double* base = R + c * kChunk;
      const int64_t len = c < full ? kChunk : n - c * kChunk;
      for (int64_t q = 0; q < nq;) {
        int64_t e = q + 1;  // rotations q .. e - 1: one run up the rows
        while (e < nq && qi[e] == qi[e - 1] - 1) ++e;
        if (len == kChunk) {
          Vd y[V];
          for (int64_t v = 0; v < V; ++v) y[v] = *(const Vd*)(base + (qi[q] + 1) * ld + v * kLanes);
          for (int64_t r = q; r < e; ++r) {
            double* row = base + qi[r] * ld;
            if (r + 6 < e)  // rows 4 KiB or more apart: the hardware prefetchers do not see them coming
              for (int64_t v = 0; v < kChunk; v += 8) __builtin_prefetch(row - 6 * ld + v, 1);
            const double cc = qc[r], ss = qs[r];
            for (int64_t v = 0; v < V; ++v) {
              const Vd x = *(const Vd*)(row + v * kLanes);
              *(Vd*)(row + ld + v * kLanes) = ss * x + cc * y[v];
              y[v] = cc * x - ss * y[v];
            }
          }
          for (int64_t v = 0; v < V; ++v) *(Vd*)(base + qi[e - 1] * ld + v * kLanes) = y[v];
        } else {
          for (int64_t k = 0; k < len; ++k) {
            double y = base[(qi[q] + 1) * ld + k];
            for (int64_t r = q; r < e; ++r) {
              double* x = base + qi[r] * ld + k;
              const double xk = *x;
              x[ld] = qs[r] * xk + qc[r] * y;
              y = qc[r] * xk - qs[r] * y;
            }
            base[qi[e - 1] * ld + k] = y;
          }
        }
        q = e;
      }
    }
  });
}

// Implicit QL on (d, e), rotating w.r's rows when vectors (at once for small n, else queued and
// flushed). false: the iteration cap was reached.
static bool ql(Work& w, int64_t n, bool vectors, const oc_parallel& par) {
  double *d = w.d, *e = w.e;
  const double eps = std::numeric_limits<double>::epsilon();
  const bool queue = vectors && n >= kQueueN;
  for (int64_t l = 0; l < n; ++l) {
    for (int iter = 0;; ++iter) {
      int64_t m = l;
      for (; m + 1 < n; ++m)  // first negligible coupling at or past l
        if (fabs(e[m]) <= eps * (fabs(d[m]) + fabs(d[m + 1])) || fabs(e[m]) < std::numeric_limits<double>::min())
          break;
      if (m == l) break;
      if (iter == kMaxIterations) return false;
      if (queue && w.queued + (m - l) > w.cap) flush(w, n, par);
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
        if (queue) {
          w.qi[w.queued] = i, w.qc[w.queued] = c, w.qs[w.queued] = s;
          ++w.queued;
        } else if (vectors) {
          double* OC_RESTRICT x = w.r + i * w.ld;
          double* OC_RESTRICT y = x + w.ld;
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
  if (queue) flush(w, n, par);
  return true;
}

template <class T>
static uint8_t one(const T* a, T* wout, T* v, int64_t n, bool upper, Work& w, const oc_parallel& par) {
  double amax = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) {  // (i, j) of the lower triangle; U: read at (j, i)
      const double x = (double)(upper ? a[j * n + i] : a[i * n + j]);
      if (!std::isfinite(x)) return 0;
      w.a[i * w.ld + j] = w.a[j * w.ld + i] = x;
      amax = std::max(amax, fabs(x));
    }
  int ex = 0;
  if (amax > 0) {
    frexp(amax, &ex);
    const double f = ldexp(1.0, -ex);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) w.a[i * w.ld + j] *= f;
  }
  const bool vectors = v != nullptr;
  if (n < kQueueN)
    tridiagonalize_small(w, n);
  else
    tridiagonalize(w, n, par);
  if (vectors) form_basis(w, n, par);
  if (!ql(w, n, vectors, par)) return 2;
  int64_t* order = w.order;
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order, order + n, [&](int64_t x, int64_t y) { return w.d[x] < w.d[y]; });
  if (wout)
    for (int64_t j = 0; j < n; ++j) wout[j] = (T)ldexp(w.d[order[j]], ex);
  if (vectors)
    for (int64_t j = 0; j < n; ++j) {
      const double* x = w.r + order[j] * w.ld;
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
  if (batch < 4 && n >= kParallelN && par.run != nullptr) {  // parallelism inside each matrix
    void* buf = malloc(bytes);
    if (!buf) return OC_OUT_OF_MEMORY;
    Work w;
    w.carve(buf, n);
    for (int64_t b = 0; b < batch; ++b)
      status[b] = one<T>(a + b * n * n, wout ? wout + b * n : nullptr, v ? v + b * n * n : nullptr, n, upper, w, par);
    free(buf);
    return 0;
  }
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
      status[b] = one<T>(a + b * n * n, wout ? wout + b * n : nullptr, v ? v + b * n * n : nullptr, n, upper, w, oc_serial);
    free(buf);
  };
  oc::detail::parallel_for(par, (size_t)nt, task);
  return failed.load(std::memory_order_relaxed) ? OC_OUT_OF_MEMORY : 0;
}

#endif  // OC_ISA_PASS
