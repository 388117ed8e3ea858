// StringLower / StringUpper: ASCII and Latin-1 letters, as onnxruntime-extensions' ops do; every
// other byte as is. In UTF-8 a Latin-1 letter is 0xC3 then one byte, and its other case differs by
// 0x20 in that byte, so the output has the input's size and needs no decoding beyond the 0xC3 lead.
#include <algorithm>
#include <string>

#include "text_ops_spec.h"

namespace {

// The offset of the first byte that changes case (n: none).
template <bool Upper>
int64_t first_change(const char* in, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    const unsigned char c = static_cast<unsigned char>(in[k]);
    if (Upper ? (c >= 'a' && c <= 'z') : (c >= 'A' && c <= 'Z')) return k;
    if (c == 0xC3 && k + 1 < n) {
      const unsigned char d = static_cast<unsigned char>(in[k + 1]);
      if (Upper ? (d >= 0xA0 && d <= 0xBE && d != 0xB7) : (d >= 0x80 && d <= 0x9E && d != 0x97)) return k;
      ++k;
    }
  }
  return n;
}

template <bool Upper>
void convert(const char* in, int64_t n, int64_t from, std::string& out) {
  out.assign(in, static_cast<size_t>(n));
  for (int64_t k = from; k < n; ++k) {
    const unsigned char c = static_cast<unsigned char>(out[k]);
    if (Upper ? (c >= 'a' && c <= 'z') : (c >= 'A' && c <= 'Z')) {
      out[k] = static_cast<char>(c ^ 0x20);
    } else if (c == 0xC3 && k + 1 < n) {  // U+00C0..U+00FF (input is valid UTF-8: a lead byte)
      const unsigned char d = static_cast<unsigned char>(out[k + 1]);
      // upper: U+00E0..U+00FE but U+00F7 (division sign); lower: U+00C0..U+00DE but U+00D7 (times)
      if (Upper ? (d >= 0xA0 && d <= 0xBE && d != 0xB7) : (d >= 0x80 && d <= 0x9E && d != 0x97))
        out[k + 1] = static_cast<char>(d ^ 0x20);
      ++k;
    }
  }
}

template <bool Upper>
int change_case(oc::Context& ctx) {
  const oc_tensor& x = ctx.input(0);
  oc_string* y;
  if (int rc = ctx.output(0, x, &y)) return rc;
  const oc_string* s = ctx.data<oc_string>(0);
  // a few elements a task: one string's work is too small to be worth a task of its own
  constexpr int64_t kPerTask = 64;
  const int64_t tasks = (x.size + kPerTask - 1) / kPerTask;
  ctx.parallel_for(static_cast<size_t>(tasks), [&](size_t t) {
    std::string buf;
    const int64_t end = std::min<int64_t>(x.size, (static_cast<int64_t>(t) + 1) * kPerTask);
    for (int64_t j = static_cast<int64_t>(t) * kPerTask; j < end; ++j) {
      const int64_t from = first_change<Upper>(s[j].data, s[j].size);
      if (from == s[j].size) {  // nothing to change: the input's bytes as they are
        if (ctx.set_string(0, j, s[j].data, s[j].size) != OC_OK) return;
        continue;
      }
      convert<Upper>(s[j].data, s[j].size, from, buf);
      if (ctx.set_string(0, j, buf.data(), static_cast<int64_t>(buf.size())) != OC_OK) return;
    }
  });
  return OC_OK;
}

int string_lower(oc::Context& ctx) { return change_case<false>(ctx); }
int string_upper(oc::Context& ctx) { return change_case<true>(ctx); }

}  // namespace

OC_KERNEL(string_lower, cpu, text_ops::spec::string_lower::spec, string_lower)
OC_KERNEL(string_upper, cpu, text_ops::spec::string_upper::spec, string_upper)
