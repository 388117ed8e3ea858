// SolveTriangular on the CPU, as an ortcustom kernel (ortcustom/kernel.h): the blocked solves of
// solve_triangular.cpp, in tasks of (batch matrix, column chunk) pairs for A X = B, (batch matrix,
// row chunk) for X A = B, on the host's pool; a large A X = B matrix by matrix, its A packed once
// for all its chunks (each chunk packing its own blocks cost 20% at 512 x 512).

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
constexpr int64_t kShareN = 128;  // A X = B from this n: A's blocks packed once per matrix for its chunks

template <class T>
void solve_chunk(const oc_ops::SolveTriangularArgs& s, int64_t m, int64_t c, const T* packed) {
  const int64_t n = s.n, k = s.k;
  int64_t oa, ob;
  s.batch.offsets(m, &oa, &ob);
  const int64_t lo = c * kChunk, hi = lo + kChunk < k ? lo + kChunk : k;
  const T* A = static_cast<const T*>(s.a) + oa * n * n;
  const T* B = static_cast<const T*>(s.b) + ob * n * k;
  T* X = static_cast<T*>(s.x) + m * n * k;
  if constexpr (std::is_same_v<T, float>)
    oc_solve_triangular_f32(A, B, X, n, k, lo, hi, s.left, s.upper, s.unit, packed);
  else
    oc_solve_triangular_f64(A, B, X, n, k, lo, hi, s.left, s.upper, s.unit, packed);
}

template <class T>
int solve(oc::Context& ctx, const oc_ops::SolveTriangularArgs& s, const oc_parallel& par) {
  const int64_t n = s.n, k = s.k;
  const int64_t chunks = div_up(k, kChunk);
  if (s.left && n >= kShareN && chunks > 1) {  // matrix by matrix, its chunks sharing A packed once
    void* packed = nullptr;
    if (int rc = ctx.scratch((size_t)oc_solve_triangular_packed_size(n, s.upper) * sizeof(T), &packed)) return rc;
    T* p = static_cast<T*>(packed);
    int64_t packed_a = -1;  // the offset of the A in p (a broadcast A is packed once)
    for (int64_t m = 0; m < s.batch.count; ++m) {
      int64_t oa, ob;
      s.batch.offsets(m, &oa, &ob);
      if (oa != packed_a) {
        const T* A = static_cast<const T*>(s.a) + oa * n * n;
        if constexpr (std::is_same_v<T, float>)
          oc_solve_triangular_pack_f32(A, n, s.upper, p);
        else
          oc_solve_triangular_pack_f64(A, n, s.upper, p);
        packed_a = oa;
      }
      auto task = [&](size_t c) { solve_chunk<T>(s, m, (int64_t)c, p); };
      parallel_for(par, (size_t)chunks, task);
    }
    return OC_OK;
  }
  const int64_t units = s.batch.count * chunks;
  const double work = (double)(n * n) * (double)(k < kChunk ? k : kChunk);  // per chunk
  const int64_t nt = num_tasks(units, work, 1 << 17, 1024);
  auto task = [&](size_t t) {
    int64_t u0, u1;
    split_range(units, nt, (int64_t)t, u0, u1);
    for (int64_t u = u0; u < u1; ++u) solve_chunk<T>(s, u / chunks, u % chunks, (const T*)nullptr);
  };
  parallel_for(par, (size_t)nt, task);
  return OC_OK;
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
      return solve<T>(ctx, s, par);
    else
      static_assert(oc::unhandled<T>, "SolveTriangular: a declared element type with no CPU kernel");
  });
}

}  // namespace

OC_KERNEL(solve_triangular, cpu, oc_ops::SolveTriangularSpec::spec, solve_triangular_cpu)
