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
// (n, range of pixels) and keep per-channel statistics (contiguous, vectorized over C), merged
// into the range's per-group ones at its end; a serial step merges the ranges' and makes the
// per-channel coefficients, and a second parallel pass writes the output over the same ranges.
#ifndef ORTCUSTOM_KERNELS_CPU_CONTRIB_GROUP_NORM_H
#define ORTCUSTOM_KERNELS_CPU_CONTRIB_GROUP_NORM_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "ortcustom/half.h"
#include "ortcustom/kernel.hpp"
#include "parallel.h"

namespace oc_contrib {

// affine_act: a run's output, (v - K) * a + b then SiLU (v / (1 + e^-v)) when asked; shifted_sums:
// a run's statistics (NCHW); channel_sums: a pixel's added to per-channel ones (NHWC); load_row /
// store_row: a row of T to and from float; on GCC/clang vectors (parallel.h requires them), of the
// width of the pass that runs (isa.h), with F16C conversions in the AVX2 and AVX-512 passes.
#define OC_ISA_PASS_FILE "contrib_vec.inc"
#define OC_ISA_PASS_NS vec
#include "isa_passes.inc"  // oc_contrib::vec_base, _avx2, _avx512
#define OC_VEC(fn, ...) OC_ISA_CALL(vec, fn, __VA_ARGS__)

inline void affine_act(const float* in, float* out, int64_t len, const float* k, const float* a, const float* b,
                       int64_t kstep, bool act) {
  OC_VEC(affine_act, in, out, len, k, a, b, kstep, act);
}
inline void shifted_sums(const float* v, int64_t len, float K, float* s1, float* s2) {
  OC_VEC(shifted_sums, v, len, K, s1, s2);
}
inline void channel_sums(const float* v, const float* K, float* s1, float* s2, int64_t len) {
  OC_VEC(channel_sums, v, K, s1, s2, len);
}
inline void load_row(const uint16_t* h, float* f, int64_t len) { OC_VEC(halves_to_floats, h, f, len); }
inline void store_row(const float* f, uint16_t* h, int64_t len) { OC_VEC(floats_to_halves, f, h, len); }
#undef OC_VEC
inline void load_row(const float* x, float* f, int64_t len) { memcpy(f, x, (size_t)len * sizeof(float)); }
inline void store_row(const float* f, float* y, int64_t len) { memcpy(y, f, (size_t)len * sizeof(float)); }

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
  shifted_sums(v, len, K, s1, s2);
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
  const float* bias;   // (C,), zeros when absent
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

// s (or x) at NCHW channel run (n, c), values [e, e+len) into buf (aux: kRun floats); with
// `sum`, also stores s into y (and S). The float16 sum is read back as stored: its statistics
// are those of the values normalized next.
template <class T>
inline void nchw_load(const Job<T>& j, int64_t n, int64_t c, int64_t e, int64_t len,
                      float* OC_RESTRICT buf, float* OC_RESTRICT aux) {
  const int64_t at = (n * j.C + c) * j.HW + e;
  load_row(j.x + at, buf, len);
  if (!j.sum) return;
  float add = j.bias[c];
  if (j.skip_nc) {
    load_row(j.skip + n * j.C + c, aux, 1);
    add += aux[0];
  } else {
    load_row(j.skip + at, aux, len);
    for (int64_t i = 0; i < len; ++i) buf[i] += aux[i];
  }
  for (int64_t i = 0; i < len; ++i) buf[i] += add;
  store_row(buf, j.y + at, len);
  if (j.s) memcpy(j.s + at, j.y + at, (size_t)len * sizeof(T));
  load_row(j.y + at, buf, len);
}

template <class T, bool kSilu>
void nchw_group(const Job<T>& j, int64_t u) {
  const int64_t n = u / j.G, g = u % j.G, Cg = j.C / j.G;
  alignas(64) float buf[kRun], aux[kRun];
  Moments mo = {0, 0, 0};
  for (int64_t c = g * Cg; c < (g + 1) * Cg; ++c)
    for (int64_t e = 0; e < j.HW; e += kRun) {
      const int64_t len = j.HW - e < kRun ? j.HW - e : kRun;
      if (std::is_same<T, float>::value && !j.sum) {  // read in place
        run_moments((const float*)(const void*)(j.x + (n * j.C + c) * j.HW + e), len, mo);
        continue;
      }
      nchw_load(j, n, c, e, len, buf, aux);
      run_moments(buf, len, mo);
    }
  const double rstd = 1.0 / sqrt(mo.m2 / mo.n + j.eps);
  const float K = (float)mo.mean;
  const T* src = j.sum ? j.y : j.x;  // y holds s: normalized in place
  for (int64_t c = g * Cg; c < (g + 1) * Cg; ++c) {
    const double a = rstd * j.gamma[c];
    const float af = (float)a, bf = (float)(j.beta[c] + ((double)K - mo.mean) * a);
    const int64_t at = (n * j.C + c) * j.HW;
    for (int64_t e = 0; e < j.HW; e += kRun) {
      const int64_t len = j.HW - e < kRun ? j.HW - e : kRun;
      if (std::is_same<T, float>::value) {  // straight from src to y
        affine_act((const float*)(const void*)(src + at + e), (float*)(void*)(j.y + at + e), len, &K, &af, &bf, 0,
                   kSilu);
        continue;
      }
      load_row(src + at + e, buf, len);
      affine_act(buf, buf, len, &K, &af, &bf, 0, kSilu);
      store_row(buf, j.y + at + e, len);
    }
  }
}

template <class T, bool kSilu>
void nchw(const Job<T>& j, oc::Context& ctx) {
  ctx.parallel_for((size_t)(j.N * j.G), [&](size_t u) { nchw_group<T, kSilu>(j, (int64_t)u); });
}

// NHWC pass 1, task t = (n, chunk): per-group (mean, M2) of the chunk's pixels into mean[0, G),
// m2[0, G) (the count is the chunk's pixel count times Cg), from per-channel ones in mean[0, C),
// m2[0, C). tmp: 5*C floats.
template <class T>
void nhwc_stats(const Job<T>& j, int64_t n, int64_t p0, int64_t p1, double* OC_RESTRICT mean,
                double* OC_RESTRICT m2, float* OC_RESTRICT tmp) {
  const int64_t C = j.C;
  float* OC_RESTRICT row = tmp;
  float* OC_RESTRICT K = tmp + C;
  float* OC_RESTRICT s1 = tmp + 2 * C;
  float* OC_RESTRICT s2 = tmp + 3 * C;
  float* OC_RESTRICT aux = tmp + 4 * C;
  if (j.sum && j.skip_nc) {  // skip + bias: one row per image
    load_row(j.skip + n * C, aux, C);
    for (int64_t c = 0; c < C; ++c) aux[c] += j.bias[c];
  }
  double count = 0;
  for (int64_t c = 0; c < C; ++c) mean[c] = m2[c] = 0;
  for (int64_t pb = p0; pb < p1; pb += kPixels) {
    const int64_t pe = p1 - pb < kPixels ? p1 : pb + kPixels;
    for (int64_t p = pb; p < pe; ++p) {
      const int64_t at = (n * j.HW + p) * C;
      const float* v = row;  // the pixel's values as float: x itself where it is float and not summed
      if (std::is_same<T, float>::value && !j.sum) v = (const float*)(const void*)(j.x + at);
      else load_row(j.x + at, row, C);
      if (j.sum) {
        if (j.skip_nc) {
          for (int64_t c = 0; c < C; ++c) row[c] += aux[c];
        } else {
          load_row(j.skip + at, aux, C);
          for (int64_t c = 0; c < C; ++c) row[c] += aux[c];
          for (int64_t c = 0; c < C; ++c) row[c] += j.bias[c];
        }
        store_row(row, j.y + at, C);
        if (j.s) memcpy(j.s + at, j.y + at, (size_t)C * sizeof(T));
        load_row(j.y + at, row, C);
      }
      if (p == pb) {
        memcpy(K, v, (size_t)C * sizeof(float));
        memset(s1, 0, (size_t)C * sizeof(float));
        memset(s2, 0, (size_t)C * sizeof(float));
        continue;
      }
      channel_sums(v, K, s1, s2, C);
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
  const int64_t Cg = C / j.G;  // the groups' moments in place: group g reads channels >= g first
  for (int64_t g = 0; g < j.G; ++g) {
    Moments mo = {0, 0, 0};
    for (int64_t c = g * Cg; c < (g + 1) * Cg; ++c) merge(mo, count, mean[c], m2[c]);
    mean[g] = mo.mean;
    m2[g] = mo.m2;
  }
}

// NHWC pass 2, the chunk's output with per-channel y = act((v - k[c]) * a[c] + b[c]).
// row: C floats.
template <class T, bool kSilu>
void nhwc_apply(const Job<T>& j, int64_t n, int64_t p0, int64_t p1, const float* OC_RESTRICT k,
                const float* OC_RESTRICT a, const float* OC_RESTRICT b, float* OC_RESTRICT row) {
  const int64_t C = j.C;
  const T* src = j.sum ? j.y : j.x;
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t at = (n * j.HW + p) * C;
    if (std::is_same<T, float>::value) {
      affine_act((const float*)(const void*)(src + at), (float*)(void*)(j.y + at), C, k, a, b, 1, kSilu);
      continue;
    }
    load_row(src + at, row, C);
    affine_act(row, row, C, k, a, b, 1, kSilu);
    store_row(row, j.y + at, C);
  }
}

// Scratch bytes nhwc needs for `tasks` tasks.
inline size_t nhwc_scratch_bytes(int64_t N, int64_t C, int64_t tasks) {
  return (size_t)tasks * C * (2 * sizeof(double) + 5 * sizeof(float)) + (size_t)N * C * 3 * sizeof(float);
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
  float* tmp = reinterpret_cast<float*>(m2 + tasks * C);  // [task][5 C]
  float* coef = tmp + tasks * 5 * C;                      // k, a, b: [n][C] each
  float *kk = coef, *aa = coef + j.N * C, *bb = coef + 2 * j.N * C;
  ctx.parallel_for((size_t)tasks, [&](size_t t) {
    const int64_t n = (int64_t)t / chunks;
    int64_t p0, p1;
    split_range(j.HW, chunks, (int64_t)t % chunks, p0, p1);
    nhwc_stats(j, n, p0, p1, mean + t * C, m2 + t * C, tmp + t * 5 * C);
  });
  for (int64_t n = 0; n < j.N; ++n)
    for (int64_t g = 0; g < j.G; ++g) {
      Moments mo = {0, 0, 0};
      for (int64_t ci = 0; ci < chunks; ++ci) {
        int64_t p0, p1;
        split_range(j.HW, chunks, ci, p0, p1);
        const int64_t t = n * chunks + ci;
        merge(mo, (double)((p1 - p0) * Cg), mean[t * C + g], m2[t * C + g]);
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
    nhwc_apply<T, kSilu>(j, n, p0, p1, kk + n * C, aa + n * C, bb + n * C, tmp + t * 5 * C);
  });
}

}  // namespace oc_contrib

#endif  // ORTCUSTOM_KERNELS_CPU_CONTRIB_GROUP_NORM_H
