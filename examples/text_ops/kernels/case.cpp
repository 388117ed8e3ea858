// StringLower / StringUpper: ASCII and Latin-1 letters, as onnxruntime-extensions' ops do; every
// other byte as is. In UTF-8 a Latin-1 letter is 0xC3 then one byte, and its other case differs by
// 0x20 in that byte, so the output has the input's size and needs no decoding beyond the 0xC3 lead.
#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <string>

#include "text_ops_spec.h"

namespace {

// Whether Latin-1 letter byte d (the byte after 0xC3) changes: upper: U+00E0..U+00FE but U+00F7
// (division sign); lower: U+00C0..U+00DE but U+00D7 (times sign).
template <bool Upper>
bool latin1_changes(unsigned char d) {
  return Upper ? (d >= 0xA0 && d <= 0xBE && d != 0xB7) : (d >= 0x80 && d <= 0x9E && d != 0x97);
}

// in[0..n) converted into out[0..n); whether any byte changed. Eight bytes at a time while they
// hold no 0xC3 (the only lead byte of a letter that changes besides ASCII): in each byte below
// 0x80 (the low seven bits, so no carry between bytes), adding (0x80 - first letter) sets the high
// bit from the first letter on, adding (0x80 - last letter - 1) past the last one.
template <bool Upper>
bool convert(const char* in, int64_t n, char* out) {
  constexpr uint64_t ones = 0x0101010101010101ull, high = ones * 0x80, low7 = ones * 0x7F;
  constexpr uint64_t from = ones * (0x80 - (Upper ? 'a' : 'A')), past = ones * (0x80 - (Upper ? 'z' : 'Z') - 1);
  uint64_t changed = 0;
  int64_t k = 0;
  while (k < n) {
    uint64_t w;
    if (k + 8 <= n) {
      memcpy(&w, in + k, 8);
      const uint64_t t = w ^ (ones * 0xC3);
      if ((~(((t & low7) + low7) | t) & high) == 0) {  // no byte is 0xC3
        const uint64_t a = w & low7;
        const uint64_t flip = ((a + from) & ~(a + past) & ~w & high) >> 2;  // 0x20 in each letter
        changed |= flip;
        w ^= flip;
        memcpy(out + k, &w, 8);
        k += 8;
        continue;
      }
    }
    const unsigned char c = static_cast<unsigned char>(in[k]);
    if (Upper ? (c >= 'a' && c <= 'z') : (c >= 'A' && c <= 'Z')) {
      out[k++] = static_cast<char>(c ^ 0x20);
      changed = 1;
    } else if (c == 0xC3 && k + 1 < n) {  // U+00C0..U+00FF (input is valid UTF-8: a lead byte)
      const unsigned char d = static_cast<unsigned char>(in[k + 1]);
      const bool flip = latin1_changes<Upper>(d);
      changed |= flip;
      out[k] = static_cast<char>(c);
      out[k + 1] = static_cast<char>(flip ? d ^ 0x20 : d);
      k += 2;
    } else {
      out[k++] = static_cast<char>(c);
    }
  }
  return changed != 0;
}

template <bool Upper>
int change_case(oc::Context& ctx) {
  const oc_tensor& x = ctx.input(0);
  oc_string* y;
  if (int rc = ctx.output(0, x, &y)) return rc;
  const oc_string* s = ctx.data<oc_string>(0);
  // about 1 MiB of text a task: less is done sooner on one thread than handed to a pool (woken
  // threads, on a busy machine, late)
  int64_t bytes = 1;
  for (int64_t j = 0; j < x.size; ++j) bytes += s[j].size;
  const int64_t kPerTask = std::max<int64_t>(1, std::min<int64_t>(x.size, x.size * (1 << 20) / bytes));
  const int64_t tasks = (x.size + kPerTask - 1) / kPerTask;
  ctx.parallel_for(static_cast<size_t>(tasks), [&](size_t t) {
    std::string buf;
    const int64_t end = std::min<int64_t>(x.size, (static_cast<int64_t>(t) + 1) * kPerTask);
    for (int64_t j = static_cast<int64_t>(t) * kPerTask; j < end; ++j) {
      if (buf.size() < static_cast<size_t>(s[j].size)) buf.resize(static_cast<size_t>(s[j].size));
      // nothing changed: the input's bytes as they are (the host knows them UTF-8 already)
      const char* out = convert<Upper>(s[j].data, s[j].size, &buf[0]) ? buf.data() : s[j].data;
      if (ctx.set_string(0, j, out, s[j].size) != OC_OK) return;
    }
  });
  return OC_OK;
}

int string_lower(oc::Context& ctx) { return change_case<false>(ctx); }
int string_upper(oc::Context& ctx) { return change_case<true>(ctx); }

}  // namespace

OC_KERNEL(string_lower, cpu, text_ops::spec::string_lower::spec, string_lower)
OC_KERNEL(string_upper, cpu, text_ops::spec::string_upper::spec, string_upper)
