// SolveTriangular on the CPU, as an ortcustom kernel (ortcustom/kernel.h): substitution by rows of
// X (A X = B: x_i = (b_i - sum_j a_ij x_j) / a_ii, each a vector of a chunk of B's columns) or,
// for X A = B, each row of X on its own (after x_i is known, the rest of the row loses x_i times
// row i of A). Every inner loop runs along a contiguous row. Tasks: (batch matrix, column chunk)
// pairs for A X = B, (batch matrix, row chunk) for X A = B, on the host's pool.
#include <string.h>

#include "../solve_triangular_op.h"
#include "parallel.h"
#include "runner.h"

namespace {

using oc::detail::div_up;
using oc::detail::num_tasks;
using oc::detail::parallel_for;
using oc::detail::split_range;

constexpr int64_t kChunk = 128;  // columns of X per task (A X = B), rows (X A = B)

// A X = B for columns [c0, c1) of X (n x k), B copied into X first.
template <class T>
void solve_left(const T* a, const T* b, T* x, int64_t n, int64_t k, int64_t c0, int64_t c1,
                bool upper, bool unit) {
  const int64_t w = c1 - c0;
  for (int64_t i = 0; i < n; ++i) memcpy(x + i * k + c0, b + i * k + c0, (size_t)w * sizeof(T));
  for (int64_t s = 0; s < n; ++s) {
    const int64_t i = upper ? n - 1 - s : s;
    T* OC_RESTRICT xi = x + i * k + c0;
    const T* ai = a + i * n;
    const int64_t j0 = upper ? i + 1 : 0, j1 = upper ? n : i;
    for (int64_t j = j0; j < j1; ++j) {
      const T f = ai[j];
      const T* OC_RESTRICT xj = x + j * k + c0;
      for (int64_t c = 0; c < w; ++c) xi[c] -= f * xj[c];
    }
    if (!unit) {
      const T d = ai[i];
      for (int64_t c = 0; c < w; ++c) xi[c] /= d;
    }
  }
}

// X A = B for rows [r0, r1) of X (k x n).
template <class T>
void solve_right(const T* a, const T* b, T* x, int64_t n, int64_t r0, int64_t r1, bool upper,
                 bool unit) {
  for (int64_t r = r0; r < r1; ++r) {
    T* OC_RESTRICT xr = x + r * n;
    memcpy(xr, b + r * n, (size_t)n * sizeof(T));
    for (int64_t s = 0; s < n; ++s) {
      const int64_t i = upper ? s : n - 1 - s;  // x A = b: x_i needs the x_j that come after it in A's column
      const T* OC_RESTRICT ai = a + i * n;
      if (!unit) xr[i] /= ai[i];
      const T v = xr[i];
      const int64_t j0 = upper ? i + 1 : 0, j1 = upper ? n : i;
      for (int64_t j = j0; j < j1; ++j) xr[j] -= v * ai[j];
    }
  }
}

template <class T>
void solve(const oc_ops::SolveTriangularArgs& s, const oc_parallel& par) {
  const T* A = static_cast<const T*>(s.a);
  const T* B = static_cast<const T*>(s.b);
  T* X = static_cast<T*>(s.x);
  const int64_t n = s.n, k = s.k, nn = n * n, nk = n * k;
  const int64_t chunks = div_up(k, kChunk);
  const int64_t units = s.batch.count * chunks;
  const int64_t nt = num_tasks(units, (double)nn * (k < kChunk ? k : kChunk), 1 << 17, 1024);
  auto task = [&](size_t t) {
    int64_t u0, u1;
    split_range(units, nt, (int64_t)t, u0, u1);
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t m = u / chunks, c = u % chunks;
      int64_t oa, ob;
      s.batch.offsets(m, &oa, &ob);
      const int64_t lo = c * kChunk, hi = lo + kChunk < k ? lo + kChunk : k;
      if (s.left)
        solve_left(A + oa * nn, B + ob * nk, X + m * nk, n, k, lo, hi, s.upper, s.unit);
      else
        solve_right(A + oa * nn, B + ob * nk, X + m * nk, n, lo, hi, s.upper, s.unit);
    }
  };
  parallel_for(par, (size_t)nt, task);
}

int solve_triangular_cpu(oc::Context& ctx) {
  using Spec = oc_ops::SolveTriangularSpec;
  oc_ops::SolveTriangularArgs s;
  if (int rc = oc_ops::solve_triangular_prepare(ctx, &s)) return rc;
  if (s.x == nullptr) return OC_OK;
  const oc_parallel par = oc_cpu::pool(ctx);
  return oc::dispatch<Spec::types::T>(ctx, ctx.input(Spec::in::A).dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
      solve<T>(s, par);
    else
      static_assert(oc::unhandled<T>, "SolveTriangular: a declared element type with no CPU kernel");
    return OC_OK;
  });
}

}  // namespace

OC_KERNEL(solve_triangular, cpu, oc_ops::SolveTriangularSpec::spec, solve_triangular_cpu)
