// A kernel that hands back a string attribute's bytes as they reach it (count bytes, NULs and
// non-UTF-8 bytes included), compiled by tests/test_string_attribute_bytes.py into a package's
// plain library and run by every path.
#include <string.h>

#include "ortcustom/kernel.hpp"

namespace {

const char* const kIn[] = {"X", nullptr};
const char* const kOut[] = {"Y", nullptr};
const int32_t kSig[][2] = {{OC_FLOAT, OC_UINT8}};
const oc_attr_spec kAttrs[] = {{"blob", OC_ATTR_STRING}, {nullptr, 0}};
constexpr oc::Spec kSpec = {kIn, kOut, kAttrs, OC_SIGNATURES(kSig), nullptr};

// Y (uint8, (count,)) = the attribute's bytes; fails unless the host NUL-terminates them too.
int attr_bytes(oc::Context& ctx) {
  const oc_attr& a = ctx.attr(0);
  if (a.s == nullptr || a.s[a.count] != '\0') return ctx.fail(OC_FAIL, "blob: not NUL-terminated after count bytes");
  const int64_t shape[] = {a.count};
  uint8_t* y;
  if (int rc = ctx.output(0, shape, 1, &y)) return rc;
  if (y) memcpy(y, a.s, (size_t)a.count);
  return OC_OK;
}

// Y (uint8) = each element of the strings attribute `words`, its lengths[j] bytes then '|'; fails
// unless each is NUL-terminated after its length.
const oc_attr_spec kStringsAttrs[] = {{"words", OC_ATTR_STRINGS}, {nullptr, 0}};
constexpr oc::Spec kStringsSpec = {kIn, kOut, kStringsAttrs, OC_SIGNATURES(kSig), nullptr};
int attr_strings(oc::Context& ctx) {
  const oc_attr& a = ctx.attr(0);
  int64_t n = 0;
  for (int64_t j = 0; j < a.count; ++j) {
    if (a.strings[j] == nullptr || a.strings[j][a.lengths[j]] != '\0')
      return ctx.fail(OC_FAIL, "words[%lld]: not NUL-terminated after its length", (long long)j);
    n += a.lengths[j] + 1;
  }
  const int64_t shape[] = {n};
  uint8_t* y;
  if (int rc = ctx.output(0, shape, 1, &y)) return rc;
  for (int64_t j = 0; y && j < a.count; ++j) {
    memcpy(y, a.strings[j], (size_t)a.lengths[j]);
    y += a.lengths[j];
    *y++ = '|';
  }
  return OC_OK;
}

}  // namespace

OC_KERNEL(attr_bytes, cpu, kSpec, attr_bytes)
OC_KERNEL(attr_strings, cpu, kStringsSpec, attr_strings)
