// The tutorial's group norm (mydomain::mygroupnorm, mynamespace::custom_group_norm) as an ortcustom
// kernel: Y = (X - mean) / sqrt(var + epsilon) * scale[c] + bias[c], mean and biased variance over
// each (sample, group) of C / num_groups channels, as torch.nn.functional.group_norm.
// X (N, C, ...) float or double; num_groups a one-element float or int64 tensor (the tutorial feeds
// a float one); scale and bias (C,); the attribute epsilon.
#include <cmath>

#include "custom_group_norm_spec.h"  // generated from the declaration (src/custom_group_norm)

namespace {

// X, num_groups, scale, bias, Y; attribute epsilon; T: X's element types, G: num_groups'
using Spec = custom_group_norm::spec::group_norm;
using in = Spec::in;

// num_groups, validated: one positive whole number dividing C.
int read_groups(oc::Context& ctx, int64_t channels, int64_t* groups) {
  const oc_tensor& g = ctx.input(in::num_groups);
  if (g.size != 1) return ctx.bad_shape(in::num_groups, "num_groups", "expected one value");
  double v = 0;
  if (int rc = oc::dispatch<Spec::types::G>(ctx, g.dtype, [&](auto tag) {
        v = static_cast<double>(*ctx.data<decltype(tag)>(in::num_groups));
        return static_cast<int>(OC_OK);
      }))
    return rc;
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
  const oc_tensor& x = ctx.input(in::X);
  if (x.rank < 2) return ctx.bad_shape(in::X, "X", "expected (N, C, ...): rank 2 or more");
  const int64_t N = x.shape[0], C = x.shape[1];
  int64_t groups;
  if (int rc = read_groups(ctx, C, &groups)) return rc;
  const struct {
    int32_t i;
    const char* name;
  } per_channel[] = {{in::scale, "scale"}, {in::bias, "bias"}};
  for (const auto& c : per_channel)
    if (ctx.input(c.i).rank != 1 || ctx.input(c.i).shape[0] != C)
      return ctx.bad_shape(c.i, c.name, "expected (C,), C the channels of X");
  return oc::dispatch<Spec::types::T>(ctx, x.dtype, [&](auto tag) {
    using T = decltype(tag);
    T* y;
    if (int rc = ctx.output(Spec::out::Y, x, &y)) return rc;
    if (y == nullptr || x.size == 0) return static_cast<int>(OC_OK);
    const T* xd = ctx.data<T>(in::X);
    const T* scale = ctx.data<T>(in::scale);
    const T* bias = ctx.data<T>(in::bias);
    const int64_t per_group = C / groups, spatial = x.size / (N * C);
    const double eps = Spec::attr::epsilon(ctx);
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

OC_KERNEL(group_norm, cpu, Spec::spec, group_norm)
