// Batched Cholesky factorization, A = L L^T.
//
// n > 16: recursive, as LAPACK's potrf2, on a column-major working copy W (column c at w + c * ld)
// whose lower triangle holds L: factor the left half's diagonal block A11 = L11 L11^T, solve the
// rows below it, L21 = A21 L11^-T (rows split across tasks; recursive on the columns too), take
// L21 L21^T off the lower triangle of A22 (columns split across tasks), factor A22. Nearly all
// flops are in the register-tiled product of column_major.inc (shared with solve's LU), which reads
// its right operand down columns: so each finished part of L is also mirrored above the diagonal
// (L^T, column-major), where the products read it, and L leaves as rows of that mirror (contiguous
// copies). Diagonal blocks of <= kLeaf columns: unblocked, right-looking down columns. Each element
// takes its updates one at a time in a fixed order (the product's contract): the results do not
// depend on the split across tasks (the thread count).
// n <= 16: a vector's width of matrices at a time, one per lane (the lower triangles transposed
// into a lane-interleaved copy), Crout by rows with vector square roots and divisions; padding
// lanes hold the identity, so every matrix goes through the same lane arithmetic, wherever it sits
// in the batch.
// The first diagonal value that is not > 0 (NaN included) stops a matrix's factorization: info is
// its 1-based order, L the partial factorization (as LAPACK's potrf).
//
// Compiled once per instruction set (isa_passes.inc, as inverse.cpp).

#ifndef OC_ISA_PASS

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>  // vector square roots (each pass's own width)
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

#include "cholesky.h"
#include "parallel.h"

namespace oc {
#define OC_ISA_PASS_FILE "cholesky.cpp"
#define OC_ISA_PASS_NS cholesky
#include "isa_passes.inc"  // oc::cholesky_base, _avx2, _avx512
}  // namespace oc

int oc_cholesky_f32(const float* a, float* l, int32_t* info, int64_t batch, int64_t n, bool upper,
                    oc_parallel par) {
  return OC_ISA_CALL(oc::cholesky, cholesky_f32, a, l, info, batch, n, upper, par);
}

int oc_cholesky_f64(const double* a, double* l, int32_t* info, int64_t batch, int64_t n,
                    bool upper, oc_parallel par) {
  return OC_ISA_CALL(oc::cholesky, cholesky_f64, a, l, info, batch, n, upper, par);
}

#else  // OC_ISA_PASS: the per-instruction-set body, included inside a namespace

#include "simd.inc"
#include "column_major.inc"  // gemm_sub, fms, transpose_copy, padded_stride

// kLeaf: widest unblocked diagonal block, also the alignment of the recursion's splits (a multiple
// of every pass's lanes); kRowUnit: rows per unit of the parallel solve; kTaskCols: columns per unit
// of the parallel update.
enum : int64_t { kLeaf = 16, kTrsmLeaf = 16, kRowUnit = 64, kTaskCols = 48, kMaxInnerTasks = 64,
                 kSmall = 16 };

// ---------------------------------------------------------------------------------------- n > 16

// The diagonal block [c0, c1) (<= kLeaf columns, earlier columns' terms already taken off),
// unblocked down its columns, then mirrored above the diagonal. Returns the 1-based order of a
// failed diagonal (left as it was, not > 0), or 0.
template <class T>
static int64_t leaf(T* w, int64_t ld, int64_t c0, int64_t c1) {
  for (int64_t j = c0; j < c1; ++j) {
    T* cj = w + j * ld;
    const T d = cj[j];
    if (!(d > T(0))) return j + 1;
    const T s = (T)sqrt(d), r = T(1) / s;
    cj[j] = s;
    for (int64_t i = j + 1; i < c1; ++i) cj[i] *= r;
    for (int64_t c = j + 1; c < c1; ++c) {
      T* cc = w + c * ld;
      const T f = cj[c];
      for (int64_t i = c; i < c1; ++i) cc[i] = fms(cc[i], f, cj[i]);
    }
  }
  for (int64_t j = c0; j < c1; ++j)
    for (int64_t i = j + 1; i < c1; ++i) w[i * ld + j] = w[j * ld + i];
  return 0;
}

// x[k * ld + 0:NV vectors] for k in [0, m): X := X L^-T, L given by its rows f (below the diagonal)
// and the reciprocals of its diagonal; each element takes its terms in order, then the product.
template <class T, int NV>
static OC_ALWAYS_INLINE void trsm_rows(T* x, int64_t ld, int64_t m, const T (*f)[kTrsmLeaf], const T* rinv) {
  typedef typename Vec<T>::type V;
  enum { W = Vec<T>::W };
  for (int64_t k = 0; k < m; ++k) {
    V acc[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[v] = vload<V>(x + k * ld + v * W);
    for (int64_t t = 0; t < k; ++t) {
      const T c = f[k][t];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[v] -= vload<V>(x + t * ld + v * W) * c;
    }
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) vstore(x + k * ld + v * W, acc[v] * rinv[k]);
  }
}

// trsm_right for k1 - k0 <= kTrsmLeaf: by rows, 4 vectors, 1 vector, then one at a time.
template <class T>
static void trsm_right_leaf(T* w, int64_t ld, int64_t r0, int64_t r1, int64_t k0, int64_t k1) {
  enum { W = Vec<T>::W };
  const int64_t m = k1 - k0;
  T f[kTrsmLeaf][kTrsmLeaf], rinv[kTrsmLeaf];
  for (int64_t k = 0; k < m; ++k) {
    rinv[k] = T(1) / w[(k0 + k) * ld + k0 + k];
    for (int64_t t = 0; t < k; ++t) f[k][t] = w[(k0 + t) * ld + k0 + k];
  }
  T* x = w + k0 * ld;
  int64_t i = r0;
  for (; i + 4 * W <= r1; i += 4 * W) trsm_rows<T, 4>(x + i, ld, m, f, rinv);
  for (; i + W <= r1; i += W) trsm_rows<T, 1>(x + i, ld, m, f, rinv);
  for (; i < r1; ++i) {
    T* xi = x + i;
    for (int64_t k = 0; k < m; ++k) {
      T s = xi[k * ld];
      for (int64_t t = 0; t < k; ++t) s = fms(s, f[k][t], xi[t * ld]);
      xi[k * ld] = s * rinv[k];
    }
  }
}

// Rows [r0, r1) of the columns [k0, k1): X := X L^-T, L the factored diagonal block [k0, k1) (its
// transpose mirrored above the diagonal, which the product reads). Recursive on the columns.
template <class T>
static void trsm_right(T* w, int64_t ld, int64_t r0, int64_t r1, int64_t k0, int64_t k1) {
  if (k1 - k0 <= kTrsmLeaf) return trsm_right_leaf(w, ld, r0, r1, k0, k1);
  const int64_t km = k0 + div_up((k1 - k0) / 2, kTrsmLeaf) * kTrsmLeaf;  // < k1
  trsm_right(w, ld, r0, r1, k0, km);
  gemm_sub(w, ld, r0, r1, km, k1, k0, km);  // X[:, km:k1] -= X[:, k0:km] L[km:k1, k0:km]^T
  trsm_right(w, ld, r0, r1, km, k1);
}

// dst[c * ldd + r] = src[r * lds + c] for r < rows, c < cols, by 8 x 8 tiles.
template <class T>
static void transpose_block(const T* src, int64_t lds, T* dst, int64_t ldd, int64_t rows, int64_t cols) {
  enum : int64_t { B = 8 };
  for (int64_t rb = 0; rb < rows; rb += B) {
    const int64_t rn = rows - rb < B ? rows - rb : B;
    for (int64_t cb = 0; cb < cols; cb += B) {
      const int64_t cn = cols - cb < B ? cols - cb : B;
      if (rn == B && cn == B) {
        T tile[B][B];
        for (int64_t r = 0; r < B; ++r) memcpy(tile[r], src + (rb + r) * lds + cb, sizeof tile[r]);
        for (int64_t c = 0; c < B; ++c) {
          T col[B];
          for (int64_t r = 0; r < B; ++r) col[r] = tile[r][c];
          memcpy(dst + (cb + c) * ldd + rb, col, sizeof col);
        }
      } else {
        for (int64_t c = cb; c < cb + cn; ++c)
          for (int64_t r = rb; r < rb + rn; ++r) dst[c * ldd + r] = src[r * lds + c];
      }
    }
  }
}

template <class T>
struct Ctx {
  T* w;
  int64_t ld;
  oc_parallel par;
  int64_t max_tasks;
};

// Factors the diagonal block [c0, c1) (earlier columns' terms already taken off it); returns info.
template <class T>
static int64_t factor_rec(const Ctx<T>& x, int64_t c0, int64_t c1) {
  const int64_t width = c1 - c0;
  if (width <= kLeaf) return leaf(x.w, x.ld, c0, c1);
  const int64_t mid = c0 + div_up(width / 2, kLeaf) * kLeaf;  // < c1 for width > kLeaf
  if (int64_t bad = factor_rec(x, c0, mid)) return bad;
  const int64_t n1 = mid - c0, m = c1 - mid;
  // L21 = A21 L11^-T, then mirrored (rows of L21 become columns above the diagonal)
  const int64_t row_units = div_up(m, kRowUnit);
  const int64_t nt = num_tasks(row_units, (double)kRowUnit * n1 * n1, 1 << 18, x.max_tasks);
  auto solve = [&](size_t t) {
    int64_t u0, u1;
    split_range(row_units, nt, (int64_t)t, u0, u1);
    const int64_t ra = mid + u0 * kRowUnit, rb = mid + u1 * kRowUnit < c1 ? mid + u1 * kRowUnit : c1;
    trsm_right(x.w, x.ld, ra, rb, c0, mid);
    transpose_block(x.w + c0 * x.ld + ra, x.ld, x.w + ra * x.ld + c0, x.ld, n1, rb - ra);
  };
  parallel_for(x.par, (size_t)nt, solve);
  // A22 -= L21 L21^T, lower triangle: units of kTaskCols columns dealt round-robin (the units on
  // the left have the most rows)
  const int64_t units = div_up(m, kTaskCols);
  const int64_t ut = num_tasks(units, (double)kTaskCols * n1 * (double)m, 1 << 18, x.max_tasks);
  auto update = [&](size_t t) {
    for (int64_t u = (int64_t)t; u < units; u += ut) {
      const int64_t j0 = mid + u * kTaskCols, j1 = j0 + kTaskCols < c1 ? j0 + kTaskCols : c1;
      gemm_sub<T, true>(x.w, x.ld, j0, c1, j0, j1, c0, mid);
    }
  };
  parallel_for(x.par, (size_t)ut, update);
  return factor_rec(x, mid, c1);
}

// One matrix: the triangle read into W's lower triangle (upper: a copied as is, W = A^T), factored,
// stored with zeros elsewhere: from the mirror (L's rows are W's columns above the diagonal) once
// complete, else (failed, lower) element by element from the partial L.
template <class T>
static int32_t one(const T* a, T* l, T* w, int64_t n, int64_t ld, bool upper, const oc_parallel& par,
                   int64_t max_tasks) {
  transpose_copy(a, n, w, ld, n, upper, par, max_tasks);
  const Ctx<T> x = {w, ld, par, max_tasks};
  const int64_t info = factor_rec(x, 0, n);
  if (info != 0 && !upper) {
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) l[i * n + j] = j <= i ? w[j * ld + i] : T(0);
    return (int32_t)info;
  }
  const int64_t nt = num_tasks(n, (double)n, 1 << 16, max_tasks);
  auto store = [&](size_t t) {
    int64_t i0, i1;
    split_range(n, nt, (int64_t)t, i0, i1);
    for (int64_t i = i0; i < i1; ++i) {
      T* row = l + i * n;
      const T* col = w + i * ld;
      if (upper) {  // U's row i: L's column i, below the diagonal
        memset(row, 0, (size_t)i * sizeof(T));
        memcpy(row + i, col + i, (size_t)(n - i) * sizeof(T));
      } else {  // L's row i: the mirror's column i, above the diagonal
        memcpy(row, col, (size_t)(i + 1) * sizeof(T));
        memset(row + i + 1, 0, (size_t)(n - i - 1) * sizeof(T));
      }
    }
  };
  parallel_for(par, (size_t)nt, store);
  return (int32_t)info;
}

template <class T>
static int general(const T* a, T* l, int32_t* info, int64_t batch, int64_t n, bool upper,
                   const oc_parallel& par) {
  const int64_t ld = padded_stride<T>(n);
  const size_t bytes = (size_t)n * ld * sizeof(T) + 64;
  const int64_t nn = n * n;
  auto aligned = [](void* p) { return (T*)(((uintptr_t)p + 63) & ~(uintptr_t)63); };
  if (batch < 4) {  // parallelism inside each matrix
    void* buf = malloc(bytes);
    if (!buf) return OC_OUT_OF_MEMORY;
    for (int64_t b = 0; b < batch; ++b)
      info[b] = one<T>(a + b * nn, l + b * nn, aligned(buf), n, ld, upper, par, kMaxInnerTasks);
    free(buf);
    return 0;
  }
  const int64_t nt = num_tasks(batch, (double)n * n * n / 3, 1 << 18, 1024);
  std::atomic<bool> failed{false};
  auto task = [&](size_t t) {
    int64_t b0, b1;
    split_range(batch, nt, (int64_t)t, b0, b1);
    void* buf = malloc(bytes);
    if (!buf) {
      failed.store(true, std::memory_order_relaxed);
      return;
    }
    for (int64_t b = b0; b < b1; ++b)
      info[b] = one<T>(a + b * nn, l + b * nn, aligned(buf), n, ld, upper, oc_serial, 1);
    free(buf);
  };
  parallel_for(par, (size_t)nt, task);
  return failed.load(std::memory_order_relaxed) ? OC_OUT_OF_MEMORY : 0;
}

// --------------------------------------------------------------------------------------- n <= 16

// The square root of each lane, correctly rounded (as the scalar sqrt).
template <class V>
static OC_ALWAYS_INLINE V vsqrt(V v) {
  constexpr bool f64 = sizeof(v[0]) == 8;
#if (defined(__x86_64__) || defined(__i386__)) && OC_VEC_BYTES == 64
  if constexpr (f64) return (V)_mm512_sqrt_pd((__m512d)v);
  else return (V)_mm512_sqrt_ps((__m512)v);
#elif (defined(__x86_64__) || defined(__i386__)) && OC_VEC_BYTES == 32
  if constexpr (f64) return (V)_mm256_sqrt_pd((__m256d)v);
  else return (V)_mm256_sqrt_ps((__m256)v);
#elif defined(__SSE2__) && OC_VEC_BYTES == 16
  if constexpr (f64) return (V)_mm_sqrt_pd((__m128d)v);
  else return (V)_mm_sqrt_ps((__m128)v);
#elif defined(__aarch64__) && OC_VEC_BYTES == 16
  if constexpr (f64) return (V)vsqrtq_f64((float64x2_t)v);
  else return (V)vsqrtq_f32((float32x4_t)v);
#else
  (void)f64;
  for (int i = 0; i < (int)(sizeof v / sizeof v[0]); ++i) v[i] = sqrt(v[i]);
  return v;
#endif
}

// count (<= W) matrices, one per lane of the vectors (the others: the identity). Crout by rows:
// L[i][j] = (A[i][j] - <L[i, :j], L[j, :j]>) / L[j][j], the diagonal's square root. A lane whose
// diagonal fails keeps its values from then on (the failed diagonal's value before the square
// root, the rows below unfactored: as the unblocked algorithm stops there).
template <class T, int N>
static OC_ALWAYS_INLINE void small_group(const T* a, T* l, int32_t* info, int count, bool upper) {
  typedef typename Vec<T>::type V;
  typedef decltype(V{} > V{}) M;  // integer lanes of T's width
  enum { W = Vec<T>::W, E = N * (N + 1) / 2 };
  alignas(64) T t[E][W];
  for (int b = 0; b < W; ++b) {
    const T* m = a + (int64_t)b * N * N;
    for (int i = 0, e = 0; i < N; ++i)
      for (int j = 0; j <= i; ++j, ++e)
        t[e][b] = b >= count ? T(i == j) : upper ? m[j * N + i] : m[i * N + j];
  }
  V v[E], rinv[N];
  for (int e = 0; e < E; ++e) v[e] = vload<V>(t[e]);
  M dead = M{}, first = M{};  // lanes stopped; their info
  for (int i = 0; i < N; ++i) {
    V* ri = v + i * (i + 1) / 2;
    for (int j = 0; j < i; ++j) {
      const V* rj = v + j * (j + 1) / 2;
      V s = ri[j];
      for (int k = 0; k < j; ++k) s -= ri[k] * rj[k];
      ri[j] = dead ? ri[j] : s * rinv[j];
    }
    V s = ri[i];
    for (int k = 0; k < i; ++k) s -= ri[k] * ri[k];
    const M ok = s > T(0);  // false for NaN
    const V d = vsqrt(s);
    ri[i] = dead ? ri[i] : ok ? d : s;
    rinv[i] = T(1) / d;
    first = dead | ok ? first : M{} + (i + 1);
    dead |= ~ok;
  }
  for (int e = 0; e < E; ++e) vstore(t[e], v[e]);
  for (int b = 0; b < count; ++b) {
    T* m = l + (int64_t)b * N * N;
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j)
        m[i * N + j] = upper ? (j >= i ? t[j * (j + 1) / 2 + i][b] : T(0))
                             : (j <= i ? t[i * (i + 1) / 2 + j][b] : T(0));
    info[b] = (int32_t)first[b];
  }
}

template <class T, int N>
static int small(const T* a, T* l, int32_t* info, int64_t batch, bool upper, const oc_parallel& par) {
  enum { W = Vec<T>::W };
  const int64_t groups = div_up(batch, W);
  const int64_t nt = num_tasks(groups, W * ((double)N * N * N / 3 + 4.0 * N * N), 1 << 17, 1024);
  auto task = [&](size_t t) {
    int64_t g0, g1;
    split_range(groups, nt, (int64_t)t, g0, g1);
    for (int64_t g = g0; g < g1; ++g) {
      const int64_t b = g * W, count = batch - b < (int64_t)W ? batch - b : (int64_t)W;
      small_group<T, N>(a + b * N * N, l + b * N * N, info + b, (int)count, upper);
    }
  };
  parallel_for(par, (size_t)nt, task);
  return 0;
}

template <class T>
static int dispatch(const T* a, T* l, int32_t* info, int64_t batch, int64_t n, bool upper,
                    const oc_parallel& par) {
  switch (n) {
#define OC_SMALL(k) \
  case k:           \
    return small<T, k>(a, l, info, batch, upper, par);
    OC_SMALL(1) OC_SMALL(2) OC_SMALL(3) OC_SMALL(4) OC_SMALL(5) OC_SMALL(6) OC_SMALL(7) OC_SMALL(8)
    OC_SMALL(9) OC_SMALL(10) OC_SMALL(11) OC_SMALL(12) OC_SMALL(13) OC_SMALL(14) OC_SMALL(15)
    OC_SMALL(16)
#undef OC_SMALL
    default: return general<T>(a, l, info, batch, n, upper, par);
  }
}

int cholesky_f32(const float* a, float* l, int32_t* info, int64_t batch, int64_t n, bool upper,
                 oc_parallel par) {
  return dispatch<float>(a, l, info, batch, n, upper, par);
}
int cholesky_f64(const double* a, double* l, int32_t* info, int64_t batch, int64_t n, bool upper,
                 oc_parallel par) {
  return dispatch<double>(a, l, info, batch, n, upper, par);
}

#endif  // OC_ISA_PASS
