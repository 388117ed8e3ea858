// Eigh and Eigvalsh on the CPU, as ortcustom kernels (ortcustom/kernel.h): UPLO read once per node,
// the checks, then the eigensolver of eigh.cpp on the host's thread pool. A NaN or an infinity in
// the triangle read is an error naming its batch index (torch.linalg.eigh's LAPACK does not
// converge on it: torch raises too); so is reaching the iteration cap (never seen on a finite matrix).
#include "../eigh_op.h"
#include "eigh.h"
#include "runner.h"

namespace {

int run(oc::Context& ctx, bool vectors) {
  oc_ops::EighArgs a;
  if (int rc = oc_ops::eigh_prepare(ctx, vectors, &a)) return rc;
  if (a.batch == 0 || a.n == 0 || (a.w == nullptr && a.v == nullptr)) return OC_OK;
  const int32_t dtype = ctx.input(oc_ops::EighSpec::in::A).dtype;
  void* scratch = nullptr;
  if (int rc = ctx.scratch((size_t)a.batch, &scratch)) return rc;
  uint8_t* status = static_cast<uint8_t*>(scratch);
  const oc_parallel par = oc_cpu::pool(ctx);
  const int err = oc::dispatch<oc_ops::EighSpec::types::T>(ctx, dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float>)
      return oc_eigh_f32(static_cast<const float*>(a.a), static_cast<float*>(a.w), static_cast<float*>(a.v), status,
                         a.batch, a.n, a.upper, par);
    else if constexpr (std::is_same_v<T, double>)
      return oc_eigh_f64(static_cast<const double*>(a.a), static_cast<double*>(a.w), static_cast<double*>(a.v),
                         status, a.batch, a.n, a.upper, par);
    else
      static_assert(oc::unhandled<T>, "Eigh: a declared element type with no CPU kernel");
  });
  if (err == OC_OUT_OF_MEMORY)
    return ctx.fail(OC_OUT_OF_MEMORY, "out of memory for the working copy of %lld x %lld matrices", (long long)a.n,
                    (long long)a.n);
  if (err) return err;
  for (int64_t b = 0; b < a.batch; ++b) {
    if (status[b] == 0)
      return ctx.fail(OC_INVALID_ARGUMENT,
                      "input A: the matrix at batch index %lld holds a NaN or an infinity in its %s triangle (the "
                      "eigensolver does not converge on it)",
                      (long long)b, a.upper ? "U" : "L");
    if (status[b] == 2)
      return ctx.fail(OC_INVALID_ARGUMENT,
                      "input A: the eigensolver did not converge on the matrix at batch index %lld", (long long)b);
  }
  return OC_OK;
}

int eigh_cpu(oc::Context& ctx) { return run(ctx, true); }
int eigvalsh_cpu(oc::Context& ctx) { return run(ctx, false); }

}  // namespace

OC_KERNEL_STATEFUL(eigh, cpu, oc_ops::EighSpec::spec, oc_ops::eigh_create<oc_ops::EighSpec>, oc_ops::eigh_destroy,
                   eigh_cpu)
OC_KERNEL_STATEFUL(eigvalsh, cpu, oc_ops::EigvalshSpec::spec, oc_ops::eigh_create<oc_ops::EigvalshSpec>,
                   oc_ops::eigh_destroy, eigvalsh_cpu)
