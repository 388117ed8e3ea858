// GroupNorm's input checks, shared by its CPU and CUDA entries (its spec: ortcustom_spec.h, generated
// from the declaration, src/ortcustom/ops/group_norm.py).
#ifndef ORTCUSTOM_GROUP_NORM_OP_H
#define ORTCUSTOM_GROUP_NORM_OP_H

#include "ortcustom_spec.h"

namespace oc_ops {

using GroupNormSpec = ortcustom::spec::group_norm;

struct GroupNormArgs {
  const void* x;
  const void* scale;  // nullptr: 1
  const void* bias;   // nullptr: 0
  void* y;            // nullptr: nothing to compute
  int64_t N, C, S, groups;
  double eps;
};

// The buffers as storage type S (uint16_t for float16), for the typed kernel entry points.
template <class S>
struct GroupNormBuffers {
  const S* x;
  const S* scale;
  const S* bias;
  S* y;
  explicit GroupNormBuffers(const GroupNormArgs& a)
      : x(static_cast<const S*>(a.x)), scale(static_cast<const S*>(a.scale)),
        bias(static_cast<const S*>(a.bias)), y(static_cast<S*>(a.y)) {}
};

// X (N, C, ...), num_groups (the input, an int64 scalar on the host, else the attribute),
// scale and bias (C,); allocates Y.
inline int group_norm_prepare(oc::Context& ctx, GroupNormArgs* a) {
  using in = GroupNormSpec::in;
  using attr = GroupNormSpec::attr;
  const oc_tensor& x = ctx.input(in::X);
  const oc_tensor& g = ctx.input(in::num_groups);
  a->y = nullptr;
  if (x.rank < 2) return ctx.bad_shape(in::X, "X", "expected (N, C, ...): rank 2 or more");
  a->N = x.shape[0];
  a->C = x.shape[1];
  a->S = 1;
  if (x.size > 0)  // an empty X's dims may multiply past int64, e.g. (0, C, 2**62, 2**62)
    for (int32_t d = 2; d < x.rank; ++d) a->S *= x.shape[d];
  if (g.present) {
    if (g.size != 1) return ctx.bad_shape(in::num_groups, "num_groups", "expected one int64 value");
    a->groups = static_cast<const int64_t*>(g.data)[0];
  } else {
    a->groups = attr::num_groups(ctx);
    if (a->groups == 0)
      return ctx.fail(OC_INVALID_ARGUMENT,
                      "give num_groups, as the input num_groups or the attribute num_groups");
  }
  if (a->groups <= 0 || a->C % a->groups != 0)
    return ctx.fail(OC_INVALID_ARGUMENT,
                    "num_groups must be positive and divide the %lld channels of X, got %lld",
                    (long long)a->C, (long long)a->groups);
  const struct {
    int32_t i;
    const char* name;
  } per_channel[] = {{in::scale, "scale"}, {in::bias, "bias"}};
  for (const auto& c : per_channel) {
    const oc_tensor& p = ctx.input(c.i);
    if (p.present && (p.rank != 1 || p.shape[0] != a->C)) {
      char what[96];
      snprintf(what, sizeof what, "expected (C,) = (%lld,), the channels of X", (long long)a->C);
      return ctx.bad_shape(c.i, c.name, what);
    }
  }
  if (int rc = ctx.output(GroupNormSpec::out::Y, x, &a->y)) return rc;
  if (x.size == 0) a->y = nullptr;
  a->x = x.data;
  a->scale = ctx.input(in::scale).data;
  a->bias = ctx.input(in::bias).data;
  a->eps = attr::epsilon(ctx);
  return OC_OK;
}

}  // namespace oc_ops

#endif  // ORTCUSTOM_GROUP_NORM_OP_H
