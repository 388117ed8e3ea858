// Group normalization on CUDA (like torch.nn.functional.group_norm) over x of shape (N, C, S).
//
// Each (n, g) group is a contiguous run of M = C/groups * S elements. A group is handled by one
// block, or, on sm_90+ when there are few groups for the GPU or a group is too large for one
// block's shared memory, by a thread-block cluster of up to 8 blocks, each taking a contiguous
// slice (partial statistics are merged through distributed shared memory: no scratch memory).
//
// Memory traffic: when a block's slice fits in shared memory ("cached"), x is read once (16-byte
// vector loads, kept raw in shared memory) and y written once: the copy-bandwidth minimum.
// Otherwise ("streaming") the slice is read twice (the second read mostly from L2) and y
// written once. Vector width: 16 bytes (float4 / 2 doubles / 8 halves) when x and y are 16-byte
// aligned and S is a multiple of the vector length (then a vector never straddles a channel);
// scalar otherwise.
//
// Statistics: each thread accumulates sum(d) and sum(d*d) of d = x - K over chunks of UNR
// vectors (K = the chunk's first element; float for f32/f16, double for f64) and merges each
// chunk's (count, mean, M2) into its running moments with Chan's formula; threads, warps,
// blocks and cluster ranks are merged in double, in a fixed order (deterministic, identical in
// every block of a cluster). Groups of 1e6 elements with mean 1000 stay accurate.
//
// Output: y = (x - K) * a_c + b_c with a_c = rstd * scale[c], b_c = bias[c] + (K - mean) * a_c
// (computed in double, rounded once), K = mean rounded to the compute type (as the CPU kernel:
// x - K is exact near the mean, so large offsets cost no precision). y may equal x: a block
// writes only its own slice, after the statistics of the whole group are known, and every
// element is read before it is written.

#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include "common.cuh"
#include "../kernels_cuda.h"

namespace oc_cuda {
namespace {

constexpr int kUnroll = 8;        // vectors loaded per thread before they are consumed
constexpr int kMaxThreads = 512;
constexpr int kMaxCluster = 8;    // portable cluster size

template <class A>
struct Moments {
  A n, mean, m2;
};

template <class A>
__device__ __forceinline__ void merge(Moments<A>& acc, A nb, A meanb, A m2b) {
  if (!(nb > A(0))) return;
  if (!(acc.n > A(0))) {
    acc.n = nb;
    acc.mean = meanb;
    acc.m2 = m2b;
    return;
  }
  const A n = acc.n + nb;
  const A delta = meanb - acc.mean;
  const A f = nb / n;
  acc.mean += delta * f;
  acc.m2 += m2b + delta * delta * acc.n * f;
  acc.n = n;
}

// The moments of a warp's 32 lanes, merged into lane 0 (shfl_down tree: a fixed order).
__device__ __forceinline__ void warp_merge(Moments<double>& m, int lane) {
#pragma unroll
  for (int off = 16; off >= 1; off >>= 1) {
    const double on = __shfl_down_sync(kFullMask, m.n, off);
    const double om = __shfl_down_sync(kFullMask, m.mean, off);
    const double o2 = __shfl_down_sync(kFullMask, m.m2, off);
    if (lane + off < 32) merge(m, on, om, o2);
  }
}

// Raw 16-byte vector (VEC > 1) or one scalar (VEC == 1) of storage type S.
template <class S, int VEC>
struct Raw {
  typedef uint4 type;
};
template <class S>
struct Raw<S, 1> {
  typedef S type;
};

template <class S, int VEC>
__device__ __forceinline__ void unpack(const typename Raw<S, VEC>::type& r, S (&s)[VEC]) {
  memcpy(s, &r, sizeof(s));
}
template <class S, int VEC>
__device__ __forceinline__ typename Raw<S, VEC>::type pack(const S (&s)[VEC]) {
  typename Raw<S, VEC>::type r;
  memcpy(&r, s, sizeof(r));
  return r;
}

template <class S, class T, class A, int VEC, bool CACHED>
__global__ void __launch_bounds__(kMaxThreads)
    gn_kernel(const S* x, const S* scale, const S* bias, S* y, int64_t units, int64_t M,
              int64_t Sdim, int64_t G, int64_t Cg, double eps, int splits) {
  typedef typename Raw<S, VEC>::type R;
  extern __shared__ __align__(16) unsigned char smraw[];
  R* cache = reinterpret_cast<R*>(smraw);
  __shared__ double red[3][32];
  __shared__ double fin[3];   // this block's moments (read by the other cluster ranks)
  __shared__ double fin2[3];  // the group's moments

  const int tid = threadIdx.x, nt = blockDim.x;
  const int lane = tid & 31, warp = tid >> 5, nwarps = (nt + 31) >> 5;
  const int rank = (int)(blockIdx.x % (unsigned)splits);
  const int64_t Mv = M / VEC;
  const bool idx32 = M <= 0x7fffffff;
  const int64_t ustride = gridDim.x / (unsigned)splits;

  for (int64_t u = blockIdx.x / (unsigned)splits; u < units; u += ustride) {
    const int64_t v0 = Mv * rank / splits, v1 = Mv * (rank + 1) / splits;
    const int64_t nv = v1 - v0;
    const R* xs = reinterpret_cast<const R*>(x + u * M) + v0;
    R* ys = reinterpret_cast<R*>(y + u * M) + v0;

    // ---- statistics (and the cache fill)
    Moments<A> mo = {A(0), A(0), A(0)};
    for (int64_t base = tid; base < nv; base += (int64_t)nt * kUnroll) {
      R r[kUnroll];
#pragma unroll
      for (int q = 0; q < kUnroll; ++q) {
        const int64_t i = base + (int64_t)q * nt;
        if (i < nv) r[q] = CACHED ? __ldcs(xs + i) : xs[i];
      }
      S s0[VEC];
      unpack<S, VEC>(r[0], s0);
      const A K = (A)Conv<S, T>::load(s0[0]);
      A s1 = A(0), s2 = A(0), cnt = A(0);
#pragma unroll
      for (int q = 0; q < kUnroll; ++q) {
        const int64_t i = base + (int64_t)q * nt;
        if (i < nv) {
          if (CACHED) cache[i] = r[q];
          S s[VEC];
          unpack<S, VEC>(r[q], s);
#pragma unroll
          for (int t = 0; t < VEC; ++t) {
            const A d = (A)Conv<S, T>::load(s[t]) - K;
            s1 += d;
            s2 = fma(d, d, s2);
          }
          cnt += A(VEC);
        }
      }
      const A mean_c = s1 / cnt;
      A m2c = s2 - s1 * mean_c;
      m2c = m2c < A(0) ? A(0) : m2c;  // rounding; NaN stays NaN
      merge(mo, cnt, K + mean_c, m2c);
    }
    // block reduction in double, fixed order (shfl_down tree, then warp partials by warp 0)
    Moments<double> md = {(double)mo.n, (double)mo.mean, (double)mo.m2};
    warp_merge(md, lane);
    if (lane == 0) {
      red[0][warp] = md.n;
      red[1][warp] = md.mean;
      red[2][warp] = md.m2;
    }
    __syncthreads();
    if (warp == 0) {
      Moments<double> w = {0.0, 0.0, 0.0};
      if (lane < nwarps) w = {red[0][lane], red[1][lane], red[2][lane]};
      warp_merge(w, lane);
      if (lane == 0) {
        fin[0] = w.n;
        fin[1] = w.mean;
        fin[2] = w.m2;
        if (splits == 1) {
          fin2[0] = w.n;
          fin2[1] = w.mean;
          fin2[2] = w.m2;
        }
      }
    }
    if (splits > 1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
      cooperative_groups::cluster_group cl = cooperative_groups::this_cluster();
      cl.sync();  // every rank's fin is written
      if (tid == 0) {
        Moments<double> acc = {0.0, 0.0, 0.0};
        for (int r = 0; r < splits; ++r) {
          const double* rf = cl.map_shared_rank(fin, r);
          merge(acc, rf[0], rf[1], rf[2]);
        }
        fin2[0] = acc.n;
        fin2[1] = acc.mean;
        fin2[2] = acc.m2;
      }
      cl.sync();  // remote reads done (no rank exits or overwrites fin early); fin2 visible
#else
      __trap();  // the host never launches clusters below sm_90
#endif
    } else {
      __syncthreads();
    }
    const double gmean = fin2[1];
    const double var = fin2[2] / fin2[0];
    const double rstd = 1.0 / sqrt(var + eps);
    const T Kt = (T)gmean;
    const double shift = (double)Kt - gmean;
    const int64_t g = u % G;

    // ---- output
    for (int64_t base = tid; base < nv; base += (int64_t)nt * kUnroll) {
      R r[kUnroll];
#pragma unroll
      for (int q = 0; q < kUnroll; ++q) {
        const int64_t i = base + (int64_t)q * nt;
        if (i < nv) r[q] = CACHED ? cache[i] : __ldcs(xs + i);
      }
#pragma unroll
      for (int q = 0; q < kUnroll; ++q) {
        const int64_t i = base + (int64_t)q * nt;
        if (i < nv) {
          S s[VEC];
          unpack<S, VEC>(r[q], s);
          const int64_t e = (v0 + i) * VEC;  // element index within the group
          const int64_t cl = idx32 ? (int64_t)((uint32_t)e / (uint32_t)Sdim) : e / Sdim;
          const int64_t c = g * Cg + cl;
          const double sc = scale ? (double)Conv<S, T>::load(scale[c]) : 1.0;
          const double bi = bias ? (double)Conv<S, T>::load(bias[c]) : 0.0;
          const double ad = rstd * sc;
          const T a = (T)ad, bb = (T)(bi + shift * ad);
#pragma unroll
          for (int t = 0; t < VEC; ++t)
            s[t] = Conv<S, T>::store(fma(Conv<S, T>::load(s[t]) - Kt, a, bb));
          __stcs(ys + i, pack<S, VEC>(s));
        }
      }
    }
    __syncthreads();  // cache, red and fin2 are reused for the next group
  }
}

struct Plan {
  int splits, threads, grid;
  size_t smem;
  bool cached;
};

inline int pow2ceil(int64_t v) {
  int p = 1;
  while (p < v && p < (1 << 30)) p <<= 1;
  return p;
}

// Whether the kernel images loaded on the current device have the cluster code path: only an
// image built for sm_90 or newer has it. A build whose newest target is older still runs on an
// sm_90 GPU by JIT from its PTX, where that path would trap. Cached per device.
template <class K>
bool clusters_in_image(K kern) {
  constexpr int kMaxDev = 64;
  static std::atomic<int> cache[kMaxDev];  // 0 unknown, 1 no, 2 yes
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  if (dev >= 0 && dev < kMaxDev) {
    const int c = cache[dev].load(std::memory_order_relaxed);
    if (c != 0) return c == 2;
  }
  cudaFuncAttributes fa;
  bool yes = false;
  if (cudaFuncGetAttributes(&fa, reinterpret_cast<const void*>(kern)) == cudaSuccess)
    yes = fa.ptxVersion >= 90;
  else
    (void)cudaGetLastError();
  if (dev >= 0 && dev < kMaxDev) cache[dev].store(yes ? 2 : 1, std::memory_order_relaxed);
  return yes;
}

template <class S, class T, class A, int VEC>
int gn_launch_v(const S* x, const S* scale, const S* bias, S* y, int64_t units, int64_t M,
                int64_t Sdim, int64_t G, int64_t Cg, double eps, const DeviceInfo& di,
                cudaStream_t st) {
  const int64_t Mv = M / VEC;
  const size_t vbytes = sizeof(S) * VEC;
  const size_t cap = (size_t)di.smem_optin - 2048;  // static shared memory is < 1 KiB
  int splits = 1;
  if (di.cc_major >= 9 && Mv >= 2048 && clusters_in_image(gn_kernel<S, T, A, VEC, true>)) {
    const int64_t want = div_up(2 * (int64_t)di.sms, units);        // fill the GPU twice
    const int64_t need = div_up(Mv * (int64_t)vbytes, (int64_t)cap);  // fit shared memory
    int64_t s = want;
    if (need <= kMaxCluster && need > s) s = need;
    if (s > kMaxCluster) s = kMaxCluster;
    if (s > Mv / 1024) s = Mv / 1024;  // at least 1024 vectors per block
    splits = (int)(s < 1 ? 1 : s);
  }
  const int64_t nv = div_up(Mv, splits);
  const size_t slice_bytes = (size_t)nv * vbytes;
  const bool cached = slice_bytes <= cap;
  int threads = pow2ceil(div_up(nv, 2 * kUnroll));
  if (threads < 64) threads = 64;
  if (threads > kMaxThreads) threads = kMaxThreads;
  const int64_t max_clusters = (int64_t)0x7fffffff / splits;
  const int64_t clusters = units < max_clusters ? units : max_clusters;
  const unsigned grid = (unsigned)(clusters * splits);
  const size_t smem = cached ? slice_bytes : 0;

  cudaError_t e;
  auto launch = [&](auto kern_c) -> int {
    constexpr auto kern = decltype(kern_c)::value;
    if ((e = allow_smem<kern>(smem)) != cudaSuccess) return (int)e;
    if (splits == 1) {
      kern<<<grid, threads, smem, st>>>(x, scale, bias, y, units, M, Sdim, G, Cg, eps, 1);
      return launch_status();
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid, 1, 1);
    cfg.blockDim = dim3((unsigned)threads, 1, 1);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = st;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = (unsigned)splits;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    e = cudaLaunchKernelEx(&cfg, kern, x, scale, bias, y, units, M, Sdim, G, Cg, eps, splits);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      return (int)e;
    }
    return launch_status();
  };
  if (cached) return launch(kernel_c<gn_kernel<S, T, A, VEC, true>>{});
  return launch(kernel_c<gn_kernel<S, T, A, VEC, false>>{});
}

template <class S, class T, class A>
int group_norm(const S* x, const S* scale, const S* bias, S* y, int64_t N, int64_t C,
               int64_t Sdim, int64_t groups, double eps, void* stream) {
  if (N < 0 || C < 0 || Sdim < 0 || groups <= 0 || C % groups != 0)
    return (int)cudaErrorInvalidValue;
  if (N == 0 || C == 0 || Sdim == 0) return 0;
  if (x == nullptr || y == nullptr) return (int)cudaErrorInvalidValue;
  DeviceInfo di;
  const cudaError_t e = device_info(&di);
  if (e != cudaSuccess) return (int)e;
  const int64_t units = N * groups, Cg = C / groups, M = Cg * Sdim;
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  constexpr int VW = 16 / (int)sizeof(S);
  const bool vec = Sdim % VW == 0 && ((uintptr_t)x % 16) == 0 && ((uintptr_t)y % 16) == 0;
  if (vec) return gn_launch_v<S, T, A, VW>(x, scale, bias, y, units, M, Sdim, groups, Cg, eps, di, st);
  return gn_launch_v<S, T, A, 1>(x, scale, bias, y, units, M, Sdim, groups, Cg, eps, di, st);
}

}  // namespace
}  // namespace oc_cuda

extern "C" {

int oc_cuda_group_norm_f32(const float* x, const float* scale, const float* bias, float* y,
                           int64_t N, int64_t C, int64_t S, int64_t groups, double eps,
                           void* stream) {
  return oc_cuda::group_norm<float, float, float>(x, scale, bias, y, N, C, S, groups, eps,
                                                  stream);
}

int oc_cuda_group_norm_f64(const double* x, const double* scale, const double* bias, double* y,
                           int64_t N, int64_t C, int64_t S, int64_t groups, double eps,
                           void* stream) {
  return oc_cuda::group_norm<double, double, double>(x, scale, bias, y, N, C, S, groups, eps,
                                                     stream);
}

int oc_cuda_group_norm_f16(const uint16_t* x, const uint16_t* scale, const uint16_t* bias,
                           uint16_t* y, int64_t N, int64_t C, int64_t S, int64_t groups,
                           double eps, void* stream) {
  return oc_cuda::group_norm<uint16_t, float, float>(x, scale, bias, y, N, C, S, groups, eps,
                                                     stream);
}

}  // extern "C"
