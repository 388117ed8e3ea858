// SolveTriangular on the CPU, as an ortcustom kernel (ortcustom/kernel.h): the blocked solves of
// solve_triangular.cpp, in tasks of (batch matrix, column chunk) pairs for A X = B, (batch matrix,
// row chunk) for X A = B, on the host's pool.

#include "../solve_triangular_op.h"
#include "parallel.h"
#include "runner.h"
#include "solve_triangular.h"

namespace {

using oc::detail::div_up;
using oc::detail::num_tasks;
using oc::detail::parallel_for;
using oc::detail::split_range;

constexpr int64_t kChunk = 128;  // columns of X per task (A X = B), rows (X A = B)

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
      if constexpr (std::is_same_v<T, float>)
        oc_solve_triangular_f32(A + oa * nn, B + ob * nk, X + m * nk, n, k, lo, hi, s.left, s.upper, s.unit);
      else
        oc_solve_triangular_f64(A + oa * nn, B + ob * nk, X + m * nk, n, k, lo, hi, s.left, s.upper, s.unit);
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
