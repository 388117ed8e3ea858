// Group normalization (like torch.nn.functional.group_norm) over x of shape (N, C, S).
//
// Statistics: each (n, g) group is a contiguous run of M = C/groups * S elements. It is read in
// blocks of kBlock elements; each block accumulates sum(d) and sum(d*d) of d = x - K_b (K_b = the
// block's first element, so d is small and, for float, usually exact) in several independent
// SIMD lanes of the compute type, and the block's (count, mean, M2) is merged into the group's
// running statistics in double with Chan's formula. This is one pass over the data, vectorizes,
// and stays accurate for large mean offsets (x = 1000 + randn) and groups of millions of
// elements (no long float sums: at most kBlock / lanes additions per accumulator).
//
// Output: y = (x - K) * a_c + b_c per channel c with a_c = rstd * scale[c] and
// b_c = bias[c] + (K - mean) * a_c (in double, rounded once), where K = mean rounded to the
// compute type: x - K is exact for x near the mean, so large offsets do not cost precision.
// A float or double output of 4 MiB or more is written with non-temporal stores (no read of each
// output line before it is written: on an Intel Xeon Ice Lake, 2x320x64x64 float32 on one thread
// went from 2.2 to 1.3 ms, 1.05 -> 0.6 of torch's time), unless input and output fit in what the
// cache keeps between calls (oc_cache_keeps_bytes: an AMD L3): there the output stays cached for the
// next call and the next op (AMD Zen 5, 32 MiB L3, 2x320x64x64 as a torch op: 375 -> 265 us on 2
// threads, 465 -> 389 on 1; past the L3, 1x128x256x256 gained from streaming: 2.2 -> 1.9 ms).
//
// Parallelism: tasks over ranges of (n, g) groups, each computing statistics then output (the
// group is still in cache for the second pass). When there are few groups for the work, each
// group is split into chunks: one parallel pass for per-chunk statistics, a merge, and a
// parallel output pass. y may equal x: a group's output is written only after all of its
// statistics are known.
//
// Like inverse.cpp, the body below is compiled once per instruction set (isa_passes.inc).

#ifndef OC_ISA_PASS

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ortcustom/half.h"
#include "../kernels.h"
#include "parallel.h"

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace oc {
#define OC_ISA_PASS_FILE "group_norm.cpp"
#define OC_ISA_PASS_NS group_norm
#include "isa_passes.inc"  // oc::group_norm_base, _avx2, _avx512
}  // namespace oc

extern "C" {

void oc_group_norm_f32(const float* x, const float* scale, const float* bias, float* y,
                       int64_t N, int64_t C, int64_t S, int64_t groups, double eps,
                       oc_parallel par) {
  if (N <= 0 || C <= 0 || S <= 0 || groups <= 0) return;
  OC_ISA_CALL(oc::group_norm, group_norm_f32, x, scale, bias, y, N, C, S, groups, eps, par);
}

void oc_group_norm_f64(const double* x, const double* scale, const double* bias, double* y,
                       int64_t N, int64_t C, int64_t S, int64_t groups, double eps,
                       oc_parallel par) {
  if (N <= 0 || C <= 0 || S <= 0 || groups <= 0) return;
  OC_ISA_CALL(oc::group_norm, group_norm_f64, x, scale, bias, y, N, C, S, groups, eps, par);
}

void oc_group_norm_f16(const uint16_t* x, const uint16_t* scale, const uint16_t* bias,
                       uint16_t* y, int64_t N, int64_t C, int64_t S, int64_t groups,
                       double eps, oc_parallel par) {
  if (N <= 0 || C <= 0 || S <= 0 || groups <= 0) return;
  OC_ISA_CALL(oc::group_norm, group_norm_f16, x, scale, bias, y, N, C, S, groups, eps, par);
}

}  // extern "C"

#else  // OC_ISA_PASS: the per-instruction-set body, included inside a namespace

using ::oc::detail::Conv;
using ::oc::detail::div_up;
using ::oc::detail::parallel_for;
using ::oc::detail::split_range;

enum : int64_t {
  kBlock = 1024,          // elements per statistics block
  kLanes = 32,            // independent accumulators per block (a few SIMD registers)
  kMinTaskElems = 16384,  // elements per task, at least
  kMaxTasks = 256,
  kMaxChunks = 64,        // per group, when splitting groups
  kStreamBytes = 4 << 20, // outputs from this size are stored non-temporally
};

struct Moments {
  double n, mean, m2;
};

static OC_ALWAYS_INLINE void merge(Moments& acc, double nb, double meanb, double m2b) {
  const double n = acc.n + nb;
  const double delta = meanb - acc.mean;
  const double f = nb / n;
  acc.mean += delta * f;
  acc.m2 += m2b + delta * delta * acc.n * f;
  acc.n = n;
}

static OC_ALWAYS_INLINE void merge(Moments& acc, const Moments& b) {
  if (b.n <= 0) return;
  if (acc.n <= 0) {
    acc = b;
    return;
  }
  merge(acc, b.n, b.mean, b.m2);
}

// Moments of one block of len <= kBlock contiguous compute-type values, merged into acc.
template <class T>
static OC_ALWAYS_INLINE void block_moments(const T* OC_RESTRICT x, int64_t len, Moments& acc) {
  const T K = x[0];
  T s1[kLanes], s2[kLanes];
  for (int l = 0; l < kLanes; ++l) {
    s1[l] = T(0);
    s2[l] = T(0);
  }
  int64_t i = 0;
  for (; i + kLanes <= len; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      const T d = x[i + l] - K;
      s1[l] += d;
      s2[l] += d * d;
    }
  }
  for (int l = 0; i < len; ++i, ++l) {
    const T d = x[i] - K;
    s1[l] += d;
    s2[l] += d * d;
  }
  // pairwise lane reduction
  for (int w = kLanes / 2; w >= 1; w /= 2) {
    for (int l = 0; l < w; ++l) {
      s1[l] += s1[l + w];
      s2[l] += s2[l + w];
    }
  }
  const double nb = (double)len;
  const double sum1 = (double)s1[0];
  double m2 = (double)s2[0] - sum1 * sum1 / nb;
  if (!(m2 >= 0)) m2 = m2 < 0 ? 0.0 : m2;  // rounding; NaN stays NaN
  const double meanb = (double)K + sum1 / nb;
  if (acc.n <= 0) {
    acc.n = nb;
    acc.mean = meanb;
    acc.m2 = m2;
  } else {
    merge(acc, nb, meanb, m2);
  }
}

// Moments of x[0, len) (storage type S, compute type T).
template <class S, class T>
static Moments range_moments(const S* OC_RESTRICT x, int64_t len) {
  Moments acc = {0.0, 0.0, 0.0};
  if (std::is_same<S, T>::value) {
    const T* xt = (const T*)(const void*)x;
    for (int64_t b = 0; b < len; b += kBlock)
      block_moments<T>(xt + b, len - b < kBlock ? len - b : (int64_t)kBlock, acc);
  } else {
    alignas(64) T buf[kBlock];
    for (int64_t b = 0; b < len; b += kBlock) {
      const int64_t m = len - b < kBlock ? len - b : (int64_t)kBlock;
      for (int64_t i = 0; i < m; ++i) buf[i] = Conv<S, T>::load(x[b + i]);
      block_moments<T>(buf, m, acc);
    }
  }
  return acc;
}

// y[i] = (x[i] - K) * a + b for i < len.
template <class S, class T>
static OC_ALWAYS_INLINE void affine(const S* x, S* y, int64_t len, T K, T a, T b) {
  if (std::is_same<S, T>::value) {
    const T* xt = (const T*)(const void*)x;
    T* yt = (T*)(void*)y;
    for (int64_t i = 0; i < len; ++i) yt[i] = (xt[i] - K) * a + b;
  } else {
    alignas(64) T buf[kBlock];
    for (int64_t o = 0; o < len; o += kBlock) {
      const int64_t m = len - o < kBlock ? len - o : (int64_t)kBlock;
      for (int64_t i = 0; i < m; ++i) buf[i] = (Conv<S, T>::load(x[o + i]) - K) * a + b;
      for (int64_t i = 0; i < m; ++i) y[o + i] = Conv<S, T>::store(buf[i]);
    }
  }
}

// Non-temporal (streaming) stores of a large output: they skip reading each output line before
// writing it (a third of the memory traffic of a pass that does not fit the caches).
#if defined(__SSE2__)
typedef float Vf __attribute__((vector_size(OC_VEC_BYTES)));
typedef double Vd __attribute__((vector_size(OC_VEC_BYTES)));
static OC_ALWAYS_INLINE void stream(float* p, Vf v) {
#if OC_VEC_BYTES == 64
  _mm512_stream_ps(p, (__m512)v);
#elif OC_VEC_BYTES == 32
  _mm256_stream_ps(p, (__m256)v);
#else
  _mm_stream_ps(p, (__m128)v);
#endif
}
static OC_ALWAYS_INLINE void stream(double* p, Vd v) {
#if OC_VEC_BYTES == 64
  _mm512_stream_pd(p, (__m512d)v);
#elif OC_VEC_BYTES == 32
  _mm256_stream_pd(p, (__m256d)v);
#else
  _mm_stream_pd(p, (__m128d)v);
#endif
}

// y[i] = (x[i] - K) * a + b for i < len, y written around the caches (T = float or double).
template <class T, class V>
static OC_ALWAYS_INLINE void affine_streamed(const T* x, T* y, int64_t len, T K, T a, T b) {
  constexpr int64_t W = OC_VEC_BYTES / sizeof(T);
  int64_t i = 0;
  for (; i < len && ((uintptr_t)(y + i) % OC_VEC_BYTES) != 0; ++i) y[i] = (x[i] - K) * a + b;
  for (; i + W <= len; i += W) {
    V v;
    memcpy(&v, x + i, sizeof v);
    stream(y + i, (v - K) * a + b);
  }
  for (; i < len; ++i) y[i] = (x[i] - K) * a + b;
}
static const bool kCanStream = true;
static OC_ALWAYS_INLINE void stream_fence() { _mm_sfence(); }
#else
static const bool kCanStream = false;
static OC_ALWAYS_INLINE void stream_fence() {}
#endif

template <class S, class T>
struct Params {
  const S* x;
  const S* scale;
  const S* bias;
  S* y;
  int64_t N, C, S_, G, Cg, M;
  double eps;
  bool streamed;  // output stores bypass the caches (float/double outputs too large to stay cached)
};

// Output for elements [e0, e1) of group u (= n * G + g) given its moments.
template <class S, class T>
static void normalize_range(const Params<S, T>& p, int64_t u, int64_t e0, int64_t e1,
                            const Moments& mo) {
  const int64_t g = u % p.G;
  const int64_t base = u * p.M;
  const double var = mo.m2 / mo.n;
  const double rstd = 1.0 / sqrt(var + p.eps);
  const T K = (T)mo.mean;
  const double shift = (double)K - mo.mean;
  int64_t e = e0;
  while (e < e1) {
    const int64_t cl = e / p.S_;  // channel within the group
    const int64_t c = g * p.Cg + cl;
    const int64_t end = (cl + 1) * p.S_ < e1 ? (cl + 1) * p.S_ : e1;
    const double sc = p.scale ? (double)Conv<S, T>::load(p.scale[c]) : 1.0;
    const double bi = p.bias ? (double)Conv<S, T>::load(p.bias[c]) : 0.0;
    const double a = rstd * sc;
    const double b = bi + shift * a;
#if defined(__SSE2__)
    if (std::is_same<S, T>::value && p.streamed) {
      typedef typename std::conditional<std::is_same<T, float>::value, Vf, Vd>::type V;
      affine_streamed<T, V>((const T*)(const void*)(p.x + base + e), (T*)(void*)(p.y + base + e),
                            end - e, K, (T)a, (T)b);
      e = end;
      continue;
    }
#endif
    affine<S, T>(p.x + base + e, p.y + base + e, end - e, K, (T)a, (T)b);
    e = end;
  }
}

template <class S, class T>
static void group_norm(const S* x, const S* scale, const S* bias, S* y, int64_t N, int64_t C,
                       int64_t Sdim, int64_t groups, double eps, const oc_parallel& par) {
  Params<S, T> p;
  p.x = x;
  p.scale = scale;
  p.bias = bias;
  p.y = y;
  p.N = N;
  p.C = C;
  p.S_ = Sdim;
  p.G = groups;
  p.Cg = C / groups;
  p.M = p.Cg * Sdim;
  p.eps = eps;
  const int64_t units = N * groups;
  const int64_t M = p.M;
  const int64_t total = units * M;
  p.streamed = kCanStream && std::is_same<S, T>::value && total * (int64_t)sizeof(S) >= kStreamBytes &&
               2 * total * (long long)sizeof(S) > ::oc::detail::cache_keeps_bytes();
  int64_t want = total / kMinTaskElems;  // tasks the work justifies
  if (want < 1) want = 1;
  if (want > kMaxTasks) want = kMaxTasks;

  if (units >= want || M < 2 * kMinTaskElems) {
    // Whole groups per task: statistics, then output while the group is in cache.
    const int64_t nt = units < want ? units : want;
    auto task = [&](size_t ti) {
      int64_t u0, u1;
      split_range(units, nt, (int64_t)ti, u0, u1);
      for (int64_t u = u0; u < u1; ++u) {
        const Moments mo = range_moments<S, T>(x + u * M, M);
        normalize_range<S, T>(p, u, 0, M, mo);
      }
      if (p.streamed) stream_fence();  // the streamed stores are done before the task ends
    };
    parallel_for(par, (size_t)nt, task);
    return;
  }

  // Few, large groups: split each group into chunks (multiples of kBlock elements).
  int64_t chunks = div_up(want, units);
  if (chunks > kMaxChunks) chunks = kMaxChunks;
  const int64_t blocks = div_up(M, kBlock);
  if (chunks > blocks) chunks = blocks;
  Moments part[kMaxTasks];  // units * chunks <= kMaxTasks here (units < want <= kMaxTasks)
  int64_t nt = units * chunks;
  if (nt > kMaxTasks) {
    chunks = kMaxTasks / units;
    nt = units * chunks;
  }
  auto chunk_range = [&](int64_t ci, int64_t& e0, int64_t& e1) {
    int64_t b0, b1;
    split_range(blocks, chunks, ci, b0, b1);
    e0 = b0 * kBlock;
    e1 = b1 * kBlock < M ? b1 * kBlock : M;
  };
  auto stats = [&](size_t ti) {
    const int64_t u = (int64_t)ti / chunks, ci = (int64_t)ti % chunks;
    int64_t e0, e1;
    chunk_range(ci, e0, e1);
    part[ti] = range_moments<S, T>(x + u * M + e0, e1 - e0);
  };
  parallel_for(par, (size_t)nt, stats);
  Moments mo[kMaxTasks];
  for (int64_t u = 0; u < units; ++u) {
    Moments acc = {0.0, 0.0, 0.0};
    for (int64_t ci = 0; ci < chunks; ++ci) merge(acc, part[u * chunks + ci]);
    mo[u] = acc;
  }
  auto out = [&](size_t ti) {
    const int64_t u = (int64_t)ti / chunks, ci = (int64_t)ti % chunks;
    int64_t e0, e1;
    chunk_range(ci, e0, e1);
    normalize_range<S, T>(p, u, e0, e1, mo[u]);
    if (p.streamed) stream_fence();
  };
  parallel_for(par, (size_t)nt, out);
}

// Entry points of this instruction set (non-template, so they carry its target options).
void group_norm_f32(const float* x, const float* scale, const float* bias, float* y, int64_t N,
                    int64_t C, int64_t S, int64_t groups, double eps, oc_parallel par) {
  group_norm<float, float>(x, scale, bias, y, N, C, S, groups, eps, par);
}
void group_norm_f64(const double* x, const double* scale, const double* bias, double* y,
                    int64_t N, int64_t C, int64_t S, int64_t groups, double eps,
                    oc_parallel par) {
  group_norm<double, double>(x, scale, bias, y, N, C, S, groups, eps, par);
}
void group_norm_f16(const uint16_t* x, const uint16_t* scale, const uint16_t* bias, uint16_t* y,
                    int64_t N, int64_t C, int64_t S, int64_t groups, double eps,
                    oc_parallel par) {
  group_norm<uint16_t, float>(x, scale, bias, y, N, C, S, groups, eps, par);
}

#endif  // OC_ISA_PASS
