// GroupNorm on the CPU, as an ortcustom kernel (ortcustom/kernel.h): checks, then the one-pass
// kernel of group_norm.cpp on the host's thread pool.
#include "../group_norm_op.h"
#include "../kernels.h"
#include "runner.h"

namespace {

int group_norm_cpu(oc::Context& ctx) {
  oc_ops::GroupNormArgs a;
  if (int rc = oc_ops::group_norm_prepare(ctx, &a)) return rc;
  if (a.y == nullptr) return OC_OK;
  const oc_parallel par = oc_cpu::pool(ctx);
  using Spec = oc_ops::GroupNormSpec;
  return oc::dispatch<Spec::types::T>(ctx, ctx.input(Spec::in::X).dtype, [&](auto tag) {
    using T = decltype(tag);
    using S = std::conditional_t<std::is_same_v<T, oc::half>, uint16_t, T>;
    const oc_ops::GroupNormBuffers<S> b(a);
    if constexpr (std::is_same_v<T, float>)
      oc_group_norm_f32(b.x, b.scale, b.bias, b.y, a.N, a.C, a.S, a.groups, a.eps, par);
    else if constexpr (std::is_same_v<T, double>)
      oc_group_norm_f64(b.x, b.scale, b.bias, b.y, a.N, a.C, a.S, a.groups, a.eps, par);
    else if constexpr (std::is_same_v<T, oc::half>)
      oc_group_norm_f16(b.x, b.scale, b.bias, b.y, a.N, a.C, a.S, a.groups, a.eps, par);
    else
      static_assert(oc::unhandled<T>, "GroupNorm: a declared element type with no CPU kernel");
    return OC_OK;
  });
}

constexpr int32_t kInplace[] = {oc_ops::GroupNormSpec::in::X};  // a group is written after its statistics

}  // namespace

OC_KERNEL(group_norm, cpu, oc_ops::GroupNormSpec::spec_inplace(kInplace), group_norm_cpu)
