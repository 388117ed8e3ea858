// Kernels whose create reads what a node is made with: a constant input (an initializer), a session
// configuration entry, a tensor attribute. Compiled by tests/test_constant_inputs.py,
// tests/test_config_entries.py and tests/test_tensor_attribute.py
// into a package's plain library and run by every path.
#include <string>
#include <unordered_map>
#include <vector>

#include "ortcustom/kernel.hpp"

namespace {

// Y[j] = the index of X[j] in `vocab`, -1 where absent: the map is built once, in create, from the
// constant input; compute never reads `vocab`.
const char* const kIn[] = {"X", "vocab", nullptr};
const char* const kOut[] = {"Y", nullptr};
const int32_t kSig[][3] = {{OC_STRING, OC_STRING, OC_INT64}};
constexpr oc::Spec kLookupSpec = {kIn, kOut, nullptr, OC_SIGNATURES(kSig), nullptr};

struct Vocab {
  std::unordered_map<std::string, int64_t> index;
};

int lookup_create(oc::Context& ctx, void** state) {
  const oc_tensor& v = ctx.input(1);
  if (!v.present || v.data == nullptr && v.size > 0) return ctx.fail(OC_FAIL, "create got no vocab data");
  if (v.rank != 1) return ctx.fail(OC_INVALID_ARGUMENT, "vocab must be 1-D, got rank %d", (int)v.rank);
  Vocab* s = new Vocab();
  const oc_string* w = static_cast<const oc_string*>(v.data);
  for (int64_t j = 0; j < v.size; ++j) s->index.emplace(std::string(w[j].data, (size_t)w[j].size), j);
  *state = s;
  return OC_OK;
}
void lookup_destroy(void* state) { delete static_cast<Vocab*>(state); }

int lookup(oc::Context& ctx) {
  const Vocab* s = ctx.state<Vocab>();
  const oc_tensor& x = ctx.input(0);
  int64_t* y;
  if (int rc = ctx.output(0, x, &y)) return rc;
  const oc_string* e = ctx.data<oc_string>(0);
  for (int64_t j = 0; y && j < x.size; ++j) {
    auto it = s->index.find(std::string(e[j].data, (size_t)e[j].size));
    y[j] = it == s->index.end() ? -1 : it->second;
  }
  return OC_OK;
}

// Y = X * the sum of `weights` (float, constant, optional: absent means 1), summed once in create.
const char* const kScaleIn[] = {"X", "weights", nullptr};
const int32_t kScaleSig[][3] = {{OC_FLOAT, OC_FLOAT, OC_FLOAT}};
constexpr oc::Spec kScaleSpec = {kScaleIn, kOut, nullptr, OC_SIGNATURES(kScaleSig), nullptr};

int scale_create(oc::Context& ctx, void** state) {
  const oc_tensor& w = ctx.input(1);
  float* sum = new float(w.present ? 0.0f : 1.0f);
  for (int64_t j = 0; w.present && j < w.size; ++j) *sum += static_cast<const float*>(w.data)[j];
  *state = sum;
  return OC_OK;
}
void scale_destroy(void* state) { delete static_cast<float*>(state); }

int scale(oc::Context& ctx) {
  const float k = *ctx.state<float>();
  const oc_tensor& x = ctx.input(0);
  float* y;
  if (int rc = ctx.output(0, x, &y)) return rc;
  for (int64_t j = 0; y && j < x.size; ++j) y[j] = static_cast<const float*>(x.data)[j] * k;
  return OC_OK;
}

// Y (string, (2,)) = the configuration entry "custom_op.ConfigEcho.<key attribute>" as create read it
// and as compute reads it, "(unset)" where it is not set; a runtime that cannot tell fails create.
const char* const kEchoIn[] = {"X", nullptr};
const int32_t kEchoSig[][2] = {{OC_FLOAT, OC_STRING}};
const oc_attr_spec kEchoAttrs[] = {{"key", OC_ATTR_STRING}, {nullptr, 0}};
constexpr oc::Spec kEchoSpec = {kEchoIn, kOut, kEchoAttrs, OC_SIGNATURES(kEchoSig), nullptr};

int read_entry(oc::Context& ctx, std::string* out) {
  const std::string key = std::string("custom_op.ConfigEcho.") + ctx.attr_string(0);
  const char* v = nullptr;
  if (int rc = ctx.config(key.c_str(), &v)) return rc;
  *out = v ? v : "(unset)";
  return OC_OK;
}
int echo_create(oc::Context& ctx, void** state) {
  std::string* s = new std::string();
  if (int rc = read_entry(ctx, s)) {
    delete s;
    return rc;
  }
  *state = s;
  return OC_OK;
}
void echo_destroy(void* state) { delete static_cast<std::string*>(state); }
int echo(oc::Context& ctx) {
  const std::string& created = *ctx.state<std::string>();
  std::string now;
  if (int rc = read_entry(ctx, &now)) return rc;
  const int64_t shape[] = {2};
  oc_string* y;
  if (int rc = ctx.output(0, shape, 1, &y)) return rc;
  if (int rc = ctx.set_string(0, 0, created.data(), (int64_t)created.size())) return rc;
  return ctx.set_string(0, 1, now.data(), (int64_t)now.size());
}

// Y = X + the sum of the tensor attribute `table` (float or int64; any shape); Z (string) = the
// elements of the tensor attribute `names` joined with "|" (a string tensor).
const char* const kTableOut[] = {"Y", "Z", nullptr};
const int32_t kTableSig[][3] = {{OC_FLOAT, OC_FLOAT, OC_STRING}};
const oc_attr_spec kTableAttrs[] = {{"table", OC_ATTR_TENSOR}, {"names", OC_ATTR_TENSOR}, {nullptr, 0}};
constexpr oc::Spec kTableSpec = {kEchoIn, kTableOut, kTableAttrs, OC_SIGNATURES(kTableSig), nullptr};
int table_sum(oc::Context& ctx) {
  const oc_tensor& t = oc::attr_value<OC_ATTR_TENSOR>(ctx.attr(0));
  const oc_tensor& names = oc::attr_value<OC_ATTR_TENSOR>(ctx.attr(1));
  if (names.dtype != OC_STRING) return ctx.fail(OC_INVALID_ARGUMENT, "names must be a string tensor");
  double sum = 0;
  int rc = oc::dispatch<float, int64_t>(ctx, t.dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t j = 0; j < t.size; ++j) sum += (double)static_cast<const T*>(t.data)[j];
    return (int)OC_OK;
  });
  if (rc) return rc;
  const oc_tensor& x = ctx.input(0);
  float* y;
  if ((rc = ctx.output(0, x, &y))) return rc;
  for (int64_t j = 0; y && j < x.size; ++j) y[j] = static_cast<const float*>(x.data)[j] + (float)sum;
  std::string joined;
  const oc_string* e = static_cast<const oc_string*>(names.data);
  for (int64_t j = 0; j < names.size; ++j) joined.append(j ? "|" : "").append(e[j].data, (size_t)e[j].size);
  const int64_t one[] = {1};
  oc_string* z;
  if ((rc = ctx.output(1, one, 1, &z))) return rc;
  return ctx.set_string(1, 0, joined.data(), (int64_t)joined.size());
}

}  // namespace

OC_KERNEL(table_sum, cpu, kTableSpec, table_sum)
OC_KERNEL_STATEFUL(config_echo, cpu, kEchoSpec, echo_create, echo_destroy, echo)
OC_KERNEL_STATEFUL(vocab_lookup, cpu, kLookupSpec, lookup_create, lookup_destroy, lookup)
OC_KERNEL_STATEFUL(sum_scale, cpu, kScaleSpec, scale_create, scale_destroy, scale)
