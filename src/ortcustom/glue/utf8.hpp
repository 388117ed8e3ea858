// UTF-8 as RFC 3629 defines it (no overlong forms, no surrogates, nothing past U+10FFFF): what every
// string a kernel gets or sets must be (ONNX's string tensors hold UTF-8 text).
//
// Two functions: utf8_valid says yes or no, fast (every input element and every set_string pays
// it on each run); utf8_error_at finds the offending byte, for the message, once something failed.
#ifndef ORTCUSTOM_GLUE_UTF8_HPP
#define ORTCUSTOM_GLUE_UTF8_HPP

#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define ORTCUSTOM_UTF8_SSSE3 1
#endif

namespace oc_glue {

// -1 when p[0..n) is UTF-8; otherwise the offset of the first byte that starts no valid character.
inline int64_t utf8_error_at(const char* s, int64_t n) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(s);
  int64_t i = 0;
  while (i < n) {
    if (p[i] < 0x80) {  // ASCII runs, 8 bytes at a time
      ++i;
      uint64_t w;
      while (i + 8 <= n && (memcpy(&w, p + i, 8), (w & 0x8080808080808080ull) == 0)) i += 8;
      continue;
    }
    const unsigned char c = p[i];
    int64_t len;
    unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;         // overlong
      else if (c == 0xED) hi = 0x9F;    // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;         // overlong
      else if (c == 0xF4) hi = 0x8F;    // past U+10FFFF
    } else {
      return i;
    }
    if (i + len > n || p[i + 1] < lo || p[i + 1] > hi) return i;
    for (int64_t k = 2; k < len; ++k)
      if ((p[i + k] & 0xC0) != 0x80) return i;
    i += len;
  }
  return -1;
}

#ifdef ORTCUSTOM_UTF8_SSSE3
// 16 bytes at a time, without branches on the bytes: each byte's class is looked up from its high
// nibble, its predecessor's high nibble and its predecessor's low nibble (three 16-entry tables,
// one bit per kind of error a pair of bytes can show, ANDed: a bit that survives is an error); the
// third and fourth bytes of a character are then the only continuation bytes after a continuation
// byte that are allowed (Keiser and Lemire, "Validating UTF-8 in less than one instruction per
// byte", 2021). The text is read in whole blocks: the tail is copied into a zeroed block, whose
// NULs end (and so check) a character cut short at the end.
__attribute__((target("ssse3"))) inline bool utf8_valid_ssse3(const char* s, int64_t n) {
  enum : uint8_t {
    TOO_SHORT = 1 << 0,   // a lead byte then no continuation byte
    TOO_LONG = 1 << 1,    // ASCII then a continuation byte
    OVERLONG_3 = 1 << 2,  // E0 80..9F
    TOO_LARGE = 1 << 3,   // F4 90.., F5..FF
    SURROGATE = 1 << 4,   // ED A0..BF
    OVERLONG_2 = 1 << 5,  // C0, C1
    TOO_LARGE_1000 = 1 << 6,  // F5..FF 80..8F
    OVERLONG_4 = 1 << 6,      // F0 80..8F (never with the one above: F0 vs F5..)
    TWO_CONTS = 1 << 7,       // a continuation byte after a continuation byte
    CARRY = TOO_SHORT | TOO_LONG | TWO_CONTS,
  };
  const __m128i prev_high = _mm_setr_epi8(
      TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG,  // 0..7: ASCII
      (char)TWO_CONTS, (char)TWO_CONTS, (char)TWO_CONTS, (char)TWO_CONTS,              // 8..B
      TOO_SHORT | OVERLONG_2, TOO_SHORT, TOO_SHORT | OVERLONG_3 | SURROGATE,
      TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4);
  const char tl = (char)(CARRY | TOO_LARGE | TOO_LARGE_1000);
  const __m128i prev_low = _mm_setr_epi8(
      (char)(CARRY | OVERLONG_3 | OVERLONG_2 | OVERLONG_4), (char)(CARRY | OVERLONG_2), (char)CARRY, (char)CARRY,
      (char)(CARRY | TOO_LARGE), tl, tl, tl, tl, tl, tl, tl, tl, (char)(CARRY | TOO_LARGE | TOO_LARGE_1000 | SURROGATE),
      tl, tl);
  const __m128i cur_high = _mm_setr_epi8(
      TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT,
      (char)(TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE_1000 | OVERLONG_4),
      (char)(TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE),
      (char)(TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE),
      (char)(TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE), TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT);
  const __m128i nibble = _mm_set1_epi8(0x0F);
  // a block ending inside a character: its last byte >= C0, or the one before >= E0, or F0 before that
  const __m128i incomplete_at = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, (char)(0xF0 - 1),
                                              (char)(0xE0 - 1), (char)(0xC0 - 1));
  __m128i prev = _mm_setzero_si128(), error = _mm_setzero_si128(), incomplete = _mm_setzero_si128();
  alignas(16) char tail[16] = {0};
  const int64_t whole = n / 16 * 16;
  if (n > whole) memcpy(tail, s + whole, (size_t)(n - whole));
  for (int64_t i = 0; i <= whole; i += 16) {  // the whole blocks, then the tail's
    const __m128i in = i < whole ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i))
                                 : _mm_load_si128(reinterpret_cast<const __m128i*>(tail));
    if (_mm_movemask_epi8(in) == 0) {  // ASCII: an error only if the last block left a character open
      error = _mm_or_si128(error, incomplete);
      incomplete = _mm_setzero_si128();
    } else {
      const __m128i prev1 = _mm_alignr_epi8(in, prev, 15);
      const __m128i special = _mm_and_si128(
          _mm_and_si128(_mm_shuffle_epi8(prev_high, _mm_and_si128(_mm_srli_epi16(prev1, 4), nibble)),
                        _mm_shuffle_epi8(prev_low, _mm_and_si128(prev1, nibble))),
          _mm_shuffle_epi8(cur_high, _mm_and_si128(_mm_srli_epi16(in, 4), nibble)));
      const __m128i third = _mm_subs_epu8(_mm_alignr_epi8(in, prev, 14), _mm_set1_epi8((char)(0xE0 - 0x80)));
      const __m128i fourth = _mm_subs_epu8(_mm_alignr_epi8(in, prev, 13), _mm_set1_epi8((char)(0xF0 - 0x80)));
      const __m128i must23 = _mm_and_si128(_mm_or_si128(third, fourth), _mm_set1_epi8((char)0x80));
      error = _mm_or_si128(error, _mm_xor_si128(must23, special));
      incomplete = _mm_subs_epu8(in, incomplete_at);
    }
    prev = in;
  }
  return _mm_movemask_epi8(_mm_cmpeq_epi8(error, _mm_setzero_si128())) == 0xFFFF;
}

inline bool have_ssse3() {
  static const bool yes = __builtin_cpu_supports("ssse3");
  return yes;
}
#endif

// Whether p[0..n) is UTF-8 (utf8_error_at(p, n) < 0, faster).
inline bool utf8_valid(const char* s, int64_t n) {
  uint64_t w = 0;
  if (n <= 8) {  // short text: one word of ASCII, most often
    if (n > 0) memcpy(&w, s, (size_t)n);
    if ((w & 0x8080808080808080ull) == 0) return true;
    return utf8_error_at(s, n) < 0;
  }
#ifdef ORTCUSTOM_UTF8_SSSE3
  if (have_ssse3()) return utf8_valid_ssse3(s, n);
#endif
  return utf8_error_at(s, n) < 0;
}

}  // namespace oc_glue

#endif  // ORTCUSTOM_GLUE_UTF8_HPP
