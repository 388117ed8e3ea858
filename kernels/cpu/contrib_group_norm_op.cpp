// com.microsoft GroupNorm and SkipGroupNorm on the CPU, as ortcustom kernels (ortcustom/kernel.h):
// the specs, the input checks (ORT's published schema; the messages name the input and the
// problem), and the calls into contrib_group_norm.h. CPU only: on a GPU, ORT's own CUDA kernels
// for these ops keep running (no _cuda entry here takes them away).
#include <memory>
#include <type_traits>

#include "contrib_group_norm.h"

namespace {

using oc_contrib::Job;

constexpr const char* kGroupNormInputs[] = {"X", "gamma", "beta", nullptr};
constexpr const char* kSkipGroupNormInputs[] = {"X", "gamma", "beta", "skip", "bias", nullptr};
constexpr const char* kGroupNormOutputs[] = {"Y", nullptr};
constexpr const char* kSkipGroupNormOutputs[] = {"Y", "S", nullptr};
enum { kActivation, kChannelsLast, kEpsilon, kGroups };  // indices into kAttrs
constexpr oc_attr_spec kAttrs[] = {{"activation", OC_ATTR_INT},
                                   {"channels_last", OC_ATTR_INT},
                                   {"epsilon", OC_ATTR_FLOAT},
                                   {"groups", OC_ATTR_INT},
                                   {nullptr, 0}};
// T (X, skip, bias, Y, S) and M (gamma, beta): float or float16 each
constexpr int32_t kGroupNormSignatures[][4] = {  // X, gamma, beta, Y
    {OC_FLOAT, OC_FLOAT, OC_FLOAT, OC_FLOAT}, {OC_FLOAT, OC_FLOAT16, OC_FLOAT16, OC_FLOAT},
    {OC_FLOAT16, OC_FLOAT, OC_FLOAT, OC_FLOAT16}, {OC_FLOAT16, OC_FLOAT16, OC_FLOAT16, OC_FLOAT16}};
constexpr int32_t kSkipGroupNormSignatures[][7] = {  // X, gamma, beta, skip, bias, Y, S
    {OC_FLOAT, OC_FLOAT, OC_FLOAT, OC_FLOAT, OC_FLOAT, OC_FLOAT, OC_FLOAT},
    {OC_FLOAT, OC_FLOAT16, OC_FLOAT16, OC_FLOAT, OC_FLOAT, OC_FLOAT, OC_FLOAT},
    {OC_FLOAT16, OC_FLOAT, OC_FLOAT, OC_FLOAT16, OC_FLOAT16, OC_FLOAT16, OC_FLOAT16},
    {OC_FLOAT16, OC_FLOAT16, OC_FLOAT16, OC_FLOAT16, OC_FLOAT16, OC_FLOAT16, OC_FLOAT16}};
constexpr oc::Spec kGroupNormSpec = {kGroupNormInputs, kGroupNormOutputs, kAttrs,
                                     OC_SIGNATURES(kGroupNormSignatures), nullptr};
constexpr oc::Spec kSkipGroupNormSpec = {kSkipGroupNormInputs, kSkipGroupNormOutputs, kAttrs,
                                         OC_SIGNATURES(kSkipGroupNormSignatures),
                                         nullptr};

enum { kX, kGamma, kBeta, kSkip, kBias };

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
int check(oc::Context& ctx, bool skip_op, Shape* s) {
  const oc_tensor& x = ctx.input(kX);
  s->nhwc = ctx.attr_int(kChannelsLast) != 0;
  if (x.rank != 4)
    return ctx.bad_shape(kX, "X", s->nhwc ? "expected 4 dimensions (N, H, W, C) with channels_last=1"
                                          : "expected 4 dimensions (N, C, H, W) with channels_last=0");
  s->N = x.shape[0];
  s->C = s->nhwc ? x.shape[3] : x.shape[1];
  s->HW = s->nhwc ? x.shape[1] * x.shape[2] : x.shape[2] * x.shape[3];
  const int64_t groups = ctx.attr_int(kGroups);
  if (groups <= 0 || s->C % groups != 0)
    return ctx.fail(OC_INVALID_ARGUMENT, "attribute groups=%lld does not divide the %lld channels of X",
                    (long long)groups, (long long)s->C);
  char what[128];
  snprintf(what, sizeof what, "expected (C,) = (%lld,), the channels of X", (long long)s->C);
  if (!is_channel_vector(ctx.input(kGamma), s->C)) return ctx.bad_shape(kGamma, "gamma", what);
  if (!is_channel_vector(ctx.input(kBeta), s->C)) return ctx.bad_shape(kBeta, "beta", what);
  if (!skip_op) return OC_OK;
  const oc_tensor* bias = optional_input(ctx, kBias);
  if (bias && !is_channel_vector(*bias, s->C)) return ctx.bad_shape(kBias, "bias", what);
  const oc_tensor& k = ctx.input(kSkip);
  bool same = k.rank == 4;
  for (int32_t d = 0; same && d < 4; ++d) same = k.shape[d] == x.shape[d];
  const bool nc = (k.rank == 2 && k.shape[0] == s->N && k.shape[1] == s->C) ||
                  (k.rank == 4 && k.shape[0] == s->N &&
                   (s->nhwc ? k.shape[1] == 1 && k.shape[2] == 1 && k.shape[3] == s->C
                            : k.shape[1] == s->C && k.shape[2] == 1 && k.shape[3] == 1));
  if (!same && !nc)
    return ctx.bad_shape(kSkip, "skip", s->nhwc ? "expected X's shape, (N, 1, 1, C) or (N, C)"
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

int compute(oc::Context& ctx, bool skip_op) {
  Shape sh = {};
  if (int rc = check(ctx, skip_op, &sh)) return rc;
  const oc_tensor& x = ctx.input(kX);
  void* y = nullptr;
  void* s = nullptr;
  if (int rc = ctx.output(0, x, &y)) return rc;
  if (skip_op && ctx.raw()->n_outputs > 1)
    if (int rc = ctx.output(1, x, &s)) return rc;
  if (x.size == 0 || y == nullptr) return OC_OK;

  // gamma, beta (M, which may be float16 whatever X is) and bias (T) as float: 3*C values
  const int64_t C = sh.C;
  const oc_tensor* skip = skip_op ? &ctx.input(kSkip) : nullptr;
  const oc_tensor* bias = skip_op ? optional_input(ctx, kBias) : nullptr;
  std::unique_ptr<float[]> gb(new float[3 * C]);
  const int32_t m_type = ctx.input(kGamma).dtype;
  if (m_type != OC_FLOAT && m_type != OC_FLOAT16)
    return ctx.fail(OC_INVALID_ARGUMENT, "gamma has element type %s; expected float or float16",
                    oc::dtype_name(m_type));
  for (int32_t i = 0; i < 2; ++i) {
    const void* p = ctx.input(kGamma + i).data;
    for (int64_t c = 0; c < C; ++c)
      gb[i * C + c] = m_type == OC_FLOAT16 ? oc_half_to_float(static_cast<const uint16_t*>(p)[c])
                                           : static_cast<const float*>(p)[c];
  }

  for (int64_t c = 0; c < C; ++c)
    gb[2 * C + c] = !bias ? 0.0f
                    : x.dtype == OC_FLOAT16 ? oc_half_to_float(static_cast<const uint16_t*>(bias->data)[c])
                                            : static_cast<const float*>(bias->data)[c];
  const bool silu = ctx.attr_int(kActivation) == 1;
  return oc::dispatch<float, oc::half>(ctx, x.dtype, [&](auto tag) {
    using S = std::conditional_t<std::is_same_v<decltype(tag), oc::half>, uint16_t, float>;
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
    j.G = ctx.attr_int(kGroups);
    j.eps = ctx.attr_float(kEpsilon);
    return silu ? run_typed<S, true>(ctx, j, sh.nhwc) : run_typed<S, false>(ctx, j, sh.nhwc);
  });
}

int group_norm_cpu(oc::Context& ctx) { return compute(ctx, false); }
int skip_group_norm_cpu(oc::Context& ctx) { return compute(ctx, true); }

}  // namespace

OC_KERNEL(contrib_group_norm, cpu, kGroupNormSpec, group_norm_cpu)
OC_KERNEL(skip_group_norm, cpu, kSkipGroupNormSpec, skip_group_norm_cpu)
