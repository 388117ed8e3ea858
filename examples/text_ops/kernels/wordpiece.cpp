// BertWordPiece: transformers.BertTokenizer's ids without special tokens, per element of a 1-D
// string tensor. Basic tokenization as its BertNormalizer and BertPreTokenizer do it (drop control
// characters, split at whitespace, CJK ideographs alone, punctuation alone; with do_lower_case,
// strip accents (NFD without nonspacing marks) and lower-case, character by character), then WordPiece: greedy longest match in the vocabulary,
// continuations prefixed by suffix_indicator, a word with an unmatched rest (or longer than
// max_input_chars_per_word characters) is unk_token. The Unicode facts are tables generated from
// Python's unicodedata (scripts/unicode_tables.py). Outputs ids (all elements' ids in order) and
// row_splits (n + 1): element j's ids are ids[row_splits[j]:row_splits[j + 1]].
#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text_ops_spec.h"
#include "unicode_tables.h"

namespace {

using Spec = text_ops::spec::bert_wordpiece;
namespace U = text_ops_unicode;

// ASCII's flags by table, the rest by binary search over the generated ranges.
struct AsciiFlags {
  uint8_t f[128] = {};
  constexpr AsciiFlags() {
    for (const U::Range& r : U::kRanges)
      for (uint32_t c = r.first; c <= r.last && c < 128; ++c) f[c] = r.flags;
  }
};
constexpr AsciiFlags kAscii{};

uint8_t flags_of(uint32_t cp) {
  if (cp < 128) return kAscii.f[cp];
  const U::Range* end = U::kRanges + sizeof U::kRanges / sizeof *U::kRanges;
  const U::Range* r = std::upper_bound(U::kRanges, end, cp, [](uint32_t c, const U::Range& x) { return c < x.first; });
  return r != U::kRanges && cp <= r[-1].last ? r[-1].flags : 0;
}

const U::Fold* fold_of(uint32_t cp) {
  const U::Fold* end = U::kFolds + sizeof U::kFolds / sizeof *U::kFolds;
  const U::Fold* f = std::lower_bound(U::kFolds, end, cp, [](const U::Fold& x, uint32_t c) { return x.cp < c; });
  return f != end && f->cp == cp ? f : nullptr;
}

// The code point at p (valid UTF-8: ortcustom checks every input), advancing p.
uint32_t decode(const unsigned char*& p) {
  const uint32_t c = *p++;
  if (c < 0x80) return c;
  if (c < 0xE0) return (c & 0x1F) << 6 | (*p++ & 0x3F);
  if (c < 0xF0) {
    const uint32_t r = (c & 0x0F) << 12 | (p[0] & 0x3F) << 6 | (p[1] & 0x3F);
    p += 2;
    return r;
  }
  const uint32_t r = (c & 0x07) << 18 | (p[0] & 0x3F) << 12 | (p[1] & 0x3F) << 6 | (p[2] & 0x3F);
  p += 3;
  return r;
}

void encode(uint32_t c, std::string& out) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | c >> 6);
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | c >> 12);
    out += static_cast<char>(0x80 | (c >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | c >> 18);
    out += static_cast<char>(0x80 | (c >> 12 & 0x3F));
    out += static_cast<char>(0x80 | (c >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

struct Vocab {
  std::vector<std::string> words;  // the map's keys point into these
  std::unordered_map<std::string_view, int64_t> ids;
  std::string suffix;
  int64_t unk = -1, max_chars = 100;
  bool lower = true;
};

int wordpiece_create(oc::Context& ctx, void** state) {
  auto vocab = Spec::attr::vocab(ctx);
  const int64_t* lengths = ctx.attr(0).lengths;  // vocab: attribute 0
  auto* v = new Vocab();
  v->words.reserve(static_cast<size_t>(vocab.size));
  for (int64_t k = 0; k < vocab.size; ++k) v->words.emplace_back(vocab[k], static_cast<size_t>(lengths[k]));
  for (int64_t k = 0; k < vocab.size; ++k) v->ids[v->words[k]] = k;  // a repeated word: its last id
  v->lower = Spec::attr::do_lower_case(ctx) != 0;
  v->suffix = Spec::attr::suffix_indicator(ctx);
  v->max_chars = Spec::attr::max_input_chars_per_word(ctx);
  auto unk = v->ids.find(Spec::attr::unk_token(ctx));
  if (unk == v->ids.end()) {
    delete v;
    return ctx.fail(OC_INVALID_ARGUMENT, "unk_token '%s' is not in vocab (%lld words)",
                    Spec::attr::unk_token(ctx), (long long)vocab.size);
  }
  v->unk = unk->second;
  *state = v;
  return OC_OK;
}

void wordpiece_destroy(void* state) { delete static_cast<Vocab*>(state); }

// One word's WordPiece ids onto ids: word is UTF-8, starts[] its characters' byte offsets.
void wordpiece(const Vocab& v, const std::string& word, const std::vector<int32_t>& starts,
               std::string& probe, std::vector<int64_t>& ids) {
  const size_t chars = starts.size();
  if (chars == 0) return;
  if (static_cast<int64_t>(chars) > v.max_chars) {
    ids.push_back(v.unk);
    return;
  }
  const size_t mark = ids.size();
  for (size_t start = 0; start < chars;) {
    size_t end = chars;
    int64_t found = -1;
    for (; end > start; --end) {
      const size_t b0 = starts[start], b1 = end == chars ? word.size() : starts[end];
      std::string_view piece(word.data() + b0, b1 - b0);
      if (start > 0) {
        probe.assign(v.suffix).append(piece);
        piece = probe;
      }
      auto it = v.ids.find(piece);
      if (it != v.ids.end()) {
        found = it->second;
        break;
      }
    }
    if (found < 0) {  // the whole word is unknown
      ids.resize(mark);
      ids.push_back(v.unk);
      return;
    }
    ids.push_back(found);
    start = end;
  }
}

// The ids of one text.
void tokenize(const Vocab& v, const oc_string& text, std::vector<int64_t>& ids) {
  std::string word, probe, one;
  std::vector<int32_t> starts, one_start{0};
  auto flush = [&] {
    wordpiece(v, word, starts, probe, ids);
    word.clear();
    starts.clear();
  };
  auto alone = [&](uint32_t c) {  // a character that is a word by itself
    flush();
    one.clear();
    encode(c, one);
    wordpiece(v, one, one_start, probe, ids);
  };
  const unsigned char* p = reinterpret_cast<const unsigned char*>(text.data);
  const unsigned char* end = p + text.size;
  while (p < end) {
    const uint32_t c = decode(p);
    const uint8_t f = flags_of(c);
    if (f & U::kDrop) continue;
    if (f & U::kSpace) {
      flush();
      continue;
    }
    if (f & U::kCjk) {
      alone(c);
      continue;
    }
    uint32_t to[3] = {c, 0, 0};
    uint8_t n = 1;
    if (v.lower) {
      if (c < 0x80) {
        if (c >= 'A' && c <= 'Z') to[0] = c | 0x20;
      } else if (const U::Fold* fold = fold_of(c)) {
        n = fold->n;
        std::copy(fold->to, fold->to + 3, to);
      }
    }
    for (uint8_t k = 0; k < n; ++k) {
      if (to[k] == c ? (f & U::kPunct) : (flags_of(to[k]) & U::kPunct)) {  // as lowered
        alone(to[k]);
        continue;
      }
      starts.push_back(static_cast<int32_t>(word.size()));
      encode(to[k], word);
    }
  }
  flush();
}

int bert_wordpiece(oc::Context& ctx) {
  const Vocab& v = *ctx.state<Vocab>();
  const oc_tensor& x = ctx.input(Spec::in::text);
  if (x.rank != 1) return ctx.bad_shape(Spec::in::text, "text", "expected a 1-D tensor");
  const oc_string* s = ctx.data<oc_string>(Spec::in::text);
  std::vector<std::vector<int64_t>> per_text(static_cast<size_t>(x.size));
  ctx.parallel_for(static_cast<size_t>(x.size), [&](size_t j) { tokenize(v, s[j], per_text[j]); });
  const int64_t rshape[] = {x.size + 1};
  int64_t* splits;
  if (int rc = ctx.output(Spec::out::row_splits, rshape, 1, &splits)) return rc;
  splits[0] = 0;
  for (int64_t j = 0; j < x.size; ++j) splits[j + 1] = splits[j] + static_cast<int64_t>(per_text[j].size());
  const int64_t ishape[] = {splits[x.size]};
  int64_t* ids;
  if (int rc = ctx.output(Spec::out::ids, ishape, 1, &ids)) return rc;
  for (int64_t j = 0; j < x.size; ++j) std::copy(per_text[j].begin(), per_text[j].end(), ids + splits[j]);
  return OC_OK;
}

}  // namespace

OC_KERNEL_STATEFUL(bert_wordpiece, cpu, Spec::spec, wordpiece_create, wordpiece_destroy, bert_wordpiece)
