// Kernels at the edges of what the glue checks, compiled by tests/test_glue_checks_everywhere.py
// into a package's plain library (with a table generated from its declarations) and run by every
// path: a session from Python, the plain library from Python without ortcustom and from a C host,
// and direct calls.
#include <string.h>

#include "ortcustom/kernel.hpp"

namespace {

const char* const kIn[] = {"X", nullptr};
const char* const kOut[] = {"Y", nullptr};
const int32_t kFloat[][2] = {{OC_FLOAT, OC_FLOAT}};

int copy_x(oc::Context& ctx) {
  float* y;
  if (int rc = ctx.output(0, ctx.input(0), &y)) return rc;
  if (y) memcpy(y, ctx.input(0).data, sizeof(float) * (size_t)ctx.input(0).size);
  return OC_OK;
}

// Asks for `bytes` of scratch memory: a size computed negative arrives as a huge size_t.
const oc_attr_spec kScratchAttrs[] = {{"bytes", OC_ATTR_INT}, {nullptr, 0}};
constexpr oc::Spec kScratchSpec = {kIn, kOut, kScratchAttrs, OC_SIGNATURES(kFloat), nullptr};
int scratch_of(oc::Context& ctx) {
  void* p = nullptr;
  if (int rc = ctx.scratch((size_t)ctx.attr_int(0), &p)) return rc;
  return copy_x(ctx);
}

// Y = X + k + len(ks) (k an int attribute with bounds; ks an ints attribute; tag, a string, unread).
const oc_attr_spec kBoundsAttrs[] = {{"k", OC_ATTR_INT}, {"ks", OC_ATTR_INTS}, {"tag", OC_ATTR_STRING}, {nullptr, 0}};
constexpr oc::Spec kBoundsSpec = {kIn, kOut, kBoundsAttrs, OC_SIGNATURES(kFloat), nullptr};
int int_bounds(oc::Context& ctx) {
  float* y;
  if (int rc = ctx.output(0, ctx.input(0), &y)) return rc;
  const float* x = static_cast<const float*>(ctx.input(0).data);
  for (int64_t i = 0; i < ctx.input(0).size; ++i) y[i] = x[i] + (float)ctx.attr_int(0) + (float)ctx.attr(1).count;
  return OC_OK;
}

// Y of shape (n,), zeros: n from an attribute, as big as asked.
const oc_attr_spec kSizedAttrs[] = {{"n", OC_ATTR_INT}, {nullptr, 0}};
constexpr oc::Spec kSizedSpec = {kIn, kOut, kSizedAttrs, OC_SIGNATURES(kFloat), nullptr};
int sized(oc::Context& ctx) {
  const int64_t shape[] = {ctx.attr_int(0)};
  float* y;
  if (int rc = ctx.output(0, shape, 1, &y)) return rc;
  if (y) memset(y, 0, sizeof(float) * (size_t)shape[0]);
  return OC_OK;
}

}  // namespace

OC_KERNEL(scratch_of, cpu, kScratchSpec, scratch_of)
OC_KERNEL(int_bounds, cpu, kBoundsSpec, int_bounds)
OC_KERNEL(sized, cpu, kSizedSpec, sized)
