// StringRegexReplace, as onnxruntime-extensions' StringRegexReplace: each match of pattern in each
// element of text replaced by rewrite (\0..\9 name the match and its groups, \\ a backslash); every
// match, or only the first with global_replace=0. pattern and rewrite are constant inputs: the
// regex is compiled once, when the node's kernel is created. std::regex, ECMAScript syntax (RE2's
// for the patterns both read alike), over bytes: the replacement loop is RE2's GlobalReplace (an
// empty match right after the previous match is skipped, a whole UTF-8 character at a time), but a
// pattern that matches part of a UTF-8 character (a byte class) makes output that is not UTF-8,
// which ortcustom refuses with an error naming the element.
#include <string.h>

#include <algorithm>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "text_ops_spec.h"

namespace {

using Spec = text_ops::spec::string_regex_replace;

// A piece of the rewrite: literal text, or (group >= 0) that group of the match (\0: all of it).
struct Piece {
  int group;
  std::string text;
};

struct Compiled {
  std::regex re;
  std::vector<Piece> rewrite;
  bool global;
  // The bytes a match can start with, where the pattern says so plainly (then a match is sought
  // only where one of them is): `any` otherwise.
  bool any = true;
  bool first[256] = {};
  // A pattern that is only one such class (then `plus`: a run of them), or only literal bytes, is
  // matched here, without std::regex: it has no groups.
  enum Kind { kRegex, kClass, kLiteral } kind = kRegex;
  bool plus = false;
  std::string literal;
};

// What `pattern` says of a match's first byte: it begins with a literal byte or a bracket class of
// ASCII bytes and ranges, which is not optional (no *, ?, {), and has no alternation. Anything else
// (a group, an escape, an anchor, a negated class, ...): every byte may start a match.
void first_bytes(const std::string& p, Compiled* c) {
  static const char kSpecial[] = "^$\\.*+?()[]{}|";
  if (p.empty() || p.find('|') != std::string::npos) return;
  size_t k = 0;
  bool first[256] = {};
  if (p[0] == '[') {
    for (k = 1; k < p.size() && p[k] != ']'; ++k) {
      const unsigned char lo = static_cast<unsigned char>(p[k]);
      unsigned char hi = lo;
      if (k + 2 < p.size() && p[k + 1] == '-' && p[k + 2] != ']') {
        hi = static_cast<unsigned char>(p[k + 2]);
        k += 2;
      }
      if (lo == '\\' || lo == '[' || lo == '^' || lo >= 0x80 || hi == '\\' || hi == '[' || hi >= 0x80 || hi < lo) return;
      for (unsigned b = lo; b <= hi; ++b) first[b] = true;
    }
    if (k == 1 || k >= p.size()) return;  // [] or no ]
    ++k;
  } else if (strchr(kSpecial, p[0]) == nullptr) {
    first[static_cast<unsigned char>(p[0])] = true;
    k = 1;
  } else {
    return;
  }
  if (k < p.size() && (p[k] == '*' || p[k] == '?' || p[k] == '{')) return;
  c->any = false;
  memcpy(c->first, first, sizeof first);
  if (p[0] == '[' && (k == p.size() || (k + 1 == p.size() && p[k] == '+'))) {
    c->kind = Compiled::kClass;
    c->plus = k < p.size();
  } else if (p.find_first_of(std::string(kSpecial)) == std::string::npos) {
    c->kind = Compiled::kLiteral;
    c->literal = p;
  }
}

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
  for (size_t k = 0; k < rewrite.size(); ++k) {  // \N: group N; \\: a backslash
    const char ch = rewrite[k];
    if (ch == '\\' && k + 1 < rewrite.size() && rewrite[k + 1] >= '0' && rewrite[k + 1] <= '9') {
      c->rewrite.push_back({rewrite[k + 1] - '0', std::string()});
      ++k;
    } else if (ch == '\\' && !(k + 1 < rewrite.size() && rewrite[k + 1] == '\\')) {
      delete c;
      return ctx.fail(OC_INVALID_ARGUMENT, "rewrite '%s': a backslash must be followed by a digit "
                      "or a backslash", rewrite.c_str());
    } else {
      if (c->rewrite.empty() || c->rewrite.back().group >= 0) c->rewrite.push_back({-1, std::string()});
      c->rewrite.back().text += ch;
      k += ch == '\\';
    }
  }
  first_bytes(pattern, c);
  c->global = Spec::attr::global_replace(ctx) != 0;
  *state = c;
  return OC_OK;
}

void regex_destroy(void* state) { delete static_cast<Compiled*>(state); }

// The next match in [p, e) (b: the text's start, for ^ and \b) as [*mb, *me), its groups in m (a
// std::regex's); false: none.
bool next_match(const Compiled& c, const char* b, const char* p, const char* e, std::cmatch& m, const char** mb,
                const char** me) {
  using namespace std::regex_constants;
  if (c.kind == Compiled::kLiteral) {
    const size_t at = std::string_view(p, static_cast<size_t>(e - p)).find(c.literal);
    if (at == std::string_view::npos) return false;
    *mb = p + at;
    *me = *mb + c.literal.size();
    return true;
  }
  if (c.kind == Compiled::kClass) {
    while (p < e && !c.first[static_cast<unsigned char>(*p)]) ++p;
    if (p == e) return false;
    *mb = p++;
    while (c.plus && p < e && c.first[static_cast<unsigned char>(*p)]) ++p;
    *me = p;
    return true;
  }
  bool found = false;
  if (c.any) {
    found = std::regex_search(p, e, m, c.re, p == b ? match_default : match_prev_avail);
  } else {
    for (; p < e && !found; ++p)  // only where a match can start, and there only
      found = c.first[static_cast<unsigned char>(*p)] &&
              std::regex_search(p, e, m, c.re, (p == b ? match_default : match_prev_avail) | match_continuous);
  }
  if (found) {
    *mb = m[0].first;
    *me = m[0].second;
  }
  return found;
}

// text [b, e) with c's matches replaced, into out (cleared first); false: no match (out is empty).
bool replace(const Compiled& c, const char* b, const char* e, std::string& out) {
  out.clear();
  std::cmatch m;
  const char* p = b;
  const char* last_end = nullptr;
  const char *mb, *me;
  bool any = false;
  while (p <= e) {
    if (!next_match(c, b, p, e, m, &mb, &me)) break;
    out.append(p, mb);
    if (mb == last_end && me == mb) {  // no empty match at the last one's end
      if (p == e) break;
      const char* next = p + 1;
      while (next < e && (static_cast<unsigned char>(*next) & 0xC0) == 0x80) ++next;
      out.append(p, next);
      p = next;
      continue;
    }
    any = true;
    for (const Piece& piece : c.rewrite) {
      if (piece.group < 0) out += piece.text;
      else if (piece.group == 0) out.append(mb, me);
      else if (static_cast<size_t>(piece.group) < m.size() && m[piece.group].matched)
        out.append(m[piece.group].first, m[piece.group].second);
    }
    p = last_end = me;
    if (!c.global) break;
  }
  if (p < e) out.append(p, e);
  return any;
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
      // no match: the input's bytes as they are (the host knows them UTF-8 already)
      const int rc = replace(c, s[j].data, s[j].data + s[j].size, out)
                         ? ctx.set_string(Spec::out::output, j, out.data(), static_cast<int64_t>(out.size()))
                         : ctx.set_string(Spec::out::output, j, s[j].data, s[j].size);
      if (rc != OC_OK) return;
    }
  });
  return OC_OK;
}

}  // namespace

OC_KERNEL_STATEFUL(string_regex_replace, cpu, Spec::spec, regex_create, regex_destroy,
                   string_regex_replace)
