// The arithmetic of com.microsoft GroupNorm / SkipGroupNorm on the CPU (contrib_group_norm_op.cpp
// checks the inputs and calls it). Internal, header-only: one translation unit instantiates it.
//
//   s = x + skip + bias            (SkipGroupNorm only; written to Y, and to S when asked for)
//   y = act((s - mean_g) / sqrt(var_g + eps) * gamma[c] + beta[c]),  act: identity or SiLU
//
// Storage T is float or float16 bits (uint16_t); everything is computed in float, statistics
// are merged in double. Statistics are one pass and stable for large offsets: values are summed
// as d = v - K (K = the first value of a short run, so d is small) in float, and the runs'
// (count, mean, M2) are merged with Chan's formula. The output uses y = (v - K_g) * a_c + b_c
// with K_g = mean rounded to float, so that v - K_g is exact near the mean.
//
// NCHW: a (n, group) is one contiguous run; one task per (n, group) computes its statistics and
// then its output while it is still in cache.
// NHWC: a group is Cg channels of every pixel, a strided read per pixel. Tasks instead take
// (n, range of pixels) and keep per-channel statistics (contiguous, vectorized over C); a serial
// step merges them into per-group statistics and per-channel coefficients, and a second
// parallel pass writes the output over the same pixel ranges.
#ifndef ORTCUSTOM_KERNELS_CPU_CONTRIB_GROUP_NORM_H
#define ORTCUSTOM_KERNELS_CPU_CONTRIB_GROUP_NORM_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ortcustom/half.h"
#include "ortcustom/kernel.hpp"
#include "parallel.h"

namespace oc_contrib {

inline float to_float(float v) { return v; }
inline float to_float(uint16_t v) { return oc_half_to_float(v); }
template <class T>
inline T from_float(float v);
template <>
inline float from_float<float>(float v) { return v; }
template <>
inline uint16_t from_float<uint16_t>(float v) { return oc_float_to_half(v); }

// e^x in float without branches (so that loops over it vectorize; expf does not): x = n ln2 + r
// with |r| <= ln2/2, e^r by a degree-7 polynomial (Cephes' coefficients, a few ulp), 2^n built
// in the exponent bits. x is clamped to [-87, 88], where 2^n stays a normal float; NaN stays NaN.
inline float exp_f(float x) {
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  const float n = (x * 1.44269504f + 12582912.0f) - 12582912.0f;  // round(x / ln2)
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;      // x - n ln2 in two parts
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const uint32_t bits = (uint32_t)((int32_t)n + 127) << 23;
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

template <bool kSilu>
inline float activate(float v) {
  return kSilu ? v / (1.0f + exp_f(-v)) : v;
}

struct Moments {
  double n, mean, m2;
};

// Chan et al.'s merge of (nb, mb, m2b) into acc; acc may be empty (n = 0).
inline void merge(Moments& acc, double nb, double mb, double m2b) {
  if (nb <= 0) return;
  const double n = acc.n + nb, d = mb - acc.mean, f = nb / n;
  acc.mean += d * f;
  acc.m2 += m2b + d * d * acc.n * f;
  acc.n = n;
}

enum : int64_t {
  kRun = 512,           // NCHW: values per shifted run
  kLanes = 16,          // independent float accumulators per run (vectorizes the sums)
  kPixels = 128,        // NHWC: pixels per shifted run
  kMinTaskElems = 16384,
  kMinTaskPixels = 64,  // NHWC: keeps per-task statistics (C doubles x 2) small next to the data
  kMaxTasks = 256,
};

// v[0, len) merged into acc as one run shifted by v[0].
inline void run_moments(const float* OC_RESTRICT v, int64_t len, Moments& acc) {
  const float K = v[0];
  float s1[kLanes] = {}, s2[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= len; i += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const float d = v[i + l] - K;
      s1[l] += d;
      s2[l] += d * d;
    }
  for (int l = 0; i < len; ++i, ++l) {
    const float d = v[i] - K;
    s1[l] += d;
    s2[l] += d * d;
  }
  double t1 = 0, t2 = 0;
  for (int l = 0; l < kLanes; ++l) {
    t1 += s1[l];
    t2 += s2[l];
  }
  double m2 = t2 - t1 * t1 / (double)len;
  if (m2 < 0) m2 = 0;  // rounding; NaN stays NaN
  merge(acc, (double)len, K + t1 / (double)len, m2);
}

// One call's data, checked by the caller. Index of (n, c, pixel p): NCHW (n*C + c)*HW + p,
// NHWC (n*HW + p)*C + c.
template <class T>
struct Job {
  const T* x;
  const T* skip;       // SkipGroupNorm: same shape as x, or per (n, c) when skip_nc
  const T* bias;       // (C,) or nullptr
  const float* gamma;  // (C,), as float
  const float* beta;
  T* y;
  T* s;                // S output, or nullptr
  bool sum;            // SkipGroupNorm: y first holds s = x + skip + bias
  bool skip_nc;
  bool silu;
  int64_t N, C, HW, G;
  double eps;
};

// s (or x) at NCHW channel run `base` (= (n*C + c)*HW), values [e, e+len) into buf; with `sum`,
// also stores s into y (and S). The float16 sum is read back as stored: its statistics are those
// of the values normalized next.
template <class T>
inline void nchw_load(const Job<T>& j, int64_t n, int64_t c, int64_t e, int64_t len,
                      float* OC_RESTRICT buf) {
  const int64_t at = (n * j.C + c) * j.HW + e;
  const T* OC_RESTRICT x = j.x + at;
  for (int64_t i = 0; i < len; ++i) buf[i] = to_float(x[i]);
  if (!j.sum) return;
  if (!j.skip_nc) {
    const T* OC_RESTRICT sk = j.skip + at;
    for (int64_t i = 0; i < len; ++i) buf[i] += to_float(sk[i]);
  }
  const float add = (j.skip_nc ? to_float(j.skip[n * j.C + c]) : 0.0f) +
                    (j.bias ? to_float(j.bias[c]) : 0.0f);
  T* OC_RESTRICT y = j.y + at;
  for (int64_t i = 0; i < len; ++i) y[i] = from_float<T>(buf[i] + add);
  if (j.s) memcpy(j.s + at, y, (size_t)len * sizeof(T));
  for (int64_t i = 0; i < len; ++i) buf[i] = to_float(y[i]);
}

template <class T, bool kSilu>
void nchw_group(const Job<T>& j, int64_t u) {
  const int64_t n = u / j.G, g = u % j.G, Cg = j.C / j.G;
  alignas(64) float buf[kRun];
  Moments mo = {0, 0, 0};
  for (int64_t c = g * Cg; c < (g + 1) * Cg; ++c)
    for (int64_t e = 0; e < j.HW; e += kRun) {
      const int64_t len = j.HW - e < kRun ? j.HW - e : kRun;
      nchw_load(j, n, c, e, len, buf);
      run_moments(buf, len, mo);
    }
  const double rstd = 1.0 / sqrt(mo.m2 / mo.n + j.eps);
  const float K = (float)mo.mean;
  const T* src = j.sum ? j.y : j.x;  // y holds s: normalized in place
  for (int64_t c = g * Cg; c < (g + 1) * Cg; ++c) {
    const double a = rstd * j.gamma[c];
    const float af = (float)a, bf = (float)(j.beta[c] + ((double)K - mo.mean) * a);
    const int64_t at = (n * j.C + c) * j.HW;
    const T* OC_RESTRICT v = src + at;
    T* OC_RESTRICT y = j.y + at;
    for (int64_t i = 0; i < j.HW; ++i)
      y[i] = from_float<T>(activate<kSilu>((to_float(v[i]) - K) * af + bf));
  }
}

template <class T, bool kSilu>
void nchw(const Job<T>& j, oc::Context& ctx) {
  ctx.parallel_for((size_t)(j.N * j.G), [&](size_t u) { nchw_group<T, kSilu>(j, (int64_t)u); });
}

// NHWC pass 1, task t = (n, chunk): per-channel (mean, M2) of the chunk's pixels into
// mean[0, C), m2[0, C) (the count is the chunk's pixel count). tmp: 4*C floats.
template <class T>
void nhwc_stats(const Job<T>& j, int64_t n, int64_t p0, int64_t p1, double* OC_RESTRICT mean,
                double* OC_RESTRICT m2, float* OC_RESTRICT tmp) {
  const int64_t C = j.C;
  float* OC_RESTRICT row = tmp;
  float* OC_RESTRICT K = tmp + C;
  float* OC_RESTRICT s1 = tmp + 2 * C;
  float* OC_RESTRICT s2 = tmp + 3 * C;
  const T* skip_nc = j.skip_nc ? j.skip + n * C : nullptr;
  double count = 0;
  for (int64_t c = 0; c < C; ++c) mean[c] = m2[c] = 0;
  for (int64_t pb = p0; pb < p1; pb += kPixels) {
    const int64_t pe = p1 - pb < kPixels ? p1 : pb + kPixels;
    for (int64_t p = pb; p < pe; ++p) {
      const int64_t at = (n * j.HW + p) * C;
      const T* OC_RESTRICT x = j.x + at;
      for (int64_t c = 0; c < C; ++c) row[c] = to_float(x[c]);
      if (j.sum) {
        if (skip_nc)
          for (int64_t c = 0; c < C; ++c) row[c] += to_float(skip_nc[c]);
        else
          for (int64_t c = 0; c < C; ++c) row[c] += to_float(j.skip[at + c]);
        if (j.bias)
          for (int64_t c = 0; c < C; ++c) row[c] += to_float(j.bias[c]);
        T* OC_RESTRICT y = j.y + at;
        for (int64_t c = 0; c < C; ++c) y[c] = from_float<T>(row[c]);
        if (j.s) memcpy(j.s + at, y, (size_t)C * sizeof(T));
        for (int64_t c = 0; c < C; ++c) row[c] = to_float(y[c]);
      }
      if (p == pb) {
        for (int64_t c = 0; c < C; ++c) {
          K[c] = row[c];
          s1[c] = s2[c] = 0;
        }
        continue;
      }
      for (int64_t c = 0; c < C; ++c) {
        const float d = row[c] - K[c];
        s1[c] += d;
        s2[c] += d * d;
      }
    }
    // merge the run (nb pixels) into the chunk's statistics; same count for every channel
    const double nb = (double)(pe - pb), total = count + nb, f = nb / total;
    for (int64_t c = 0; c < C; ++c) {
      double r2 = (double)s2[c] - (double)s1[c] * s1[c] / nb;
      r2 = r2 < 0 ? 0 : r2;
      const double d = (K[c] + s1[c] / nb) - mean[c];
      mean[c] += d * f;
      m2[c] += r2 + d * d * count * f;
    }
    count = total;
  }
}

// NHWC pass 2, the chunk's output with per-channel y = act((v - k[c]) * a[c] + b[c]).
template <class T, bool kSilu>
void nhwc_apply(const Job<T>& j, int64_t n, int64_t p0, int64_t p1, const float* OC_RESTRICT k,
                const float* OC_RESTRICT a, const float* OC_RESTRICT b) {
  const int64_t C = j.C;
  const T* src = j.sum ? j.y : j.x;
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t at = (n * j.HW + p) * C;
    const T* OC_RESTRICT v = src + at;
    T* OC_RESTRICT y = j.y + at;
    for (int64_t c = 0; c < C; ++c) y[c] = from_float<T>(activate<kSilu>((to_float(v[c]) - k[c]) * a[c] + b[c]));
  }
}

// Scratch bytes nhwc needs for `tasks` tasks.
inline size_t nhwc_scratch_bytes(int64_t N, int64_t C, int64_t tasks) {
  return (size_t)tasks * C * (2 * sizeof(double) + 4 * sizeof(float)) + (size_t)N * C * 3 * sizeof(float);
}

// Tasks (per n) that NHWC splits the pixels into.
inline int64_t nhwc_chunks(int64_t N, int64_t HW, int64_t C) {
  int64_t want = N * HW * C / kMinTaskElems;
  want = want < 1 ? 1 : (want > kMaxTasks ? kMaxTasks : want);
  int64_t chunks = oc::detail::div_up(want, N);
  const int64_t most = HW / kMinTaskPixels;
  if (chunks > most) chunks = most;
  return chunks < 1 ? 1 : chunks;
}

template <class T, bool kSilu>
void nhwc(const Job<T>& j, oc::Context& ctx, int64_t chunks, void* scratch) {
  using oc::detail::split_range;
  const int64_t C = j.C, Cg = C / j.G, tasks = j.N * chunks;
  double* mean = static_cast<double*>(scratch);  // [task][c]
  double* m2 = mean + tasks * C;
  float* tmp = reinterpret_cast<float*>(m2 + tasks * C);  // [task][4 C]
  float* coef = tmp + tasks * 4 * C;                      // k, a, b: [n][C] each
  float *kk = coef, *aa = coef + j.N * C, *bb = coef + 2 * j.N * C;
  ctx.parallel_for((size_t)tasks, [&](size_t t) {
    const int64_t n = (int64_t)t / chunks;
    int64_t p0, p1;
    split_range(j.HW, chunks, (int64_t)t % chunks, p0, p1);
    nhwc_stats(j, n, p0, p1, mean + t * C, m2 + t * C, tmp + t * 4 * C);
  });
  for (int64_t n = 0; n < j.N; ++n)
    for (int64_t g = 0; g < j.G; ++g) {
      Moments mo = {0, 0, 0};
      for (int64_t ci = 0; ci < chunks; ++ci) {
        int64_t p0, p1;
        split_range(j.HW, chunks, ci, p0, p1);
        const int64_t t = n * chunks + ci;
        for (int64_t c = g * Cg; c < (g + 1) * Cg; ++c)
          merge(mo, (double)(p1 - p0), mean[t * C + c], m2[t * C + c]);
      }
      const double rstd = 1.0 / sqrt(mo.m2 / mo.n + j.eps);
      const float K = (float)mo.mean;
      for (int64_t c = g * Cg; c < (g + 1) * Cg; ++c) {
        const double a = rstd * j.gamma[c];
        kk[n * C + c] = K;
        aa[n * C + c] = (float)a;
        bb[n * C + c] = (float)(j.beta[c] + ((double)K - mo.mean) * a);
      }
    }
  ctx.parallel_for((size_t)tasks, [&](size_t t) {
    const int64_t n = (int64_t)t / chunks;
    int64_t p0, p1;
    split_range(j.HW, chunks, (int64_t)t % chunks, p0, p1);
    nhwc_apply<T, kSilu>(j, n, p0, p1, kk + n * C, aa + n * C, bb + n * C);
  });
}

}  // namespace oc_contrib

#endif  // ORTCUSTOM_KERNELS_CPU_CONTRIB_GROUP_NORM_H
