// com.microsoft GroupNorm and SkipGroupNorm on the CPU, as ortcustom kernels (ortcustom/kernel.h):
// the input checks (ORT's published schema; the messages name the input and the
// problem), and the calls into contrib_group_norm.h. CPU only: on a GPU, ORT's own CUDA kernels
// for these ops keep running (no _cuda entry here takes them away).
#include <memory>
#include <type_traits>

#include "contrib_group_norm.h"
#include "ortcustom_spec.h"

namespace {

using oc_contrib::Job;

// Their interfaces, generated from the declarations (src/ortcustom/ops/contrib.py): the same
// inputs X, gamma, beta first and the same attributes, so that one template serves both.
using GroupNormSpec = ortcustom::spec::contrib_group_norm;
using SkipGroupNormSpec = ortcustom::spec::skip_group_norm;
using in = SkipGroupNormSpec::in;
static_assert(in::X == GroupNormSpec::in::X && in::gamma == GroupNormSpec::in::gamma &&
              in::beta == GroupNormSpec::in::beta);

// An optional input, or nullptr: ORT leaves trailing absent inputs out of the count.
const oc_tensor* optional_input(oc::Context& ctx, int32_t i) {
  return i < ctx.n_inputs() && ctx.input(i).present ? &ctx.input(i) : nullptr;
}

bool is_channel_vector(const oc_tensor& t, int64_t C) { return t.rank == 1 && t.shape[0] == C; }

struct Shape {
  int64_t N, C, HW;
  bool nhwc;
};

// The layout and dims of X; checks gamma, beta (and skip, bias), whose element types ORT's type
// constraints already bind (T: X, skip, bias; M: gamma, beta).
template <class Spec>
int check(oc::Context& ctx, Shape* s) {
  constexpr bool skip_op = std::is_same_v<Spec, SkipGroupNormSpec>;
  const oc_tensor& x = ctx.input(in::X);
  s->nhwc = Spec::attr::channels_last(ctx) != 0;
  if (x.rank != 4)
    return ctx.bad_shape(in::X, "X", s->nhwc ? "expected 4 dimensions (N, H, W, C) with channels_last=1"
                                          : "expected 4 dimensions (N, C, H, W) with channels_last=0");
  s->N = x.shape[0];
  s->C = s->nhwc ? x.shape[3] : x.shape[1];
  s->HW = s->nhwc ? x.shape[1] * x.shape[2] : x.shape[2] * x.shape[3];
  const int64_t groups = Spec::attr::groups(ctx);
  if (groups <= 0 || s->C % groups != 0)
    return ctx.fail(OC_INVALID_ARGUMENT, "attribute groups=%lld does not divide the %lld channels of X",
                    (long long)groups, (long long)s->C);
  char what[128];
  snprintf(what, sizeof what, "expected (C,) = (%lld,), the channels of X", (long long)s->C);
  if (!is_channel_vector(ctx.input(in::gamma), s->C)) return ctx.bad_shape(in::gamma, "gamma", what);
  if (!is_channel_vector(ctx.input(in::beta), s->C)) return ctx.bad_shape(in::beta, "beta", what);
  if (!skip_op) return OC_OK;
  const oc_tensor* bias = optional_input(ctx, in::bias);
  if (bias && !is_channel_vector(*bias, s->C)) return ctx.bad_shape(in::bias, "bias", what);
  const oc_tensor& k = ctx.input(in::skip);
  bool same = k.rank == 4;
  for (int32_t d = 0; same && d < 4; ++d) same = k.shape[d] == x.shape[d];
  const bool nc = (k.rank == 2 && k.shape[0] == s->N && k.shape[1] == s->C) ||
                  (k.rank == 4 && k.shape[0] == s->N &&
                   (s->nhwc ? k.shape[1] == 1 && k.shape[2] == 1 && k.shape[3] == s->C
                            : k.shape[1] == s->C && k.shape[2] == 1 && k.shape[3] == 1));
  if (!same && !nc)
    return ctx.bad_shape(in::skip, "skip", s->nhwc ? "expected X's shape, (N, 1, 1, C) or (N, C)"
                                                : "expected X's shape, (N, C, 1, 1) or (N, C)");
  return OC_OK;
}

template <class T, bool kSilu>
int run_typed(oc::Context& ctx, Job<T>& j, bool nhwc) {
  if (!nhwc) {
    oc_contrib::nchw<T, kSilu>(j, ctx);
    return OC_OK;
  }
  const int64_t chunks = oc_contrib::nhwc_chunks(j.N, j.HW, j.C);
  void* scratch = nullptr;
  if (int rc = ctx.scratch(oc_contrib::nhwc_scratch_bytes(j.N, j.C, j.N * chunks), &scratch)) return rc;
  oc_contrib::nhwc<T, kSilu>(j, ctx, chunks, scratch);
  return OC_OK;
}

// A channel vector (gamma, beta: M; bias: T) as float.
template <class Types>
int load_channels(oc::Context& ctx, const oc_tensor& t, int64_t C, float* out) {
  return oc::dispatch<Types>(ctx, t.dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t c = 0; c < C; ++c) {
      if constexpr (std::is_same_v<T, float>)
        out[c] = static_cast<const float*>(t.data)[c];
      else if constexpr (std::is_same_v<T, oc::half>)
        out[c] = oc_half_to_float(static_cast<const uint16_t*>(t.data)[c]);
      else
        static_assert(oc::unhandled<T>, "contrib GroupNorm: a declared element type it cannot read");
    }
    return static_cast<int>(OC_OK);
  });
}

template <class Spec>
int compute(oc::Context& ctx) {
  constexpr bool skip_op = std::is_same_v<Spec, SkipGroupNormSpec>;
  Shape sh = {};
  if (int rc = check<Spec>(ctx, &sh)) return rc;
  const oc_tensor& x = ctx.input(in::X);
  void* y = nullptr;
  void* s = nullptr;
  if (int rc = ctx.output(Spec::out::Y, x, &y)) return rc;
  if constexpr (skip_op)
    if (ctx.raw()->n_outputs > SkipGroupNormSpec::out::S)
      if (int rc = ctx.output(SkipGroupNormSpec::out::S, x, &s)) return rc;
  if (x.size == 0 || y == nullptr) return OC_OK;

  // gamma, beta (M, which may be float16 whatever X is) and bias (T) as float: 3*C values
  const int64_t C = sh.C;
  const oc_tensor* skip = skip_op ? &ctx.input(in::skip) : nullptr;
  const oc_tensor* bias = skip_op ? optional_input(ctx, in::bias) : nullptr;
  std::unique_ptr<float[]> gb(new float[3 * C]);
  if (int rc = load_channels<typename Spec::types::M>(ctx, ctx.input(in::gamma), C, gb.get())) return rc;
  if (int rc = load_channels<typename Spec::types::M>(ctx, ctx.input(in::beta), C, gb.get() + C)) return rc;
  if (!bias)
    for (int64_t c = 0; c < C; ++c) gb[2 * C + c] = 0.0f;
  else if (int rc = load_channels<typename Spec::types::T>(ctx, *bias, C, gb.get() + 2 * C))
    return rc;
  const bool silu = Spec::attr::activation(ctx) == 1;
  return oc::dispatch<typename Spec::types::T>(ctx, x.dtype, [&](auto tag) {
    using T = decltype(tag);
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, oc::half>,
                  "contrib GroupNorm: a declared element type with no CPU kernel");
    using S = std::conditional_t<std::is_same_v<T, oc::half>, uint16_t, float>;
    Job<S> j;
    j.x = static_cast<const S*>(x.data);
    j.skip = skip ? static_cast<const S*>(skip->data) : nullptr;
    j.bias = gb.get() + 2 * C;
    j.gamma = gb.get();
    j.beta = gb.get() + C;
    j.y = static_cast<S*>(y);
    j.s = static_cast<S*>(s);
    j.sum = skip_op;
    j.skip_nc = skip && skip->size != x.size;
    j.silu = silu;
    j.N = sh.N;
    j.C = C;
    j.HW = sh.HW;
    j.G = Spec::attr::groups(ctx);
    j.eps = Spec::attr::epsilon(ctx);
    return silu ? run_typed<S, true>(ctx, j, sh.nhwc) : run_typed<S, false>(ctx, j, sh.nhwc);
  });
}

}  // namespace

OC_KERNEL(contrib_group_norm, cpu, GroupNormSpec::spec, compute<GroupNormSpec>)
OC_KERNEL(skip_group_norm, cpu, SkipGroupNormSpec::spec, compute<SkipGroupNormSpec>)
