// The tutorial's group norm (mydomain::mygroupnorm, mynamespace::custom_group_norm) as an ortcustom
// kernel: Y = (X - mean) / sqrt(var + epsilon) * scale[c] + bias[c], mean and biased variance over
// each (sample, group) of C / num_groups channels, as torch.nn.functional.group_norm.
// X (N, C, ...) float or double; num_groups a one-element float or int64 tensor (the tutorial feeds
// a float one); scale and bias (C,); the attribute epsilon.
#include <cmath>

#include "ortcustom/kernel.hpp"

namespace {

const char* const kInputs[] = {"X", "num_groups", "scale", "bias", nullptr};
const char* const kOutputs[] = {"Y", nullptr};
enum { kEpsilon };
const oc_attr_spec kAttrs[] = {{"epsilon", OC_ATTR_FLOAT}, {nullptr, 0}};
// X, num_groups, scale, bias, Y: T float or double, num_groups (G) float or int64
constexpr int32_t kSignatures[][5] = {
    {OC_FLOAT, OC_FLOAT, OC_FLOAT, OC_FLOAT, OC_FLOAT}, {OC_FLOAT, OC_INT64, OC_FLOAT, OC_FLOAT, OC_FLOAT},
    {OC_DOUBLE, OC_FLOAT, OC_DOUBLE, OC_DOUBLE, OC_DOUBLE}, {OC_DOUBLE, OC_INT64, OC_DOUBLE, OC_DOUBLE, OC_DOUBLE}};
constexpr oc::Spec kSpec = {kInputs, kOutputs, kAttrs, OC_SIGNATURES(kSignatures), nullptr};

// num_groups, validated: one positive whole number dividing C.
int read_groups(oc::Context& ctx, int64_t channels, int64_t* groups) {
  const oc_tensor& g = ctx.input(1);
  if (g.size != 1) return ctx.bad_shape(1, "num_groups", "expected one value");
  double v = g.dtype == OC_INT64 ? static_cast<double>(*ctx.data<int64_t>(1)) : *ctx.data<float>(1);
  if (!(v >= 1) || v != std::floor(v) || std::fmod(static_cast<double>(channels), v) != 0)
    return ctx.fail(OC_INVALID_ARGUMENT,
                    "num_groups must be a positive whole number dividing the %lld channels of X, "
                    "got %g", (long long)channels, v);
  *groups = static_cast<int64_t>(v);
  return OC_OK;
}

template <class T>
void normalize_group(const T* x, const T* scale, const T* bias, T* y, int64_t channels,
                     int64_t spatial, double eps) {
  const int64_t n = channels * spatial;
  double mean = 0, var = 0;
  for (int64_t i = 0; i < n; ++i) mean += x[i];
  mean /= static_cast<double>(n);
  for (int64_t i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
  const double rstd = 1.0 / std::sqrt(var / static_cast<double>(n) + eps);
  for (int64_t c = 0; c < channels; ++c) {  // y = x * a + b per channel
    const double a = rstd * scale[c];
    const double b = bias[c] - mean * a;
    for (int64_t s = 0; s < spatial; ++s) y[c * spatial + s] = static_cast<T>(x[c * spatial + s] * a + b);
  }
}

int group_norm(oc::Context& ctx) {
  const oc_tensor& x = ctx.input(0);
  if (x.rank < 2) return ctx.bad_shape(0, "X", "expected (N, C, ...): rank 2 or more");
  const int64_t N = x.shape[0], C = x.shape[1];
  int64_t groups;
  if (int rc = read_groups(ctx, C, &groups)) return rc;
  const char* names[] = {"scale", "bias"};
  for (int32_t i = 2; i < 4; ++i)
    if (ctx.input(i).rank != 1 || ctx.input(i).shape[0] != C)
      return ctx.bad_shape(i, names[i - 2], "expected (C,), C the channels of X");
  return oc::dispatch<float, double>(ctx, x.dtype, [&](auto tag) {
    using T = decltype(tag);
    T* y;
    if (int rc = ctx.output(0, x, &y)) return rc;
    if (y == nullptr || x.size == 0) return static_cast<int>(OC_OK);
    const T* xd = ctx.data<T>(0);
    const T* scale = ctx.data<T>(2);
    const T* bias = ctx.data<T>(3);
    const int64_t per_group = C / groups, spatial = x.size / (N * C);
    const double eps = ctx.attr_float(kEpsilon);
    ctx.parallel_for(static_cast<size_t>(N * groups), [&](size_t i) {  // one (sample, group) each
      const int64_t g = static_cast<int64_t>(i) % groups;
      const int64_t offset = static_cast<int64_t>(i) * per_group * spatial;  // groups are contiguous
      normalize_group(xd + offset, scale + g * per_group, bias + g * per_group, y + offset,
                      per_group, spatial, eps);
    });
    return static_cast<int>(OC_OK);
  });
}

}  // namespace

OC_KERNEL(group_norm, cpu, kSpec, group_norm)
