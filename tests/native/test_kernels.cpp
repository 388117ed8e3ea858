// Kernels of a plain shared library, compiled by tests/test_native_libraries.py against the
// installed headers: one with create/destroy and an attribute of every kind (a hand-filled
// oc_kernel, as a C kernel writes it), and ones that are wrong on purpose.
#include <stdlib.h>
#include <string.h>

#include "ortcustom/kernel.hpp"

namespace {

int destroyed = 0;

// Offset: Y = X + c (mode "add") or X * c (mode "mul"), c = k + f + sum(ks) + sum(fs), computed
// once in create.
const char* const kIn[] = {"X", nullptr};
const char* const kOut[] = {"Y", nullptr};
const oc_attr_spec kAttrs[] = {{"mode", OC_ATTR_STRING}, {"k", OC_ATTR_INT}, {"f", OC_ATTR_FLOAT},
                               {"ks", OC_ATTR_INTS},     {"fs", OC_ATTR_FLOATS}, {nullptr, 0}};
const int32_t kFloat[][2] = {{OC_FLOAT, OC_FLOAT}};  // X, Y

struct State {
  bool mul;
  float c;
};

int offset_create(oc_context* ctx, void** state) {
  const oc_attr* a = ctx->attrs;
  bool mul = strcmp(a[0].s, "mul") == 0;
  if (!mul && strcmp(a[0].s, "add") != 0) {
    char msg[128];
    snprintf(msg, sizeof msg, "mode must be 'add' or 'mul', got '%s'", a[0].s);
    return oc_fail(ctx, OC_INVALID_ARGUMENT, msg);
  }
  double c = (double)a[1].i + a[2].f;
  for (int64_t i = 0; i < a[3].count; ++i) c += (double)a[3].ints[i];
  for (int64_t i = 0; i < a[4].count; ++i) c += a[4].floats[i];
  State* s = static_cast<State*>(malloc(sizeof(State)));
  if (s == nullptr) return oc_fail(ctx, OC_FAIL, "out of memory");
  s->mul = mul;
  s->c = (float)c;
  *state = s;
  return OC_OK;
}

void offset_destroy(void* state) {
  free(state);
  ++destroyed;
}

int offset_compute(oc_context* ctx) {
  const State* s = static_cast<const State*>(ctx->state);
  const oc_tensor* x = &ctx->inputs[0];
  void* out;
  if (int rc = oc_output(ctx, 0, x->shape, x->rank, &out)) return rc;
  const float* xd = static_cast<const float*>(x->data);
  float* y = static_cast<float*>(out);
  for (int64_t i = 0; y != nullptr && i < x->size; ++i) y[i] = s->mul ? xd[i] * s->c : xd[i] + s->c;
  return OC_OK;
}

const oc_kernel kOffset = {OC_ABI_VERSION, OC_CPU, "offset", kIn, kOut, kAttrs, kFloat[0], 1, nullptr,
                           offset_create, offset_destroy, offset_compute};
const oc_kernel kOldAbi = {OC_ABI_VERSION - 1, OC_CPU, "old_abi", kIn, kOut, nullptr, kFloat[0], 1,
                           nullptr, nullptr, nullptr, offset_compute};
const oc_kernel kNewAbi = {OC_ABI_VERSION + 1, OC_CPU, "new_abi", kIn, kOut, nullptr, kFloat[0], 1,
                           nullptr, nullptr, nullptr, offset_compute};

// Copy: Y = X, through kernel.hpp; its input is named "A" (declarations say "X": a mismatch).
const char* const kInA[] = {"A", nullptr};
constexpr oc::Spec kCopyA = {kInA, kOut, nullptr, OC_SIGNATURES(kFloat), nullptr};
int copy(oc::Context& ctx) {
  float* y;
  if (int rc = ctx.output(0, ctx.input(0), &y)) return rc;
  if (y != nullptr) memcpy(y, ctx.input(0).data, sizeof(float) * ctx.input(0).size);
  return OC_OK;
}

}  // namespace

extern "C" {
OC_EXPORT const oc_kernel* ortcustom_kernel_offset_cpu(void) { return &kOffset; }
OC_EXPORT const oc_kernel* ortcustom_kernel_old_abi_cpu(void) { return &kOldAbi; }
OC_EXPORT const oc_kernel* ortcustom_kernel_new_abi_cpu(void) { return &kNewAbi; }
OC_EXPORT const oc_kernel* ortcustom_kernel_null_cpu(void) { return nullptr; }
OC_EXPORT int test_kernels_destroyed(void) { return destroyed; }
}

OC_KERNEL(input_named_a, cpu, kCopyA, copy)
