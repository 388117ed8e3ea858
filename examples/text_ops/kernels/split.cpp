// StringSplit, as onnxruntime-extensions' StringSplit: input 1-D; each character of the scalar sep
// is a delimiter; an empty element gives no token; skip_empty drops empty tokens. An empty sep gives
// one token per character. Characters are UTF-8 ones (extensions splits at bytes: the same where
// sep, or the text for an empty sep, is ASCII; elsewhere it makes invalid UTF-8). Outputs: indices (n, 2) (row, position), values (n,), shape (rows, most tokens).
#include <string.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "text_ops_spec.h"

namespace {

using Spec = text_ops::spec::string_split;

// The end of the UTF-8 character starting at byte k of s (n bytes, valid UTF-8: ortcustom checks).
int64_t char_end(const char* s, int64_t n, int64_t k) {
  int64_t e = k + 1;
  while (e < n && (static_cast<unsigned char>(s[e]) & 0xC0) == 0x80) ++e;
  return e;
}

struct Token {
  int64_t row, col;
  const char* data;
  int64_t size;
};

int string_split(oc::Context& ctx) {
  const oc_tensor& x = ctx.input(Spec::in::input);
  if (x.rank != 1) return ctx.bad_shape(Spec::in::input, "input", "expected a 1-D tensor");
  if (ctx.input(Spec::in::sep).size != 1) return ctx.bad_shape(Spec::in::sep, "sep", "expected one string");
  if (ctx.input(Spec::in::skip_empty).size != 1)
    return ctx.bad_shape(Spec::in::skip_empty, "skip_empty", "expected one value");
  const oc_string sep = *ctx.data<oc_string>(Spec::in::sep);
  const bool skip_empty = *ctx.data<bool>(Spec::in::skip_empty);
  const oc_string* s = ctx.data<oc_string>(Spec::in::input);
  bool delim[128] = {};  // sep's ASCII characters; its others (rare) in `wide`
  std::vector<std::string_view> wide;
  for (int64_t k = 0; k < sep.size;) {
    const int64_t e = char_end(sep.data, sep.size, k);
    if (e == k + 1) delim[static_cast<unsigned char>(sep.data[k])] = true;
    else wide.emplace_back(sep.data + k, static_cast<size_t>(e - k));
    k = e;
  }

  std::vector<Token> tokens;
  int64_t widest = 0;
  for (int64_t r = 0; r < x.size; ++r) {
    const char* p = s[r].data;
    const int64_t n = s[r].size;
    int64_t col = 0;
    if (n == 0) continue;
    if (sep.size == 0) {  // one token per UTF-8 character: a lead byte and its continuation bytes
      for (int64_t k = 0; k < n;) {
        const int64_t e = char_end(p, n, k);
        tokens.push_back({r, col++, p + k, e - k});
        k = e;
      }
    } else {
      int64_t start = 0;
      for (int64_t k = 0; k <= n;) {
        const int64_t e = k == n ? n + 1 : char_end(p, n, k);
        const bool cut = k == n || (e == k + 1 ? delim[static_cast<unsigned char>(p[k])]
                                              : std::find(wide.begin(), wide.end(),
                                                          std::string_view(p + k, e - k)) != wide.end());
        if (cut) {
          if (k > start || !skip_empty) tokens.push_back({r, col++, p + start, k - start});
          start = e;
        }
        k = e;
      }
    }
    if (col > widest) widest = col;
  }

  const int64_t n = static_cast<int64_t>(tokens.size());
  const int64_t ishape[] = {n, 2}, vshape[] = {n}, sshape[] = {2};
  int64_t *indices, *shape;
  oc_string* values;
  if (int rc = ctx.output(Spec::out::indices, ishape, 2, &indices)) return rc;
  if (int rc = ctx.output(Spec::out::values, vshape, 1, &values)) return rc;
  if (int rc = ctx.output(Spec::out::shape, sshape, 1, &shape)) return rc;
  shape[0] = x.size;
  shape[1] = widest;
  for (int64_t t = 0; t < n; ++t) {
    indices[2 * t] = tokens[t].row;
    indices[2 * t + 1] = tokens[t].col;
  }
  // the tokens' bytes are copied into ORT's elements (slices of the input: not checked again), shared
  // by the pool in tasks of a millisecond or so (less is done sooner here than handed to a busy pool)
  constexpr int64_t kPerTask = 1 << 15;
  ctx.parallel_for(static_cast<size_t>((n + kPerTask - 1) / kPerTask), [&](size_t task) {
    const int64_t end = std::min<int64_t>(n, (static_cast<int64_t>(task) + 1) * kPerTask);
    for (int64_t t = static_cast<int64_t>(task) * kPerTask; t < end; ++t)
      if (ctx.set_string(Spec::out::values, t, tokens[t].data, tokens[t].size) != OC_OK) return;
  });
  return OC_OK;
}

}  // namespace

OC_KERNEL(string_split, cpu, Spec::spec, string_split)
