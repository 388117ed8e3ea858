// UTF-8 as RFC 3629 defines it (no overlong forms, no surrogates, nothing past U+10FFFF): what every
// string a kernel gets or sets must be (ONNX's string tensors hold UTF-8 text).
#ifndef ORTCUSTOM_GLUE_UTF8_HPP
#define ORTCUSTOM_GLUE_UTF8_HPP

#include <stdint.h>
#include <string.h>

namespace oc_glue {

// -1 when p[0..n) is UTF-8; otherwise the offset of the first byte that starts no valid character.
inline int64_t utf8_error_at(const char* s, int64_t n) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(s);
  int64_t i = 0;
  while (i < n) {
    if (i + 8 <= n) {  // ASCII runs, 8 bytes at a time
      uint64_t w;
      memcpy(&w, p + i, 8);
      if ((w & 0x8080808080808080ull) == 0) {
        i += 8;
        continue;
      }
    }
    const unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
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

}  // namespace oc_glue

#endif  // ORTCUSTOM_GLUE_UTF8_HPP
