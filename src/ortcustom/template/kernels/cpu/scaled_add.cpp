// ScaledAdd on the CPU: Z = X + alpha * Y in blocks on the host's thread pool (ONNX Runtime's
// intra-op pool in a session; OpenMP's pool in a direct call).
#include <algorithm>

#include "ortcustom/half.h"
#include "../scaled_add.h"

namespace {

constexpr int64_t kBlock = 1 << 14;  // elements per task: big enough to amortize a task's cost

template <class T>
void scaled_add(const T* x, const T* y, T* z, int64_t begin, int64_t end, double alpha) {
  const T a = static_cast<T>(alpha);
  for (int64_t i = begin; i < end; ++i) z[i] = x[i] + a * y[i];
}

// float16: computed in float, rounded once
void scaled_add(const oc::half* x, const oc::half* y, oc::half* z, int64_t begin, int64_t end,
                double alpha) {
  const float a = static_cast<float>(alpha);
  for (int64_t i = begin; i < end; ++i)
    z[i].bits = oc_float_to_half(oc_half_to_float(x[i].bits) + a * oc_half_to_float(y[i].bits));
}

int scaled_add_cpu(oc::Context& ctx) {
  myops::ScaledAddArgs a;
  if (int rc = myops::scaled_add_prepare(ctx, &a)) return rc;
  if (a.z == nullptr) return OC_OK;
  using Spec = myops::ScaledAddSpec;
  // one instance per element type the declaration gives T; scaled_add() has an overload for each
  return oc::dispatch<Spec::types::T>(ctx, ctx.input(Spec::in::X).dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(a.x);
    const T* y = static_cast<const T*>(a.y);
    T* z = static_cast<T*>(a.z);
    const int64_t blocks = (a.n + kBlock - 1) / kBlock;
    ctx.parallel_for(static_cast<size_t>(blocks), [&](size_t b) {
      const int64_t begin = static_cast<int64_t>(b) * kBlock;
      scaled_add(x, y, z, begin, std::min(a.n, begin + kBlock), a.alpha);
    });
    return static_cast<int>(OC_OK);
  });
}

constexpr int32_t kInplace[] = {myops::ScaledAddSpec::in::X};  // Z may be written over X: elementwise

}  // namespace

// exports ortcustom_kernel_scaled_add_cpu(): Op(native="myops._kernels:scaled_add") finds it
OC_KERNEL(scaled_add, cpu, myops::ScaledAddSpec::spec_inplace(kInplace), scaled_add_cpu)
