// Batched Householder QR with LAPACK's conventions, so that Q and R are torch's (geqrf + orgqr) up
// to rounding.
//
// Column j's reflector is dlarfg's: alpha = x[0], beta = -sign(alpha) ||x||, tau = (beta - alpha) / beta,
// v = [1, x[1:] / (alpha - beta)], R's diagonal entry beta; a column whose rest is zero gets tau = 0 (H = I,
// beta = alpha). Norms are plain sums of squares, rescaled by the largest entry only when that sum could
// have overflowed or lost precision to underflow (dnrm2's guarantee, without its cost per entry).
//
// Square matrices up to 8: the steps below with the sizes known at compile time (unrolled), many per task.
// Up to 256 columns (and 512 KiB) the rows path (one_rows: rows as vectors, one pass over them per
// reflector, a matrix per task). Past it, and for tall matrices of narrow rows, the blocked path: the matrix
// copied transposed (its columns contiguous, length m: applying H = I - tau v v^T to a column is a dot product
// and an axpy), factorization by panels of kNarrow or kPanel columns (panel_width), each split in halves
// recursively down to kLeaf columns (the left half's reflectors reach the right half at once, as below),
// left-looking inside a leaf (each column gets the leaf's earlier reflectors, then makes its own). The trailing
// columns get the panel's reflectors at once in LAPACK's compact WY form, H_p0 ... H_p1-1 = I - V T V^T
// (dlarft): two matrix products, V^T C and C - V (T^T V^T C), in outer-product form on register tiles (no
// horizontal sums), column chunks split across tasks for a large matrix. Q = H_0 ... H_{k-1} I, panel by
// panel from the last, the same way (only the columns >= the panel's first: the others are still unit
// vectors that it leaves alone). Narrow panels or few columns: the reflectors one by one. Every batch path
// runs a matrix with the same steps, so one large matrix gives the same bits alone (split across tasks) as in
// a batch; R does not depend on the mode.
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

#if defined(__SSE2__)
#include <immintrin.h>  // the AVX-512 pass's masked loads and stores (column_major.inc)
#endif

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

#include "simd.inc"
#include "column_major.inc"  // vload_part, vstore_part

enum : int64_t { kPanel = 64, kNarrow = 32, kGroup = 8, kSmall = 8, kLarge = 48, kMaxInnerTasks = 64 };

// The sum of a vector's lanes, by halves (a few adds, not W - 1 in a chain).
template <class T, int W>
struct Halves {
  static OC_ALWAYS_INLINE T sum(const typename ::oc::detail::Simd<T, W>::type& v) {
    typedef typename ::oc::detail::Simd<T, W / 2>::type H;
    H lo, hi;
    memcpy(&lo, &v, sizeof lo);
    memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
    return Halves<T, W / 2>::sum(lo + hi);
  }
};
template <class T>
struct Halves<T, 2> {
  static OC_ALWAYS_INLINE T sum(const typename ::oc::detail::Simd<T, 2>::type& v) { return v[0] + v[1]; }
};

template <class T, int W>
static OC_ALWAYS_INLINE T hsum(const typename ::oc::detail::Simd<T, W>::type& v) {
  return Halves<T, W>::sum(v);
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
    r = hsum<T, W>(a0 + a1);
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

// ---- the blocked (compact WY) updates: a panel's reflectors H_p0 ... H_p1-1 = I - V T V^T (LAPACK's
// dlarft, forward, columnwise), applied to many columns as two matrix products.

// Rows of V padded to a multiple of two vectors (the product kernels' tile).
template <class T>
static OC_ALWAYS_INLINE int64_t padded(int64_t nb) {
  return div_up(nb, 2 * Vec<T>::W) * 2 * Vec<T>::W;
}

// V dense (rows [p0, m), L = m - p0: zeros above row p0 + i in column i, 1 there, v's tail below), twice:
// by columns (vd: column i at vd + i * L) and by rows (vdt: row r at vdt + r * nbp, zero-padded to nbp).
template <class T>
static void pack_v(const T* w, int64_t m, int64_t p0, int64_t p1, T* vd, T* vdt) {
  const int64_t L = m - p0, nb = p1 - p0, nbp = padded<T>(nb);
  for (int64_t i = 0; i < nb; ++i) {
    T* d = vd + i * L;
    const int64_t j = p0 + i;
    for (int64_t r = 0; r < i; ++r) d[r] = T(0);
    d[i] = T(1);
    memcpy(d + i + 1, w + j * m + j + 1, (size_t)(m - j - 1) * sizeof(T));
  }
  for (int64_t r = 0; r < L; ++r) {
    T* d = vdt + r * nbp;
    for (int64_t i = 0; i < nb; ++i) d[i] = vd[i * L + r];
    for (int64_t i = nb; i < nbp; ++i) d[i] = T(0);
  }
}

enum : int64_t { kChunk = 64, kBlockedMin = 16, kLeaf = 16 };
static_assert((int64_t)kPanel <= (int64_t)kChunk, "form_t's V^T V takes a panel's columns as one chunk");

// Columns per register tile of the WY products: 8 (16 accumulators) with AVX-512's 32 registers, 4 with 16.
#if OC_VEC_BYTES >= 64
enum { kCB = 8 };
#else
enum { kCB = 4 };
#endif

// wbt (column c of W = V^T C at wbt + c * nbp) for C's columns c in [0, nc) at cols + c * m + p0 (length L): an
// outer-product form (rows of V against broadcast entries of C: no horizontal sums), kCB columns and two vectors
// of V's row at a time; V's zeros above its diagonal skipped.
template <class T>
static void vt_c(const T* vdt, int64_t L, int64_t nbp, const T* cols, int64_t m, int64_t p0, int64_t nc, T* wbt) {
  typedef typename Vec<T>::type V;
  enum { W = Vec<T>::W };
  int64_t c = 0;
  for (; c + kCB <= nc; c += kCB) {
    const T* x[kCB];
#pragma GCC unroll 8
    for (int b = 0; b < kCB; ++b) x[b] = cols + (c + b) * m + p0;
    for (int64_t i0 = 0; i0 < nbp; i0 += 2 * W) {
      V acc[kCB][2] = {};
      for (int64_t r = i0 < L ? i0 : L; r < L; ++r) {
        const V v0 = vload<V>(vdt + r * nbp + i0), v1 = vload<V>(vdt + r * nbp + i0 + W);
#pragma GCC unroll 8
        for (int b = 0; b < kCB; ++b) {
          const T xb = x[b][r];
          acc[b][0] += v0 * xb;
          acc[b][1] += v1 * xb;
        }
      }
#pragma GCC unroll 8
      for (int b = 0; b < kCB; ++b) {
        vstore(wbt + (c + b) * nbp + i0, acc[b][0]);
        vstore(wbt + (c + b) * nbp + i0 + W, acc[b][1]);
      }
    }
  }
  for (; c < nc; ++c) {
    const T* x = cols + c * m + p0;
    for (int64_t i0 = 0; i0 < nbp; i0 += 2 * W) {
      V a0 = {}, a1 = {};
      for (int64_t r = i0 < L ? i0 : L; r < L; ++r) {
        a0 += vload<V>(vdt + r * nbp + i0) * x[r];
        a1 += vload<V>(vdt + r * nbp + i0 + W) * x[r];
      }
      vstore(wbt + c * nbp + i0, a0);
      vstore(wbt + c * nbp + i0 + W, a1);
    }
  }
}

// T (nb x nb upper triangular, row-major, rows nbp apart, zero-padded) of the panel whose V is vd (and vdt), and
// its transpose tt (the same layout): the products below read rows of either. V^T V by the product kernel.
template <class T>
static void form_t(const T* vd, const T* vdt, const T* tau, int64_t L, int64_t nb, T* t, T* tt) {
  typedef typename Vec<T>::type V;
  enum { W = Vec<T>::W };
  const int64_t nbp = padded<T>(nb);
  T g[kChunk * ((int64_t)kPanel > 2 * Vec<T>::W ? (int64_t)kPanel : 2 * Vec<T>::W)];  // nb <= kChunk columns
  vt_c(vdt, L, nbp, vd, L, 0, nb, g);
  // T's column i, built as tt's row i (T upper triangular: its columns are tt's rows, zero past the
  // diagonal): T[0:i, i] = T[0:i, 0:i] z with z = -tau_i V^T v_i, as axpys of the rows before it in
  // whole vectors (their zeros past the diagonal add nothing). A dot product along T's row per entry,
  // a scalar chain each, was most of form_t's time.
  memset(tt, 0, (size_t)(nbp * nbp) * sizeof(T));
  for (int64_t i = 0; i < nb; ++i) {
    T* row = tt + i * nbp;
    if (tau[i] != T(0))
      for (int64_t c = 0; c < i; ++c) {
        const T z = -tau[i] * g[i * nbp + c];
        const T* tc = tt + c * nbp;
        for (int64_t r = 0; r <= c; r += W) vstore(row + r, vload<V>(row + r) + z * vload<V>(tc + r));
      }
    row[i] = tau[i];
  }
  memset(t, 0, (size_t)(nbp * nbp) * sizeof(T));
  for (int64_t i = 0; i < nb; ++i)
    for (int64_t r = 0; r <= i; ++r) t[r * nbp + i] = tt[i * nbp + r];
}

// Each column of wbt (nbp entries) <- M times it, mt's rows being M's columns (M^T row-major, nbp x nbp).
template <class T>
static void times_m(const T* mt, int64_t nb, int64_t nbp, int64_t nc, T* wbt) {
  typedef typename Vec<T>::type V;
  enum { W = Vec<T>::W };
  T in[(int64_t)kPanel > 2 * W ? (int64_t)kPanel : 2 * W];
  for (int64_t c = 0; c < nc; ++c) {
    T* x = wbt + c * nbp;
    memcpy(in, x, (size_t)nb * sizeof(T));
    for (int64_t i0 = 0; i0 < nbp; i0 += 2 * W) {
      V a0 = {}, a1 = {};
      for (int64_t j = 0; j < nb; ++j) {
        a0 += vload<V>(mt + j * nbp + i0) * in[j];
        a1 += vload<V>(mt + j * nbp + i0 + W) * in[j];
      }
      vstore(x + i0, a0);
      vstore(x + i0 + W, a1);
    }
  }
}

// C -= V W for C's columns c in [0, nc) at cols + c * m + p0 (length L), W's column c at wbt + c * nbp: kCB
// columns by two vectors of rows in registers; V's zeros above its diagonal skipped.
template <class T>
static void c_minus_vw(const T* vd, int64_t L, int64_t nb, int64_t nbp, T* cols, int64_t m, int64_t p0, int64_t nc,
                       const T* wbt) {
  typedef typename Vec<T>::type V;
  enum { W = Vec<T>::W };
  int64_t c = 0;
  for (; c + kCB <= nc; c += kCB) {
    T* x[kCB];
#pragma GCC unroll 8
    for (int b = 0; b < kCB; ++b) x[b] = cols + (c + b) * m + p0;
    const T* wc = wbt + c * nbp;
    int64_t r = 0;
    for (; r + 2 * W <= L; r += 2 * W) {
      V acc[kCB][2];
#pragma GCC unroll 8
      for (int b = 0; b < kCB; ++b) {
        acc[b][0] = vload<V>(x[b] + r);
        acc[b][1] = vload<V>(x[b] + r + W);
      }
      const int64_t ie = r + 2 * W < nb ? r + 2 * W : nb;  // rows r.. of V's columns past them are zero
      for (int64_t i = 0; i < ie; ++i) {
        const V v0 = vload<V>(vd + i * L + r), v1 = vload<V>(vd + i * L + r + W);
#pragma GCC unroll 8
        for (int b = 0; b < kCB; ++b) {
          const T f = wc[b * nbp + i];
          acc[b][0] -= v0 * f;
          acc[b][1] -= v1 * f;
        }
      }
#pragma GCC unroll 8
      for (int b = 0; b < kCB; ++b) {
        vstore(x[b] + r, acc[b][0]);
        vstore(x[b] + r + W, acc[b][1]);
      }
    }
    for (; r < L; r += W) {  // the rows left, a vector at a time (the last partial: masked on AVX-512)
      const int len = L - r < W ? (int)(L - r) : (int)W;
      V acc[kCB];
#pragma GCC unroll 8
      for (int b = 0; b < kCB; ++b) acc[b] = vload_part(x[b] + r, len);
      const int64_t ie = r + W < nb ? r + W : nb;
      for (int64_t i = 0; i < ie; ++i) {
        const V v0 = vload_part(vd + i * L + r, len);
#pragma GCC unroll 8
        for (int b = 0; b < kCB; ++b) acc[b] -= v0 * wc[b * nbp + i];
      }
#pragma GCC unroll 8
      for (int b = 0; b < kCB; ++b) vstore_part(x[b] + r, acc[b], len);
    }
  }
  for (; c < nc; ++c) {
    T* x = cols + c * m + p0;
    for (int64_t i = 0; i < nb; ++i) axpy_sub(x + i, vd + i * L + i, wbt[c * nbp + i], L - i);
  }
}

// The columns apply_block takes at a time for a panel of nb: as many as the panel is wide (kNarrow or kChunk).
static inline int64_t chunk_of(int64_t nb) { return nb > kNarrow ? (int64_t)kChunk : (int64_t)kNarrow; }

// Columns [c0, c1) (each of length m, rows [p0, m) touched) <- (I - V M V^T) times them, chunk_of(nb) at a time, mt
// the rows of M^T: the factorization's update is H_p1-1 ... H_p0 = I - V T^T V^T (mt = T), Q's H_p0 ... H_p1-1 =
// I - V T V^T (mt = T^T).
template <class T>
static void apply_block(const T* vd, const T* vdt, const T* mt, int64_t m, int64_t p0, int64_t nb, T* cols,
                        int64_t c0, int64_t c1) {
  const int64_t L = m - p0, nbp = padded<T>(nb);
  T wbt[kChunk * ((int64_t)kPanel > 2 * Vec<T>::W ? (int64_t)kPanel : 2 * Vec<T>::W)];
  const int64_t chunk = chunk_of(nb);
  for (int64_t c = c0; c < c1; c += chunk) {
    const int64_t nc = c + chunk < c1 ? chunk : c1 - c;
    T* base = cols + c * m;
    vt_c(vdt, L, nbp, base, m, p0, nc, wbt);
    times_m(mt, nb, nbp, nc, wbt);
    c_minus_vw(vd, L, nb, nbp, base, m, p0, nc, wbt);
  }
}

// A panel [p0, p1) wider than kLeaf: its left half (recursively), the left half's reflectors to the right half at
// once (compact WY), then the right half: most of the panel's work in products too. The scratch is free until the
// caller packs the whole panel.
template <class T>
static void factor_panel_rec(T* w, T* tau, T* t, T* tt, T* vd, T* vdt, int64_t m, int64_t p0, int64_t p1) {
  const int64_t nb = p1 - p0;
  if (nb <= kLeaf) {
    factor_panel(w, tau, m, p0, p1);
    return;
  }
  const int64_t mid = p0 + nb / 2;
  factor_panel_rec(w, tau, t, tt, vd, vdt, m, p0, mid);
  pack_v(w, m, p0, mid, vd, vdt);
  form_t(vd, vdt, tau + p0, m - p0, mid - p0, t, tt);
  apply_block(vd, vdt, t, m, p0, mid - p0, w, mid, p1);
  factor_panel_rec(w, tau, t, tt, vd, vdt, m, mid, p1);
}

// The blocked paths' panel width: kPanel columns where the matrix is past what L2 holds (each
// panel's update streams the trailing columns once: wider panels, half the traffic), else kNarrow
// (less of the work in the panel's own, narrower, steps).
template <class T>
static int64_t panel_width(int64_t m, int64_t n) {
  return (double)m * (double)n * (double)sizeof(T) > (double)(3 << 19) ? kPanel : kNarrow;
}

// The factorization of one m x n matrix w (transposed, columns of m) with the blocked update, its steps on
// `par` (tasks: at most; 1: all here). Scratch: t and tt (kPad^2 each), vd (kPanel m), vdt (kPad m).
template <class T>
static void factor_blocked(T* w, T* tau, T* t, T* tt, T* vd, T* vdt, int64_t m, int64_t n, const oc_parallel& par,
                           int64_t tasks) {
  const int64_t k = m < n ? m : n, pw = panel_width<T>(m, n);
  for (int64_t p0 = 0; p0 < k; p0 += pw) {
    const int64_t p1 = p0 + pw < k ? p0 + pw : k, nb = p1 - p0;
    factor_panel_rec(w, tau, t, tt, vd, vdt, m, p0, p1);
    const int64_t rest = n - p1;
    if (rest <= 0) continue;
    if (nb < kBlockedMin || rest < kBlockedMin) {
      apply_forward(w, tau, m, p0, p1, w, p1, n);
      continue;
    }
    pack_v(w, m, p0, p1, vd, vdt);
    form_t(vd, vdt, tau + p0, m - p0, nb, t, tt);
    const int64_t chunk = chunk_of(nb), chunks = div_up(rest, chunk);
    const int64_t nt = tasks > 1 ? num_tasks(chunks, 4.0 * (double)chunk * (double)nb * (double)(m - p0), 1 << 17,
                                             tasks) : 1;
    auto task = [&](size_t i) {
      int64_t g0, g1;
      split_range(chunks, nt, (int64_t)i, g0, g1);
      apply_block(vd, vdt, t, m, p0, nb, w, p1 + g0 * chunk, std::min(n, p1 + g1 * chunk));
    };
    parallel_for(par, (size_t)nt, task);
  }
}

// Q's columns (qc: qcols columns of m) = H_0 ... H_{k-1} I, panel by panel from the last, blocked where wide.
template <class T>
static void form_q_blocked(const T* w, const T* tau, T* t, T* tt, T* vd, T* vdt, T* qc, int64_t m, int64_t k,
                           int64_t qcols, const oc_parallel& par, int64_t tasks) {
  memset(qc, 0, (size_t)(m * qcols) * sizeof(T));
  for (int64_t c = 0; c < qcols; ++c) qc[c * m + c] = T(1);
  if (k == 0) return;
  const int64_t pw = panel_width<T>(m, qcols);
  for (int64_t p0 = (k - 1) / pw * pw; p0 >= 0; p0 -= pw) {
    const int64_t p1 = p0 + pw < k ? p0 + pw : k, nb = p1 - p0;
    const int64_t cols = qcols - p0;  // columns < p0 are still unit vectors this panel leaves alone
    if (nb < kBlockedMin || cols < kBlockedMin) {
      for (int64_t c = p0; c < qcols; ++c)
        for (int64_t p = std::min(p1 - 1, c); p >= p0; --p) reflect(w + p * m + p, tau[p], qc + c * m + p, m - p);
      continue;
    }
    pack_v(w, m, p0, p1, vd, vdt);
    form_t(vd, vdt, tau + p0, m - p0, nb, t, tt);
    const int64_t chunk = chunk_of(nb), chunks = div_up(cols, chunk);
    const int64_t nt = tasks > 1 ? num_tasks(chunks, 4.0 * (double)chunk * (double)nb * (double)(m - p0), 1 << 17,
                                             tasks) : 1;
    auto task = [&](size_t i) {
      int64_t g0, g1;
      split_range(chunks, nt, (int64_t)i, g0, g1);
      apply_block(vd, vdt, tt, m, p0, nb, qc, p0 + g0 * chunk, std::min(qcols, p0 + g1 * chunk));
    };
    parallel_for(par, (size_t)nt, task);
  }
}

// qc (qcols columns of m) into q (row-major m x qcols), in tiles.
template <class T>
static void store_qc(const T* qc, T* q, int64_t m, int64_t qcols) {
  for (int64_t i0 = 0; i0 < m; i0 += 16)
    for (int64_t c0 = 0; c0 < qcols; c0 += 16)
      for (int64_t i = i0; i < std::min(m, i0 + 16); ++i)
        for (int64_t c = c0; c < std::min(qcols, c0 + 16); ++c) q[i * qcols + c] = qc[c * m + i];
}

// One matrix, serially; MF, NF: m and n when known at compile time (0: not). Scratch: w (m n), tau
// (k), y (m qcols).
template <class T, int MF, int NF>
static OC_ALWAYS_INLINE void one(const T* a, T* q, T* r, int64_t m_, int64_t n_, int64_t qcols, int64_t rrows, T* w,
                                 T* tau, T* y) {
  const int64_t m = MF ? MF : m_, n = NF ? NF : n_;
  const int64_t k = m < n ? m : n;
  load_t(a, w, m, n);
  for (int64_t p0 = 0; p0 < k; p0 += kNarrow) {
    const int64_t p1 = p0 + kNarrow < k ? p0 + kNarrow : k;
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

// The blocked path's scratch for one m x n matrix: w (m n), tau (k), t and tt (kPad^2 each), vd (kPanel m), vdt
// (kPad m), qc (m qcols).
enum : int64_t { kPad = (int64_t)kPanel > 2 * Vec<float>::W ? (int64_t)kPanel : 2 * Vec<float>::W };
static inline int64_t blocked_elems(int64_t m, int64_t n, int64_t qcols) {
  return m * n + (m < n ? m : n) + 2 * kPad * kPad + kPanel * m + kPad * m + m * qcols + 1;
}

// One matrix by the blocked path, its steps on `par` in at most `tasks` tasks (1: all on this thread).
template <class T>
static void one_blocked(const T* a, T* q, T* r, int64_t m, int64_t n, int64_t qcols, int64_t rrows, T* scratch,
                        const oc_parallel& par, int64_t tasks) {
  const int64_t k = m < n ? m : n;
  T* w = scratch;
  T* tau = w + m * n;
  T* t = tau + k;
  T* tt = t + kPad * kPad;
  T* vd = tt + kPad * kPad;
  T* vdt = vd + kPanel * m;
  T* qc = vdt + kPad * m;
  load_t(a, w, m, n);
  factor_blocked(w, tau, t, tt, vd, vdt, m, n, par, tasks);
  if (r) store_r(w, r, m, n, rrows);
  if (q) {
    form_q_blocked(w, tau, t, tt, vd, vdt, qc, m, k, qcols, par, tasks);
    store_qc(qc, q, m, qcols);
  }
}

// Matrices of up to kRowsMax columns and kRowsBytes (rows_fit): the rows as vectors (ld: n in whole vectors,
// zero-padded). Reflector p (the column gathered, householder as everywhere) is dlarf's
// w = tau v^T A, A -= v w, on whole rows: FMAs of rows by v's entries, no horizontal sums (column-major, a dot
// product per column and reflector, the lengths below a vector scalar, was most of a small matrix's time). The
// two go in one pass over the rows: the pass applying H_p also sums the next reflector's v^T A, its v found
// before the pass from column p + 1 with H_p's change to it alone (an FMA per row). Entries left of column p + 1
// in rows from p are below R's diagonal and never read (v's are kept apart, in V: reflector p's at vs + p m + p),
// so each pass takes whole vectors from the one holding column p + 1. Q = H_0 ... H_{k-1} I the same way,
// backward, on its rows (in A's place once R is out; up to kRowsMax columns, else V as the blocked path's
// factors, form_q_blocked): the pass applying H_p sums H_{p-1}'s v^T Y but for Y's row p - 1 (untouched by
// H_p); the columns left of p are still unit vectors (zero in rows from p), so that pass starts at the vector
// holding column p. R and Q are the rows as they are (no transposes). Against the blocked path (AMD Zen 5,
// 1 thread, float): 1x32 11.2 -> 4.4 us, 1x128 136 -> 56, 1x256 612 -> 421, 100x24 577 -> 181, 256x64 7.3 ->
// 2.4 ms, 1x4000x32 353 -> 276 us; slower for the tall where a row is mostly padding (1x2000x8 20 -> 38 us) and
// past L2 (1x2000x128 1.20 -> 1.58 ms). A single matrix stays on one thread: on 2 threads 1x128 62 us and 1x256
// 416, the blocked path's split 153 and 625.
enum : int64_t { kRowsMax = 256, kRowsBytes = 512 << 10, kRowsNarrowM = 64, kRowChunk = 4 };

// Rows [0, len) of `rows` (ld apart), vectors [0, NC) from c0: with Update, row_t -= v[t] w; with Sum, acc +=
// vn[t] row_t (the updated row) for t >= first. acc's vectors are stored (not added) at acc + c0.
template <class T, int NC, bool Update, bool Sum>
static OC_ALWAYS_INLINE void rows_chunk(T* rows, int64_t ld, int64_t len, int64_t c0, const T* v, const T* w,
                                        const T* vn, int64_t first, T* acc) {
  typedef typename Vec<T>::type V;
  enum { W = Vec<T>::W };
  V wv[NC], s0[NC], s1[NC];
#pragma GCC unroll 4
  for (int u = 0; u < NC; ++u) {
    if (Update) wv[u] = vload<V>(w + c0 + u * W);
    s0[u] = s1[u] = V{};
  }
  auto row = [&](int64_t t, V* s) {
    T* x = rows + t * ld + c0;
#pragma GCC unroll 4
    for (int u = 0; u < NC; ++u) {
      V y = vload<V>(x + u * W);
      if (Update) {
        y -= v[t] * wv[u];
        vstore(x + u * W, y);
      }
      if (Sum && t >= first) s[u] += vn[t] * y;
    }
  };
  int64_t t = 0;
  for (; t + 2 <= len; t += 2) {  // two chains of sums: each row's term would wait on the last
    row(t, s0);
    row(t + 1, s1);
  }
  if (t < len) row(t, s0);
  if (Sum)
#pragma GCC unroll 4
    for (int u = 0; u < NC; ++u) vstore(acc + c0 + u * W, s0[u] + s1[u]);
}

// rows_chunk over the vectors [c0, ld), kRowChunk at a time.
template <class T, bool Update, bool Sum>
static void rows_pass(T* rows, int64_t ld, int64_t len, int64_t c0, const T* v, const T* w, const T* vn,
                      int64_t first, T* acc) {
  enum { W = Vec<T>::W };
  for (int64_t c = c0; c < ld; c += kRowChunk * W) {
    switch ((ld - c) / W < kRowChunk ? (ld - c) / W : (int64_t)kRowChunk) {
      case 1: rows_chunk<T, 1, Update, Sum>(rows, ld, len, c, v, w, vn, first, acc); break;
      case 2: rows_chunk<T, 2, Update, Sum>(rows, ld, len, c, v, w, vn, first, acc); break;
      case 3: rows_chunk<T, 3, Update, Sum>(rows, ld, len, c, v, w, vn, first, acc); break;
      default: rows_chunk<T, 4, Update, Sum>(rows, ld, len, c, v, w, vn, first, acc); break;
    }
  }
}

// rows_pass with Update and Sum as runtime flags (neither: nothing to do).
template <class T>
static void rows_pass(bool update, bool sum, T* rows, int64_t ld, int64_t len, int64_t c0, const T* v, const T* w,
                      const T* vn, int64_t first, T* acc) {
  if (update && sum)
    rows_pass<T, true, true>(rows, ld, len, c0, v, w, vn, first, acc);
  else if (update)
    rows_pass<T, true, false>(rows, ld, len, c0, v, w, vn, first, acc);
  else if (sum)
    rows_pass<T, false, true>(rows, ld, len, c0, v, w, vn, first, acc);
}

// c entries in whole vectors
template <class T>
static inline int64_t rows_ld(int64_t c) {
  return div_up(c, (int64_t)Vec<T>::W) * Vec<T>::W;
}

// Whether the rows path takes an m x n matrix: up to kRowsMax columns, kRowsBytes of rows, and rows at least half
// used unless there are few (a row of 8 floats in a vector of 16: 1x2000x8 twice the blocked path's time, 100x8
// the same). It does not depend on Q: R is the same whatever the mode.
template <class T>
static inline bool rows_fit(int64_t m, int64_t n) {
  const int64_t ld = rows_ld<T>(n);
  return n <= kRowsMax && (double)m * (double)ld * sizeof(T) <= (double)kRowsBytes && (2 * n > ld || m <= kRowsNarrowM);
}

// Q by rows up to kRowsMax columns (a tall matrix's complete Q: by the blocked path's products).
static inline bool rows_q(int64_t qcols) { return qcols <= kRowsMax; }

// Scratch (elements): the rows (m ld, ld for the wider of n and Q's columns), V (k m), the column (m), tau (k), w
// and the sums (ld each), 64-byte alignment; past kRowsMax Q's columns form_q_blocked's t, tt, vd, vdt, qc.
template <class T>
static inline int64_t rows_elems(int64_t m, int64_t n, int64_t qcols) {
  const int64_t k = m < n ? m : n, ld = rows_ld<T>(rows_q(qcols) ? std::max(n, qcols) : n);
  return m * ld + k * m + m + k + 2 * ld + 64 +
         (rows_q(qcols) ? 0 : 2 * kPad * kPad + kPanel * m + kPad * m + m * qcols);
}

// One m x n matrix by the rows path (qcols: Q's columns with q, else 0); scratch: rows_elems.
template <class T>
static void one_rows(const T* a, T* q, T* r, int64_t m, int64_t n, int64_t qcols, int64_t rrows, T* scratch) {
  enum { W = Vec<T>::W };
  const int64_t k = m < n ? m : n, ld = rows_ld<T>(n), wide = rows_ld<T>(rows_q(qcols) ? std::max(n, qcols) : n);
  T* A = reinterpret_cast<T*>(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
  T* vs = A + m * wide;
  T* col = vs + k * m;
  T* tau = col + m;
  T* w = tau + k;
  T* acc = w + wide;
  for (int64_t i = 0; i < m; ++i) {
    memcpy(A + i * ld, a + i * n, (size_t)n * sizeof(T));
    std::fill(A + i * ld + n, A + (i + 1) * ld, T(0));
  }
  // reflector p's v from col (householder's: col[0] becomes beta)
  auto make = [&](int64_t p) {
    tau[p] = householder(col, m - p);
    T* v = vs + p * m + p;
    v[0] = T(1);
    for (int64_t i = 1; i < m - p; ++i) v[i] = col[i];
  };
  T beta = T(0);
  if (k > 0) {
    for (int64_t i = 0; i < m; ++i) col[i] = A[i * ld];
    make(0);
    beta = col[0];
    if (tau[0] != T(0) && n > 1) {
      rows_pass<T, false, true>(A, ld, m, 0, nullptr, nullptr, vs, 0, acc);
      for (int64_t c = 0; c < ld; ++c) w[c] = tau[0] * acc[c];
    }
  }
  for (int64_t p = 0; p < k; ++p) {
    const T* v = vs + p * m + p;
    const bool update = tau[p] != T(0) && p + 1 < n, next = p + 1 < k;
    T next_beta = T(0);
    if (next) {  // column p + 1 below row p as H_p leaves it
      const T wp = update ? w[p + 1] : T(0);
      for (int64_t i = 0; i + p + 1 < m; ++i) col[i] = A[(p + 1 + i) * ld + p + 1] - v[i + 1] * wp;
      make(p + 1);
      next_beta = col[0];
    }
    const bool sum = next && tau[p + 1] != T(0) && p + 2 < n;
    const int64_t c0 = (p + 1) / W * W;
    rows_pass(update, sum, A + p * ld, ld, m - p, c0, v, w, next ? vs + (p + 1) * m + p : nullptr, 1, acc);
    A[p * ld + p] = beta;
    if (sum)
      for (int64_t c = c0; c < ld; ++c) w[c] = tau[p + 1] * acc[c];
    beta = next_beta;
  }
  if (r)
    for (int64_t i = 0; i < rrows; ++i)
      for (int64_t j = 0; j < n; ++j) r[i * n + j] = i <= j ? A[i * ld + j] : T(0);
  if (!q) return;
  if (!rows_q(qcols)) {  // V is laid out as the blocked path's factors (v's tails below the diagonal)
    T* t = acc + wide;
    T* tt = t + kPad * kPad;
    T* vd = tt + kPad * kPad;
    T* vdt = vd + kPanel * m;
    T* qc = vdt + kPad * m;
    form_q_blocked(vs, tau, t, tt, vd, vdt, qc, m, k, qcols, oc_serial, 1);
    store_qc(qc, q, m, qcols);
    return;
  }
  T* Y = A;
  const int64_t ldq = rows_ld<T>(qcols);
  for (int64_t i = 0; i < m; ++i) {
    std::fill(Y + i * ldq, Y + (i + 1) * ldq, T(0));
    if (i < qcols) Y[i * ldq + i] = T(1);
  }
  // acc: H_p's sum over Y's rows from p + 1 (the last pass's; for p = k - 1 a pass of its own). The passes store
  // from the vector holding column p, never right of the last one's start: the lanes left of it stay zero.
  int64_t p = k - 1;
  if (p >= 0) {
    std::fill(acc, acc + ldq, T(0));
    if (tau[p] != T(0)) rows_pass<T, false, true>(Y + (p + 1) * ldq, ldq, m - p - 1, p / W * W, nullptr, nullptr,
                                                   vs + p * m + p + 1, 0, acc);
  }
  for (; p >= 0; --p) {
    const int64_t c0 = p / W * W;
    const bool update = tau[p] != T(0), sum = p > 0 && tau[p - 1] != T(0);
    if (update)
      for (int64_t c = c0; c < ldq; ++c) w[c] = tau[p] * (Y[p * ldq + c] + acc[c]);
    rows_pass(update, sum, Y + p * ldq, ldq, m - p, c0, vs + p * m + p, w, p > 0 ? vs + (p - 1) * m + p : nullptr, 0,
              acc);
  }
  for (int64_t i = 0; i < m; ++i) memcpy(q + i * qcols, Y + i * ldq, (size_t)qcols * sizeof(T));
}

template <class T>
int run(const T* a, T* q, T* r, int64_t batch, int64_t m, int64_t n, int64_t qcols, int64_t rrows, oc_parallel par) {
  const int64_t k = m < n ? m : n;
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
  const bool rows = rows_fit<T>(m, n);
  if (!rows && k >= kLarge && batch < 4 && par.run != nullptr) {  // parallelism inside each matrix
    T* scratch = (T*)malloc((size_t)blocked_elems(m, n, qcols) * sizeof(T));
    if (!scratch) return OC_OUT_OF_MEMORY;
    for (int64_t b = 0; b < batch; ++b)
      one_blocked<T>(a + b * m * n, q ? q + b * m * qcols : nullptr, r ? r + b * rrows * n : nullptr, m, n, qcols,
                     rrows, scratch, par, kMaxInnerTasks);
    free(scratch);
    return 0;
  }
  std::atomic<bool> failed{false};
  auto task = [&](size_t t) {
    int64_t b0, b1;
    split_range(batch, nt, (int64_t)t, b0, b1);
    const int64_t elems = rows ? rows_elems<T>(m, n, q ? qcols : 0) : blocked_elems(m, n, qcols);
    T* scratch = (T*)malloc((size_t)elems * sizeof(T));
    if (!scratch) {
      failed.store(true, std::memory_order_relaxed);
      return;
    }
    for (int64_t b = b0; b < b1; ++b) {
      T* qb = q ? q + b * m * qcols : nullptr;
      T* rb = r ? r + b * rrows * n : nullptr;
      if (rows)
        one_rows<T>(a + b * m * n, qb, rb, m, n, q ? qcols : 0, rrows, scratch);
      else
        one_blocked<T>(a + b * m * n, qb, rb, m, n, qcols, rrows, scratch, oc_serial, 1);
    }
    free(scratch);
  };
  parallel_for(par, (size_t)nt, task);
  return failed.load(std::memory_order_relaxed) ? (int)OC_OUT_OF_MEMORY : 0;
}

#endif  // OC_ISA_PASS
