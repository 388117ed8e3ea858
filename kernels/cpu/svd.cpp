// Batched singular value decomposition: one-sided (Hestenes) Jacobi for tiny matrices, Householder
// bidiagonalization and implicit-shift QR on the bidiagonal (svd_bidiag.inc) from k = min(m, n) =
// kBidiagK (8; kBidiagValuesK = 5 without the vectors) up, the bidiagonal's vectors by divide and
// conquer from k = kBidiagDcK (64: svd_bidiag_dc.inc), its values alone by dqds
// (svd_bidiag_dqds.inc; a task's matrices in pairs, their dqds side by side: values_in_pairs).
//
// Both start alike: the matrix is scaled by a power of two so its largest entry is in [0.5, 1) (no
// squared norm overflows or underflows; exact), and a matrix holding a NaN or an infinity is
// reported, not iterated. The k = min(m, n) "long" vectors (A's columns when m > n, its rows when
// m <= n: length L = max(m, n)) are copied as the rows of a working matrix G (k x L, rows
// contiguous), whose SVD G = W S Z^T gives A's (the short vectors W, length k, are one side's
// singular vectors, the long ones Z the other's).
//
// Jacobi (k below those): the long vectors are rotated in pairs until every pair is orthogonal to
// |<x, y>| <= sqrt(L) eps ||x|| ||y||; the same rotations applied to the identity give the k short
// vectors. Then the long vectors' norms are the singular values, the normalized long vectors the
// long singular vectors. Accurate (high relative accuracy for each singular value), simple, and the
// fastest for tiny matrices, but a sweep costs about 5 k^2 L flops and a matrix takes ~5-10 sweeps:
// from about k = 6-8 the bidiagonal path, ~4 k^2 L for the reduction and O(k^2) for the values, is
// faster. Long vectors of (relatively) zero singular values and
// full_matrices' extra ones are an orthonormal completion: Q e_c for the Householder QR, Q R, of the
// kept ones. The short vectors get one Gram-Schmidt pass at the end. Pairs are swept cyclically (row
// by row) on one thread; a few large matrices are swept in a round-robin order whose k/2 disjoint
// pairs per step are split across threads.
//
// The values alone of a long matrix (long_enough: L >= 1.5 k from k = 32) are those of its R, A = Q R (A^T's
// when wide), from the QR kernel (values_by_r): ~2 k^2 L flops in products, not the bidiagonalization's
// ~4 k^2 L.
//
// The bidiagonal path: see svd_bidiag.inc. It falls back to Jacobi for a matrix whose bidiagonal QR
// does not converge (bdsqr's iteration cap; never seen). A few large matrices (batch < 4, k >=
// kParallelK) are split inside, every parallel step of them on one team (team.h: one fork/join of
// the host's pool); more are split over the batch.
//
// Compiled once per instruction set (isa_passes.inc, as inverse.cpp).

#ifndef OC_ISA_PASS

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <limits>

#if defined(__SSE2__)
#include <immintrin.h>  // the AVX-512 pass's masked loads and stores (column_major.inc)
#endif

#include "parallel.h"
#include "svd.h"
#include "team.h"

namespace oc {
#define OC_ISA_PASS_FILE "svd.cpp"
#define OC_ISA_PASS_NS svd
#include "isa_passes.inc"  // oc::svd_base, _avx2, _avx512
}  // namespace oc

int oc_svd_f32(const float* a, float* u, float* s, float* vh, uint8_t* finite, int64_t batch,
               int64_t m, int64_t n, int64_t ucols, int64_t vrows, bool vectors, oc_parallel par) {
  return OC_ISA_CALL(oc::svd, svd_f32, a, u, s, vh, finite, batch, m, n, ucols, vrows, vectors, par);
}

int oc_svd_f64(const double* a, double* u, double* s, double* vh, uint8_t* finite, int64_t batch,
               int64_t m, int64_t n, int64_t ucols, int64_t vrows, bool vectors, oc_parallel par) {
  return OC_ISA_CALL(oc::svd, svd_f64, a, u, s, vh, finite, batch, m, n, ucols, vrows, vectors, par);
}

#else  // OC_ISA_PASS: the per-instruction-set body, included inside a namespace

#include "simd.inc"
#include "pow2_scale.inc"  // pow2_factors: the scaling of a subnormal matrix

using ::oc::detail::Team;

// kBidiagK (kBidiagValuesK without the vectors): the smallest k = min(m, n) that takes the bidiagonal
// path (svd_bidiag.inc); below it Jacobi's few sweeps are cheaper (measured: batches of float k x k
// matrices, 1 thread, AVX-512; bidiagonal / Jacobi time at k = 4, 6, 8, 10: 0.93, 1.0, 0.69, 0.40 with
// the vectors, 1.27, 0.79, 0.35, 0.26 without, with the QR for the values; with dqds, Zen 5, at k = 3,
// 4, 5: 1.11, 1.02, 0.79 without)
enum : int64_t { kMaxSweeps = 60, kParallelK = 96, kMaxInnerTasks = 64, kBidiagK = 8, kBidiagValuesK = 5 };

// xx = <x, x>, yy = <y, y>, xy = <x, y> over [0, len), in one pass
template <class T>
static OC_ALWAYS_INLINE void dots(const T* OC_RESTRICT x, const T* OC_RESTRICT y, int64_t len, T& xx,
                                  T& yy, T& xy) {
  typedef typename Vec<T>::type V;
  enum { W = Vec<T>::W };
  V axx = {}, ayy = {}, axy = {};
  int64_t i = 0;
  for (; i + W <= len; i += W) {
    const V a = vload<V>(x + i), b = vload<V>(y + i);
    axx += a * a;
    ayy += b * b;
    axy += a * b;
  }
  xx = hsum<T>(axx);
  yy = hsum<T>(ayy);
  xy = hsum<T>(axy);
  for (; i < len; ++i) {
    xx += x[i] * x[i];
    yy += y[i] * y[i];
    xy += x[i] * y[i];
  }
}

template <class T>
static OC_ALWAYS_INLINE T dot(const T* OC_RESTRICT x, const T* OC_RESTRICT y, int64_t len) {
  typedef typename Vec<T>::type V;
  enum { W = Vec<T>::W };
  V acc = {};
  int64_t i = 0;
  for (; i + W <= len; i += W) acc += vload<V>(x + i) * vload<V>(y + i);
  T r = hsum<T>(acc);
  for (; i < len; ++i) r += x[i] * y[i];
  return r;
}

// (x, y) <- (c x - s y, s x + c y)
template <class T>
static OC_ALWAYS_INLINE void rotate(T* OC_RESTRICT x, T* OC_RESTRICT y, int64_t len, T c, T s) {
  typedef typename Vec<T>::type V;
  enum { W = Vec<T>::W };
  int64_t i = 0;
  for (; i + W <= len; i += W) {
    const V a = vload<V>(x + i), b = vload<V>(y + i);
    vstore(x + i, a * c - b * s);
    vstore(y + i, a * s + b * c);
  }
  for (; i < len; ++i) {
    const T a = x[i], b = y[i];
    x[i] = a * c - b * s;
    y[i] = a * s + b * c;
  }
}

// y[0:len] -= f x[0:len]
template <class T>
static OC_ALWAYS_INLINE void axpy(T* OC_RESTRICT y, const T* OC_RESTRICT x, int64_t len, T f) {
  for (int64_t i = 0; i < len; ++i) y[i] -= f * x[i];
}

// Orthogonalizes the pair (x, y) by one rotation (applied to the short vectors p, q too, when
// given) unless it already is to `tol`; returns whether it rotated.
template <class T>
static OC_ALWAYS_INLINE bool pair(T* x, T* y, T* p, T* q, int64_t len, int64_t k, T tol) {
  T a, b, c;
  dots(x, y, len, a, b, c);
  if (!(fabs(c) > tol * sqrt(a) * sqrt(b))) return false;  // also when a or b is 0 (then c is 0)
  const T zeta = (b - a) / (2 * c);
  // the smaller root of t^2 + 2 zeta t - 1 = 0 (zeroes the pair's inner product)
  const T t = fabs(zeta) > T(1) / std::numeric_limits<T>::epsilon()
                  ? T(0.5) / zeta
                  : (zeta >= 0 ? T(1) : T(-1)) / (fabs(zeta) + sqrt(T(1) + zeta * zeta));
  const T cs = T(1) / sqrt(T(1) + t * t), sn = cs * t;
  rotate(x, y, len, cs, sn);
  if (p != nullptr) rotate(p, q, k, cs, sn);
  return true;
}

// One matrix's working set: rows of `lda` elements (long vectors, then completion rows), the
// short vectors (k x k), row pointers and the Householder copies.
template <class T>
struct Work {
  T* g;       // cols rows of lda
  T* h;       // k rows of lda (vectors only)
  T* v;       // k x k (vectors only)
  T** gr;     // k: the long vectors, in their current (finally: descending) order
  T** vr;     // k: the short vectors, likewise
  T* norm;    // k
  T* tau;     // k
  int64_t* order;  // k + 1: the round-robin schedule

  static size_t bytes(int64_t cols, int64_t k, int64_t lda, bool vectors) {
    const size_t elems = (size_t)cols * lda + (vectors ? (size_t)k * lda + (size_t)k * k : 0) + 2 * (size_t)k;
    return elems * sizeof(T) + (size_t)k * 2 * sizeof(T*) + ((size_t)k + 1) * sizeof(int64_t) + 64 + 8;
  }

  void carve(void* buf, int64_t cols, int64_t k, int64_t lda, bool vectors) {
    T* p = (T*)(((uintptr_t)buf + 63) & ~(uintptr_t)63);
    g = p;
    p += cols * lda;
    h = vectors ? p : nullptr;
    p += vectors ? k * lda : 0;
    v = vectors ? p : nullptr;
    p += vectors ? k * k : 0;
    norm = p;
    tau = p + k;
    p += 2 * k;
    p = (T*)(((uintptr_t)p + 7) & ~(uintptr_t)7);  // pointers and int64s aligned
    gr = (T**)p;
    vr = gr + k;
    order = (int64_t*)(vr + k);
  }
};

// Sweeps until no pair rotates (or kMaxSweeps).
template <class T>
static void jacobi(Work<T>& w, int64_t k, int64_t L, bool vectors, const oc_parallel& par) {
  const T tol = sqrt((T)L) * std::numeric_limits<T>::epsilon();
  if (k < 2) return;
  const bool inner = par.run != nullptr && k >= kParallelK;
  if (!inner) {
    for (int64_t sweep = 0; sweep < kMaxSweeps; ++sweep) {
      bool rotated = false;
      for (int64_t p = 0; p < k - 1; ++p)
        for (int64_t q = p + 1; q < k; ++q)
          rotated |= pair(w.gr[p], w.gr[q], vectors ? w.vr[p] : nullptr, vectors ? w.vr[q] : nullptr, L, k, tol);
      if (!rotated) return;
    }
    return;
  }
  // round robin: player order[0] stays, the others rotate; k odd gets a bye (index k)
  const int64_t players = k + (k & 1), half = players / 2;
  for (int64_t i = 0; i < players; ++i) w.order[i] = i;
  const int64_t nt = num_tasks(half, 10.0 * (double)L, 1 << 16, kMaxInnerTasks);
  for (int64_t sweep = 0; sweep < kMaxSweeps; ++sweep) {
    std::atomic<bool> rotated{false};
    for (int64_t step = 0; step < players - 1; ++step) {
      auto task = [&](size_t t) {
        int64_t b, e;
        split_range(half, nt, (int64_t)t, b, e);
        bool any = false;
        for (int64_t i = b; i < e; ++i) {
          int64_t p = w.order[i], q = w.order[players - 1 - i];
          if (p == k || q == k) continue;
          if (p > q) std::swap(p, q);
          any |= pair(w.gr[p], w.gr[q], vectors ? w.vr[p] : nullptr, vectors ? w.vr[q] : nullptr, L, k, tol);
        }
        if (any) rotated.store(true, std::memory_order_relaxed);
      };
      parallel_for(par, (size_t)nt, task);
      const int64_t last = w.order[players - 1];
      for (int64_t i = players - 1; i > 1; --i) w.order[i] = w.order[i - 1];
      w.order[1] = last;
    }
    if (!rotated.load(std::memory_order_relaxed)) return;
  }
}

// Rows r..cols-1 of the long vectors (gr[r..k), then g's rows k..cols-1): an orthonormal completion
// of the (orthonormal) rows gr[0..r): Q e_c, c >= r, for the Householder QR of those rows.
template <class T>
static void complete(Work<T>& w, int64_t r, int64_t k, int64_t cols, int64_t L, int64_t lda) {
  for (int64_t j = 0; j < r; ++j) memcpy(w.h + j * lda, w.gr[j], (size_t)L * sizeof(T));
  for (int64_t j = 0; j < r; ++j) {
    T* x = w.h + j * lda + j;
    const int64_t len = L - j;
    const T sigma = sqrt(dot(x, x, len));
    x[0] -= x[0] >= 0 ? -sigma : sigma;  // v = x - alpha e_0, alpha = -sign(x_0) ||x||
    const T vv = dot(x, x, len);
    w.tau[j] = vv > 0 ? T(2) / vv : T(0);
    for (int64_t i = j + 1; i < r; ++i) {
      T* y = w.h + i * lda + j;
      axpy(y, x, len, w.tau[j] * dot(x, y, len));
    }
  }
  for (int64_t c = r; c < cols; ++c) {
    T* y = c < k ? w.gr[c] : w.g + c * lda;
    memset(y, 0, (size_t)L * sizeof(T));
    y[c] = T(1);
    for (int64_t j = r - 1; j >= 0; --j) {
      const T* x = w.h + j * lda + j;
      axpy(y + j, x, L - j, w.tau[j] * dot(x, y + j, L - j));
    }
  }
}

// A's (count entries) scaling by a power of two: false when A holds a NaN or an infinity; else down * down2 = 2^-e
// puts its largest entry in [0.5, 1) (exact; two factors where 2^-e is past T's range: a subnormal largest entry)
// and up = 2^e undoes it.
template <class T>
static bool scaling(const T* a, int64_t count, T& down, T& down2, T& up) {
  T amax = 0;
  bool ok = true;
  for (int64_t i = 0; i < count; ++i) {
    const T x = fabs(a[i]);
    ok &= x <= std::numeric_limits<T>::max();  // false for NaN and inf
    amax = x > amax ? x : amax;
  }
  if (!ok) return false;
  int e = 0;
  if (amax > 0) frexp(amax, &e);
  pow2_factors(-e, down, down2);
  up = (T)ldexp(1.0, e);
  return true;
}

// Checks that A (m x n) is finite (else its outputs are NaN and it returns false) and copies its k
// long vectors (A's columns when m > n, its rows when m <= n), scaled by a power of two that puts its
// largest entry in [0.5, 1), into the rows of g (stride lda); `up` undoes the scaling.
template <class T>
static bool load(const T* a, T* u, T* s, T* vh, int64_t m, int64_t n, int64_t ucols, int64_t vrows, T* g,
                 int64_t lda, T& up) {
  const bool tall = m > n;
  const int64_t k = tall ? n : m, L = tall ? m : n;
  T down, down2;
  if (!scaling(a, m * n, down, down2, up)) {
    const T nan = std::numeric_limits<T>::quiet_NaN();
    if (s) std::fill(s, s + k, nan);
    if (u) std::fill(u, u + m * ucols, nan);
    if (vh) std::fill(vh, vh + vrows * n, nan);
    return false;
  }
  for (int64_t j = 0; j < k; ++j) {
    T* gj = g + j * lda;
    if (tall)
      for (int64_t i = 0; i < L; ++i) gj[i] = a[i * n + j] * down * down2;
    else
      for (int64_t i = 0; i < L; ++i) gj[i] = a[j * n + i] * down * down2;
  }
  return true;
}

// One m x n matrix by Jacobi. Long vectors: A's columns (m > n) or rows (m <= n).
template <class T>
static void one(const T* a, T* u, T* s, T* vh, uint8_t* finite, int64_t m, int64_t n, int64_t ucols,
                int64_t vrows, bool vectors, Work<T>& w, int64_t lda, const oc_parallel& par) {
  const bool tall = m > n;
  const int64_t k = tall ? n : m, L = tall ? m : n;
  const int64_t cols = !vectors ? k : tall ? ucols : vrows;
  T up;
  *finite = load(a, u, s, vh, m, n, ucols, vrows, w.g, lda, up);
  if (!*finite) return;
  for (int64_t j = 0; j < k; ++j) {
    w.gr[j] = w.g + j * lda;
    if (vectors) {
      w.vr[j] = w.v + j * k;
      memset(w.vr[j], 0, (size_t)k * sizeof(T));
      w.vr[j][j] = T(1);
    }
  }
  jacobi(w, k, L, vectors, par);
  for (int64_t j = 0; j < k; ++j) w.norm[j] = sqrt(dot(w.gr[j], w.gr[j], L));
  // descending: sort the row pointers (the short vectors follow their long ones)
  for (int64_t j = 1; j < k; ++j) {
    const T nj = w.norm[j];
    T* gj = w.gr[j];
    T* vj = vectors ? w.vr[j] : nullptr;
    int64_t i = j;
    for (; i > 0 && w.norm[i - 1] < nj; --i) {
      w.norm[i] = w.norm[i - 1];
      w.gr[i] = w.gr[i - 1];
      if (vectors) w.vr[i] = w.vr[i - 1];
    }
    w.norm[i] = nj;
    w.gr[i] = gj;
    if (vectors) w.vr[i] = vj;
  }
  if (s)
    for (int64_t j = 0; j < k; ++j) s[j] = w.norm[j] * up;
  if (!vectors) return;
  // long vectors of singular values below L eps of the largest are not trusted as directions
  const T small = w.norm[0] * (T)L * std::numeric_limits<T>::epsilon();
  int64_t r = 0;
  while (r < k && w.norm[r] > small) {
    const T f = T(1) / w.norm[r];
    for (int64_t i = 0; i < L; ++i) w.gr[r][i] *= f;
    ++r;
  }
  if (r < cols) complete(w, r, k, cols, L, lda);
  // the short vectors carry every rotation's rounding (~ sweeps k eps off orthogonal for large k):
  // one modified Gram-Schmidt pass, in descending order, brings them back to eps (k^3 flops, a few
  // percent of the sweeps)
  if (k >= 16)
    for (int64_t j = 0; j < k; ++j) {
      T* x = w.vr[j];
      for (int64_t i = 0; i < j; ++i) axpy(x, w.vr[i], k, dot(w.vr[i], x, k));
      const T f = T(1) / sqrt(dot(x, x, k));
      for (int64_t i = 0; i < k; ++i) x[i] *= f;
    }
  auto longv = [&](int64_t j) -> const T* { return j < k ? w.gr[j] : w.g + j * lda; };
  if (tall) {  // U's columns are the long vectors, Vh's rows the short ones
    if (u)
      for (int64_t j = 0; j < ucols; ++j) {
        const T* x = longv(j);
        for (int64_t i = 0; i < m; ++i) u[i * ucols + j] = x[i];
      }
    if (vh)
      for (int64_t j = 0; j < k; ++j) memcpy(vh + j * n, w.vr[j], (size_t)n * sizeof(T));
  } else {  // U's columns are the short vectors, Vh's rows the long ones
    if (u)
      for (int64_t j = 0; j < k; ++j)
        for (int64_t i = 0; i < m; ++i) u[i * m + j] = w.vr[j][i];
    if (vh)
      for (int64_t j = 0; j < vrows; ++j) memcpy(vh + j * n, longv(j), (size_t)n * sizeof(T));
  }
}

#include "column_major.inc"  // tile_kernel: the blocked reflectors' products
#include "svd_bidiag.inc"

// One matrix by Jacobi (the bidiagonal QR's fallback), in working memory of its own: 0 or OC_OUT_OF_MEMORY.
template <class T>
static int one_jacobi(const T* a, T* u, T* s, T* vh, uint8_t* finite, int64_t m, int64_t n, int64_t ucols,
                      int64_t vrows, bool vectors, int64_t lda, const oc_parallel& par) {
  const int64_t k = m < n ? m : n, cols = !vectors ? k : m > n ? ucols : vrows;
  void* buf = malloc(Work<T>::bytes(cols, k, lda, vectors));
  if (!buf) return OC_OUT_OF_MEMORY;
  Work<T> jw;
  jw.carve(buf, cols, k, lda, vectors);
  one<T>(a, u, s, vh, finite, m, n, ucols, vrows, vectors, jw, lda, par);
  free(buf);
  return 0;
}

// One matrix by the bidiagonal path; by Jacobi in the (never seen) case that the bidiagonal QR does
// not converge. Returns 0 or OC_OUT_OF_MEMORY (Jacobi's working memory).
template <class T>
static int one_bidiag(const T* a, T* u, T* s, T* vh, uint8_t* finite, int64_t m, int64_t n, int64_t ucols,
                      int64_t vrows, bool vectors, BdWork<T>& w, int64_t lda, int64_t ldk, const oc_parallel& par) {
  T up;
  *finite = load(a, u, s, vh, m, n, ucols, vrows, w.g, lda, up);
  if (!*finite || bidiag_svd(w, u, s, vh, m, n, ucols, vrows, vectors, lda, ldk, up, par)) return 0;
  return one_jacobi(a, u, s, vh, finite, m, n, ucols, vrows, vectors, lda, par);
}

// Svdvals of batch entries [b0, b1) two at a time: each loaded and bidiagonalized, its (d, e) kept in
// its slot of w.qd, then both bidiagonals' dqds side by side (dqds_values); one that dqds does not
// take or that does not converge goes through the QR, then Jacobi (as one_bidiag). The same
// operations on each matrix as alone: the same bits.
template <class T>
static int values_in_pairs(const T* a, T* s, uint8_t* finite, int64_t b0, int64_t b1, int64_t m, int64_t n,
                           BdWork<T>& w, int64_t lda, int64_t ldk) {
  const int64_t k = m < n ? m : n, L = m < n ? n : m;
  const double tol = 100 * (double)std::numeric_limits<T>::epsilon();
  auto out = [&](int64_t j) { return s ? s + j * k : nullptr; };
  int rc = 0;
  for (int64_t b = b0; b < b1; b += 2) {
    Dqds q[2];
    double *d[2], *e[2];
    T up[2];
    int64_t at[2];
    bool dq[2];
    int live = 0;
    for (int64_t j = b; j < std::min(b + 2, b1); ++j) {
      finite[j] = load(a + j * m * n, (T*)nullptr, out(j), (T*)nullptr, m, n, 0, 0, w.g, lda, up[live]);
      if (!finite[j]) continue;
      reduce_bidiag(w, k, L, lda, ldk, false, oc_serial);
      double* slot = w.qd + live * dqds_slot(k);
      d[live] = slot, e[live] = slot + k;
      memcpy(d[live], w.d, (size_t)k * sizeof(double));
      memcpy(e[live], w.e, (size_t)k * sizeof(double));
      dq[live] = dqds_takes<T>(d[live], e[live], k);
      if (dq[live]) q[live].init(d[live], e[live], k, tol, slot + 2 * k);
      at[live++] = j;
    }
    int r[2] = {-1, -1}, none;
    if (live == 2 && dq[0] && dq[1])
      dqds_values(q[0], &q[1], r[0], r[1]);
    else
      for (int i = 0; i < live; ++i)
        if (dq[i]) dqds_values(q[i], nullptr, r[i], none);
    for (int i = 0; i < live; ++i) {
      if (dq[i] && r[i] == 0) {
        dqds_sqrt(q[i], d[i]);
      } else {
        Rotations<T> rot{w, k, ldk, oc_serial, false};
        if (!bidiagonal_qr<T>(d[i], e[i], k, rot)) {
          const int64_t j = at[i];
          if (int err = one_jacobi(a + j * m * n, (T*)nullptr, out(j), (T*)nullptr, finite + j, m, n, 0, 0, false, lda,
                                   oc_serial))
            rc = err;
          continue;
        }
      }
      order_values(d[i], k, w.perm, out(at[i]), up[i]);
    }
  }
  return rc;
}

namespace qr_pass {  // the QR kernel's body (qr.cpp's pass), compiled in here: values_by_r's R
#include "qr.cpp"
}  // namespace qr_pass

template <class T>
static int run(const T* a, T* u, T* s, T* vh, uint8_t* finite, int64_t batch, int64_t m, int64_t n, int64_t ucols,
               int64_t vrows, bool vectors, const oc_parallel& par);

// Whether the values alone go through R (values_by_r): L >= 1.5 k from k = 32, L >= 8 k below (AMD Zen 5, 1 thread,
// float: 1x4000x200 18.2 -> 4.8 ms, 1x5000x64 2.13 -> 0.86, 1x600x300 3.58 -> 3.21, 1x2000x8 22 -> 21 us; 2
// threads 1x4000x200 41 -> 5.6 ms; 100x40x16 and 50x50x20 3-4% slower through R, 100x30x10 7%).
static inline bool long_enough(int64_t k, int64_t L) {
  return k >= kBidiagValuesK && (k >= 32 ? 2 * L >= 3 * k : L >= 8 * k);
}

// The values alone of a long matrix (long_enough): A = Q R first (A^T's for a wide A; the same values), by
// the QR kernel, then R's k x k values as any matrix's: the QR's ~2 k^2 L flops, nearly all in its products,
// instead of the bidiagonalization's ~4 k^2 L (LAPACK's gesdd does the same from L = 11/6 k). A is scaled by a
// power of two first, as load does (R's norms neither overflow nor underflow), and its values scaled back; a
// matrix holding a NaN or an infinity gets an R of NaN (reported as its own would be).
template <class T>
static int values_by_r(const T* a, T* s, uint8_t* finite, int64_t batch, int64_t m, int64_t n, const oc_parallel& par) {
  const bool tall = m > n;
  const int64_t k = tall ? n : m, L = tall ? m : n;
  T* r = (T*)malloc((size_t)(batch * (k * k + 1)) * sizeof(T));
  if (!r) return OC_OUT_OF_MEMORY;
  T* ups = r + batch * k * k;
  std::atomic<int> err{0};
  auto matrices = [&](int64_t b0, int64_t b1, const oc_parallel& qp) {
    T* g = (T*)malloc((size_t)(L * k) * sizeof(T));  // the long matrix, L x k: A, or A^T
    if (!g) {
      err.store(OC_OUT_OF_MEMORY, std::memory_order_relaxed);
      return;
    }
    for (int64_t b = b0; b < b1; ++b) {
      const T* ab = a + b * m * n;
      T down, down2;
      if (!scaling(ab, m * n, down, down2, ups[b])) {
        ups[b] = T(1);
        std::fill(r + b * k * k, r + (b + 1) * k * k, std::numeric_limits<T>::quiet_NaN());
        continue;
      }
      if (tall)
        for (int64_t i = 0; i < m * n; ++i) g[i] = ab[i] * down * down2;
      else
        for (int64_t i = 0; i < L; ++i)
          for (int64_t j = 0; j < k; ++j) g[i * k + j] = ab[j * n + i] * down * down2;
      if (int rc = qr_pass::run<T>(g, nullptr, r + b * k * k, 1, L, k, 0, k, qp)) err.store(rc, std::memory_order_relaxed);
    }
    free(g);
  };
  if (batch < 4) {  // few: the QR splits each matrix itself where it pays
    matrices(0, batch, par);
  } else {
    const int64_t nt = num_tasks(batch, 2.0 * (double)k * k * L, 1 << 16, 1024);
    auto task = [&](size_t t) {
      int64_t b0, b1;
      split_range(batch, nt, (int64_t)t, b0, b1);
      matrices(b0, b1, oc_serial);
    };
    parallel_for(par, (size_t)nt, task);
  }
  int rc = err.load(std::memory_order_relaxed);
  if (!rc) rc = run<T>(r, nullptr, s, nullptr, finite, batch, k, k, 0, 0, false, par);
  if (!rc && s)
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t j = 0; j < k; ++j) s[b * k + j] *= ups[b];
  free(r);
  return rc;
}

template <class T>
static int run(const T* a, T* u, T* s, T* vh, uint8_t* finite, int64_t batch, int64_t m, int64_t n,
               int64_t ucols, int64_t vrows, bool vectors, const oc_parallel& par) {
  const int64_t k = m < n ? m : n, L = m < n ? n : m;
  const int64_t cols = !vectors ? k : m > n ? ucols : vrows;
  const int64_t line = 64 / (int64_t)sizeof(T);
  // row strides of an odd number of cache lines: with a power of two (k or L = 256, 512) the rows a
  // strip of columns or a rotation touches fall in a few cache sets, and a store to one row and a
  // load from the row two below alias (4 KiB apart): the rotations ran ~10x slower at k = 512
  const int64_t lda = L <= line ? L : (div_up(L, line) | 1) * line;
  auto at = [&](int64_t b, T* base, int64_t size) { return base ? base + b * size : nullptr; };
  if (!vectors && long_enough(k, L)) return values_by_r(a, s, finite, batch, m, n, par);
  if (k >= (vectors ? kBidiagK : kBidiagValuesK)) {
    const int64_t ldk = (div_up(k, line) | 1) * line;
    const size_t bytes = BdWork<T>::bytes(cols, k, lda, ldk, vectors);
    // few large matrices: one at a time, parallel inside; else parallel over the batch
    const bool inner = batch < 4 && k >= kParallelK && par.run != nullptr;
    // values alone: values_in_pairs runs a task's matrices two at a time
    const int64_t per = oc::detail::pair_unit(batch, !vectors && !inner), units = div_up(batch, per);
    const int64_t nt = inner ? 1 : num_tasks(units, per * (vectors ? 12.0 : 3.0) * (double)k * k * L, 1 << 16, 1024);
    std::atomic<int> err{0};
    auto matrices = [&](int64_t b0, int64_t b1, const oc_parallel& mp) {
      void* buf = malloc(bytes);
      if (!buf) {
        err.store(OC_OUT_OF_MEMORY, std::memory_order_relaxed);
        return;
      }
      BdWork<T> w;
      w.carve(buf, cols, k, lda, ldk, vectors);
      if (!vectors && !inner) {
        if (int rc = values_in_pairs(a, s, finite, b0, b1, m, n, w, lda, ldk)) err.store(rc, std::memory_order_relaxed);
        free(buf);
        return;
      }
      for (int64_t b = b0; b < b1; ++b)
        if (int rc = one_bidiag<T>(a + b * m * n, at(b, u, m * ucols), at(b, s, k), at(b, vh, vrows * n), finite + b, m,
                                   n, ucols, vrows, vectors, w, lda, ldk, mp))
          err.store(rc, std::memory_order_relaxed);
      free(buf);
    };
    if (inner) {
      // one parallel region for all of it (team.h): the reduction alone has 2 k parallel steps of
      // microseconds each, and a fork/join of the host's pool per step cost more than the steps (on
      // 2 busy cores: 1.6x the time of the whole Svdvals at k = 512 float)
      Team::run(par, (size_t)kMaxInnerTasks, [&](Team& team) { matrices(0, batch, team.runner()); });
    } else {
      auto task = [&](size_t t) {
        int64_t b0, b1;
        split_range(units, nt, (int64_t)t, b0, b1);
        matrices(b0 * per, std::min(batch, b1 * per), oc_serial);
      };
      parallel_for(par, (size_t)nt, task);
    }
    return err.load(std::memory_order_relaxed);
  }
  const size_t bytes = Work<T>::bytes(cols, k, lda, vectors);
  if (batch < 4 && k >= kParallelK && par.run != nullptr) {  // parallelism inside each matrix
    void* buf = malloc(bytes);
    if (!buf) return OC_OUT_OF_MEMORY;
    Work<T> w;
    w.carve(buf, cols, k, lda, vectors);
    for (int64_t b = 0; b < batch; ++b)
      one<T>(a + b * m * n, at(b, u, m * ucols), at(b, s, k), at(b, vh, vrows * n), finite + b, m, n, ucols, vrows,
             vectors, w, lda, par);
    free(buf);
    return 0;
  }
  const int64_t nt = num_tasks(batch, 8.0 * (double)k * k * L, 1 << 16, 1024);
  std::atomic<bool> failed{false};
  auto task = [&](size_t t) {
    int64_t b0, b1;
    split_range(batch, nt, (int64_t)t, b0, b1);
    void* buf = malloc(bytes);
    if (!buf) {
      failed.store(true, std::memory_order_relaxed);
      return;
    }
    Work<T> w;
    w.carve(buf, cols, k, lda, vectors);
    for (int64_t b = b0; b < b1; ++b)
      one<T>(a + b * m * n, at(b, u, m * ucols), at(b, s, k), at(b, vh, vrows * n), finite + b, m, n, ucols, vrows,
             vectors, w, lda, oc_serial);
    free(buf);
  };
  parallel_for(par, (size_t)nt, task);
  return failed.load(std::memory_order_relaxed) ? OC_OUT_OF_MEMORY : 0;
}

int svd_f32(const float* a, float* u, float* s, float* vh, uint8_t* finite, int64_t batch, int64_t m, int64_t n,
            int64_t ucols, int64_t vrows, bool vectors, oc_parallel par) {
  return run(a, u, s, vh, finite, batch, m, n, ucols, vrows, vectors, par);
}

int svd_f64(const double* a, double* u, double* s, double* vh, uint8_t* finite, int64_t batch, int64_t m,
            int64_t n, int64_t ucols, int64_t vrows, bool vectors, oc_parallel par) {
  return run(a, u, s, vh, finite, batch, m, n, ucols, vrows, vectors, par);
}

#endif  // OC_ISA_PASS
