// GroupNorm on CUDA, as an ortcustom kernel (ortcustom/kernel.h): checks, then group_norm.cu's
// launcher on the host's stream.
#include "../group_norm_op.h"
#include "../kernels_cuda.h"

namespace {

int group_norm_cuda(oc::Context& ctx) {
  oc_ops::GroupNormArgs a;
  if (int rc = oc_ops::group_norm_prepare(ctx, &a)) return rc;
  if (a.y == nullptr) return OC_OK;
  void* s = ctx.stream();
  using Spec = oc_ops::GroupNormSpec;
  return oc::dispatch<Spec::types::T>(ctx, ctx.input(Spec::in::X).dtype, [&](auto tag) {
    using T = decltype(tag);
    using S = std::conditional_t<std::is_same_v<T, oc::half>, uint16_t, T>;
    const oc_ops::GroupNormBuffers<S> b(a);
    int err;
    if constexpr (std::is_same_v<T, float>)
      err = oc_cuda_group_norm_f32(b.x, b.scale, b.bias, b.y, a.N, a.C, a.S, a.groups, a.eps, s);
    else if constexpr (std::is_same_v<T, double>)
      err = oc_cuda_group_norm_f64(b.x, b.scale, b.bias, b.y, a.N, a.C, a.S, a.groups, a.eps, s);
    else if constexpr (std::is_same_v<T, oc::half>)
      err = oc_cuda_group_norm_f16(b.x, b.scale, b.bias, b.y, a.N, a.C, a.S, a.groups, a.eps, s);
    else
      static_assert(oc::unhandled<T>, "GroupNorm: a declared element type with no CUDA kernel");
    if (err == 0) return static_cast<int>(OC_OK);
    return ctx.fail(OC_FAIL, "CUDA kernel launch failed: %s (%d)", oc_cuda_error_string(err), err);
  });
}

// Y may be written over X: a group is written after its statistics
constexpr int32_t kInplace[] = {oc_ops::GroupNormSpec::in::X};

}  // namespace

OC_KERNEL(group_norm, cuda, oc_ops::GroupNormSpec::spec_inplace(kInplace), group_norm_cuda)
