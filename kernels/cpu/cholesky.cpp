// Batched Cholesky factorization, A = L L^T, in a row-major working copy W (lower triangle).
//
// Crout order by blocks of kBlock columns [c0, c1): first every row i >= c0 of those columns gets
// the contribution of the columns already factored, W[i][j] -= <W[i, :c0], W[j, :c0]> (the bulk of
// the n^3/3 flops: 4 x 4 tiles of dot products over SIMD vectors, rows split across tasks); then the
// diagonal block is factored row by row, then every row below it solves against that block (rows
// split across tasks). Every inner loop is a dot product of two contiguous row segments. The first
// diagonal value that is not > 0 (NaN included) stops the factorization: info = its 1-based order.
// n <= 16: the same steps with n known at compile time, on the stack, many matrices per task.
//
// Compiled once per instruction set (isa_passes.inc, as inverse.cpp).

#ifndef OC_ISA_PASS

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>

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

enum : int64_t { kBlock = 64, kTile = 4, kMaxInnerTasks = 64, kSmall = 16 };

// <x[0:len], y[0:len]>
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
  T s = hsum<T>(a0 + a1);
  for (; k < len; ++k) s += x[k] * y[k];
  return s;
}

// Rows [r0, r1) of the columns [c0, c1) (r0 >= c0): the solve against the factored diagonal block
// (rows < c1 of it must be final). Returns the 1-based order of a failed diagonal, or 0.
template <class T>
static int64_t solve_rows(T* w, int64_t lda, int64_t c0, int64_t c1, int64_t r0, int64_t r1) {
  for (int64_t i = r0; i < r1; ++i) {
    T* wi = w + i * lda;
    const int64_t jend = i + 1 < c1 ? i + 1 : c1;
    for (int64_t j = c0; j < jend; ++j) {
      const T* wj = w + j * lda;
      const T s = wi[j] - dot(wi + c0, wj + c0, j - c0);
      if (j == i) {
        if (!(s > T(0))) {
          wi[j] = s;
          return i + 1;
        }
        wi[j] = (T)sqrt(s);
      } else {
        wi[j] = s / wj[j];
      }
    }
  }
  return 0;
}

// W[i][j] -= <W[i, :c0], W[j, :c0]> for rows i in [r0, r1), columns j in [c0, c1), j <= i + 3 (a
// few entries above the diagonal get updated too: never read).
template <class T>
static void update_rows(T* w, int64_t lda, int64_t c0, int64_t c1, int64_t r0, int64_t r1) {
  typedef typename Vec<T>::type V;
  enum { W = Vec<T>::W };
  for (int64_t i0 = r0; i0 < r1; i0 += kTile) {
    const int mr = (int)(r1 - i0 < kTile ? r1 - i0 : kTile);
    const int64_t jend = i0 + mr < c1 ? i0 + mr : c1;
    for (int64_t j0 = c0; j0 < jend; j0 += kTile) {
      const int mc = (int)(jend - j0 < kTile ? jend - j0 : kTile);
      const T* xi[kTile];
      const T* yj[kTile];
      for (int r = 0; r < kTile; ++r) xi[r] = w + (i0 + (r < mr ? r : 0)) * lda;
      for (int c = 0; c < kTile; ++c) yj[c] = w + (j0 + (c < mc ? c : 0)) * lda;
      V acc[kTile][kTile];
#pragma GCC unroll 4
      for (int r = 0; r < kTile; ++r)
#pragma GCC unroll 4
        for (int c = 0; c < kTile; ++c) acc[r][c] = V{};
      int64_t k = 0;
      for (; k + W <= c0; k += W) {
        V x[kTile], y[kTile];
#pragma GCC unroll 4
        for (int r = 0; r < kTile; ++r) x[r] = vload<V>(xi[r] + k);
#pragma GCC unroll 4
        for (int c = 0; c < kTile; ++c) y[c] = vload<V>(yj[c] + k);
#pragma GCC unroll 4
        for (int r = 0; r < kTile; ++r)
#pragma GCC unroll 4
          for (int c = 0; c < kTile; ++c) acc[r][c] += x[r] * y[c];
      }
      for (int r = 0; r < mr; ++r)
        for (int c = 0; c < mc; ++c) {
          T s = hsum<T>(acc[r][c]);
          for (int64_t kk = k; kk < c0; ++kk) s += xi[r][kk] * yj[c][kk];
          w[(i0 + r) * lda + j0 + c] -= s;
        }
    }
  }
}

// Factors W (n x n, rows lda apart) in place; returns info.
template <class T>
static int64_t factor(T* w, int64_t n, int64_t lda, const oc_parallel& par) {
  for (int64_t c0 = 0; c0 < n; c0 += kBlock) {
    const int64_t c1 = n - c0 < kBlock ? n : c0 + kBlock;
    const int64_t rows = n - c0;
    if (c0 > 0) {
      const int64_t tiles = div_up(rows, kTile);
      const int64_t nt = num_tasks(tiles, 2.0 * kTile * (double)(c1 - c0) * c0, 1 << 18, kMaxInnerTasks);
      auto task = [&](size_t t) {
        int64_t b, e;
        split_range(tiles, nt, (int64_t)t, b, e);
        update_rows(w, lda, c0, c1, c0 + b * kTile, c0 + e * kTile < n ? c0 + e * kTile : n);
      };
      parallel_for(par, (size_t)nt, task);
    }
    if (int64_t bad = solve_rows(w, lda, c0, c1, c0, c1)) return bad;
    const int64_t below = n - c1;
    if (below > 0) {
      const int64_t nt = num_tasks(below, (double)(c1 - c0) * (c1 - c0), 1 << 17, kMaxInnerTasks);
      auto task = [&](size_t t) {
        int64_t b, e;
        split_range(below, nt, (int64_t)t, b, e);
        solve_rows(w, lda, c0, c1, c1 + b, c1 + e);  // below the diagonal: no diagonal to fail
      };
      parallel_for(par, (size_t)nt, task);
    }
  }
  return 0;
}

// Load the triangle read (upper: the transpose's lower), factor, store with zeros elsewhere.
template <class T>
static int32_t one(const T* a, T* l, T* w, int64_t n, int64_t lda, bool upper,
                   const oc_parallel& par) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) w[i * lda + j] = upper ? a[j * n + i] : a[i * n + j];
  const int64_t info = factor(w, n, lda, par);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const T v = j <= i ? w[i * lda + j] : T(0);
      (upper ? l[j * n + i] : l[i * n + j]) = v;
    }
  return (int32_t)info;
}

template <class T>
static int64_t padded_stride(int64_t n) {
  const int64_t line = 64 / (int64_t)sizeof(T);
  return (div_up(n, line) | 1) * line;  // an odd number of cache lines: no set conflicts
}

template <class T, int N>
static void small_range(const T* a, T* l, int32_t* info, int64_t b0, int64_t b1, bool upper) {
  alignas(64) T w[N * N];
  for (int64_t b = b0; b < b1; ++b)
    info[b] = one<T>(a + b * N * N, l + b * N * N, w, N, N, upper, oc_serial);
}

template <class T, int N>
static int small(const T* a, T* l, int32_t* info, int64_t batch, bool upper, const oc_parallel& par) {
  const int64_t nt = num_tasks(batch, (double)N * N * N / 3 + 4.0 * N * N, 1 << 17, 1024);
  auto task = [&](size_t t) {
    int64_t b0, b1;
    split_range(batch, nt, (int64_t)t, b0, b1);
    small_range<T, N>(a, l, info, b0, b1, upper);
  };
  parallel_for(par, (size_t)nt, task);
  return 0;
}

template <class T>
static int general(const T* a, T* l, int32_t* info, int64_t batch, int64_t n, bool upper,
                   const oc_parallel& par) {
  const int64_t lda = padded_stride<T>(n);
  const size_t bytes = (size_t)n * lda * sizeof(T) + 64;
  const int64_t nn = n * n;
  auto aligned = [](void* p) { return (T*)(((uintptr_t)p + 63) & ~(uintptr_t)63); };
  if (batch < 4) {  // parallelism inside each matrix
    void* buf = malloc(bytes);
    if (!buf) return OC_OUT_OF_MEMORY;
    for (int64_t b = 0; b < batch; ++b) info[b] = one<T>(a + b * nn, l + b * nn, aligned(buf), n, lda, upper, par);
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
      info[b] = one<T>(a + b * nn, l + b * nn, aligned(buf), n, lda, upper, oc_serial);
    free(buf);
  };
  parallel_for(par, (size_t)nt, task);
  return failed.load(std::memory_order_relaxed) ? OC_OUT_OF_MEMORY : 0;
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
