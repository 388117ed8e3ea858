// Triangular solves (torch.linalg.solve_triangular) as blocked trsm on the operands as they lie:
// a row-major matrix read column-major is its transpose, so with F = A^T (A's memory, column-major)
//   A X = B  <=>  X^T F = B^T  with X^T column-major = X's memory (rows of X as columns),
//   X A = B  <=>  F X^T = B^T  with X^T column-major = X's memory,
// a right-side or left-side column-major trsm with F lower where A is upper (trsm.inc: recursive,
// nearly all flops in the product of column_major.inc). No copy but B into X. The left case's
// chunk of X's columns is a block of rows of X^T; the right case's chunk of X's rows, of columns.
// The left case's chunks of one matrix may share F's blocks packed once (pack; else each product
// packs its own). Fewer than kFewCols right-hand sides: plain substitution on each, the tiles would be mostly
// empty (A X = B: rows of X less A's rows' entries times the solved rows, as dot products of A's rows with
// the solved rows packed a few rows per vector where w fills at most half a vector, else rows of X as
// vectors; X A = B: axpys along A's rows).
//
// Compiled once per instruction set (isa_passes.inc, as inverse.cpp).

#ifndef OC_ISA_PASS

#include <stdlib.h>
#include <string.h>

#include "parallel.h"
#include "solve_triangular.h"

#if defined(__SSE2__)
#include <immintrin.h>  // the AVX-512 pass's masked loads and stores (column_major.inc)
#endif

namespace oc {
#define OC_ISA_PASS_FILE "solve_triangular.cpp"
#define OC_ISA_PASS_NS trsm
#include "isa_passes.inc"  // oc::trsm_base, _avx2, _avx512
}  // namespace oc

void oc_solve_triangular_f32(const float* a, const float* b, float* x, int64_t n, int64_t k, int64_t c0, int64_t c1,
                             bool left, bool upper, bool unit, const float* packed) {
  OC_ISA_CALL(oc::trsm, solve<float>, a, b, x, n, k, c0, c1, left, upper, unit, packed);
}
void oc_solve_triangular_f64(const double* a, const double* b, double* x, int64_t n, int64_t k, int64_t c0,
                             int64_t c1, bool left, bool upper, bool unit, const double* packed) {
  OC_ISA_CALL(oc::trsm, solve<double>, a, b, x, n, k, c0, c1, left, upper, unit, packed);
}
int64_t oc_solve_triangular_packed_size(int64_t n, bool upper) {
  return OC_ISA_CALL(oc::trsm, packed_size, n, upper);
}
void oc_solve_triangular_pack_f32(const float* a, int64_t n, bool upper, float* packed) {
  OC_ISA_CALL(oc::trsm, pack<float>, a, n, upper, packed);
}
void oc_solve_triangular_pack_f64(const double* a, int64_t n, bool upper, double* packed) {
  OC_ISA_CALL(oc::trsm, pack<double>, a, n, upper, packed);
}

#else  // OC_ISA_PASS: the per-instruction-set body, included inside a namespace

#include "simd.inc"
#include "column_major.inc"  // gemm_sub_at, axpy_fms
#include "trsm.inc"          // tri_left, tri_right

enum : int64_t {
  kMaxCols = 128,  // right-hand sides per left-side solve (a multiple of every pass's vector)
  kFewCols = 16,   // fewer right-hand sides than this: substitution on each
};

// The rows [r0, r0 + g) of a group (g <= G) in the solve's order, each from its right-hand side (b's
// rows, k apart), acc (its terms of the rows solved before the group) and the group's rows solved
// before it (from registers, not reloaded from their masked stores), into X's rows; solved(i, x_i)
// after each.
template <class T, int G, class F>
static OC_ALWAYS_INLINE void solve_group(const T* const* ar, int64_t r0, int g, bool upper, bool unit,
                                         const typename Vec<T>::type* acc, const T* b, T* x, int64_t k, int w,
                                         const F& solved) {
  typename Vec<T>::type sol[G];
  for (int q = 0; q < g; ++q) {
    const int r = upper ? g - 1 - q : q;
    const int64_t i = r0 + r;
    auto xi = vload_part(b + i * k, w) - acc[r];
    if (upper)
      for (int p = r + 1; p < g; ++p) xi -= ar[r][r0 + p] * sol[p];
    else
      for (int p = 0; p < r; ++p) xi -= ar[r][r0 + p] * sol[p];
    if (!unit) xi /= ar[r][i];
    sol[r] = xi;
    vstore_part(x + i * k, xi, w);
    solved(i, xi);
  }
}

// A X = B for w < kFewCols columns of X (rows k apart, holding B's) by substitution on rows of
// X, each one vector of w lanes: x_i = (b_i - sum_j a_ij x_j) / a_ii. Four rows at a time: the
// solved rows' terms first (each solved row loaded once for the four: independent chains), then
// the four in turn with the terms among them.
template <class T>
static void rows_by_vectors(const T* a, T* x, int64_t n, int64_t k, int w, bool upper, bool unit) {
  typedef typename Vec<T>::type V;
  enum { G = 4 };
  for (int64_t q0 = 0; q0 < n; q0 += G) {
    const int g = (int)(n - q0 < (int64_t)G ? n - q0 : (int64_t)G);
    const int64_t r0 = upper ? n - q0 - g : q0;  // the group's rows [r0, r0 + g)
    const int64_t j0 = upper ? r0 + g : 0, j1 = upper ? n : r0;  // the rows solved before them
    const T* ar[G];
#pragma GCC unroll 4
    for (int r = 0; r < G; ++r) ar[r] = a + (r0 + (r < g ? r : 0)) * n;
    const T *a0 = ar[0], *a1 = ar[1], *a2 = ar[2], *a3 = ar[3];
    V s0 = {}, s1 = {}, s2 = {}, s3 = {};  // named, so that they stay in registers
    for (int64_t j = j0; j < j1; ++j) {
      const V xj = vload_part(x + j * k, w);
      s0 += a0[j] * xj;
      s1 += a1[j] * xj;
      s2 += a2[j] * xj;
      s3 += a3[j] * xj;
    }
    const V acc[G] = {s0, s1, s2, s3};
    solve_group<T, G>(ar, r0, g, upper, unit, acc, x, x, k, w, [](int64_t, const V&) {});
  }
}

// rows_by_vectors' job for w <= W / 2 columns, where its vectors would be mostly empty (and its
// chains latency-bound: 1 cycle a term at n = 256, 4 columns): the solved rows' terms as dot
// products, a vector holding J = W / R solved rows of R >= w columns (w rounded up to a power of
// two; lane c J + t: column c of the block's row t), times A's row entries for those J rows
// repeated R times: J R terms per multiply-add. The solved rows go into xp (zeroed, whole blocks
// of J rows in the solve's order: rows 0, 1, .. for lower, n - 1, n - 2, .. for upper, each block's
// rows ascending) as they are solved; the terms of the last partial block and of the group's own
// rows as rows_by_vectors takes them. Each sum's order is fixed: no result depends on the threads.
template <class T, int R>
static void rows_by_dots(const T* a, const T* bx, T* x, int64_t n, int64_t k, int w, bool upper, bool unit, T* xp) {
  typedef typename Vec<T>::type V;
  typedef decltype(V{} > V{}) M;
  enum { W = Vec<T>::W, J = W / R, G = 4 };
  static_assert(J >= 2, "rows_by_dots: fewer than two rows per vector");
  M rep, pick;  // lane l takes A's entry l % J; lane c takes the sum of segment c (lane c J)
  for (int l = 0; l < W; ++l) {
    rep[l] = l % J;
    pick[l] = (l % R) * J;
  }
  for (int64_t q0 = 0; q0 < n; q0 += G) {
    const int g = (int)(n - q0 < (int64_t)G ? n - q0 : (int64_t)G);
    const int64_t r0 = upper ? n - q0 - g : q0;  // the group's rows [r0, r0 + g)
    const T* ar[G];
#pragma GCC unroll 4
    for (int r = 0; r < G; ++r) ar[r] = a + (r0 + (r < g ? r : 0)) * n;
    const int64_t blocks = q0 / J;  // whole blocks of solved rows
    V e0 = {}, e1 = {}, e2 = {}, e3 = {}, o0 = {}, o1 = {}, o2 = {}, o3 = {};  // even and odd blocks' sums
    auto coef = [&](const T* p) { return R == 1 ? vload<V>(p) : __builtin_shuffle(vload_part(p, J), rep); };
    int64_t b = 0;
    for (; b + 2 <= blocks; b += 2) {
      const int64_t base0 = upper ? n - J * (b + 1) : J * b, base1 = upper ? base0 - J : base0 + J;
      const V x0 = vload<V>(xp + b * W), x1 = vload<V>(xp + (b + 1) * W);
      e0 += coef(ar[0] + base0) * x0;
      e1 += coef(ar[1] + base0) * x0;
      e2 += coef(ar[2] + base0) * x0;
      e3 += coef(ar[3] + base0) * x0;
      o0 += coef(ar[0] + base1) * x1;
      o1 += coef(ar[1] + base1) * x1;
      o2 += coef(ar[2] + base1) * x1;
      o3 += coef(ar[3] + base1) * x1;
    }
    if (b < blocks) {
      const int64_t base0 = upper ? n - J * (b + 1) : J * b;
      const V x0 = vload<V>(xp + b * W);
      e0 += coef(ar[0] + base0) * x0;
      e1 += coef(ar[1] + base0) * x0;
      e2 += coef(ar[2] + base0) * x0;
      e3 += coef(ar[3] + base0) * x0;
    }
    V acc[G] = {e0 + o0, e1 + o1, e2 + o2, e3 + o3};
#pragma GCC unroll 4
    for (int r = 0; r < G; ++r) {  // each segment's J lanes summed into its first, then lane c <- segment c
      V v = acc[r];
      for (int h = J / 2; h >= 1; h /= 2) {
        M flip;
        for (int l = 0; l < W; ++l) flip[l] = l ^ h;
        v += __builtin_shuffle(v, flip);
      }
      acc[r] = __builtin_shuffle(v, pick);
    }
    // the solved rows past the whole blocks (fewer than J), one vector of w lanes each
    for (int64_t p = blocks * J; p < q0; ++p) {
      const int64_t j = upper ? n - 1 - p : p;
      const V xj = vload_part(x + j * k, w);
#pragma GCC unroll 4
      for (int r = 0; r < G; ++r) acc[r] += ar[r][j] * xj;
    }
    solve_group<T, G>(ar, r0, g, upper, unit, acc, bx, x, k, w, [&](int64_t i, const V& xi) {
      const int64_t pos = upper ? n - 1 - i : i, t = upper ? J - 1 - pos % J : pos % J;
      T* slot = xp + (pos / J) * W + t;
      for (int c = 0; c < w; ++c) slot[c * J] = xi[c];
    });
  }
}

// The columns per vector rows_by_dots takes w columns in (0: rows_by_vectors).
template <class T>
static int dots_r(int w) {
  const int r = w <= 1 ? 1 : w <= 2 ? 2 : w <= 4 ? 4 : w <= 8 ? 8 : 16;
  return r <= Vec<T>::W / 2 ? r : 0;
}

// A X = B for w < kFewCols columns (B's rows at bx, X's at x, k apart; they may be one): rows_by_dots
// where it applies (xp on the stack up to kDotsStack elements, else from the heap; each row of B read
// where it lies: a load of a row just copied waited for the copy's stores), else rows_by_vectors on X
// holding B.
template <class T>
static void rows_few(const T* a, const T* bx, T* x, int64_t n, int64_t k, int w, bool upper, bool unit) {
  enum : int64_t { kDotsStack = 4096 };
  const int r = dots_r<T>(w);
  const int64_t elems = div_up(n, Vec<T>::W / (r ? r : 1)) * Vec<T>::W;
  alignas(64) T stack[kDotsStack];
  T* xp = r == 0 ? nullptr : elems <= kDotsStack ? stack : (T*)malloc((size_t)elems * sizeof(T));
  if (xp == nullptr) {
    if (x != bx)
      for (int64_t i = 0; i < n; ++i) memcpy(x + i * k, bx + i * k, (size_t)w * sizeof(T));
    return rows_by_vectors(a, x, n, k, w, upper, unit);
  }
  memset(xp, 0, (size_t)elems * sizeof(T));
  enum { H = Vec<T>::W / 2 };  // (dots_r never gives more: the min()s only keep every instantiation legal)
  switch (r) {
    case 1: rows_by_dots<T, 1>(a, bx, x, n, k, w, upper, unit, xp); break;
    case 2: rows_by_dots<T, (2 < H ? 2 : H)>(a, bx, x, n, k, w, upper, unit, xp); break;
    case 4: rows_by_dots<T, (4 < H ? 4 : H)>(a, bx, x, n, k, w, upper, unit, xp); break;
    default: rows_by_dots<T, (8 < H ? 8 : H)>(a, bx, x, n, k, w, upper, unit, xp); break;
  }
  if (xp != stack) free(xp);
}

// X A = B for one row x of X (holding B's) by substitution: once x_i is known, the entries still
// to solve lose x_i times A's row i (an axpy along it).
template <class T>
static void row_by_axpys(const T* a, T* x, int64_t n, bool upper, bool unit) {
  for (int64_t q = 0; q < n; ++q) {
    const int64_t i = upper ? q : n - 1 - q;  // x A = b: x_i needs the x_j that come after it in A's column
    if (!unit) x[i] /= a[i * n + i];
    if (upper)
      axpy_fms(x + i + 1, a + i * n + i + 1, x[i], n - 1 - i);
    else
      axpy_fms(x, a + i * n, x[i], i);
  }
}

// A X = B's F (A^T, lower where A is upper) packed for its blocked solve, shared by its column chunks.
inline int64_t packed_size(int64_t n, bool upper) { return tri_right_packed_size(0, n, !upper); }

template <class T>
void pack(const T* a, int64_t n, bool upper, T* packed) {
  tri_right_pack(a, n, 0, n, !upper, packed);
}

template <class T>
void solve(const T* a, const T* b, T* x, int64_t n, int64_t k, int64_t c0, int64_t c1, bool left, bool upper,
           bool unit, const T* packed) {
  const int64_t w = c1 - c0;
  if (w < kFewCols) {  // a few right-hand sides: substitution on each (the blocked solve's tiles would be mostly empty)
    if (left) {
      for (int64_t c = c0; c < c1; c += Vec<T>::W)
        rows_few(a, b + c, x + c, n, k, (int)(c1 - c < (int64_t)Vec<T>::W ? c1 - c : (int64_t)Vec<T>::W), upper, unit);
    } else {
      if (x != b) memcpy(x + c0 * n, b + c0 * n, (size_t)(w * n) * sizeof(T));
      for (int64_t r = c0; r < c1; ++r) row_by_axpys(a, x + r * n, n, upper, unit);
    }
    return;
  }
  if (left) {  // X^T F = B^T: X^T's rows [c0, c1) (ld k), F = A^T upper where A is lower
    if (x != b)
      for (int64_t i = 0; i < n; ++i) memcpy(x + i * k + c0, b + i * k + c0, (size_t)w * sizeof(T));
    tri_right(a, n, 0, n, !upper, unit, x + c0, k, w, packed ? &packed : nullptr);
    return;
  }
  // F X^T = B^T: X^T's columns [c0, c1) (ld n), F = A^T lower where A is upper; kMaxCols at a time
  // (the leaves' rows on the stack)
  if (x != b) memcpy(x + c0 * n, b + c0 * n, (size_t)(w * n) * sizeof(T));
  alignas(64) T t[kTriLeaf * kMaxCols];
  for (int64_t r = c0; r < c1; r += kMaxCols) {
    const int64_t m = c1 - r < kMaxCols ? c1 - r : kMaxCols;
    tri_left(a, n, 0, n, upper, unit, x + r * n, n, m, t, tri_left_wp<T>(m));
  }
}

#endif  // OC_ISA_PASS
