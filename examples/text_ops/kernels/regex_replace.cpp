// StringRegexReplace, as onnxruntime-extensions' StringRegexReplace: each match of pattern in each
// element of text replaced by rewrite (\0..\9 name the match and its groups, \\ a backslash); every
// match, or only the first with global_replace=0. pattern and rewrite are constant inputs: the
// regex is compiled once, when the node's kernel is created. std::regex, ECMAScript syntax (RE2's
// for the patterns both read alike), over bytes: the replacement loop is RE2's GlobalReplace (an
// empty match right after the previous match is skipped, a whole UTF-8 character at a time), but a
// pattern that matches part of a UTF-8 character (a byte class) makes output that is not UTF-8,
// which ortcustom refuses with an error naming the element.
#include <algorithm>
#include <regex>
#include <string>

#include "text_ops_spec.h"

namespace {

using Spec = text_ops::spec::string_regex_replace;

struct Compiled {
  std::regex re;
  std::string format;  // rewrite in std::regex_replace's format syntax ($1, $$)
  bool global;
};

// One-element string constant `i`, into *out.
int read_one(oc::Context& ctx, int32_t i, const char* name, std::string* out) {
  const oc_tensor& t = ctx.input(i);
  if (t.size != 1) return ctx.bad_shape(i, name, "expected one string");
  const oc_string* s = static_cast<const oc_string*>(t.data);
  out->assign(s->data, static_cast<size_t>(s->size));
  return OC_OK;
}

int regex_create(oc::Context& ctx, void** state) {
  std::string pattern, rewrite;
  if (int rc = read_one(ctx, Spec::in::pattern, "pattern", &pattern)) return rc;
  if (int rc = read_one(ctx, Spec::in::rewrite, "rewrite", &rewrite)) return rc;
  auto* c = new Compiled();
  try {
    c->re.assign(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    delete c;
    return ctx.fail(OC_INVALID_ARGUMENT, "pattern '%s' is not a valid regular expression: %s",
                    pattern.c_str(), e.what());
  }
  for (size_t k = 0; k < rewrite.size(); ++k) {  // \N -> $N, \\ -> \, $ -> $$
    const char ch = rewrite[k];
    if (ch == '\\' && k + 1 < rewrite.size() && rewrite[k + 1] >= '0' && rewrite[k + 1] <= '9') {
      if (rewrite[k + 1] == '0') c->format += "$&";
      else c->format += {'$', rewrite[k + 1]};
      ++k;
    } else if (ch == '\\' && k + 1 < rewrite.size() && rewrite[k + 1] == '\\') {
      c->format += '\\';
      ++k;
    } else if (ch == '\\') {
      delete c;
      return ctx.fail(OC_INVALID_ARGUMENT, "rewrite '%s': a backslash must be followed by a digit "
                      "or a backslash", rewrite.c_str());
    } else if (ch == '$') {
      c->format += "$$";
    } else {
      c->format += ch;
    }
  }
  c->global = Spec::attr::global_replace(ctx) != 0;
  *state = c;
  return OC_OK;
}

void regex_destroy(void* state) { delete static_cast<Compiled*>(state); }

// text [b, e) with c's matches replaced, into out (cleared first).
void replace(const Compiled& c, const char* b, const char* e, std::string& out) {
  out.clear();
  std::cmatch m;
  const char* p = b;
  const char* last_end = nullptr;
  while (p <= e) {
    const auto flags = p == b ? std::regex_constants::match_default : std::regex_constants::match_prev_avail;
    if (!std::regex_search(p, e, m, c.re, flags)) break;
    out.append(p, m[0].first);
    if (m[0].first == last_end && m[0].length() == 0) {  // no empty match at the last one's end
      if (p == e) break;
      const char* next = p + 1;
      while (next < e && (static_cast<unsigned char>(*next) & 0xC0) == 0x80) ++next;
      out.append(p, next);
      p = next;
      continue;
    }
    m.format(std::back_inserter(out), c.format);
    p = last_end = m[0].second;
    if (!c.global) break;
  }
  if (p < e) out.append(p, e);
}

int string_regex_replace(oc::Context& ctx) {
  const Compiled& c = *ctx.state<Compiled>();
  const oc_tensor& x = ctx.input(Spec::in::text);
  oc_string* y;
  if (int rc = ctx.output(Spec::out::output, x, &y)) return rc;
  const oc_string* s = ctx.data<oc_string>(Spec::in::text);
  constexpr int64_t kPerTask = 16;
  ctx.parallel_for(static_cast<size_t>((x.size + kPerTask - 1) / kPerTask), [&](size_t task) {
    std::string out;
    const int64_t end = std::min<int64_t>(x.size, (static_cast<int64_t>(task) + 1) * kPerTask);
    for (int64_t j = static_cast<int64_t>(task) * kPerTask; j < end; ++j) {
      replace(c, s[j].data, s[j].data + s[j].size, out);
      if (ctx.set_string(Spec::out::output, j, out.data(), static_cast<int64_t>(out.size())) != OC_OK)
        return;
    }
  });
  return OC_OK;
}

}  // namespace

OC_KERNEL_STATEFUL(string_regex_replace, cpu, Spec::spec, regex_create, regex_destroy,
                   string_regex_replace)
