// Qr on the CPU, as an ortcustom kernel (ortcustom/kernel.h): the mode read once per node, the checks,
// then the Householder QR of qr.cpp on the host's thread pool. No input is an error past its shape:
// a NaN or an infinity spreads into its matrix's factors (as torch.linalg.qr, which does not raise).
#include "../qr_op.h"
#include "qr.h"
#include "runner.h"

namespace {

int qr_cpu(oc::Context& ctx) {
  oc_ops::QrArgs a;
  if (int rc = oc_ops::qr_prepare(ctx, &a)) return rc;
  if (a.batch == 0 || (a.q == nullptr && a.r == nullptr)) return OC_OK;
  const int32_t dtype = ctx.input(oc_ops::QrSpec::in::A).dtype;
  const oc_parallel par = oc_cpu::pool(ctx);
  const int err = oc::dispatch<oc_ops::QrSpec::types::T>(ctx, dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float>)
      return oc_qr_f32(static_cast<const float*>(a.a), static_cast<float*>(a.q), static_cast<float*>(a.r), a.batch,
                       a.m, a.n, a.qcols, a.rrows, par);
    else if constexpr (std::is_same_v<T, double>)
      return oc_qr_f64(static_cast<const double*>(a.a), static_cast<double*>(a.q), static_cast<double*>(a.r),
                       a.batch, a.m, a.n, a.qcols, a.rrows, par);
    else
      static_assert(oc::unhandled<T>, "Qr: a declared element type with no CPU kernel");
  });
  if (err == OC_OUT_OF_MEMORY)
    return ctx.fail(OC_OUT_OF_MEMORY, "out of memory for the working copy of %lld x %lld matrices", (long long)a.m,
                    (long long)a.n);
  return err;
}

}  // namespace

OC_KERNEL_STATEFUL(qr, cpu, oc_ops::QrSpec::spec, oc_ops::qr_create, oc_ops::qr_destroy, qr_cpu)
