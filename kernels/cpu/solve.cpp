// Batched LU factorization with partial pivoting (LAPACK's getrf) and the solves with its factors
// (getrs). n <= kSmall: row-major, unblocked (n known at compile time up to 8), many matrices per
// task; in place, or from kPaddedN (a batch's matrices) in a padded copy with the pivot column kept
// contiguous (factor_padded: whole-vector updates, a vector pivot search; the same bits); slogdet's
// A^T (U's diagonal alone) from n = 9 on A as it lies, its rows being A^T's columns
// (factor_padded_t: aligned vectors, no transposed copy; the same bits). Larger n:
// recursive on a column-major working copy (lu_recursive.inc: the pivot search down contiguous
// columns, nearly all flops in a register-tiled product split across tasks), its factors left
// column-major in lu (lu_at reads either layout).
//
// Solves: the right-hand sides as columns (A X = B) go through the row swaps, then L and U: for
// n <= kSmall by rows of X (each step an axpy along a contiguous row segment of a column chunk),
// for larger n on a column-major copy of the chunk as a recursive blocked trsm (the halves in turn,
// the first taken off the second by the product of column_major.inc; one column: the vector's
// steps); as rows (one vector per row: vectors), forward and back substitution by dot products of
// contiguous rows of the factors (by axpys down their columns when column-major); X A = B's rows
// with A's own factors (as torch: its info is A's) through A^T = U^T L^T P (solve_vec_t). n <= 8
// with no broadcast: each matrix is factored and solved (or its determinant read off) in one pass
// while in cache, its factors never stored; a single matrix is solved from its working copy (the
// factors not copied out).
// Determinants: of A^T's factors (a straight copy in), one log per matrix (a mantissa and exponent
// product: no overflow, no underflow); n <= 8 a vector's width of matrices at a time, one per lane.
//
// Compiled once per instruction set (isa_passes.inc, as inverse.cpp).

#ifndef OC_ISA_PASS

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <limits>

#include "lu.h"
#include "parallel.h"
#include "team.h"

#if defined(__SSE2__)
#include <immintrin.h>  // the AVX-512 pass's masked loads and stores (lu_recursive.inc)
#endif

#ifdef OC_LU_TRACE  // the runner tests' build (tests/native/lu_runners.cpp): told of each blocked
// factorization, and asked whether to take the blocked steps whatever the team
extern "C" void oc_lu_trace_blocked(void);
extern "C" int oc_lu_trace_force_blocked(void);
#endif

namespace oc {
namespace detail {

// The padded working copy of a large factorization (n > kSmall), 64-byte aligned (get(): null
// without memory). keep: the calling thread keeps it between calls, up to kKeepBytes: fresh memory
// takes a page fault per 4 KiB at its first touch, which was 10% of a float64 slogdet at n = 512 (the
// copy into it cost less than its faults). Only a single large matrix's caller keeps one (a batch's
// tasks reuse theirs across their matrices; pool threads keeping theirs would hold memory per
// thread); larger ones are allocated per call (the faults then weigh little against the n^3
// flops). A nested use on the same thread gets its own.
class LuScratch {
 public:
  LuScratch(size_t bytes, bool keep) {
    if (bytes == 0) return;
    Kept& k = kept();
    if (keep && bytes <= kKeepBytes && !k.busy) {
      if (k.bytes < bytes) {
        free(k.p);
        k.p = malloc(bytes + 64);
        k.bytes = k.p ? bytes : 0;
      }
      if (k.p) {
        k.busy = true;
        mine_ = &k;
        base_ = k.p;
      }
    }
    if (!mine_) base_ = own_ = malloc(bytes + 64);
  }
  ~LuScratch() {
    if (mine_) mine_->busy = false;
    free(own_);
  }
  template <class T>
  T* get() const {
    return base_ ? (T*)(((uintptr_t)base_ + 63) & ~(uintptr_t)63) : nullptr;
  }

 private:
  enum : size_t { kKeepBytes = size_t{16} << 20 };  // n = 1024 in double, padded: 8.5 MB
  struct Kept {
    void* p = nullptr;
    size_t bytes = 0;
    bool busy = false;
    ~Kept() { free(p); }
  };
  static Kept& kept() {
    static thread_local Kept k;
    return k;
  }
  Kept* mine_ = nullptr;
  void* base_ = nullptr;
  void* own_ = nullptr;
  LuScratch(const LuScratch&) = delete;
  LuScratch& operator=(const LuScratch&) = delete;
};

}  // namespace detail

#define OC_ISA_PASS_FILE "solve.cpp"
#define OC_ISA_PASS_NS lu
#include "isa_passes.inc"  // oc::lu_base, _avx2, _avx512
}  // namespace oc

void oc_lu_f32(const float* a, float* lu, int32_t* piv, int32_t* info, int64_t batch, int64_t n,
               bool transpose, oc_parallel par) {
  OC_ISA_CALL(oc::lu, factor<float>, a, lu, piv, info, batch, n, transpose, par);
}
void oc_lu_f64(const double* a, double* lu, int32_t* piv, int32_t* info, int64_t batch, int64_t n,
               bool transpose, oc_parallel par) {
  OC_ISA_CALL(oc::lu, factor<double>, a, lu, piv, info, batch, n, transpose, par);
}
void oc_lu_solve_f32(const float* lu, const int32_t* piv, const float* b, float* x, const int64_t* a_index,
                     const int64_t* b_index, int64_t count, int64_t n, int64_t k, bool rows, bool trans,
                     oc_parallel par) {
  OC_ISA_CALL(oc::lu, solve<float>, lu, n, piv, b, x, a_index, b_index, count, n, k, rows, trans, par);
}
int oc_lu_factor_solve_f32(const float* a, const float* b, float* x, int32_t* info, int64_t count, int64_t n,
                           int64_t k, bool rows, bool trans, oc_parallel par) {
  return OC_ISA_CALL(oc::lu, factor_solve<float>, a, b, x, info, count, n, k, rows, trans, par);
}
int oc_lu_factor_solve_f64(const double* a, const double* b, double* x, int32_t* info, int64_t count, int64_t n,
                           int64_t k, bool rows, bool trans, oc_parallel par) {
  return OC_ISA_CALL(oc::lu, factor_solve<double>, a, b, x, info, count, n, k, rows, trans, par);
}
void oc_lu_slogdet_f32(const float* a, float* lu, int32_t* piv, int32_t* info, float* sign, float* logabs,
                       int64_t count, int64_t n, oc_parallel par) {
  OC_ISA_CALL(oc::lu, slogdet<float>, a, lu, piv, info, sign, logabs, count, n, par);
}
void oc_lu_slogdet_f64(const double* a, double* lu, int32_t* piv, int32_t* info, double* sign, double* logabs,
                       int64_t count, int64_t n, oc_parallel par) {
  OC_ISA_CALL(oc::lu, slogdet<double>, a, lu, piv, info, sign, logabs, count, n, par);
}
void oc_lu_solve_f64(const double* lu, const int32_t* piv, const double* b, double* x, const int64_t* a_index,
                     const int64_t* b_index, int64_t count, int64_t n, int64_t k, bool rows, bool trans,
                     oc_parallel par) {
  OC_ISA_CALL(oc::lu, solve<double>, lu, n, piv, b, x, a_index, b_index, count, n, k, rows, trans, par);
}

#else  // OC_ISA_PASS: the per-instruction-set body, included inside a namespace

using ::oc::detail::LuScratch;
using ::oc::detail::Team;
#include "simd.inc"

enum : int64_t { kSmall = 64, kChunk = 256 };  // n <= kSmall: unblocked (recursion costs more)
// a batch's matrices from this n to kSmall: factor_padded (factor's measured crossover)
template <class T>
constexpr int64_t kPaddedN() {
  return sizeof(T) == 4 ? 40 : 56;
}

// y[0:len] -= f * x[0:len]
template <class T>
static OC_ALWAYS_INLINE void axpy_sub(T* OC_RESTRICT y, const T* OC_RESTRICT x, T f, int64_t len) {
  typedef typename Vec<T>::type V;
  enum { W = Vec<T>::W };
  int64_t j = 0;
  for (; j + W <= len; j += W) vstore(y + j, vload<V>(y + j) - f * vload<V>(x + j));
  for (; j < len; ++j) y[j] -= f * x[j];
}

template <class T>
static OC_ALWAYS_INLINE T dot(const T* OC_RESTRICT x, const T* OC_RESTRICT y, int64_t len) {
  typedef typename Vec<T>::type V;
  enum { W = Vec<T>::W };
  V a0 = {}, a1 = {};
  int64_t k = 0;
  for (; k + 2 * W <= len; k += 2 * W) {
    a0 += vload<V>(x + k) * vload<V>(y + k);
    a1 += vload<V>(x + k + W) * vload<V>(y + k + W);
  }
  for (; k + W <= len; k += W) a0 += vload<V>(x + k) * vload<V>(y + k);
  const V s = a0 + a1;
  T r = T(0);
  for (int i = 0; i < W; ++i) r += s[i];
  for (; k < len; ++k) r += x[k] * y[k];
  return r;
}

// The pivot row of column j among rows [j, n): the largest magnitude (NaN never wins; ties: the first).
template <class T>
static OC_ALWAYS_INLINE int64_t pivot_row(const T* w, int64_t lda, int64_t j, int64_t n) {
  int64_t p = j;
  T best = absval(w[j * lda + j]);
  if (!(best == best)) best = T(-1);
  for (int64_t i = j + 1; i < n; ++i) {
    const T v = absval(w[i * lda + j]);
    if (v > best) {
      best = v;
      p = i;
    }
  }
  return p;
}

#include "lu_recursive.inc"  // factor_large: n > kSmall
#include "trsm.inc"          // the large factors' solves with several right-hand sides

// Unblocked steps [k0, k1) on rows [k0, n), updating only columns < c_end (the panel; the whole
// matrix when unblocked). Row swaps move whole rows (length lda). Records pivots and the first zero
// pivot (info, 1-based; kept if already set).
template <class T>
static OC_ALWAYS_INLINE void factor_panel(T* w, int64_t lda, int64_t n, int64_t k0, int64_t k1, int64_t c_end,
                         int32_t* piv, int32_t* info) {
  for (int64_t j = k0; j < k1; ++j) {
    const int64_t p = pivot_row(w, lda, j, n);
    piv[j] = (int32_t)p;
    if (p != j) {
      T* rj = w + j * lda;
      T* rp = w + p * lda;
      for (int64_t c = 0; c < lda; ++c) {
        const T t = rj[c];
        rj[c] = rp[c];
        rp[c] = t;
      }
    }
    const T d = w[j * lda + j];
    if (d == T(0)) {  // getrf: no scaling, the column below is zero; go on
      if (*info == 0) *info = (int32_t)(j + 1);
      continue;
    }
    const T* rj = w + j * lda;
    for (int64_t i = j + 1; i < n; ++i) {
      T* ri = w + i * lda;
      const T l = ri[j] / d;
      ri[j] = l;
      axpy_sub(ri + j + 1, rj + j + 1, l, c_end - j - 1);
    }
  }
}

// pivot_row's choice among c[j .. n) (contiguous; c[n .. n + W) NaN, which never wins): PivotScan
// over whole vectors.
template <class T>
static OC_ALWAYS_INLINE int64_t pivot_in(const T* c, int64_t j, int64_t n) {
  typedef typename Vec<T>::type V;
  PivotScan<T> scan;
  int64_t i = 0;
  for (; j + i < n; i += Vec<T>::W) scan.add(vload<V>(c + j + i));
  return j + scan.finish(c + j, i, i);
}

// factor_panel's steps on a whole matrix whose rows are padded to ld >= n + W - 1 entries (zeros
// past n; ld a multiple of W, each row starting on a vector's alignment), with colv (n + W entries;
// c[n ..] NaN) a contiguous copy of the pivot column: every row update runs in whole aligned vectors
// (no scalar tail: up to W - 1 steps per row were a tenth of a 64 x 64 float factorization; starting
// at j + 1, each store split two cache lines: float 48..64 0.92-0.94, double 0.90-0.94) and leaves
// the row's new entry of the next column in colv, where pivot_in finds the next pivot by vectors (the
// strided search was a chain of compares: a sixth). The same arithmetic and pivots as factor_panel:
// the same bits.
template <class T>
static void factor_padded(T* w, int64_t ld, int64_t n, T* colv, int32_t* piv, int32_t* info) {
  typedef typename Vec<T>::type V;
  typedef typename PivotScan<T>::M M;
  typedef typename PivotScan<T>::I I;
  enum { W = Vec<T>::W };
  const M lane = PivotScan<T>::lanes();
  for (int64_t i = 0; i < n; ++i) colv[i] = w[i * ld];
  for (int64_t j = 0; j < n; ++j) {
    const int64_t p = pivot_in(colv, j, n);
    piv[j] = (int32_t)p;
    if (p != j) {
      T* rj = w + j * ld;
      T* rp = w + p * ld;
      for (int64_t c = 0; c < ld; c += W) {
        const V t = vload<V>(rj + c);
        vstore(rj + c, vload<V>(rp + c));
        vstore(rp + c, t);
      }
    }
    const T d = w[j * ld + j];
    const T* rj = w + j * ld;
    if (d == T(0)) {  // getrf: no scaling, the column below is zero; go on
      if (*info == 0) *info = (int32_t)(j + 1);
      for (int64_t i = j + 1; i < n; ++i) colv[i] = w[i * ld + j + 1];
      continue;
    }
    // whole aligned vectors from a0 <= j + 1 (unaligned stores split cache lines): the first one keeps
    // its lanes left of j + 1 (L's multipliers) and takes l at lane j when it holds it
    const int64_t a0 = (j + 1) / W * W;
    const I at = (I)(j - a0);  // lane j's place in that vector (-1: j is in the one before)
    for (int64_t i = j + 1; i < n; ++i) {
      T* ri = w + i * ld;
      const T l = ri[j] / d;
      const V old = vload<V>(ri + a0);
      // one rounding, as the loop's plain expression gets (GCC left this one, which feeds a select, unfused)
#if OC_VEC_BYTES >= 32
      const V upd = fnmadd(l + V{}, vload<V>(rj + a0), old);
#else
      const V upd = old - l * vload<V>(rj + a0);
#endif
      if (at < 0) ri[j] = l;
      vstore(ri + a0, lane > at ? upd : lane == at ? l + V{} : old);
      for (int64_t c = a0 + W; c < n; c += W) vstore(ri + c, vload<V>(ri + c) - l * vload<V>(rj + c));
      colv[i] = ri[j + 1];
    }
  }
}

// factor_padded on A^T, with A as it lies (row-major, each row starting on a vector's alignment, ld
// a multiple of W >= n + W - 1): row j of A is A^T's column j, so the pivot search runs along a contiguous row (no
// transposed copy, no pivot column kept), the multipliers are that row divided by the pivot
// (vectors), and each row c below takes the row of multipliers times its own entry j. Only U's
// diagonal is kept (to diag, dstride apart) with the pivots: A^T's row swap of step j is A's column
// swap j <-> p, of which only the rows c > j still matter, and each row's swap is folded into its
// update (entry p fixed after). What is no longer read (A^T's U right of the diagonal: entries
// left of j + 1) is free, so the vectors start at the aligned a0 <= j + 1, the multipliers left of
// j + 1 zeroed (a row's lanes there change by - s * 0 at most; unaligned stores split cache lines).
// The same operations on the same values as factor_padded of A^T: the same pivots and diagonal.
template <class T>
static void factor_padded_t(T* w, int64_t ld, int64_t n, int32_t* piv, int32_t* info, T* diag, int64_t dstride) {
  typedef typename Vec<T>::type V;
  typedef typename PivotScan<T>::M M;
  typedef typename PivotScan<T>::I I;
  enum { W = Vec<T>::W };
  const M lane = PivotScan<T>::lanes();
  for (int64_t j = 0; j < n; ++j) {
    T* rj = w + j * ld;
    PivotScan<T> scan;
    int64_t i = 0;
    for (; j + i + W <= n; i += W) scan.add(vload<V>(rj + j + i));
    const int64_t p = j + scan.finish(rj + j, i, n - j);
    piv[j] = (int32_t)p;
    const T d = rj[p];
    rj[p] = rj[j];  // (A^T[p][j]: its multiplier below)
    diag[j * dstride] = d;
    if (d == T(0)) {  // getrf: no scaling, no update; the swap alone
      if (*info == 0) *info = (int32_t)(j + 1);
      for (int64_t c = j + 1; c < n && p != j; ++c) {
        T* rc = w + c * ld;
        const T t = rc[j];
        rc[j] = rc[p];
        rc[p] = t;
      }
      continue;
    }
    const V dv = d + V{};
    const int64_t a0 = (j + 1) / W * W;
    vstore(rj + a0, (lane > (I)(j - a0) ? vload<V>(rj + a0) : V{}) / dv);
    for (i = a0 + W; i < n; i += W) vstore(rj + i, vload<V>(rj + i) / dv);
    for (int64_t c = j + 1; c < n; ++c) {
      T* rc = w + c * ld;
      const T s = rc[p], sj = rc[j];  // A^T[j][c] and A^T[p][c] once swapped
      for (i = a0; i < n; i += W) vstore(rc + i, vload<V>(rc + i) - s * vload<V>(rj + i));
      if (p != j) rc[p] = sj - s * rj[p];
    }
  }
}

template <class T>
static OC_ALWAYS_INLINE void load_matrix(const T* a, T* w, int64_t n, bool transpose) {
  if (!transpose) {
    memcpy(w, a, (size_t)(n * n) * sizeof(T));
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) w[j * n + i] = a[i * n + j];
}

// n known at compile time: the unblocked loop on registers, fully unrolled by the compiler (the
// same steps and pivot choice as factor_panel).
template <class T, int N>
static void factor_fixed(T* w, int32_t* piv, int32_t* info) {
  T a[N][N];
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < N; ++j) a[i][j] = w[i * N + j];
  int32_t bad = 0;
#pragma GCC unroll 8
  for (int j = 0; j < N; ++j) {
    int p = j;
    T best = absval(a[j][j]);
    best = best == best ? best : T(-1);
#pragma GCC unroll 8
    for (int i = j + 1; i < N; ++i) {
      const T v = absval(a[i][j]);
      const bool gt = v > best;
      best = gt ? v : best;
      p = gt ? i : p;
    }
    piv[j] = p;
#pragma GCC unroll 8
    for (int c = 0; c < N; ++c) {  // unconditional swap (a no-op when p == j): no unpredictable branch
      const T t = a[j][c];
      a[j][c] = a[p][c];
      a[p][c] = t;
    }
    const T d = a[j][j];
    bad = bad == 0 && d == T(0) ? j + 1 : bad;
    if (d == T(0)) continue;  // as getrf: no scaling, no update (rare: a predictable branch)
#pragma GCC unroll 8
    for (int i = j + 1; i < N; ++i) {
      const T l = a[i][j] / d;
      a[i][j] = l;
#pragma GCC unroll 8
      for (int c = j + 1; c < N; ++c) a[i][c] -= l * a[j][c];
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < N; ++j) w[i * N + j] = a[i][j];
  if (*info == 0) *info = bad;
}

template <class T>
static void factor_one(T* w, int64_t n, int32_t* piv, int32_t* info) {
  switch (n) {
#define OC_SMALL(k) \
  case k:           \
    return factor_fixed<T, k>(w, piv, info);
    OC_SMALL(1) OC_SMALL(2) OC_SMALL(3) OC_SMALL(4) OC_SMALL(5) OC_SMALL(6) OC_SMALL(7) OC_SMALL(8)
#undef OC_SMALL
    default:
      return factor_panel(w, n, n, 0, n, n, piv, info);
  }
}

// The factors of n <= kSmall row-major, larger ones column-major (factor_large), ld apart: lu_at
// reads either.
template <class T>
static OC_ALWAYS_INLINE T lu_at(const T* f, int64_t ld, int64_t n, int64_t i, int64_t j) {
  return n > kSmall ? f[j * ld + i] : f[i * ld + j];
}

// diag_only (slogdet): only U's diagonal is stored, of a large matrix (n > kSmall) in its first n
// elements, of a batch's smaller ones (from 9: n <= 8 is slogdet's own) where the full factors would
// have it (n + 1 apart), the rest of lu left as it was.
template <class T>
void factor(const T* a, T* lu, int32_t* piv, int32_t* info, int64_t batch, int64_t n, bool transpose,
            oc_parallel par, bool diag_only = false) {
  const int64_t nn = n * n;
  const double work = (double)nn * (double)n;
  if (n > kSmall && (batch == 1 || (batch < 4 && n > 256))) {  // few large: the parallelism is inside each
    // a padded working copy (see padded_stride); without memory, in place in lu (slower at n = 2^k)
    const LuScratch scratch((size_t)(padded_stride<T>(n) * n) * sizeof(T), true);
    for (int64_t m = 0; m < batch; ++m)
      factor_large(a + m * nn, lu + m * nn, piv + m * n, info + m, n, transpose, scratch.get<T>(), par,
                   kMaxInnerTasks, diag_only);
    return;
  }
  const int64_t nt = num_tasks(batch, work, 1 << 15, 1024);
  // kPaddedN<T> <= n <= kSmall: factor_padded, in a copy whose rows are padded with zeros to
  // ldp >= n + W - 1 entries, then copied out (the same bits as in place). Below, its fixed costs per
  // column (the vector pivot search's reduction) outweigh what it saves: AMD Zen 5, 1 thread, float:
  // 64 -28%, 56 -17%, 40 -11%, 32 0, 24 +7%, 16 +18%; double: 64 -13%, 56 -2%, 48 0, 24 +8%.
  // A^T's diagonal alone (slogdet), any n <= kSmall: factor_padded_t on a straight copy, against the
  // transposed copy's factor_padded (n >= kPaddedN) or factor_one: float 64 0.80, 48 0.84, 40 0.79,
  // 32 0.77, 24 0.80, 16 0.71, 12 0.84, 9 0.87; double 64 0.69, 56 0.62, 48 0.65, 32 0.75, 16 0.92.
  const int64_t ldp = div_up(n + Vec<T>::W - 1, Vec<T>::W) * Vec<T>::W;
  const bool padded = (n >= kPaddedN<T>() || (diag_only && transpose)) && n <= kSmall;
  const size_t padded_elems = (size_t)(ldp * n + n + Vec<T>::W);  // the copy and colv
  auto task = [&](size_t t) {
    int64_t m0, m1;
    split_range(batch, nt, (int64_t)t, m0, m1);
    // n > kSmall: a padded working copy for this task's matrices too (see padded_stride)
    const LuScratch scratch(n > kSmall ? (size_t)(padded_stride<T>(n) * n) * sizeof(T)
                            : padded      ? padded_elems * sizeof(T)
                                          : 0,
                            false);
    T* aligned = scratch.get<T>();
    T* colv = aligned && padded ? aligned + ldp * n : nullptr;
    if (colv) {
      for (int64_t i = 0; i < n; ++i) memset(aligned + i * ldp + n, 0, (size_t)(ldp - n) * sizeof(T));
      for (int64_t i = n; i < n + Vec<T>::W; ++i) colv[i] = std::numeric_limits<T>::quiet_NaN();
    }
    for (int64_t m = m0; m < m1; ++m) {
      if (n > kSmall) {
        factor_large(a + m * nn, lu + m * nn, piv + m * n, info + m, n, transpose, aligned, oc_serial, 1, diag_only);
        continue;
      }
      info[m] = 0;
      if (colv && diag_only && transpose) {  // (slogdet)
        for (int64_t i = 0; i < n; ++i) memcpy(aligned + i * ldp, a + m * nn + i * n, (size_t)n * sizeof(T));
        factor_padded_t(aligned, ldp, n, piv + m * n, info + m, lu + m * nn, n + 1);
        continue;
      }
      if (colv) {
        transpose_copy(a + m * nn, n, aligned, ldp, n, !transpose, oc_serial, 1);
        factor_padded(aligned, ldp, n, colv, piv + m * n, info + m);
        for (int64_t i = 0; i < n; ++i) memcpy(lu + m * nn + i * n, aligned + i * ldp, (size_t)n * sizeof(T));
        continue;
      }
      load_matrix(a + m * nn, lu + m * nn, n, transpose);
      factor_one(lu + m * nn, n, piv + m * n, info + m);
    }
  };
  parallel_for(par, (size_t)nt, task);
}

// w columns of x (row-major, k apart; already row-swapped) solved with the column-major factors
// of a large matrix (n > kSmall) through xc, a column-major copy (ldx apart), L then U (trsm.inc).
template <class T>
static void solve_cols_large(const T* lu, int64_t ld, T* x, int64_t k, T* xc, int64_t ldx, T* t, int64_t wp, int64_t n,
                             int64_t w) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < w; ++c) xc[c * ldx + i] = x[i * k + c];
  tri_left(lu, ld, 0, n, true, true, xc, ldx, w, t, wp);
  tri_left(lu, ld, 0, n, false, false, xc, ldx, w, t, wp);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < w; ++c) x[i * k + c] = xc[c * ldx + i];
}

// Columns [c0, c1) of one n x k block x (holding B): the row swaps, then L, then U (the factors ld apart).
template <class T>
static void solve_cols(const T* lu, int64_t ld, const int32_t* piv, T* x, int64_t n, int64_t k, int64_t c0,
                       int64_t c1) {
  const int64_t w = c1 - c0;
  for (int64_t i = 0; i < n; ++i)
    if (piv[i] != i) {
      T* xi = x + i * k + c0;
      T* xp = x + (int64_t)piv[i] * k + c0;
      for (int64_t c = 0; c < w; ++c) {
        const T t = xi[c];
        xi[c] = xp[c];
        xp[c] = t;
      }
    }
  if (n > kSmall) {  // column-major factors: blocked, on a column-major copy (solve_cols_large)
    const int64_t ldx = padded_stride<T>(n), wp = tri_left_wp<T>(w);
    T* xc = (T*)malloc((size_t)(ldx * w + kTriLeaf * wp) * sizeof(T));
    if (xc) {
      solve_cols_large(lu, ld, x + c0, k, xc, ldx, xc + ldx * w, wp, n, w);
      free(xc);
      return;
    }
    for (int64_t j = 0; j + 1 < n; ++j) {  // without memory: down the factors' columns, by rows of x
      const T* xj = x + j * k + c0;
      const T* lj = lu + j * ld;
      for (int64_t i = j + 1; i < n; ++i) axpy_sub(x + i * k + c0, xj, lj[i], w);
    }
    for (int64_t j = n - 1; j >= 0; --j) {
      T* xj = x + j * k + c0;
      const T d = lu[j * ld + j];
      for (int64_t c = 0; c < w; ++c) xj[c] /= d;
      const T* uj = lu + j * ld;
      for (int64_t i = 0; i < j; ++i) axpy_sub(x + i * k + c0, xj, uj[i], w);
    }
    return;
  }
  // row-major factors: a vector of X's row i at a time, its terms taken in order in a register (the last columns
  // a masked vector on AVX-512; elsewhere by axpys along the rows, as a masked copy through memory cost more)
  typedef typename Vec<T>::type V;
  enum { W = Vec<T>::W };
  auto sweep = [&](auto load, auto store) {
    for (int64_t i = 1; i < n; ++i) {
      V y = load(x + i * k);
      for (int64_t j = 0; j < i; ++j) y -= lu[i * ld + j] * load(x + j * k);
      store(x + i * k, y);
    }
    for (int64_t i = n - 1; i >= 0; --i) {
      V y = load(x + i * k);
      for (int64_t j = i + 1; j < n; ++j) y -= lu[i * ld + j] * load(x + j * k);
      store(x + i * k, y / lu[i * ld + i]);
    }
  };
  int64_t c = c0;
  for (; c + W <= c1; c += W)
    sweep([&](const T* p) { return vload<V>(p + c); }, [&](T* p, V v) { vstore(p + c, v); });
#if OC_VEC_BYTES >= 64
  if (c < c1) {
    const int len = (int)(c1 - c);
    sweep([&](const T* p) { return vload_part(p + c, len); }, [&](T* p, V v) { vstore_part(p + c, v, len); });
  }
#else
  const int64_t tail = c1 - c;
  if (tail == 0) return;
  for (int64_t i = 1; i < n; ++i)
    for (int64_t j = 0; j < i; ++j) axpy_sub(x + i * k + c, x + j * k + c, lu[i * ld + j], tail);
  for (int64_t i = n - 1; i >= 0; --i) {
    for (int64_t j = i + 1; j < n; ++j) axpy_sub(x + i * k + c, x + j * k + c, lu[i * ld + j], tail);
    for (int64_t e = 0; e < tail; ++e) x[i * k + c + e] /= lu[i * ld + i];
  }
#endif
}

// One right-hand side vector x (n, holding b), in place (the factors ld apart).
template <class T>
static void solve_vec(const T* lu, int64_t ld, const int32_t* piv, T* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (piv[i] != i) {
      const T t = x[i];
      x[i] = x[piv[i]];
      x[piv[i]] = t;
    }
  if (n > kSmall) {  // column-major factors: column sweeps
    for (int64_t j = 0; j + 1 < n; ++j) axpy_sub(x + j + 1, lu + j * ld + j + 1, x[j], n - j - 1);
    for (int64_t j = n - 1; j >= 0; --j) {
      x[j] /= lu[j * ld + j];
      axpy_sub(x, lu + j * ld, x[j], j);
    }
    return;
  }
  for (int64_t i = 1; i < n; ++i) x[i] -= dot(lu + i * ld, x, i);
  for (int64_t i = n - 1; i >= 0; --i)
    x[i] = (x[i] - dot(lu + i * ld + i + 1, x + i + 1, n - 1 - i)) / lu[i * ld + i];
}

// One right-hand side x (n, holding b) of A^T x = b with A's factors (P A = L U: A^T = U^T L^T P), in
// place: U^T, then L^T, then the row swaps undone in reverse order (getrs with trans = 'T').
template <class T>
static void solve_vec_t(const T* lu, int64_t ld, const int32_t* piv, T* x, int64_t n) {
  if (n > kSmall) {  // column-major factors: U's and L's columns are U^T's and L^T's rows
    for (int64_t i = 0; i < n; ++i) x[i] = (x[i] - dot(lu + i * ld, x, i)) / lu[i * ld + i];
    for (int64_t i = n - 2; i >= 0; --i) x[i] -= dot(lu + i * ld + i + 1, x + i + 1, n - 1 - i);
  } else {  // row-major factors: sweeps along their rows
    for (int64_t j = 0; j < n; ++j) {
      x[j] /= lu[j * ld + j];
      axpy_sub(x + j + 1, lu + j * ld + j + 1, x[j], n - 1 - j);
    }
    for (int64_t j = n - 1; j > 0; --j) axpy_sub(x, lu + j * ld, x[j], j);
  }
  for (int64_t i = n - 1; i >= 0; --i)
    if (piv[i] != i) {
      const T t = x[i];
      x[i] = x[piv[i]];
      x[piv[i]] = t;
    }
}

// ld: the factors' leading dimension (n, or the padded working copy's; matrices ld * n apart).
// trans (rows only): each row solved with A^T (X A = B).
template <class T>
void solve(const T* lu, int64_t ld, const int32_t* piv, const T* b, T* x, const int64_t* a_index,
           const int64_t* b_index, int64_t count, int64_t n, int64_t k, bool rows, bool trans, oc_parallel par) {
  const int64_t nn = n * n, nk = n * k;
  const int64_t chunk = rows ? int64_t{16} : int64_t{kChunk};  // vectors (rows) or columns per unit
  const int64_t chunks = div_up(k, chunk);
  const int64_t units = count * chunks;
  const int64_t nt = num_tasks(units, (double)nn * (double)(k < chunk ? k : chunk), 1 << 16, 1024);
  auto task = [&](size_t t) {
    int64_t u0, u1;
    split_range(units, nt, (int64_t)t, u0, u1);
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t m = u / chunks, c = u % chunks;
      const int64_t lo = c * chunk, hi = lo + chunk < k ? lo + chunk : k;
      const int64_t ia = a_index ? a_index[m] : m, ib = b_index ? b_index[m] : m;
      const T* f = lu + ia * ld * n;
      const int32_t* p = piv + ia * n;
      const T* bm = b + ib * nk;
      T* xm = x + m * nk;
      if (rows) {
        for (int64_t r = lo; r < hi; ++r) {
          memcpy(xm + r * n, bm + r * n, (size_t)n * sizeof(T));
          if (trans)
            solve_vec_t(f, ld, p, xm + r * n, n);
          else
            solve_vec(f, ld, p, xm + r * n, n);
        }
      } else if (k == 1) {  // one column: contiguous, the vector's steps
        memcpy(xm, bm, (size_t)n * sizeof(T));
        solve_vec(f, ld, p, xm, n);
      } else {
        for (int64_t i = 0; i < n; ++i) memcpy(xm + i * k + lo, bm + i * k + lo, (size_t)(hi - lo) * sizeof(T));
        solve_cols(f, ld, p, xm, n, k, lo, hi);
      }
    }
  };
  parallel_for(par, (size_t)nt, task);
}

// One right-hand side vector with n known at compile time (row-major factors): solve_vec's steps,
// or with Trans solve_vec_t's (A^T x = b), unrolled.
template <class T, int N, bool Trans>
static OC_ALWAYS_INLINE void solve_vec_fixed(const T* OC_RESTRICT lu, const int32_t* piv, T* OC_RESTRICT x) {
  T y[N];
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i) y[i] = x[i];
  if (!Trans)
#pragma GCC unroll 8
    for (int i = 0; i < N; ++i) {
      const T t = y[i];
      y[i] = y[piv[i]];
      y[piv[i]] = t;
    }
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i) {  // L (unit), or U^T
#pragma GCC unroll 8
    for (int j = 0; j < i; ++j) y[i] -= (Trans ? lu[j * N + i] : lu[i * N + j]) * y[j];
    if (Trans) y[i] /= lu[i * N + i];
  }
#pragma GCC unroll 8
  for (int i = N - 1; i >= 0; --i) {  // U, or L^T (unit)
#pragma GCC unroll 8
    for (int j = i + 1; j < N; ++j) y[i] -= (Trans ? lu[j * N + i] : lu[i * N + j]) * y[j];
    if (!Trans) y[i] /= lu[i * N + i];
  }
  if (Trans)
#pragma GCC unroll 8
    for (int i = N - 1; i >= 0; --i) {
      const T t = y[i];
      y[i] = y[piv[i]];
      y[piv[i]] = t;
    }
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i) x[i] = y[i];
}

// Matrices [m0, m1), each factored and solved while in cache (no broadcast: block m of b and x
// goes with matrix m of a). trans (rows only): each row solved with A^T (X A = B).
template <class T, int N>
static void factor_solve_fixed(const T* a, const T* b, T* x, int32_t* info, int64_t m0, int64_t m1, int64_t k,
                               bool rows, bool trans) {
  T w[N * N];
  int32_t piv[N];
  for (int64_t m = m0; m < m1; ++m) {
    load_matrix(a + m * N * N, w, N, false);
    info[m] = 0;
    factor_fixed<T, N>(w, piv, info + m);
    const T* bm = b + m * N * k;
    T* xm = x + m * N * k;
    memcpy(xm, bm, (size_t)(N * k) * sizeof(T));
    if (rows && trans)
      for (int64_t r = 0; r < k; ++r) solve_vec_fixed<T, N, true>(w, piv, xm + r * N);
    else if (rows)
      for (int64_t r = 0; r < k; ++r) solve_vec_fixed<T, N, false>(w, piv, xm + r * N);
    else
      solve_cols(w, N, piv, xm, N, k, 0, k);
  }
}

// W consecutive n = N matrices from am into u, matrix l in lane l: u[r][c] = A[r][c] (transpose: A[c][r]).
template <class T, int N>
static OC_ALWAYS_INLINE void load_lanes(const T* am, typename Vec<T>::type (&u)[N][N], bool transpose) {
  enum { W = Vec<T>::W };
  T buf[N * N][W];  // element e of matrix l at buf[e][l]
  for (int l = 0; l < W; ++l)
#pragma GCC unroll 8
    for (int e = 0; e < N * N; ++e) buf[e][l] = am[l * N * N + e];
#pragma GCC unroll 8
  for (int r = 0; r < N; ++r)
#pragma GCC unroll 8
    for (int c = 0; c < N; ++c) u[r][c] = vload<typename Vec<T>::type>(buf[transpose ? c * N + r : r * N + c]);
}

// factor_fixed's pivot row for column j in every lane of u (rows j.. of column j: the first of the largest
// magnitudes, NaN never winning), as a vector of row indices.
template <class T, int N>
static OC_ALWAYS_INLINE typename Vec<T>::type lane_pivot(const typename Vec<T>::type (&u)[N][N], int j) {
  typedef typename Vec<T>::type V;
  const V zero{};
  V best = u[j][j] < zero ? -u[j][j] : u[j][j];
  best = best == best ? best : zero - T(1);
  V p = zero + T(j);
#pragma GCC unroll 8
  for (int i = j + 1; i < N; ++i) {
    const V v = u[i][j] < zero ? -u[i][j] : u[i][j];
    const auto gt = v > best;
    best = gt ? v : best;
    p = gt ? zero + T(i) : p;
  }
  return p;
}

// A X = B for matrices [m0, m1) of n = N, W at a time, matrix l in lane l of every vector (a small matrix has too
// little work for vectors inside it): factor_fixed's LU (its pivot choice, whole-row swaps, zero-pivot rule) by
// lane-wise selects, then solve_cols' swaps and sweeps per column of B, the same operations in the same order,
// so a matrix gets the same bits in a lane as alone. The rest of [m0, m1) (< W matrices) by factor_solve_fixed.
template <class T, int N>
static void factor_solve_lanes(const T* a, const T* b, T* x, int32_t* info, int64_t m0, int64_t m1, int64_t k) {
  enum { W = Vec<T>::W };
  typedef typename Vec<T>::type V;
  const V zero{};
  int64_t m = m0;
  for (; m + W <= m1; m += W) {
    V u[N][N], piv[N], bad = zero;
    load_lanes<T, N>(a + m * N * N, u, false);
#pragma GCC unroll 8
    for (int j = 0; j < N; ++j) {
      const V p = lane_pivot<T, N>(u, j);
      piv[j] = p;
#pragma GCC unroll 8
      for (int i = j + 1; i < N; ++i) {
        const auto sw = p == zero + T(i);
#pragma GCC unroll 8
        for (int c = 0; c < N; ++c) {
          const V t = u[j][c];
          u[j][c] = sw ? u[i][c] : t;
          u[i][c] = sw ? t : u[i][c];
        }
      }
      const V d = u[j][j];
      const auto dz = d == zero;  // as getrf: no scaling, no update
      bad = bad == zero && dz ? zero + T(j + 1) : bad;
#pragma GCC unroll 8
      for (int i = j + 1; i < N; ++i) {
        const V l = u[i][j] / d;
        u[i][j] = dz ? u[i][j] : l;
#pragma GCC unroll 8
        for (int c = j + 1; c < N; ++c) {
#if OC_VEC_BYTES >= 32  // one rounding, as factor_fixed's plain expression (GCC leaves one feeding a select unfused)
          const V upd = fnmadd(l, u[j][c], u[i][c]);
#else
          const V upd = u[i][c] - l * u[j][c];
#endif
          u[i][c] = dz ? u[i][c] : upd;
        }
      }
    }
    T bads[W];
    vstore(bads, bad);
    for (int l = 0; l < W; ++l) info[m + l] = (int32_t)bads[l];
    const T* bm = b + m * N * k;
    T* xm = x + m * N * k;
    for (int64_t c = 0; c < k; ++c) {
      T yb[N][W];
      for (int l = 0; l < W; ++l)
#pragma GCC unroll 8
        for (int i = 0; i < N; ++i) yb[i][l] = bm[l * N * k + i * k + c];
      V y[N];
#pragma GCC unroll 8
      for (int i = 0; i < N; ++i) y[i] = vload<V>(yb[i]);
#pragma GCC unroll 8
      for (int i = 0; i < N; ++i)
#pragma GCC unroll 8
        for (int r = i + 1; r < N; ++r) {
          const auto sw = piv[i] == zero + T(r);
          const V t = y[i];
          y[i] = sw ? y[r] : t;
          y[r] = sw ? t : y[r];
        }
#pragma GCC unroll 8
      for (int i = 1; i < N; ++i)
#pragma GCC unroll 8
        for (int j = 0; j < i; ++j) y[i] -= u[i][j] * y[j];
#pragma GCC unroll 8
      for (int i = N - 1; i >= 0; --i) {
#pragma GCC unroll 8
        for (int j = i + 1; j < N; ++j) y[i] -= u[i][j] * y[j];
        y[i] /= u[i][i];
      }
#pragma GCC unroll 8
      for (int i = 0; i < N; ++i) vstore(yb[i], y[i]);
      for (int l = 0; l < W; ++l)
#pragma GCC unroll 8
        for (int i = 0; i < N; ++i) xm[l * N * k + i * k + c] = yb[i][l];
    }
  }
  factor_solve_fixed<T, N>(a, b, x, info, m, m1, k, false, false);
}

// One matrix (n > OC_LU_FUSED_MAX_N, no broadcast): factored into a padded working copy and solved
// from it, the factors never copied out (nor given fresh scratch: at n = 1024 float the copy and the
// scratch's page faults were ~5% of a direct call). false: no memory for the working copy.
template <class T>
static bool factor_solve_one(const T* a, const T* b, T* x, int32_t* info, int64_t n, int64_t k, bool rows,
                             bool trans, oc_parallel par) {
  const int64_t ld = n > kSmall ? padded_stride<T>(n) : n;
  const size_t elems = (size_t)(ld * n);
  const LuScratch scratch(elems * sizeof(T) + (size_t)n * sizeof(int32_t), true);
  T* w = scratch.get<T>();
  if (w == nullptr) return false;
  int32_t* piv = (int32_t*)(w + elems);
  *info = 0;
  if (n > kSmall) {
    factor_large(a, (T*)nullptr, piv, info, n, false, w, par, kMaxInnerTasks);
  } else {
    load_matrix(a, w, n, false);
    factor_one(w, n, piv, info);
  }
  solve(w, ld, piv, b, x, (const int64_t*)nullptr, (const int64_t*)nullptr, 1, n, k, rows, trans, par);
  return true;
}

template <class T>
int factor_solve(const T* a, const T* b, T* x, int32_t* info, int64_t count, int64_t n, int64_t k, bool rows,
                 bool trans, oc_parallel par) {
  if (n > OC_LU_FUSED_MAX_N)  // a single matrix (lu.h)
    return factor_solve_one(a, b, x, info, n, k, rows, trans, par) ? 0 : OC_OUT_OF_MEMORY;
  const int64_t nt = num_tasks(count, (double)n * n * (n + k), 1 << 15, 1024);
  auto task = [&](size_t t) {
    int64_t m0, m1;
    split_range(count, nt, (int64_t)t, m0, m1);
    switch (n) {
#define OC_SMALL(s)                                                           \
  case s:                                                                     \
    if (rows)                                                                 \
      factor_solve_fixed<T, s>(a, b, x, info, m0, m1, k, rows, trans);        \
    else                                                                      \
      factor_solve_lanes<T, s>(a, b, x, info, m0, m1, k);                     \
    break;
      OC_SMALL(1) OC_SMALL(2) OC_SMALL(3) OC_SMALL(4) OC_SMALL(5) OC_SMALL(6) OC_SMALL(7) OC_SMALL(8)
#undef OC_SMALL
      default: break;
    }
  };
  parallel_for(par, (size_t)nt, task);
  return 0;
}

// x = m 2^e with m in [1/2, 1), e added to *e: inline for normal numbers (libc's frexp, a call per
// pivot, was a fifth of a batched 3x3 slogdet), libc's for 0, subnormals, inf and NaN.
static OC_ALWAYS_INLINE double split_exp(double x, int64_t* e) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  const uint64_t ex = (u >> 52) & 0x7ff;
  if (__builtin_expect(ex == 0 || ex == 0x7ff, 0)) {
    int k = 0;
    x = frexp(x, &k);
    *e += k;
    return x;
  }
  *e += (int64_t)ex - 1022;
  u = (u & ~(0x7ffULL << 52)) | (1022ULL << 52);
  memcpy(&x, &u, sizeof x);
  return x;
}

// The parity of a factorization's row swaps (1: odd).
static OC_ALWAYS_INLINE int swap_parity(const int32_t* piv, int64_t n) {
  int odd = 0;
  for (int64_t i = 0; i < n; ++i) odd ^= (int)(piv[i] != i);
  return odd;
}

// sign and log|det| of one factored matrix, from U's diagonal (stride apart) and the swaps' parity:
// one log (the product of |U's diagonal| kept as a mantissa and a binary exponent, so that it can
// neither overflow nor underflow).
template <class T>
static OC_ALWAYS_INLINE void determinant(const T* f, int64_t stride, int64_t n, int odd, T* sign, T* logabs) {
  // the sign by parity, no branch on it (random signs mispredicted a third of a 3x3's time)
  int neg = odd, zero = 0;  // zero: a 0 or NaN pivot (sign 0, as torch's)
  double mant = 1.0;
  int64_t exp2 = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T d = f[i * stride];
    neg ^= (int)(d < T(0));
    zero |= (int)!((d > T(0)) | (d < T(0)));
    mant *= split_exp(fabs((double)d), &exp2);  // 0, inf and NaN pass through the mantissa
    if ((i & 31) == 31) mant = split_exp(mant, &exp2);
  }
  if (sign) *sign = zero ? T(0) : neg ? T(-1) : T(1);
  mant = split_exp(mant, &exp2);  // then into [sqrt(1/2), sqrt(2)): a power of two's log is exp2 ln 2 alone
  const bool low = mant < 0.70710678118654752440;  // (log(1/2) + ln 2 left the identity's log|det| at
  mant = low ? mant * 2.0 : mant;                  // -1e-16, torch's is 0)
  exp2 -= (int64_t)low;
  if (logabs) *logabs = (T)(log(mant) + (double)exp2 * 0.69314718055994530942);
}

// Matrices [m0, m1) of n = N: A^T loaded, factored and its determinant read
// off while in registers and L1, the factors never stored.
template <class T, int N>
static void slogdet_fixed(const T* a, T* sign, T* logabs, int64_t m0, int64_t m1) {
  T w[N * N];
  int32_t p[N];
  for (int64_t m = m0; m < m1; ++m) {
    load_matrix(a + m * N * N, w, N, true);
    int32_t info = 0;
    factor_fixed<T, N>(w, p, &info);
    determinant(w, N + 1, N, swap_parity(p, N), sign ? sign + m : nullptr, logabs ? logabs + m : nullptr);
  }
}

// As slogdet_fixed, W matrices at a time, matrix l in lane l of every vector (an 8x8 has too little
// work for vectors inside it): A^T's LU by lane-wise selects, with factor_fixed's pivot choice and
// zero-pivot rule, reduced to what the determinant needs (U's rows from the pivot column on; L is
// neither kept nor swapped). The rest of [m0, m1) (< W matrices) goes to slogdet_fixed.
template <class T, int N>
static void slogdet_lanes(const T* a, T* sign, T* logabs, int64_t m0, int64_t m1) {
  enum { W = Vec<T>::W };
  typedef typename Vec<T>::type V;
  const V zero{};
  int64_t m = m0;
  for (; m + W <= m1; m += W) {
    V u[N][N];  // A^T: u[r][c] = A[c][r]
    load_lanes<T, N>(a + m * N * N, u, true);
    V odd = zero;  // 1 in the lanes whose swaps so far were odd
#pragma GCC unroll 8
    for (int j = 0; j < N; ++j) {
      const V p = lane_pivot<T, N>(u, j);
#pragma GCC unroll 8
      for (int i = j + 1; i < N; ++i) {
        const auto sw = p == zero + T(i);
#pragma GCC unroll 8
        for (int c = j; c < N; ++c) {
          const V t = u[j][c];
          u[j][c] = sw ? u[i][c] : t;
          u[i][c] = sw ? t : u[i][c];
        }
      }
      odd = p != zero + T(j) ? T(1) - odd : odd;
      const V d = u[j][j];
      const auto dz = d == zero;  // as getrf: no update (l = 0)
#pragma GCC unroll 8
      for (int i = j + 1; i < N; ++i) {
        const V l = dz ? zero : u[i][j] / d;
#pragma GCC unroll 8
        for (int c = j + 1; c < N; ++c) u[i][c] -= l * u[j][c];
      }
    }
    T diag[N][W], par[W];
#pragma GCC unroll 8
    for (int i = 0; i < N; ++i) vstore(diag[i], u[i][i]);
    vstore(par, odd);
    for (int l = 0; l < W; ++l)
      determinant(&diag[0][l], W, N, (int)(par[l] != T(0)), sign ? sign + m + l : nullptr,
                  logabs ? logabs + m + l : nullptr);
  }
  slogdet_fixed<T, N>(a, sign, logabs, m, m1);
}

// det(A) = det(A^T), and A^T's factors need no transposition: the column-major working copy of A^T
// is a straight copy of row-major A (the transposition was 8% of a float64 slogdet at n = 1024, 1
// thread). As torch's slogdet (which factors A^T too): two equal columns give an exact zero pivot
// (sign 0), two equal rows in general a tiny one; Solve factors A itself, as torch's solve.
template <class T>
void slogdet(const T* a, T* lu, int32_t* piv, int32_t* info, T* sign, T* logabs, int64_t count, int64_t n,
             oc_parallel par) {
  const bool fused = n <= OC_LU_FUSED_MAX_N;
  if (!fused)  // the factors first (parallel inside large matrices), then a pass for the determinants
    factor(a, lu, piv, info, count, n, true, par, true);
  const int64_t nt = num_tasks(count, (double)n * n * n, 1 << 15, 1024);
  auto task = [&](size_t t) {
    int64_t m0, m1;
    split_range(count, nt, (int64_t)t, m0, m1);
    switch (fused ? n : 0) {
#define OC_SMALL(s)                                       \
  case s:                                                 \
    slogdet_lanes<T, s>(a, sign, logabs, m0, m1);         \
    return;
      OC_SMALL(1) OC_SMALL(2) OC_SMALL(3) OC_SMALL(4) OC_SMALL(5) OC_SMALL(6) OC_SMALL(7) OC_SMALL(8)
#undef OC_SMALL
      default:
        break;
    }
    // U's diagonal: n + 1 apart in full factors, contiguous from factor's diag_only (n > kSmall)
    for (int64_t m = m0; m < m1; ++m)
      determinant(lu + m * n * n, n <= kSmall ? n + 1 : 1, n, swap_parity(piv + m * n, n),
                  sign ? sign + m : nullptr, logabs ? logabs + m : nullptr);
  };
  parallel_for(par, (size_t)nt, task);
}

#endif  // OC_ISA_PASS
