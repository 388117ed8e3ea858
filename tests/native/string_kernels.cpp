// Kernels over string tensors (oc_string inputs, oc_set_string outputs), compiled by
// tests/test_string_tensors.py into a package's plain library and run by every path.
#include <string.h>

#include <string>
#include <vector>

#include "ortcustom/kernel.hpp"

namespace {

const char* const kX[] = {"X", nullptr};
const char* const kY[] = {"Y", nullptr};

// Y = X with ASCII letters upper-cased, element by element on the pool (oc_set_string from tasks).
const int32_t kStrStr[][2] = {{OC_STRING, OC_STRING}};
constexpr oc::Spec kUpperSpec = {kX, kY, nullptr, OC_SIGNATURES(kStrStr), nullptr};
int str_upper(oc::Context& ctx) {
  const oc_tensor& x = ctx.input(0);
  oc_string* y;
  if (int rc = ctx.output(0, x, &y)) return rc;
  if (y != nullptr) return ctx.fail(OC_FAIL, "a string output gave a data pointer");
  const oc_string* s = ctx.data<oc_string>(0);
  ctx.parallel_for((size_t)x.size, [&](size_t j) {
    if (s[j].data[s[j].size] != '\0') {
      ctx.fail(OC_FAIL, "element %zu is not NUL-terminated after its size", j);
      return;
    }
    std::string u(s[j].data, (size_t)s[j].size);
    for (char& c : u)
      if (c >= 'a' && c <= 'z') c = (char)(c - 'a' + 'A');
    ctx.set_string(0, (int64_t)j, u.data(), (int64_t)u.size());
  });
  return OC_OK;
}

// Y (int64) = each element's size in bytes.
const int32_t kStrInt[][2] = {{OC_STRING, OC_INT64}};
constexpr oc::Spec kLenSpec = {kX, kY, nullptr, OC_SIGNATURES(kStrInt), nullptr};
int str_len(oc::Context& ctx) {
  const oc_tensor& x = ctx.input(0);
  int64_t* y;
  if (int rc = ctx.output(0, x, &y)) return rc;
  const oc_string* s = ctx.data<oc_string>(0);
  for (int64_t j = 0; y && j < x.size; ++j) y[j] = s[j].size;
  return OC_OK;
}

// Y (1-D) = the tokens of every element of X split at `sep` (empty tokens dropped), in order:
// an output whose size only the data tells.
const oc_attr_spec kSplitAttrs[] = {{"sep", OC_ATTR_STRING}, {nullptr, 0}};
constexpr oc::Spec kSplitSpec = {kX, kY, kSplitAttrs, OC_SIGNATURES(kStrStr), nullptr};
int str_split(oc::Context& ctx) {
  const oc_tensor& x = ctx.input(0);
  const oc_attr& sep = ctx.attr(0);
  if (sep.count != 1) return ctx.fail(OC_INVALID_ARGUMENT, "sep must be one byte, got %lld", (long long)sep.count);
  const oc_string* s = ctx.data<oc_string>(0);
  std::vector<std::pair<const char*, int64_t>> tokens;
  for (int64_t j = 0; j < x.size; ++j) {
    int64_t start = 0;
    for (int64_t k = 0; k <= s[j].size; ++k)
      if (k == s[j].size || s[j].data[k] == sep.s[0]) {
        if (k > start) tokens.emplace_back(s[j].data + start, k - start);
        start = k + 1;
      }
  }
  const int64_t shape[] = {(int64_t)tokens.size()};
  oc_string* y;
  if (int rc = ctx.output(0, shape, 1, &y)) return rc;
  for (size_t t = 0; t < tokens.size(); ++t)
    if (int rc = ctx.set_string(0, (int64_t)t, tokens[t].first, tokens[t].second)) return rc;
  return OC_OK;
}

// Z = X + Y, element-wise concatenation of two string tensors of one shape.
const char* const kXY[] = {"X", "Y", nullptr};
const char* const kZ[] = {"Z", nullptr};
const int32_t kStr2Str[][3] = {{OC_STRING, OC_STRING, OC_STRING}};
constexpr oc::Spec kConcatSpec = {kXY, kZ, nullptr, OC_SIGNATURES(kStr2Str), nullptr};
int str_concat(oc::Context& ctx) {
  const oc_tensor& x = ctx.input(0);
  const oc_tensor& y = ctx.input(1);
  if (x.size != y.size) return ctx.bad_shape(1, "Y", "X and Y must have one size");
  oc_string* z;
  if (int rc = ctx.output(0, x, &z)) return rc;
  const oc_string* a = ctx.data<oc_string>(0);
  const oc_string* b = ctx.data<oc_string>(1);
  for (int64_t j = 0; j < x.size; ++j) {
    std::string s(a[j].data, (size_t)a[j].size);
    s.append(b[j].data, (size_t)b[j].size);
    if (int rc = ctx.set_string(0, j, s.data(), (int64_t)s.size())) return rc;
  }
  return OC_OK;
}

// Y = each element's bytes [start, start + size) (clipped to the element), set straight from the
// input's memory: a slice of checked input is not checked again unless it may cut a character.
const oc_attr_spec kSliceAttrs[] = {{"start", OC_ATTR_INT}, {"size", OC_ATTR_INT}, {nullptr, 0}};
constexpr oc::Spec kSliceSpec = {kX, kY, kSliceAttrs, OC_SIGNATURES(kStrStr), nullptr};
int str_slice(oc::Context& ctx) {
  const oc_tensor& x = ctx.input(0);
  oc_string* y;
  if (int rc = ctx.output(0, x, &y)) return rc;
  const oc_string* s = ctx.data<oc_string>(0);
  for (int64_t j = 0; j < x.size; ++j) {
    const int64_t from = ctx.attr_int(0) < s[j].size ? ctx.attr_int(0) : s[j].size;
    const int64_t size = ctx.attr_int(1) < s[j].size - from ? ctx.attr_int(1) : s[j].size - from;
    if (int rc = ctx.set_string(0, j, s[j].data + from, size)) return rc;
  }
  return OC_OK;
}

// Broken on purpose, by `how`: 0 sets bytes that are not UTF-8, 1 an element past the end, 2 an
// element of a float output, 3 a string before allocating the output, 4 a negative size; 5 sets
// element 0 with a NUL inside ("a\0b").
const int32_t kBadSig[][3] = {{OC_STRING, OC_STRING, OC_FLOAT}};
const char* const kBadOut[] = {"Y", "F", nullptr};
const oc_attr_spec kBadAttrs[] = {{"how", OC_ATTR_INT}, {nullptr, 0}};
constexpr oc::Spec kBadSpec = {kX, kBadOut, kBadAttrs, OC_SIGNATURES(kBadSig), nullptr};
int str_bad(oc::Context& ctx) {
  const oc_tensor& x = ctx.input(0);
  const int64_t how = ctx.attr_int(0);
  if (how == 3) return ctx.set_string(0, 0, "a", 1);
  oc_string* y;
  float* f;
  if (int rc = ctx.output(0, x, &y)) return rc;
  if (int rc = ctx.output(1, x, &f)) return rc;
  if (f) memset(f, 0, (size_t)x.size * sizeof *f);
  switch (how) {
    case 0: return ctx.set_string(0, 0, "ok\xff", 3);
    case 1: return ctx.set_string(0, x.size, "a", 1);
    case 2: return ctx.set_string(1, 0, "a", 1);
    case 4: return ctx.set_string(0, 0, "a", -1);
    case 5: return ctx.set_string(0, 0, "a\0b", 3);
    default: return OC_OK;
  }
}

}  // namespace

OC_KERNEL(str_upper, cpu, kUpperSpec, str_upper)
OC_KERNEL(str_len, cpu, kLenSpec, str_len)
OC_KERNEL(str_split, cpu, kSplitSpec, str_split)
OC_KERNEL(str_concat, cpu, kConcatSpec, str_concat)
OC_KERNEL(str_bad, cpu, kBadSpec, str_bad)
OC_KERNEL(str_slice, cpu, kSliceSpec, str_slice)
