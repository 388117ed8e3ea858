// Inverse on CUDA, as an ortcustom kernel (ortcustom/kernel.h): checks, then inverse.cu's
// launchers on the host's stream; float16 matrices too large for shared memory get their float
// working copy in the host's scratch memory (ORT's arena in a session, stream-ordered).
#include "../inverse_op.h"
#include "../kernels_cuda.h"

namespace {

int launched(oc::Context& ctx, int err) {
  if (err == 0) return OC_OK;
  return ctx.fail(OC_FAIL, "CUDA kernel launch failed: %s (%d)", oc_cuda_error_string(err), err);
}

int inverse_cuda(oc::Context& ctx) {
  oc_ops::InverseArgs a;
  if (int rc = oc_ops::inverse_prepare(ctx, &a)) return rc;
  if (a.y == nullptr) return OC_OK;
  if (a.n > OC_CUDA_INVERSE_MAX_N)
    return ctx.bad_shape(oc_ops::InverseSpec::in::X, "X", "the CUDA kernel takes N <= 1024");
  void* s = ctx.stream();
  using Spec = oc_ops::InverseSpec;
  return oc::dispatch<Spec::types::T>(ctx, ctx.input(Spec::in::X).dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float>)
      return launched(ctx, oc_cuda_inverse_f32(static_cast<const float*>(a.x),
                                               static_cast<float*>(a.y), a.batch, a.n, s));
    else if constexpr (std::is_same_v<T, double>)
      return launched(ctx, oc_cuda_inverse_f64(static_cast<const double*>(a.x),
                                               static_cast<double*>(a.y), a.batch, a.n, s));
    else if constexpr (std::is_same_v<T, oc::half>) {
      const auto* x = static_cast<const uint16_t*>(a.x);
      auto* y = static_cast<uint16_t*>(a.y);
      const size_t ws_bytes = oc_cuda_inverse_f16_workspace_bytes(a.batch, a.n);
      if (ws_bytes == 0) return launched(ctx, oc_cuda_inverse_f16(x, y, a.batch, a.n, s));
      void* ws = nullptr;
      if (int rc = ctx.scratch(ws_bytes, &ws)) return rc;
      return launched(ctx, oc_cuda_inverse_f16_ws(x, y, a.batch, a.n, ws, ws_bytes, s));
    } else {
      static_assert(oc::unhandled<T>, "Inverse: a declared element type with no CUDA kernel");
    }
  });
}

}  // namespace

OC_KERNEL(inverse, cuda, oc_ops::InverseSpec::spec, inverse_cuda)  // Y never written over X
