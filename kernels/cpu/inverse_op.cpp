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
  const int err = oc::dispatch<float, double, oc::half>(ctx, ctx.input(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float>)
      return oc_inverse_f32(static_cast<const float*>(a.x), static_cast<float*>(a.y), a.batch, a.n,
                            par);
    else if constexpr (std::is_same_v<T, double>)
      return oc_inverse_f64(static_cast<const double*>(a.x), static_cast<double*>(a.y), a.batch,
                            a.n, par);
    else
      return oc_inverse_f16(static_cast<const uint16_t*>(a.x), static_cast<uint16_t*>(a.y),
                            a.batch, a.n, par);
  });
  if (err == OC_OUT_OF_MEMORY)  // the output is not the inverse: never return it
    return ctx.fail(OC_OUT_OF_MEMORY, "out of memory for the scratch space of %lld x %lld matrices",
                    (long long)a.n, (long long)a.n);
  return err;
}

}  // namespace

OC_KERNEL(inverse, cpu, oc_ops::kInverseSpec, inverse_cpu)
