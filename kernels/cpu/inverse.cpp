// Batched matrix inverse: Gauss-Jordan elimination with partial (row) pivoting, in place.
//
// Algorithm. In-place Gauss-Jordan on P*A (rows swapped as pivots are chosen) turns the matrix
// into (P*A)^-1 = A^-1 * P^T; the inverse is recovered by scattering columns
// (A^-1[i][perm[m]] = X[i][m]). Multipliers are a[i][k] / pivot (a true division, not a
// multiplication by the reciprocal), so two equal rows cancel exactly and a singular matrix
// hits an exact zero pivot, whose division produces inf/nan in the output.
//   * n <= 16: a fully unrolled per-size template on a stack copy, many matrices per task.
//   * larger n: blocked Gauss-Jordan. For a panel of kb columns [k, k+kb), the panel is first
//     factored (recursively: 128-wide panels are made of 16-wide unblocked leaves), then every
//     other column j of every row i is updated with one rank-kb product:
//       a[i][j] = (i in panel rows ? 0 : a[i][j]) + sum_t a[i][k+t] * Wt[t][j]
//     where Wt is a copy of the panel rows taken before the update. This is a GEMM (2 n^3 flops
//     in all, like LU + triangular inversion) done by a register-blocked micro-kernel, and its
//     rows are split across tasks, so a single large matrix still runs in parallel.
//   * batches are split into chunks of matrices per task; for few large matrices the
//     parallelism is inside each matrix.
//
// This file is compiled once per instruction set: it includes itself (the part below #else)
// through isa_passes.inc, inside a namespace per pass (baseline; on GCC/x86 also AVX2 and
// AVX-512); the entry points pick one at run time.

#ifndef OC_ISA_PASS

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <cmath>

#include "ortcustom/half.h"
#include "../kernels.h"
#include "parallel.h"

namespace oc {
#define OC_ISA_PASS_FILE "inverse.cpp"
#define OC_ISA_PASS_NS inverse
#include "isa_passes.inc"  // oc::inverse_base, _avx2, _avx512
}  // namespace oc

extern "C" {

int oc_inverse_f32(const float* in, float* out, int64_t batch, int64_t n, oc_parallel par) {
  if (batch <= 0 || n <= 0) return 0;
  return OC_ISA_CALL(oc::inverse, inverse_f32, in, out, batch, n, par);
}

int oc_inverse_f64(const double* in, double* out, int64_t batch, int64_t n, oc_parallel par) {
  if (batch <= 0 || n <= 0) return 0;
  return OC_ISA_CALL(oc::inverse, inverse_f64, in, out, batch, n, par);
}

int oc_inverse_f16(const uint16_t* in, uint16_t* out, int64_t batch, int64_t n,
                   oc_parallel par) {
  if (batch <= 0 || n <= 0) return 0;
  return OC_ISA_CALL(oc::inverse, inverse_f16, in, out, batch, n, par);
}

}  // extern "C"

#else  // OC_ISA_PASS: the per-instruction-set body, included inside a namespace

using ::oc::detail::Conv;
#include "simd.inc"

// Unaligned vector load/store (defined here, inside the pass, so they carry its target options).
template <class V, class T>
static OC_ALWAYS_INLINE V simd_load(const T* p) {
  V v;
  memcpy(&v, p, sizeof v);
  return v;
}
template <class V, class T>
static OC_ALWAYS_INLINE void simd_store(T* p, const V& v) {
  memcpy(p, &v, sizeof v);
}

// ------------------------------------------------------------------------------------------
// Small matrices: N known at compile time, matrix on the stack.

template <class T>
struct IntOf;
template <>
struct IntOf<float> {
  typedef int32_t type;
};
template <>
struct IntOf<double> {
  typedef int64_t type;
};

template <class T>
struct VecT {
  enum { W = OC_VEC_BYTES / (int)sizeof(T) };
  typedef typename ::oc::detail::Simd<T, W>::type type;
};

template <int N>
struct Pow2Ceil {
  enum { value = N <= 2 ? 2 : N <= 4 ? 4 : N <= 8 ? 8 : 16 };
};

// Rows are SIMD vectors of P >= N lanes (padding lanes stay 0). The multipliers of a step are
// computed as one vector division of the pivot column by the pivot.
template <class T, int N>
static OC_ALWAYS_INLINE void gj_fixed(T* OC_RESTRICT a, int* OC_RESTRICT perm) {
  enum { P = Pow2Ceil<N>::value };
  typedef typename ::oc::detail::Simd<T, P>::type R;
  R rows[N];
  for (int i = 0; i < N; ++i) {
    T tmp[P];
    for (int j = 0; j < P; ++j) tmp[j] = j < N ? a[i * N + j] : T(0);
    memcpy(&rows[i], tmp, sizeof(R));
    perm[i] = i;
  }
#pragma GCC unroll 16
  for (int k = 0; k < N; ++k) {
    // pivot: largest |a[i][k]| for i >= k (NaN never wins; all-NaN keeps k)
    int p = k;
    T best = absval(rows[k][k]);
#pragma GCC unroll 16
    for (int i = k + 1; i < N; ++i) {
      T v = absval(rows[i][k]);
      bool gt = v > best;
      best = gt ? v : best;
      p = gt ? i : p;
    }
    {  // unconditional swap (a no-op when p == k): no unpredictable branch
      R t = rows[k];
      rows[k] = rows[p];
      rows[p] = t;
      int ti = perm[k];
      perm[k] = perm[p];
      perm[p] = ti;
    }
    R rk = rows[k];
    const T piv = rk[k];
    R col = {};
#pragma GCC unroll 16
    for (int i = 0; i < N; ++i) col[i] = rows[i][k];
    const R l = col / piv;  // true divisions: equal rows cancel exactly
    rk[k] = T(1);
    // every row (row k too; overwritten below): a[i][k] becomes -l[i], the rest
    // a[i][j] - l[i] * a[k][j]
#pragma GCC unroll 16
    for (int i = 0; i < N; ++i) {
      R r = rows[i];
      r[k] = T(0);
      rows[i] = r - l[i] * rk;
    }
    rows[k] = rk * (T(1) / piv);
  }
  for (int i = 0; i < N; ++i) {
    T tmp[P];
    memcpy(tmp, &rows[i], sizeof(R));
    for (int j = 0; j < N; ++j) a[i * N + j] = tmp[j];
  }
}

// 8 < N <= 16: rows padded to 16 lanes, held as native SIMD vectors; the step loop is not
// unrolled (code size), lane k is handled with bit-mask selects (no scalar stores into rows
// that are reloaded as vectors), the multipliers are one vector division per vector.
template <class T, int N>
static OC_ALWAYS_INLINE void gj_fixed_mid(T* OC_RESTRICT aio, int* OC_RESTRICT perm) {
  typedef typename VecT<T>::type V;
  typedef typename IntOf<T>::type I;
  enum { VW = VecT<T>::W, P = 16, NV = 16 / VecT<T>::W };
  typedef typename ::oc::detail::Simd<I, VW>::type MI;
  V a[N][NV];
  MI iota[NV];
  for (int v = 0; v < NV; ++v)
    for (int j = 0; j < VW; ++j) iota[v][j] = (I)(v * VW + j);
  for (int i = 0; i < N; ++i) {
    alignas(64) T tmp[P];
    for (int j = 0; j < P; ++j) tmp[j] = j < N ? aio[i * N + j] : T(0);
    memcpy(&a[i][0], tmp, sizeof(tmp));
    perm[i] = i;
  }
  const V one = V{} + T(1);
  for (int k = 0; k < N; ++k) {
    const int kv = k / VW, kl = k % VW;
    int p = k;
    T best = absval(a[k][kv][kl]);
    for (int i = k + 1; i < N; ++i) {
      T v = absval(a[i][kv][kl]);
      bool gt = v > best;
      best = gt ? v : best;
      p = gt ? i : p;
    }
    for (int v = 0; v < NV; ++v) {
      V t = a[k][v];
      a[k][v] = a[p][v];
      a[p][v] = t;
    }
    {
      int ti = perm[k];
      perm[k] = perm[p];
      perm[p] = ti;
    }
    const T piv = a[k][kv][kl];
    alignas(64) T colv[P];
    for (int i = 0; i < P; ++i) colv[i] = i < N ? a[i < N ? i : 0][kv][kl] : T(0);
    alignas(64) T l[P];
    for (int v = 0; v < NV; ++v) {
      V c;
      memcpy(&c, colv + v * VW, sizeof(V));
      c = c / piv;  // true divisions: equal rows cancel exactly
      memcpy(l + v * VW, &c, sizeof(V));
    }
    MI mk[NV];
    V rk[NV];
    for (int v = 0; v < NV; ++v) {
      mk[v] = (iota[v] == (I)k);
      rk[v] = (V)(((MI)a[k][v] & ~mk[v]) | ((MI)one & mk[v]));
    }
    for (int i = 0; i < N; ++i) {
      const T li = l[i];
      const MI nl = (MI)(V{} - li);
      for (int v = 0; v < NV; ++v) {
        const V r = a[i][v] - li * rk[v];
        a[i][v] = (V)(((MI)r & ~mk[v]) | (nl & mk[v]));
      }
    }
    const T inv = T(1) / piv;
    for (int v = 0; v < NV; ++v) a[k][v] = rk[v] * inv;
  }
  for (int i = 0; i < N; ++i) {
    alignas(64) T tmp[P];
    memcpy(tmp, &a[i][0], sizeof(tmp));
    for (int j = 0; j < N; ++j) aio[i * N + j] = tmp[j];
  }
}

template <class S, class T, int N>
static void inverse_fixed_range(const S* OC_RESTRICT in, S* OC_RESTRICT out, int64_t b0,
                                int64_t b1) {
  alignas(64) T a[N * N];
  int perm[N];
  for (int64_t b = b0; b < b1; ++b) {
    const S* src = in + b * (N * N);
    for (int e = 0; e < N * N; ++e) a[e] = Conv<S, T>::load(src[e]);
    if (N <= 8)
      gj_fixed<T, N>(a, perm);
    else
      gj_fixed_mid<T, N>(a, perm);
    S* dst = out + b * (N * N);
    for (int i = 0; i < N; ++i)
      for (int m = 0; m < N; ++m) dst[i * N + perm[m]] = Conv<S, T>::store(a[i * N + m]);
  }
}

template <class S, class T, int N>
static void inverse_fixed(const S* in, S* out, int64_t batch, const oc_parallel& par) {
  // ~N^3 flops per matrix; tasks of at least ~256K flops (and >= 64 KiB of data for tiny N)
  double work = (double)N * N * N + 16.0 * N * N;
  int64_t nt = num_tasks(batch, work, 1 << 18, 1024);
  auto task = [&](size_t t) {
    int64_t b0, b1;
    split_range(batch, nt, (int64_t)t, b0, b1);
    inverse_fixed_range<S, T, N>(in, out, b0, b1);
  };
  parallel_for(par, (size_t)nt, task);
}

// ------------------------------------------------------------------------------------------
// General n: blocked Gauss-Jordan on a row-major n x n matrix `a` with a padded row stride lda,
// a copy of the input in the scratch memory (computed in place there).

enum : int64_t { kLeaf = 16, kPanel = 128, kMR = 6, kMaxInnerTasks = 64 };

template <class T>
struct Work {
  T* a;        // n x n, row-major, rows lda apart
  int64_t n, lda;
  int* perm;   // n
  T* rk;       // n: copy of the pivot row
  T* W;        // kPanel x lda: copy of the panel rows for the update
  oc_parallel par;
};

// A row stride of at least n elements that is an odd number of cache lines: with a power-of-two
// stride (n = 512, 1024) a column of the matrix, or of W, falls in a few cache sets, and the
// leaves (which sweep one cache line of every row) ran from L3: 35% of the time at n = 1024.
template <class T>
static int64_t padded_stride(int64_t n) {
  const int64_t line = 64 / (int64_t)sizeof(T);
  const int64_t lines = div_up(n, line);
  return (lines | 1) * line;
}

// Unblocked Gauss-Jordan on columns [c0, c0 + w) (pivot rows = those columns), full-row swaps.
template <class T, int WFIX>
static void gj_unblocked(Work<T>& wk, int64_t c0, int64_t wdyn) {
  typedef typename VecT<T>::type V;
  enum { VW = VecT<T>::W, NVF = (WFIX > 0 && WFIX % VecT<T>::W == 0) ? WFIX / VecT<T>::W : 0 };
  const int64_t w = WFIX > 0 ? (int64_t)WFIX : wdyn;
  T* OC_RESTRICT a = wk.a;
  const int64_t n = wk.n, lda = wk.lda;
  T* OC_RESTRICT rk = wk.rk;
  for (int64_t k = c0; k < c0 + w; ++k) {
    int64_t p = k;
    T best = absval(a[k * lda + k]);
    for (int64_t i = k + 1; i < n; ++i) {
      T v = absval(a[i * lda + k]);
      if (v > best) {
        best = v;
        p = i;
      }
    }
    if (p != k) {
      T* OC_RESTRICT x = a + k * lda;
      T* OC_RESTRICT y = a + p * lda;
      for (int64_t j = 0; j < n; ++j) {
        T t = x[j];
        x[j] = y[j];
        y[j] = t;
      }
      int t = wk.perm[k];
      wk.perm[k] = wk.perm[p];
      wk.perm[p] = t;
    }
    T* OC_RESTRICT ak = a + k * lda + c0;
    const int64_t kk = k - c0;
    const T piv = ak[kk];
    for (int64_t j = 0; j < w; ++j) rk[j] = ak[j];
    rk[kk] = T(1);
    if (NVF > 0) {
      // the leaf width in SIMD vectors (GCC leaves the scalar loop below unvectorized: it was
      // 60% of the time at 256x64); lane kk computes 0 - l * 1, written after the vectors
      V r[NVF > 0 ? NVF : 1];
      for (int v = 0; v < NVF; ++v) r[v] = simd_load<V>(rk + v * VW);
      for (int64_t i = 0; i < n; ++i) {
        if (i == k) continue;
        T* OC_RESTRICT ai = a + i * lda + c0;
        const T l = ai[kk] / piv;
        for (int v = 0; v < NVF; ++v) simd_store(ai + v * VW, simd_load<V>(ai + v * VW) - r[v] * l);
        ai[kk] = -l;
      }
    } else {
      for (int64_t i = 0; i < n; ++i) {
        if (i == k) continue;
        T* OC_RESTRICT ai = a + i * lda + c0;
        const T l = ai[kk] / piv;
        ai[kk] = T(0);
        for (int64_t j = 0; j < w; ++j) ai[j] -= l * rk[j];
      }
    }
    const T inv = T(1) / piv;
    for (int64_t j = 0; j < w; ++j) ak[j] = rk[j] * inv;
  }
}

// rows i0.., cols col..col+NV*VW = base + Apb * Wc (base: a's values, or 0 for the panel rows).
// The product is summed from zero and added to base once, as BLAS micro-kernels do: summing onto
// base (a pivot of size ~n) rounds every term at base's magnitude, which made the float32 forward
// error 5-7x MKL's at n >= 512 (now within 1.1-1.3x).
template <class T, int NV>
static OC_ALWAYS_INLINE void micro_kernel(T* OC_RESTRICT a, int64_t lda, int64_t i0, int mr,
                                          const bool* zero_row, int64_t col,
                                          const T* OC_RESTRICT Wc, int64_t ldw,
                                          const T* OC_RESTRICT Apb, int64_t kb) {
  typedef typename VecT<T>::type V;
  enum { VW = VecT<T>::W };
  V acc[kMR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < kMR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = V{};
  for (int64_t t = 0; t < kb; ++t) {
    V w[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) w[v] = simd_load<V>(Wc + t * ldw + v * VW);
    const T* ap = Apb + t * kMR;
#pragma GCC unroll 8
    for (int r = 0; r < kMR; ++r) {
      const T s = ap[r];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] += w[v] * s;
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kMR; ++r) {
    if (r < mr) {
      T* ar = a + (i0 + r) * lda + col;
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        simd_store(ar + v * VW, zero_row[r] ? acc[r][v] : simd_load<V>(ar + v * VW) + acc[r][v]);
    }
  }
}

// Update of the columns [col, col + width) of rows [i0, i0 + mr) (mr <= kMR).
template <class T>
static OC_ALWAYS_INLINE void update_segment(T* a, int64_t lda, int64_t i0, int mr,
                                            const bool* zero_row, int64_t col, int64_t width,
                                            const T* Wc, int64_t ldw, const T* Apb,
                                            int64_t kb) {
  enum { VW = VecT<T>::W };
  int64_t j = 0;
  for (; j + 2 * VW <= width; j += 2 * VW)
    micro_kernel<T, 2>(a, lda, i0, mr, zero_row, col + j, Wc + j, ldw, Apb, kb);
  for (; j + VW <= width; j += VW)
    micro_kernel<T, 1>(a, lda, i0, mr, zero_row, col + j, Wc + j, ldw, Apb, kb);
  for (; j < width; ++j) {
    for (int r = 0; r < mr; ++r) {
      T s = T(0);
      for (int64_t t = 0; t < kb; ++t) s += Apb[t * kMR + r] * Wc[t * ldw + j];
      T& out = a[(i0 + r) * lda + col + j];
      out = zero_row[r] ? s : out + s;
    }
  }
}

// After the panel [k, k+kb) is factored, apply it to the columns [c0, k) and [k+kb, c1).
template <class T>
static void panel_update(Work<T>& wk, int64_t c0, int64_t c1, int64_t k, int64_t kb) {
  const int64_t n = wk.n, lda = wk.lda;
  const int64_t w1 = k - c0, w2 = c1 - (k + kb), wt = w1 + w2;
  if (wt <= 0) return;
  T* a = wk.a;
  T* W = wk.W;
  const int64_t ldw = padded_stride<T>(wt);
  for (int64_t t = 0; t < kb; ++t) {
    const T* src = a + (k + t) * lda;
    memcpy(W + t * ldw, src + c0, (size_t)w1 * sizeof(T));
    memcpy(W + t * ldw + w1, src + k + kb, (size_t)w2 * sizeof(T));
  }
  const int64_t nrb = div_up(n, kMR);
  // tasks of >= 256K flops (a few microseconds): with 1M, the rank-16 updates inside a 128-wide
  // panel ran as one task at n = 512, a quarter of the work on one thread
  const int64_t nt = num_tasks(nrb, 2.0 * kMR * kb * wt, 1 << 18, kMaxInnerTasks);
  auto task = [&](size_t ti) {
    int64_t rb0, rb1;
    split_range(nrb, nt, (int64_t)ti, rb0, rb1);
    alignas(64) T Apb[kMR * kPanel];
    for (int64_t rb = rb0; rb < rb1; ++rb) {
      const int64_t i0 = rb * kMR;
      const int mr = (int)(n - i0 < kMR ? n - i0 : kMR);
      bool zero_row[kMR];
      for (int r = 0; r < kMR; ++r) {
        zero_row[r] = (i0 + r >= k && i0 + r < k + kb);
        const T* src = a + (i0 + r) * lda + k;
        if (r < mr)
          for (int64_t t = 0; t < kb; ++t) Apb[t * kMR + r] = src[t];
        else
          for (int64_t t = 0; t < kb; ++t) Apb[t * kMR + r] = T(0);
      }
      if (w1 > 0) update_segment(a, lda, i0, mr, zero_row, c0, w1, W, ldw, Apb, kb);
      if (w2 > 0) update_segment(a, lda, i0, mr, zero_row, k + kb, w2, W + w1, ldw, Apb, kb);
    }
  };
  parallel_for(wk.par, (size_t)nt, task);
}

// Gauss-Jordan on columns [c0, c1).
template <class T>
static void gj_level(Work<T>& wk, int64_t c0, int64_t c1) {
  const int64_t w = c1 - c0;
  if (w <= kLeaf) {
    if (w == kLeaf)
      gj_unblocked<T, kLeaf>(wk, c0, w);
    else
      gj_unblocked<T, 0>(wk, c0, w);
    return;
  }
  const int64_t b = w > kPanel ? kPanel : kLeaf;
  for (int64_t k = c0; k < c1; k += b) {
    const int64_t kb = c1 - k < b ? c1 - k : b;
    gj_level(wk, k, k + kb);
    panel_update(wk, c0, c1, k, kb);
  }
}

// Scratch for one matrix of size n: perm, rk, W and the working copy of the matrix.
template <class T>
static size_t scratch_bytes(int64_t n) {
  const size_t lda = (size_t)padded_stride<T>(n);
  return (size_t)n * sizeof(int) + (size_t)n * sizeof(T) + (size_t)(kPanel + n) * lda * sizeof(T) +
         3 * 64;
}

static inline char* align64(char* p) {
  return (char*)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

// One matrix: load (convert) into wk.a, invert, store with the column permutation. src may be
// dst: it is read in full before dst is written.
template <class S, class T>
static void inverse_general_one(const S* src, S* dst, Work<T>& wk) {
  const int64_t n = wk.n, lda = wk.lda;
  T* a = wk.a;
  const int64_t nt = num_tasks(n, (double)n, 1 << 16, kMaxInnerTasks);
  {
    auto load = [&](size_t ti) {
      int64_t r0, r1;
      split_range(n, nt, (int64_t)ti, r0, r1);
      for (int64_t i = r0; i < r1; ++i)
        for (int64_t j = 0; j < n; ++j) a[i * lda + j] = Conv<S, T>::load(src[i * n + j]);
    };
    parallel_for(wk.par, (size_t)nt, load);
  }
  for (int64_t i = 0; i < n; ++i) wk.perm[i] = (int)i;
  gj_level(wk, 0, n);
  {
    auto store = [&](size_t ti) {
      int64_t r0, r1;
      split_range(n, nt, (int64_t)ti, r0, r1);
      const int* perm = wk.perm;
      for (int64_t i = r0; i < r1; ++i) {
        const T* row = a + i * lda;
        S* drow = dst + i * n;
        for (int64_t m = 0; m < n; ++m) drow[perm[m]] = Conv<S, T>::store(row[m]);
      }
    };
    parallel_for(wk.par, (size_t)nt, store);
  }
}

template <class T>
static void setup_work(Work<T>& wk, char* buf, int64_t n, const oc_parallel& par) {
  char* p = align64(buf);
  wk.n = n;
  wk.lda = padded_stride<T>(n);
  wk.par = par;
  wk.perm = (int*)p;
  p = align64(p + (size_t)n * sizeof(int));
  wk.rk = (T*)p;
  p = align64(p + (size_t)n * sizeof(T));
  wk.W = (T*)p;
  wk.a = wk.W + kPanel * wk.lda;
}

// Returns OC_OUT_OF_MEMORY when a scratch buffer cannot be allocated (the matrices it was for
// are left unwritten), else 0.
template <class S, class T>
static int inverse_general(const S* in, S* out, int64_t batch, int64_t n,
                           const oc_parallel& par) {
  const size_t sbytes = scratch_bytes<T>(n);
  const int64_t nn = n * n;
  const double flops = 2.0 * (double)n * n * n;
  // Few matrices (or one): parallelism inside each matrix. Otherwise chunks of the batch.
  const bool inner = batch < 4 || (batch < 16 && n >= 512);
  if (inner) {
    char* buf = (char*)malloc(sbytes);
    if (!buf) return OC_OUT_OF_MEMORY;
    Work<T> wk;
    setup_work<T>(wk, buf, n, par);
    for (int64_t b = 0; b < batch; ++b) inverse_general_one<S, T>(in + b * nn, out + b * nn, wk);
    free(buf);
    return 0;
  }
  const int64_t nt = num_tasks(batch, flops, 1 << 18, 1024);
  std::atomic<bool> failed{false};  // set by any task (tasks may run on several threads)
  auto task = [&](size_t ti) {
    int64_t b0, b1;
    split_range(batch, nt, (int64_t)ti, b0, b1);
    char* buf = (char*)malloc(sbytes);
    if (!buf) {
      failed.store(true, std::memory_order_relaxed);  // read after parallel_for has joined
      return;
    }
    Work<T> wk;
    setup_work<T>(wk, buf, n, oc_serial);
    for (int64_t b = b0; b < b1; ++b) inverse_general_one<S, T>(in + b * nn, out + b * nn, wk);
    free(buf);
  };
  parallel_for(par, (size_t)nt, task);
  return failed.load(std::memory_order_relaxed) ? OC_OUT_OF_MEMORY : 0;
}

template <class S, class T>
static int inverse_dispatch(const S* in, S* out, int64_t batch, int64_t n,
                            const oc_parallel& par) {
  switch (n) {
#define OC_FIXED(k)                                 \
  case k:                                           \
    inverse_fixed<S, T, k>(in, out, batch, par); \
    return 0;
    OC_FIXED(1) OC_FIXED(2) OC_FIXED(3) OC_FIXED(4) OC_FIXED(5) OC_FIXED(6) OC_FIXED(7) OC_FIXED(8)
    OC_FIXED(9) OC_FIXED(10) OC_FIXED(11) OC_FIXED(12) OC_FIXED(13) OC_FIXED(14) OC_FIXED(15)
    OC_FIXED(16)
#undef OC_FIXED
    default: return inverse_general<S, T>(in, out, batch, n, par);
  }
}

// Entry points of this instruction set (non-template, so they carry its target options).
int inverse_f32(const float* in, float* out, int64_t batch, int64_t n, oc_parallel par) {
  return inverse_dispatch<float, float>(in, out, batch, n, par);
}
int inverse_f64(const double* in, double* out, int64_t batch, int64_t n, oc_parallel par) {
  return inverse_dispatch<double, double>(in, out, batch, n, par);
}
int inverse_f16(const uint16_t* in, uint16_t* out, int64_t batch, int64_t n, oc_parallel par) {
  return inverse_dispatch<uint16_t, float>(in, out, batch, n, par);
}

#endif  // OC_ISA_PASS
