// A kernel over ONNX's float8 types (their bits), compiled by tests/test_float8.py.
#include "ortcustom/kernel.hpp"

namespace {

const char* const kX[] = {"X", nullptr};
const char* const kY[] = {"Y", nullptr};
const int32_t kSig[][2] = {{OC_FLOAT8E4M3FN, OC_FLOAT8E4M3FN},
                           {OC_FLOAT8E4M3FNUZ, OC_FLOAT8E4M3FNUZ},
                           {OC_FLOAT8E5M2, OC_FLOAT8E5M2},
                           {OC_FLOAT8E5M2FNUZ, OC_FLOAT8E5M2FNUZ}};
constexpr oc::Spec kSpec = {kX, kY, nullptr, OC_SIGNATURES(kSig), nullptr};

// Y = -X on the bits: the sign bit flipped; in the "fnuz" types 0x80 is NaN, so zero stays zero.
int neg8(oc::Context& ctx) {
  const oc_tensor& x = ctx.input(0);
  using F8 = oc::types<oc::float8e4m3fn, oc::float8e4m3fnuz, oc::float8e5m2, oc::float8e5m2fnuz>;
  return oc::dispatch<F8>(ctx, x.dtype, [&](auto tag) {
    using T = decltype(tag);
    constexpr bool uz = std::is_same<T, oc::float8e4m3fnuz>::value || std::is_same<T, oc::float8e5m2fnuz>::value;
    T* y;
    if (int rc = ctx.output(0, x, &y)) return rc;
    const T* a = ctx.data<T>(0);
    for (int64_t j = 0; y && j < x.size; ++j)
      y[j].bits = uz && a[j].bits == 0 ? 0 : (uint8_t)(a[j].bits ^ 0x80);
    return (int)OC_OK;
  });
}

}  // namespace

OC_KERNEL(neg8, cpu, kSpec, neg8)
