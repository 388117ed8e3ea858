// Inverse on the CPU, as an ortcustom kernel (ortcustom/kernel.h): checks, then the blocked
// Gauss-Jordan of inverse.cpp on the host's thread pool.
#include "../inverse_op.h"
#include "../kernels.h"
#include "runner.h"

namespace {

int inverse_cpu(oc::Context& ctx) {
  oc_ops::InverseArgs a;
  if (int rc = oc_ops::inverse_prepare(ctx, &a)) return rc;
  if (a.y == nullptr) return OC_OK;
  const oc_parallel par = oc_cpu::pool(ctx);
  using Spec = oc_ops::InverseSpec;
  const int err = oc::dispatch<Spec::types::T>(ctx, ctx.input(Spec::in::X).dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float>)
      return oc_inverse_f32(static_cast<const float*>(a.x), static_cast<float*>(a.y), a.batch, a.n,
                            par);
    else if constexpr (std::is_same_v<T, double>)
      return oc_inverse_f64(static_cast<const double*>(a.x), static_cast<double*>(a.y), a.batch,
                            a.n, par);
    else if constexpr (std::is_same_v<T, oc::half>)
      return oc_inverse_f16(static_cast<const uint16_t*>(a.x), static_cast<uint16_t*>(a.y),
                            a.batch, a.n, par);
    else
      static_assert(oc::unhandled<T>, "Inverse: a declared element type with no CPU kernel");
  });
  if (err == OC_OUT_OF_MEMORY)  // the output is not the inverse: never return it
    return ctx.fail(OC_OUT_OF_MEMORY, "out of memory for the scratch space of %lld x %lld matrices",
                    (long long)a.n, (long long)a.n);
  return err;
}

// Y may be written over X: each matrix is read before its rows are written
constexpr int32_t kInplace[] = {oc_ops::InverseSpec::in::X};

}  // namespace

OC_KERNEL(inverse, cpu, oc_ops::InverseSpec::spec_inplace(kInplace), inverse_cpu)
