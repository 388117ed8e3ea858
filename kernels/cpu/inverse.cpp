// Batched matrix inverse: Gauss-Jordan elimination with partial (row) pivoting, in place.
//
// Algorithm. In-place Gauss-Jordan on P*A (rows swapped as pivots are chosen) turns the matrix
// into (P*A)^-1 = A^-1 * P^T; the inverse is recovered by permuting columns
// (A^-1[i][perm[m]] = X[i][m], written in order as a gather through perm's inverse). Multipliers
// are a[i][k] / pivot (a true division, not a multiplication by the reciprocal), so two equal
// rows cancel exactly and a singular matrix hits an exact zero pivot, whose division produces
// inf/nan in the output.
//   * n <= 16: a fully unrolled per-size template on a stack copy, many matrices per task.
//   * larger n: blocked Gauss-Jordan. For a panel of kb columns [k, k+kb), the panel is first
//     factored (recursively: 128-wide panels are made of 16-wide leaves), then every other column
//     j of every row i (the rows above the panel as well as below: one product) is updated with
//     one rank-kb product:
//       a[i][j] = (i in panel rows ? 0 : a[i][j]) + sum_t a[i][k+t] * Wt[t][j]
//     where Wt is a copy of the panel rows taken before the update. This is a GEMM (2 n^3 flops
//     in all, like LU + triangular inversion) done GotoBLAS-style: Wt packed once into contiguous
//     strips of the micro-kernel's width (kb x NR, from L2), each block of kMR rows' panel
//     columns packed into a kMR x kb micro-panel (in L1), a register-blocked micro-kernel (AVX-512:
//     14 rows x 2 vectors of accumulators; 16-register ISAs 6 x 2) fetching the next C block
//     ahead. Row blocks are split across tasks, so a single large matrix still runs in parallel,
//     and each element's sum runs in one order whatever the thread count.
//     A leaf (16 columns) is worked on in a column-major copy: pivot search down a contiguous
//     column, the multipliers of all rows as vector divisions, columns updated as vectors of rows.
//     Its row swaps are made within its 128-wide panel only; the other columns take a panel's
//     swaps (recorded in ipiv) when its update packs them, as LAPACK's deferred laswp.
//   * batches are split into chunks of matrices per task; for few large matrices the
//     parallelism is inside each matrix, in one parallel region per call (team.h: the host's pool
//     forked once, not twice per leaf; the region's first task leads, the others claim the items
//     of its steps). With a small team the next panel is factored on the leader while the others
//     apply the current panel to the rest of the matrix (look-ahead: the leaves' serial work is
//     hidden behind the update); every element still sees the same operations in one order.
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
#include <utility>

#include "ortcustom/half.h"
#include "../kernels.h"
#include "parallel.h"
#include "team.h"

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
using ::oc::detail::Team;
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

enum : int64_t { kLeaf = 16, kPanel = 128, kMaxInnerTasks = 64 };
// The look-ahead (the next panel factored on the leader while the others update the rest) only
// for teams this small: it factors the panel on one thread, which more threads would wait for.
enum : int { kLookAheadTeam = 4 };

// The micro-kernel's shape: kMR rows x kNV vectors of columns of accumulators. AVX-512 (32 zmm):
// 14 x 2 = 28 accumulators, 2 vectors of W and a broadcast; 16 registers (AVX2, SSE): 6 x 2.
// Per step t it loads kNV vectors of W and broadcasts kMR values of A for kMR * kNV FMAs: with
// 14 x 2 the loads (16) stay under the FMAs' 14 cycles on two ports.
#if OC_VEC_BYTES >= 64
enum : int { kMR = 14, kNV = 2 };
#else
enum : int { kMR = 6, kNV = 2 };
#endif

// A strip of W: kNV vectors of columns (NR values).
template <class T>
struct Strip {
  enum { NR = kNV * VecT<T>::W };
};

template <class T>
struct Work {
  T* a;        // n x n, row-major, rows lda apart
  int64_t n, lda;
  int* perm;   // n, and n more for its inverse
  int* ipiv;   // n: ipiv[k], the row swapped with row k at step k (for the columns of other panels)
  T* W;        // a panel's rows packed as strips for its update: kPanel x (n + 2 NR)
  T* Wi;       // a leaf's rows packed for the update inside its panel: kLeaf x (kPanel + 2 NR)
  T* L;        // a leaf's columns, column-major: kLeaf x ldl
  int64_t ldl;
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

// The VW x VW block r[0..VW) (r[i]: row i) transposed in place: log2(VW) rounds of two-vector
// shuffles; round D exchanges the off-diagonal D x D blocks of every 2D x 2D block. Lane J of x'
// (HI = false) is x[J] or, where J & D, y[J - D]; of y' (HI) y[J] or, where !(J & D), x[J + D].
template <class M, int VW, int D, bool HI, class V, int... J>
static OC_ALWAYS_INLINE V shuffle_pair(V x, V y, std::integer_sequence<int, J...>) {
#if defined(__clang__)
  return __builtin_shufflevector(x, y, (HI ? ((J & D) ? VW + J : J + D)
                                           : ((J & D) ? VW + J - D : J))...);
#else
  return __builtin_shuffle(x, y, M{(HI ? ((J & D) ? VW + J : J + D)
                                       : ((J & D) ? VW + J - D : J))...});
#endif
}
template <class T, int D>
static OC_ALWAYS_INLINE void transpose_round(typename VecT<T>::type* r) {
  typedef typename VecT<T>::type V;
  enum { VW = VecT<T>::W };
  typedef typename ::oc::detail::Simd<typename IntOf<T>::type, VW>::type M;
#pragma GCC unroll 16
  for (int i = 0; i < VW; ++i) {
    if (i & D) continue;
    const auto lanes = std::make_integer_sequence<int, VW>();
    const V x = shuffle_pair<M, VW, D, false>(r[i], r[i + D], lanes);
    const V y = shuffle_pair<M, VW, D, true>(r[i], r[i + D], lanes);
    r[i] = x;
    r[i + D] = y;
  }
}
template <class T>
static OC_ALWAYS_INLINE void transpose_block(typename VecT<T>::type* r) {
  enum { VW = VecT<T>::W };
  if constexpr (VW >= 16) transpose_round<T, 8>(r);
  if constexpr (VW >= 8) transpose_round<T, 4>(r);
  if constexpr (VW >= 4) transpose_round<T, 2>(r);
  transpose_round<T, 1>(r);
}

// Copies the w <= kLeaf columns [c0, c0 + w) of every row into L (column j at L + j * ldl; rows
// n..ldl zero), or (back = true) L into them: VW x VW blocks transposed in registers.
template <class T>
static void leaf_transpose(Work<T>& wk, int64_t c0, int64_t w, bool back) {
  typedef typename VecT<T>::type V;
  enum { VW = VecT<T>::W };
  T* OC_RESTRICT a = wk.a;
  T* OC_RESTRICT L = wk.L;
  const int64_t n = wk.n, lda = wk.lda, ldl = wk.ldl;
  const int64_t wv = w / VW * VW;  // columns moved as blocks
  int64_t i0 = 0;
  for (; i0 + VW <= n; i0 += VW) {
    for (int64_t cv = 0; cv < wv; cv += VW) {
      V r[VW];
      if (!back) {
        // the rows two blocks ahead (a leaf's columns were last touched by a whole-matrix update:
        // in L3, one line per row, a stride no hardware prefetcher follows far enough)
        if (cv == 0 && i0 + 3 * VW <= n)
#pragma GCC unroll 16
          for (int i = 0; i < VW; ++i) __builtin_prefetch(a + (i0 + 2 * VW + i) * lda + c0, 0, 3);
#pragma GCC unroll 16
        for (int i = 0; i < VW; ++i) r[i] = simd_load<V>(a + (i0 + i) * lda + c0 + cv);
        transpose_block<T>(r);
#pragma GCC unroll 16
        for (int j = 0; j < VW; ++j) simd_store(L + (cv + j) * ldl + i0, r[j]);
      } else {
#pragma GCC unroll 16
        for (int j = 0; j < VW; ++j) r[j] = simd_load<V>(L + (cv + j) * ldl + i0);
        transpose_block<T>(r);
#pragma GCC unroll 16
        for (int i = 0; i < VW; ++i) simd_store(a + (i0 + i) * lda + c0 + cv, r[i]);
      }
    }
  }
  for (int64_t j = 0; j < w; ++j) {
    for (int64_t i = j < wv ? i0 : 0; i < n; ++i) {
      if (!back)
        L[j * ldl + i] = a[i * lda + c0 + j];
      else
        a[i * lda + c0 + j] = L[j * ldl + i];
    }
    if (!back)
      for (int64_t i = n; i < ldl; ++i) L[j * ldl + i] = T(0);
  }
}

// The pivot of column x (contiguous) at step k: the first i in (k, n) with the largest |x[i]|
// if that is > |x[k]|, else k; a NaN never wins (the scalar loop `if (|x[i]| > best)` from best =
// |x[k]|, in vectors: each lane keeps its first largest, then the smallest index of the largest).
template <class T>
static int64_t pivot_row(const T* OC_RESTRICT x, int64_t k, int64_t n) {
  typedef typename VecT<T>::type V;
  typedef typename IntOf<T>::type I;
  enum { VW = VecT<T>::W };
  typedef typename ::oc::detail::Simd<I, VW>::type M;
  int64_t i = k + 1;
  int64_t p = -1;
  T best = T(-1);
  if (n - i >= 2 * VW) {
    V bv = V{} - T(1);
    M bi = M{} - 1, idx;
    for (int j = 0; j < VW; ++j) idx[j] = (I)(i + j);
    for (; i + VW <= n; i += VW, idx += (I)VW) {
      V v = simd_load<V>(x + i);
      v = v < T(0) ? -v : v;
      const M gt = v > bv;
      bv = gt ? v : bv;
      bi = gt ? idx : bi;
    }
    for (int j = 0; j < VW; ++j)
      if (bv[j] > best || (bv[j] == best && bi[j] < (I)p)) {
        best = bv[j];
        p = (int64_t)bi[j];
      }
  }
  for (; i < n; ++i) {
    const T v = absval(x[i]);
    if (v > best) {
      best = v;
      p = i;
    }
  }
  return p >= 0 && best > absval(x[k]) ? p : k;
}

// Unblocked Gauss-Jordan on the w <= kLeaf columns [c0, c0 + w) (pivot rows: the same indices),
// worked on in a column-major copy L: the pivot search runs down a contiguous column, the
// multipliers of all rows are vector divisions, and each column is updated with vectors of rows
// (in the row-major matrix each row took a scalar division and stores of its own). Step k, pivot
// piv = a[k][k] after the swap: every other row i gets l = a[i][k] / piv, a[i][j] -= rk[j] * l
// (rk: row k) and a[i][k] = -l; row k becomes rk / piv with a[k][k] = 1 / piv. Rows are swapped
// within the enclosing panel's columns [s0, s1) (the leaf's in L, the others in the matrix) and
// the swap is recorded in ipiv: the other panels' columns take it with the panel's update.
template <class T>
static void gj_leaf(Work<T>& wk, int64_t c0, int64_t w, int64_t s0, int64_t s1) {
  typedef typename VecT<T>::type V;
  enum { VW = VecT<T>::W };
  T* OC_RESTRICT a = wk.a;
  T* OC_RESTRICT L = wk.L;
  const int64_t n = wk.n, lda = wk.lda, ldl = wk.ldl;
  T rk[kLeaf];
  leaf_transpose(wk, c0, w, false);
  for (int64_t kk = 0; kk < w; ++kk) {
    const int64_t k = c0 + kk;
    T* OC_RESTRICT col = L + kk * ldl;
    const int64_t p = pivot_row(col, k, n);
    if (p != k) {
      for (int64_t j = 0; j < w; ++j) {
        const T t = L[j * ldl + k];
        L[j * ldl + k] = L[j * ldl + p];
        L[j * ldl + p] = t;
      }
      T* OC_RESTRICT x = a + k * lda;
      T* OC_RESTRICT y = a + p * lda;
      for (int64_t j = s0; j < c0; ++j) {
        const T t = x[j];
        x[j] = y[j];
        y[j] = t;
      }
      for (int64_t j = c0 + w; j < s1; ++j) {
        const T t = x[j];
        x[j] = y[j];
        y[j] = t;
      }
      const int t = wk.perm[k];
      wk.perm[k] = wk.perm[p];
      wk.perm[p] = t;
    }
    wk.ipiv[k] = (int)p;
    const T piv = col[k];
    for (int64_t j = 0; j < w; ++j) rk[j] = L[j * ldl + k];
    rk[kk] = T(1);
    // every row (row k too: overwritten below); column kk becomes -l
    for (int64_t i = 0; i < ldl; i += VW) {
      const V l = simd_load<V>(col + i) / piv;  // true divisions: equal rows cancel exactly
#pragma GCC unroll 16
      for (int64_t j = 0; j < kLeaf; ++j) {
        if (j >= w) break;
        if (j == kk) continue;
        T* lj = L + j * ldl + i;
        simd_store(lj, simd_load<V>(lj) - rk[j] * l);
      }
      simd_store(col + i, -l);
    }
    const T inv = T(1) / piv;
    for (int64_t j = 0; j < w; ++j) L[j * ldl + k] = rk[j] * inv;
  }
  leaf_transpose(wk, c0, w, true);
}

// C[0..mr)[0..cols) (cols <= NV vectors; rows lda apart) = base + Ap * Ws, base C's values, or 0
// for the rows in zero_rows (bit r: row r). Ws: a strip, kb x NR contiguous; Ap: kb x kMR
// (t-major), kMR values of A per step. The product is summed from zero and added to base once, as
// BLAS micro-kernels do: summing onto base (a pivot of size ~n) rounds every term at base's
// magnitude, which made the float32 forward error 5-7x MKL's at n >= 512 (now within 1.1-1.3x).
// `next` is the C block of the next call (nextr rows): its lines are fetched meanwhile (the
// hardware prefetchers follow a row only after some of its lines, and never jump to the next
// block of rows).
template <class T, int NV>
static OC_ALWAYS_INLINE void micro_kernel(T* OC_RESTRICT c, int64_t lda, int mr, unsigned zero_rows,
                                          int cols, const T* OC_RESTRICT Ws,
                                          const T* OC_RESTRICT Ap, int64_t kb, const T* next,
                                          int nextr) {
  typedef typename VecT<T>::type V;
  enum { VW = VecT<T>::W, NR = Strip<T>::NR, LINE = 64 / (int)sizeof(T) };
  enum { LPR = (NR + LINE - 1) / LINE };  // C lines per row of a block
  // the next block's lines, one every `step` steps: all at once they filled the line-fill
  // buffers and stalled the loop (6% of the time at n = 1024)
  const int npf = nextr * LPR;
  const int64_t step = npf > 0 && kb / npf > 0 ? kb / npf : 1;
  int pi = 0;
  int64_t tpf = 0;
  V acc[kMR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < kMR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = V{};
  for (int64_t t = 0; t < kb; ++t) {
    if (t == tpf && pi < npf) {
      __builtin_prefetch(next + (pi / LPR) * lda + (pi % LPR) * LINE, 1, 3);
      ++pi;
      tpf += step;
    }
    // W streams from L2: its lines a few steps ahead (past the strip: the next strip's)
#pragma GCC unroll 4
    for (int j = 0; j < NV * VW; j += LINE) __builtin_prefetch(Ws + (t + 4) * NR + j, 0, 3);
    V w[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) w[v] = simd_load<V>(Ws + t * NR + v * VW);
    const T* ap = Ap + t * kMR;
#pragma GCC unroll 16
    for (int r = 0; r < kMR; ++r) {
      const T s = ap[r];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] += w[v] * s;
    }
  }
  for (; pi < npf; ++pi) __builtin_prefetch(next + (pi / LPR) * lda + (pi % LPR) * LINE, 1, 3);
  if (cols == NV * VW) {
#pragma GCC unroll 16
    for (int r = 0; r < kMR; ++r) {
      if (r < mr) {
        T* cr = c + r * lda;
        const bool z = (zero_rows >> r) & 1;
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v)
          simd_store(cr + v * VW, z ? acc[r][v] : simd_load<V>(cr + v * VW) + acc[r][v]);
      }
    }
  } else {  // the last strip of a segment: its padding columns are not C's
    // (unrolled like the rest: an acc[r] with r unknown at compile time would keep acc in memory)
#pragma GCC unroll 16
    for (int r = 0; r < kMR; ++r) {
      if (r < mr) {
        alignas(64) T tmp[NV * VW];
        memcpy(tmp, &acc[r][0], sizeof tmp);
        T* cr = c + r * lda;
        const bool z = (zero_rows >> r) & 1;
        for (int j = 0; j < cols; ++j) cr[j] = z ? tmp[j] : cr[j] + tmp[j];
      }
    }
  }
}

// The micro-panel of A for rows [i0, i0 + kMR): Ap[t * kMR + r] = a[i0 + r][k + t] for t < kb (0
// for r >= mr). VW x VW blocks transposed in registers (rows in groups of VW); each column of a
// block is stored whole, its values past kMR overwritten by the next store (Ap has VW values of
// slack).
template <class T>
static OC_ALWAYS_INLINE void pack_a(const T* OC_RESTRICT a, int64_t lda, int64_t i0, int mr,
                                    int64_t k, int64_t kb, T* OC_RESTRICT Ap) {
  typedef typename VecT<T>::type V;
  enum { VW = VecT<T>::W, NG = (kMR + VecT<T>::W - 1) / VecT<T>::W };
  int64_t t = 0;
  for (; t + VW <= kb; t += VW) {
    V r[NG][VW];
#pragma GCC unroll 4
    for (int g = 0; g < NG; ++g) {
#pragma GCC unroll 16
      for (int i = 0; i < VW; ++i) {
        const int row = g * VW + i;
        r[g][i] = row < mr ? simd_load<V>(a + (i0 + row) * lda + k + t) : V{};
      }
      transpose_block<T>(r[g]);
    }
#pragma GCC unroll 16
    for (int j = 0; j < VW; ++j)
#pragma GCC unroll 4
      for (int g = 0; g < NG; ++g) simd_store(Ap + (t + j) * kMR + g * VW, r[g][j]);
  }
  for (; t < kb; ++t)
    for (int r = 0; r < kMR; ++r) Ap[t * kMR + r] = r < mr ? a[(i0 + r) * lda + k + t] : T(0);
}

// After the panel [k, k+kb) is factored, apply it to the columns of two segments [a0, a0 + w1)
// and [b0, b0 + w2) of every row: C = (row in the panel ? 0 : C) + A * W, A the panel's columns, W
// a copy of the panel rows (before the update). GotoBLAS-style: W is packed into strips of NR
// columns (each segment's last one padded with zeros), kb x NR contiguous (kb = 128: 16 KiB, from
// L2); then each GEMM item takes blocks of kMR rows, packs their kMR x kb of A (kept in L1) and
// sweeps the strips. With `swap`, a pack item first applies the panel's row swaps (ipiv) to its
// strip's columns: the panel swapped rows only within itself. Every C element is summed in one
// order whatever the items and threads: results do not depend on the thread count.
// One step of items: the pack items first, then the GEMM items, which wait for every pack item
// (claimed before them: Team's rule).
template <class T>
struct Update {
  enum { NR = Strip<T>::NR };
  Work<T>& wk;
  T* Wp;
  int64_t k, kb, a0, w1, b0, w2;
  bool swap;
  int64_t ns1, ns, npt, nrb, nt;
  std::atomic<int64_t> packed{0};
  // The GEMM items' chunks of rows, taken from the front by the leader and from the back by the
  // others (low half: the next at the front; high half: one past the last not taken), so that each
  // thread updates about the same rows step after step, the rows it wrote last (each item took the
  // next chunk from one counter: the rows went to either thread anew each step, and on two vCPUs of
  // far cores, AMD Zen 5 VM, float 512 took 1.27 ms against 1.15).
  std::atomic<uint64_t> ends{0};

  Update(Work<T>& w, T* W, int64_t k_, int64_t kb_, int64_t a0_, int64_t w1_, int64_t b0_,
         int64_t w2_, bool swap_)
      : wk(w), Wp(W), k(k_), kb(kb_), a0(a0_), w1(w1_), b0(b0_), w2(w2_), swap(swap_) {
    ns1 = div_up(w1, NR);
    ns = ns1 + div_up(w2, NR);
    // memory-bound copies: items of >= 16K values (the top-level panel's W: ~8)
    npt = num_tasks(ns, (double)kb * NR, 1 << 14, kMaxInnerTasks);
    nrb = div_up(wk.n, kMR);
    // items of >= 256K flops (a few microseconds): with 1M, the rank-16 updates inside a
    // 128-wide panel ran as one task at n = 512, a quarter of the work on one thread
    nt = num_tasks(nrb, 2.0 * kMR * kb * (w1 + w2), 1 << 18, kMaxInnerTasks);
    ends.store((uint64_t)nt << 32, std::memory_order_relaxed);
  }
  // The next chunk from this thread's end (one per GEMM item: one is always left).
  int64_t take_chunk() {
    const bool front = Team::member() == 0;  // (every update runs in a team, maybe one of one)
    uint64_t e = ends.load(std::memory_order_relaxed);
    for (;;) {
      const uint64_t lo = e & 0xffffffffu, hi = e >> 32;
      const uint64_t next = front ? e + 1 : e - ((uint64_t)1 << 32);
      if (ends.compare_exchange_weak(e, next, std::memory_order_relaxed))
        return front ? (int64_t)lo : (int64_t)hi - 1;
    }
  }
  size_t items() const { return w1 + w2 > 0 ? (size_t)(npt + nt) : 0; }

  void strip(int64_t s, int64_t& col, int& cols) const {
    const int64_t j = (s < ns1 ? s : s - ns1) * NR, w = s < ns1 ? w1 : w2;
    col = (s < ns1 ? a0 : b0) + j;
    cols = (int)(w - j < NR ? w - j : (int64_t)NR);
  }

  void pack(int64_t ti) {
    T* OC_RESTRICT a = wk.a;
    const int64_t lda = wk.lda;
    int64_t s0, s1;
    split_range(ns, npt, ti, s0, s1);
    for (int64_t s = s0; s < s1; ++s) {
      int64_t col;
      int cols;
      strip(s, col, cols);
      if (swap)
        for (int64_t t = k; t < k + kb; ++t) {
          const int64_t p = wk.ipiv[t];
          if (p == t) continue;
          T* OC_RESTRICT x = a + t * lda + col;
          T* OC_RESTRICT y = a + p * lda + col;
          for (int j = 0; j < cols; ++j) {
            const T v = x[j];
            x[j] = y[j];
            y[j] = v;
          }
        }
      T* dst = Wp + s * kb * NR;
      for (int64_t t = 0; t < kb; ++t, dst += NR) {
        const T* src = a + (k + t) * lda + col;
        if (cols == NR) {
          memcpy(dst, src, NR * sizeof(T));
        } else {
          for (int j = 0; j < cols; ++j) dst[j] = src[j];
          for (int j = cols; j < NR; ++j) dst[j] = T(0);
        }
      }
    }
    packed.fetch_add(1, std::memory_order_release);
  }

  void gemm(int64_t ti) {
    unsigned round = 0;
    while (packed.load(std::memory_order_acquire) < npt) ::oc::detail::spin_wait(round);
    T* a = wk.a;
    const int64_t n = wk.n, lda = wk.lda;
    int64_t rb0, rb1;
    split_range(nrb, nt, ti, rb0, rb1);
    alignas(64) T Ap[kMR * kPanel + VecT<T>::W];
    for (int64_t rb = rb0; rb < rb1; ++rb) {
      const int64_t i0 = rb * kMR;
      const int mr = (int)(n - i0 < kMR ? n - i0 : (int64_t)kMR);
      unsigned zero_rows = 0;
      for (int r = 0; r < mr; ++r)
        if (i0 + r >= k && i0 + r < k + kb) zero_rows |= 1u << r;
      pack_a(a, lda, i0, mr, k, kb, Ap);
      for (int64_t s = 0; s < ns; ++s) {
        int64_t col, ncol;
        int cols, ncols, nextr = mr;
        strip(s, col, cols);
        const T* next;
        if (s + 1 < ns) {
          strip(s + 1, ncol, ncols);
          next = a + i0 * lda + ncol;
        } else {  // the next block's first strip (or nothing)
          strip(0, ncol, ncols);
          const int64_t i1 = i0 + kMR;
          nextr = rb + 1 < rb1 ? (int)(n - i1 < kMR ? n - i1 : (int64_t)kMR) : 0;
          next = a + (nextr ? i1 : i0) * lda + ncol;
        }
        if (cols > VecT<T>::W)
          micro_kernel<T, kNV>(a + i0 * lda + col, lda, mr, zero_rows, cols, Wp + s * kb * NR, Ap,
                               kb, next, nextr);
        else  // a segment's last strip, at most one vector wide: half the FMAs
          micro_kernel<T, 1>(a + i0 * lda + col, lda, mr, zero_rows, cols, Wp + s * kb * NR, Ap,
                             kb, next, nextr);
      }
    }
  }

  static void item(void* arg, size_t i) {
    Update* u = static_cast<Update*>(arg);
    if ((int64_t)i < u->npt)
      u->pack((int64_t)i);
    else
      u->gemm(u->take_chunk());
  }
};

// The update above as one parallel step of par (returns when it is done).
template <class T>
static void update(Work<T>& wk, const oc_parallel& par, T* W, int64_t k, int64_t kb, int64_t a0,
                   int64_t w1, int64_t b0, int64_t w2, bool swap) {
  Update<T> u(wk, W, k, kb, a0, w1, b0, w2, swap);
  auto item = [&](size_t i) { Update<T>::item(&u, i); };
  parallel_for(par, u.items(), item);
}

// Gauss-Jordan on the panel [c0, c1) (at most kPanel columns): 16-column leaves, each followed by
// its rank-16 update of the panel's other columns (on par). Rows are swapped within the panel.
template <class T>
static void gj_panel(Work<T>& wk, int64_t c0, int64_t c1, const oc_parallel& par) {
  for (int64_t k = c0; k < c1; k += kLeaf) {
    const int64_t kb = c1 - k < kLeaf ? c1 - k : kLeaf;
    gj_leaf<T>(wk, k, kb, c0, c1);
    update(wk, par, wk.Wi, k, kb, c0, k - c0, k + kb, c1 - (k + kb), false);
  }
}

// Gauss-Jordan on the whole matrix, the leader of `team` handing out the parallel steps: panels
// of kPanel columns, each factored (gj_panel), then applied to every other column (a rank-128
// update; the panel's row swaps join it). Look-ahead (small teams): panel P's update of panel
// P + 1's columns first; then the update of the rest is published and, while the others work on
// it, the leader factors panel P + 1 by itself (its columns and Wi: nothing the update touches),
// then joins them. Each element sees the same operations in the same order on every schedule.
template <class T>
static void gj_matrix(Work<T>& wk, Team& team) {
  const int64_t n = wk.n;
  const oc_parallel par = team.runner();
  gj_panel(wk, 0, n < kPanel ? n : (int64_t)kPanel, par);
  for (int64_t p = 0; p < n; p += kPanel) {
    const int64_t kb = n - p < kPanel ? n - p : (int64_t)kPanel;    // the panel factored
    const int64_t k2 = p + kb, kb2 = n - k2 < kPanel ? n - k2 : (int64_t)kPanel;  // the next
    if (kb2 <= 0) {  // the last panel (or the only one: nothing to update)
      update(wk, par, wk.W, p, kb, 0, p, k2, 0, true);
      break;
    }
    if (team.size() <= kLookAheadTeam) {
      update(wk, par, wk.W, p, kb, k2, kb2, k2, 0, true);
      Update<T> rest(wk, wk.W, p, kb, 0, p, k2 + kb2, n - (k2 + kb2), true);
      team.start(&Update<T>::item, rest.items(), &rest);
      gj_panel(wk, k2, k2 + kb2, oc_serial);
      team.finish();
    } else {
      update(wk, par, wk.W, p, kb, 0, p, k2, n - k2, true);
      gj_panel(wk, k2, k2 + kb2, par);
    }
  }
}

// Scratch for one matrix of size n: perm and its inverse, ipiv, the packed W and Wi, a leaf's L and
// the working copy of the matrix.
template <class T>
static size_t scratch_bytes(int64_t n) {
  const size_t lda = (size_t)padded_stride<T>(n), nr2 = 2 * Strip<T>::NR;
  return 3 * (size_t)n * sizeof(int) +
         ((size_t)kPanel * ((size_t)n + nr2) + (size_t)kLeaf * (kPanel + nr2) +
          (size_t)(kLeaf + n) * lda) * sizeof(T) +
         6 * 64;
}

static inline char* align64(char* p) {
  return (char*)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

// One matrix: load (convert) into wk.a, invert, store with the column permutation. src may be
// dst: it is read in full before dst is written.
template <class S, class T>
static void inverse_general_one(const S* src, S* dst, Work<T>& wk, Team& team) {
  const int64_t n = wk.n, lda = wk.lda;
  const oc_parallel par = team.runner();
  T* a = wk.a;
  const int64_t nt = num_tasks(n, (double)n, 1 << 16, kMaxInnerTasks);
  {
    auto load = [&](size_t ti) {
      int64_t r0, r1;
      split_range(n, nt, (int64_t)ti, r0, r1);
      for (int64_t i = r0; i < r1; ++i)
        for (int64_t j = 0; j < n; ++j) a[i * lda + j] = Conv<S, T>::load(src[i * n + j]);
    };
    parallel_for(par, (size_t)nt, load);
  }
  for (int64_t i = 0; i < n; ++i) wk.perm[i] = (int)i;
  gj_matrix(wk, team);
  int* OC_RESTRICT from = wk.perm + n;  // dst[i][j] = X[i][from[j]]: a gather, stores in order
  for (int64_t m = 0; m < n; ++m) from[wk.perm[m]] = (int)m;
  // runs of j where from[j] steps by one (all of it when no row was swapped): copied as
  // stretches (vector loops) when they are few, their starts in ipiv (done with)
  int* OC_RESTRICT run = wk.ipiv;
  int64_t runs = 0;
  for (int64_t j = 0; j < n; ++j)
    if (j == 0 || from[j] != from[j - 1] + 1) run[runs++] = (int)j;
  const bool stretches = runs * 8 <= n;
  {
    auto store = [&](size_t ti) {
      int64_t r0, r1;
      split_range(n, nt, (int64_t)ti, r0, r1);
      for (int64_t i = r0; i < r1; ++i) {
        const T* OC_RESTRICT row = a + i * lda;
        S* OC_RESTRICT drow = dst + i * n;
        if (stretches) {
          for (int64_t r = 0; r < runs; ++r) {
            const int64_t j0 = run[r], j1 = r + 1 < runs ? run[r + 1] : n;
            const T* OC_RESTRICT x = row + from[j0];
            for (int64_t j = j0; j < j1; ++j) drow[j] = Conv<S, T>::store(x[j - j0]);
          }
        } else {
          for (int64_t j = 0; j < n; ++j) drow[j] = Conv<S, T>::store(row[from[j]]);
        }
      }
    };
    parallel_for(par, (size_t)nt, store);
  }
}

template <class T>
static void setup_work(Work<T>& wk, char* buf, int64_t n) {
  char* p = align64(buf);
  wk.n = n;
  wk.lda = padded_stride<T>(n);
  wk.perm = (int*)p;
  p = align64(p + 2 * (size_t)n * sizeof(int));
  wk.ipiv = (int*)p;
  p = align64(p + (size_t)n * sizeof(int));
  wk.W = (T*)p;
  p = align64(p + (size_t)kPanel * (size_t)(n + 2 * Strip<T>::NR) * sizeof(T));
  wk.Wi = (T*)p;
  p = align64(p + (size_t)kLeaf * (size_t)(kPanel + 2 * Strip<T>::NR) * sizeof(T));
  wk.ldl = wk.lda;  // rows n..ldl of L: padding of the vector loops
  wk.L = (T*)p;
  p = align64(p + (size_t)kLeaf * (size_t)wk.ldl * sizeof(T));
  wk.a = (T*)p;
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
    setup_work<T>(wk, buf, n);
    // one parallel region for all of it (Team); up to one panel (n <= 128: well under a
    // millisecond), on the calling thread, as the steps' grain would have it anyway
    Team::run(par, n > kPanel ? (size_t)kMaxInnerTasks : 1, [&](Team& team) {
      for (int64_t b = 0; b < batch; ++b)
        inverse_general_one<S, T>(in + b * nn, out + b * nn, wk, team);
    });
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
    setup_work<T>(wk, buf, n);
    Team::run(oc_parallel{nullptr, nullptr}, 1, [&](Team& team) {  // this thread alone
      for (int64_t b = b0; b < b1; ++b)
        inverse_general_one<S, T>(in + b * nn, out + b * nn, wk, team);
    });
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
