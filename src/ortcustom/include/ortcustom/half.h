/* IEEE 754 binary16 <-> binary32 conversion on raw bits (uint16_t), header-only.
 *
 * float -> half rounds to nearest, ties to even; overflow gives +-inf; values below half's
 * subnormal range round to +-0; NaN stays NaN (quiet, sign kept). half -> float is exact
 * (subnormals, +-0, +-inf, NaN included).
 *
 * Both directions are branch-free float arithmetic plus integer selects (the technique of
 * Maratyszcza's FP16 library), so loops over them vectorize. They need plain IEEE single
 * precision arithmetic (SSE on x86-64, not x87 excess precision) and are unaffected by
 * flush-to-zero / denormals-are-zero modes: no intermediate is a float subnormal unless the
 * result is +-0 anyway. Do not compile with -ffast-math. */
#ifndef ORTCUSTOM_HALF_H
#define ORTCUSTOM_HALF_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
#define OC_HALF_INLINE inline
#else
#define OC_HALF_INLINE static inline
#endif

OC_HALF_INLINE float oc_bits_to_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

OC_HALF_INLINE uint32_t oc_f32_to_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* binary16 bits -> float (exact). */
OC_HALF_INLINE float oc_half_to_float(uint16_t h) {
  const uint32_t w = (uint32_t)h << 16;
  const uint32_t sign = w & 0x80000000u;
  const uint32_t two_w = w + w; /* exponent and mantissa, sign shifted out */
  /* Normal (and inf/nan): shift exponent+mantissa into place with the exponent biased up by
     224, then scale by 2^-112 to fix the bias (maps exponent 31 to 255, i.e. inf/nan). */
  const float normalized = oc_bits_to_f32((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
  /* Subnormal/zero: put the mantissa below the exponent of 0.5 and subtract 0.5. */
  const float denormalized = oc_bits_to_f32((two_w >> 17) | (126u << 23)) - 0.5f;
  const uint32_t r = sign | (two_w < (1u << 27) ? oc_f32_to_bits(denormalized)
                                                : oc_f32_to_bits(normalized));
  return oc_bits_to_f32(r);
}

/* float -> binary16 bits, round to nearest even. */
OC_HALF_INLINE uint16_t oc_float_to_half(float f) {
  const uint32_t w = oc_f32_to_bits(f);
  const uint32_t shl1_w = w + w;
  const uint32_t sign = w & 0x80000000u;
  /* |f| * 2^112 * 2^-110: overflows to inf exactly when the half result is inf (>= 65520),
     leaves everything else unchanged except for a factor of 4. */
  float base = (oc_bits_to_f32(w & 0x7FFFFFFFu) * 0x1.0p+112f) * 0x1.0p-110f;
  uint32_t bias = shl1_w & 0xFF000000u;
  if (bias < 0x71000000u) bias = 0x71000000u;
  /* Adding 2^(e+13)-ish magic makes the FPU round the mantissa to 10 bits (to nearest even),
     and for small values to the subnormal grid of half. */
  base = oc_bits_to_f32((bias >> 1) + 0x07800000u) + base;
  const uint32_t bits = oc_f32_to_bits(base);
  const uint32_t exp_bits = (bits >> 13) & 0x00007C00u;
  const uint32_t mantissa_bits = bits & 0x00000FFFu;
  const uint32_t nonsign = exp_bits + mantissa_bits;
  return (uint16_t)((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
}

#undef OC_HALF_INLINE

#endif /* ORTCUSTOM_HALF_H */
