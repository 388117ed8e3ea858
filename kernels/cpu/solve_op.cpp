// Solve, SolveEx and Slogdet on the CPU, as ortcustom kernels (ortcustom/kernel.h): checks, then the
// LU factorization of solve.cpp (each matrix of A once, into scratch), then the solves for the
// broadcast batch (or the determinant from U's diagonal and the row swaps). Solve fails on a
// singular matrix (naming its batch index, as torch.linalg.solve); SolveEx reports it in info.
#include <string.h>

#include "../solve_op.h"
#include "lu.h"
#include "runner.h"

namespace {

struct Factors {
  void* lu = nullptr;
  int32_t* piv = nullptr;
  int32_t* info = nullptr;
};

// Factors the a_count matrices of A (as they are, for X A = B too: its info is A's, as torch's) into
// scratch; info into `info` if given.
int factor(oc::Context& ctx, int32_t dtype, const void* a, int64_t count, int64_t n,
           int32_t* info, Factors* f) {
  const size_t elem = dtype == OC_DOUBLE ? sizeof(double) : sizeof(float);
  void* p = nullptr;
  if (int rc = ctx.scratch((size_t)(count * n) * n * elem, &f->lu)) return rc;
  if (int rc = ctx.scratch((size_t)(count * n) * sizeof(int32_t), &p)) return rc;
  f->piv = static_cast<int32_t*>(p);
  f->info = info;
  if (f->info == nullptr) {
    if (int rc = ctx.scratch((size_t)count * sizeof(int32_t), &p)) return rc;
    f->info = static_cast<int32_t*>(p);
  }
  const oc_parallel par = oc_cpu::pool(ctx);
  if (dtype == OC_DOUBLE)
    oc_lu_f64(static_cast<const double*>(a), static_cast<double*>(f->lu), f->piv, f->info, count, n, false, par);
  else
    oc_lu_f32(static_cast<const float*>(a), static_cast<float*>(f->lu), f->piv, f->info, count, n, false, par);
  return OC_OK;
}

// Solve's error for the first singular matrix (torch.linalg.solve raises), or OC_OK.
int singular(oc::Context& ctx, const int32_t* info, int64_t count) {
  for (int64_t m = 0; m < count; ++m)
    if (info[m] != 0)
      return ctx.fail(OC_INVALID_ARGUMENT, "input A: the matrix at batch index %lld is singular (its pivot %d is zero)",
                      (long long)m, (int)info[m]);
  return OC_OK;
}

int solve_common(oc::Context& ctx, bool ex) {
  using Spec = oc_ops::SolveSpec;
  oc_ops::SolveArgs s;
  if (int rc = oc_ops::solve_prepare(ctx, ex, &s)) return rc;
  if (s.n == 0 || s.a_count == 0) {  // nothing to factor: 0 x 0 matrices are not singular
    if (s.info) memset(s.info, 0, (size_t)s.a_count * sizeof(int32_t));
    return OC_OK;
  }
  if (s.x == nullptr && s.info == nullptr) return OC_OK;
  const int32_t dtype = ctx.input(Spec::in::A).dtype;
  return oc::dispatch<Spec::types::T>(ctx, dtype, [&](auto tag) -> int {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, float> && !std::is_same_v<T, double>) {
      static_assert(oc::unhandled<T>, "Solve: a declared element type with no CPU kernel");
    } else {
      const bool rows = s.vector || !s.left;  // one right-hand side per row of the block (X A = B: with A^T)
      const oc_parallel par = oc_cpu::pool(ctx);
      // no broadcast and small matrices or a single one: factored and solved in one pass (lu.h)
      if (s.x != nullptr && (s.n <= OC_LU_FUSED_MAX_N || s.a_count == 1) && s.a_count == s.batch.count &&
          s.b_count == s.batch.count) {
        int32_t* info = s.info;
        if (info == nullptr) {
          void* p = nullptr;
          if (int rc = ctx.scratch((size_t)s.a_count * sizeof(int32_t), &p)) return rc;
          info = static_cast<int32_t*>(p);
        }
        int rc;
        if constexpr (std::is_same_v<T, double>)
          rc = oc_lu_factor_solve_f64(static_cast<const double*>(s.a), static_cast<const double*>(s.b),
                                      static_cast<double*>(s.x), info, s.a_count, s.n, s.k, rows, !s.left, par);
        else
          rc = oc_lu_factor_solve_f32(static_cast<const float*>(s.a), static_cast<const float*>(s.b),
                                      static_cast<float*>(s.x), info, s.a_count, s.n, s.k, rows, !s.left, par);
        if (rc == OC_OK) return ex ? OC_OK : singular(ctx, info, s.a_count);
        // no memory for the working copy: the factors into the op's scratch below
      }
      Factors f;
      if (int rc = factor(ctx, dtype, s.a, s.a_count, s.n, s.info, &f)) return rc;
      if (!ex)
        if (int rc = singular(ctx, f.info, s.a_count)) return rc;
      if (s.x == nullptr) return OC_OK;
      int64_t* a_index = nullptr;  // nullptr: block m of X uses matrix m of A and of B (no broadcast)
      int64_t* b_index = nullptr;
      if (s.a_count != s.batch.count || s.b_count != s.batch.count) {
        void* p = nullptr;
        if (int rc = ctx.scratch((size_t)s.batch.count * 2 * sizeof(int64_t), &p)) return rc;
        a_index = static_cast<int64_t*>(p);
        b_index = a_index + s.batch.count;
        for (int64_t m = 0; m < s.batch.count; ++m) s.batch.offsets(m, a_index + m, b_index + m);
      }
      if constexpr (std::is_same_v<T, double>)
        oc_lu_solve_f64(static_cast<const double*>(f.lu), f.piv, static_cast<const double*>(s.b),
                        static_cast<double*>(s.x), a_index, b_index, s.batch.count, s.n, s.k, rows, !s.left, par);
      else
        oc_lu_solve_f32(static_cast<const float*>(f.lu), f.piv, static_cast<const float*>(s.b),
                        static_cast<float*>(s.x), a_index, b_index, s.batch.count, s.n, s.k, rows, !s.left, par);
      return OC_OK;
    }
  });
}

int solve_cpu(oc::Context& ctx) { return solve_common(ctx, false); }
int solve_ex_cpu(oc::Context& ctx) { return solve_common(ctx, true); }

int slogdet_cpu(oc::Context& ctx) {
  using Spec = oc_ops::SlogdetSpec;
  oc_ops::SlogdetArgs s;
  if (int rc = oc_ops::slogdet_prepare(ctx, &s)) return rc;
  if (s.batch == 0 || (s.sign == nullptr && s.logabs == nullptr)) return OC_OK;
  const int32_t dtype = ctx.input(Spec::in::A).dtype;
  return oc::dispatch<Spec::types::T>(ctx, dtype, [&](auto tag) -> int {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, float> && !std::is_same_v<T, double>) {
      static_assert(oc::unhandled<T>, "Slogdet: a declared element type with no CPU kernel");
    } else {
      T* sign = static_cast<T*>(s.sign);
      T* logabs = static_cast<T*>(s.logabs);
      if (s.n == 0) {  // the empty product: det 1
        for (int64_t m = 0; m < s.batch; ++m) {
          if (sign) sign[m] = T(1);
          if (logabs) logabs[m] = T(0);
        }
        return OC_OK;
      }
      void *lu = nullptr, *piv = nullptr, *info = nullptr;  // the factors' scratch (none for small n)
      if (s.n > OC_LU_FUSED_MAX_N) {
        if (int rc = ctx.scratch((size_t)(s.batch * s.n) * s.n * sizeof(T), &lu)) return rc;
        if (int rc = ctx.scratch((size_t)(s.batch * s.n) * sizeof(int32_t), &piv)) return rc;
        if (int rc = ctx.scratch((size_t)s.batch * sizeof(int32_t), &info)) return rc;
      }
      if constexpr (std::is_same_v<T, double>)
        oc_lu_slogdet_f64(static_cast<const double*>(s.a), static_cast<double*>(lu), static_cast<int32_t*>(piv),
                          static_cast<int32_t*>(info), sign, logabs, s.batch, s.n, oc_cpu::pool(ctx));
      else
        oc_lu_slogdet_f32(static_cast<const float*>(s.a), static_cast<float*>(lu), static_cast<int32_t*>(piv),
                          static_cast<int32_t*>(info), sign, logabs, s.batch, s.n, oc_cpu::pool(ctx));
      return OC_OK;
    }
  });
}

}  // namespace

OC_KERNEL(solve, cpu, oc_ops::SolveSpec::spec, solve_cpu)
OC_KERNEL(solve_ex, cpu, oc_ops::SolveExSpec::spec, solve_ex_cpu)
OC_KERNEL(slogdet, cpu, oc_ops::SlogdetSpec::spec, slogdet_cpu)
