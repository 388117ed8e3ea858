// Cholesky and CholeskyEx on the CPU, as ortcustom kernels (ortcustom/kernel.h): checks, then the
// blocked factorization of cholesky.cpp on the host's thread pool. Cholesky fails on a matrix that
// is not positive-definite (naming its batch index, as torch.linalg.cholesky); CholeskyEx reports
// it in info (as torch.linalg.cholesky_ex).
#include <string.h>

#include "../cholesky_op.h"
#include "cholesky.h"
#include "runner.h"

namespace {

// Factors into a.l (or scratch when the node does not use L) with info per matrix into `info`.
int factor(oc::Context& ctx, const oc_ops::CholeskyArgs& a, int32_t* info) {
  void* l = a.l;
  const int32_t dtype = ctx.input(oc_ops::CholeskySpec::in::A).dtype;
  const size_t elem = dtype == OC_DOUBLE ? sizeof(double) : sizeof(float);
  if (l == nullptr)
    if (int rc = ctx.scratch((size_t)(a.batch * a.n * a.n) * elem, &l)) return rc;
  const oc_parallel par = oc_cpu::pool(ctx);
  const int err = oc::dispatch<oc_ops::CholeskySpec::types::T>(ctx, dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float>)
      return oc_cholesky_f32(static_cast<const float*>(a.a), static_cast<float*>(l), info, a.batch, a.n,
                             a.upper, par);
    else if constexpr (std::is_same_v<T, double>)
      return oc_cholesky_f64(static_cast<const double*>(a.a), static_cast<double*>(l), info, a.batch,
                             a.n, a.upper, par);
    else
      static_assert(oc::unhandled<T>, "Cholesky: a declared element type with no CPU kernel");
  });
  if (err == OC_OUT_OF_MEMORY)
    return ctx.fail(OC_OUT_OF_MEMORY, "out of memory for the scratch space of %lld x %lld matrices",
                    (long long)a.n, (long long)a.n);
  return err;
}

int cholesky_cpu(oc::Context& ctx) {
  oc_ops::CholeskyArgs a;
  if (int rc = oc_ops::cholesky_prepare(ctx, false, &a)) return rc;
  if (a.l == nullptr) return OC_OK;
  void* info = nullptr;
  if (int rc = ctx.scratch((size_t)a.batch * sizeof(int32_t), &info)) return rc;
  const int32_t* bad = static_cast<int32_t*>(info);
  if (int rc = factor(ctx, a, static_cast<int32_t*>(info))) return rc;
  for (int64_t b = 0; b < a.batch; ++b)
    if (bad[b] != 0)
      return ctx.fail(OC_INVALID_ARGUMENT,
                      "input A: the matrix at batch index %lld is not positive-definite (its leading "
                      "minor of order %d is not positive-definite)",
                      (long long)b, (int)bad[b]);
  return OC_OK;
}

int cholesky_ex_cpu(oc::Context& ctx) {
  oc_ops::CholeskyArgs a;
  if (int rc = oc_ops::cholesky_prepare(ctx, true, &a)) return rc;
  if (a.batch == 0 || (a.l == nullptr && a.info == nullptr)) return OC_OK;
  if (a.n == 0) {  // 0 x 0 matrices: factored
    if (a.info) memset(a.info, 0, (size_t)a.batch * sizeof(int32_t));
    return OC_OK;
  }
  int32_t* info = a.info;
  if (info == nullptr) {
    void* p = nullptr;
    if (int rc = ctx.scratch((size_t)a.batch * sizeof(int32_t), &p)) return rc;
    info = static_cast<int32_t*>(p);
  }
  return factor(ctx, a, info);
}

}  // namespace

OC_KERNEL(cholesky, cpu, oc_ops::CholeskySpec::spec, cholesky_cpu)  // L never written over A
OC_KERNEL(cholesky_ex, cpu, oc_ops::CholeskyExSpec::spec, cholesky_ex_cpu)
