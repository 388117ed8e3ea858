// Svd and Svdvals on the CPU, as ortcustom kernels (ortcustom/kernel.h): checks, then the SVD of
// svd.cpp (one-sided Jacobi for tiny matrices, bidiagonalization and QR above) on the host's thread
// pool. A matrix holding a NaN or an infinity
// is an error naming its batch index (torch.linalg.svd's LAPACK does not converge on it: torch
// raises too).
#include <string.h>

#include "../svd_op.h"
#include "runner.h"
#include "svd.h"

namespace {

int run(oc::Context& ctx, bool vectors) {
  oc_ops::SvdArgs a;
  if (int rc = oc_ops::svd_prepare(ctx, vectors, &a)) return rc;
  if (a.batch == 0 || (a.u == nullptr && a.s == nullptr && a.vh == nullptr)) return OC_OK;
  const int32_t dtype = ctx.input(oc_ops::SvdSpec::in::A).dtype;
  const size_t elem = dtype == OC_DOUBLE ? sizeof(double) : sizeof(float);
  if (a.k == 0) {  // no singular values; the full bases are identities (as torch)
    if (a.u)
      for (int64_t b = 0; b < a.batch; ++b) {
        char* p = static_cast<char*>(a.u) + (size_t)(b * a.m * a.ucols) * elem;
        memset(p, 0, (size_t)(a.m * a.ucols) * elem);
        for (int64_t i = 0; i < a.m && i < a.ucols; ++i) {
          if (elem == sizeof(double)) reinterpret_cast<double*>(p)[i * a.ucols + i] = 1.0;
          else reinterpret_cast<float*>(p)[i * a.ucols + i] = 1.0f;
        }
      }
    if (a.vh)
      for (int64_t b = 0; b < a.batch; ++b) {
        char* p = static_cast<char*>(a.vh) + (size_t)(b * a.vrows * a.n) * elem;
        memset(p, 0, (size_t)(a.vrows * a.n) * elem);
        for (int64_t i = 0; i < a.vrows && i < a.n; ++i) {
          if (elem == sizeof(double)) reinterpret_cast<double*>(p)[i * a.n + i] = 1.0;
          else reinterpret_cast<float*>(p)[i * a.n + i] = 1.0f;
        }
      }
    return OC_OK;
  }
  void* finite = nullptr;
  if (int rc = ctx.scratch((size_t)a.batch, &finite)) return rc;
  uint8_t* ok = static_cast<uint8_t*>(finite);
  const bool uv = a.u != nullptr || a.vh != nullptr;
  const oc_parallel par = oc_cpu::pool(ctx);
  const int err = oc::dispatch<oc_ops::SvdSpec::types::T>(ctx, dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float>)
      return oc_svd_f32(static_cast<const float*>(a.a), static_cast<float*>(a.u), static_cast<float*>(a.s),
                        static_cast<float*>(a.vh), ok, a.batch, a.m, a.n, a.ucols, a.vrows, uv, par);
    else if constexpr (std::is_same_v<T, double>)
      return oc_svd_f64(static_cast<const double*>(a.a), static_cast<double*>(a.u), static_cast<double*>(a.s),
                        static_cast<double*>(a.vh), ok, a.batch, a.m, a.n, a.ucols, a.vrows, uv, par);
    else
      static_assert(oc::unhandled<T>, "Svd: a declared element type with no CPU kernel");
  });
  if (err == OC_OUT_OF_MEMORY)
    return ctx.fail(OC_OUT_OF_MEMORY, "out of memory for the working copy of %lld x %lld matrices",
                    (long long)a.m, (long long)a.n);
  if (err) return err;
  for (int64_t b = 0; b < a.batch; ++b)
    if (!ok[b])
      return ctx.fail(OC_INVALID_ARGUMENT,
                      "input A: the matrix at batch index %lld holds a NaN or an infinity (the SVD does not "
                      "converge on it)",
                      (long long)b);
  return OC_OK;
}

int svd_cpu(oc::Context& ctx) { return run(ctx, true); }
int svdvals_cpu(oc::Context& ctx) { return run(ctx, false); }

}  // namespace

OC_KERNEL(svd, cpu, oc_ops::SvdSpec::spec, svd_cpu)
OC_KERNEL(svdvals, cpu, oc_ops::SvdvalsSpec::spec, svdvals_cpu)
