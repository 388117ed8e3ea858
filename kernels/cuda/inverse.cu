// Batched matrix inverse on CUDA: Gauss-Jordan elimination with partial (row) pivoting.
//
// Same arithmetic as the CPU kernel (kernels/cpu/inverse.cpp): in-place Gauss-Jordan; at step k
// the pivot is the unused row with the largest |a[i][k]| (NaN never wins); multipliers are
// true divisions l_i = a[i][k] / piv (equal rows cancel exactly, a singular matrix hits an exact
// zero pivot and gives inf/nan); row k becomes rk * (1/piv) with rk[k] = 1; every other row
// becomes a[i] - l_i * rk with a[i][k] = -l_i. The inverse is recovered with the pivot
// permutation. Every loop has a fixed trip count: no data-dependent hang is possible.
//
// Three kernels by size:
//   * n <= 4: one thread per matrix, the matrix in registers (fully unrolled); 128 matrices per
//     block staged through shared memory so global loads and stores are coalesced.
//   * 5 <= n <= 32: a group of G = 8/16/32 lanes per matrix (32/G matrices per warp), lane i
//     holding row i in registers. Pivoting is implicit (rows are not moved): the pivot lane is
//     found with a max-reduction of an integer key and a ballot, the pivot row is broadcast
//     with shuffles; the result is scattered through shared memory with both permutations.
//   * n > 32: one block per matrix. The working matrix is in shared memory when it fits
//     (n <= ~237 for float, ~168 for double on H100), else in the output buffer (global
//     memory, L2-resident for the sizes allowed). Physical row swaps; per step two barriers:
//     (A) swap + pivot row and multipliers to shared memory, (B) rank-1 update, during which
//     the owners of column k+1 also find the next pivot (partial maxima per row group).
//     The column permutation is undone at the end through a shared-memory row buffer.

#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

#include "common.cuh"
#include "../kernels_cuda.h"

namespace oc_cuda {
namespace {

constexpr int kMaxN = OC_CUDA_INVERSE_MAX_N;

// ------------------------------------------------------------------------------------------
// n <= 4: one thread per matrix.

constexpr int kTpmThreads = 128;

template <class S, class T, int N>
__global__ void __launch_bounds__(kTpmThreads)
    inv_thread_kernel(const S* __restrict__ in, S* __restrict__ out, int64_t batch) {
  constexpr int NN = N * N;
  constexpr int LD = NN | 1;  // odd stride: conflict-free per-thread rows in shared memory
  __shared__ T sm[kTpmThreads * LD];
  const int tid = threadIdx.x;
  T* my = sm + tid * LD;
  for (int64_t b0 = (int64_t)blockIdx.x * kTpmThreads; b0 < batch;
       b0 += (int64_t)gridDim.x * kTpmThreads) {
    const int cnt = (int)(batch - b0 < kTpmThreads ? batch - b0 : kTpmThreads);
    const S* src = in + b0 * NN;
    for (int e = tid; e < cnt * NN; e += kTpmThreads) {
      const int m = e / NN, r = e - m * NN;
      sm[m * LD + r] = Conv<S, T>::load(src[e]);
    }
    __syncthreads();
    const bool valid = tid < cnt;
    T a[N][N];
#pragma unroll
    for (int i = 0; i < N; ++i)
#pragma unroll
      for (int j = 0; j < N; ++j) a[i][j] = valid ? my[i * N + j] : T(0);
    bool used[N];
    int step_of_row[N], row_of_step[N];
#pragma unroll
    for (int i = 0; i < N; ++i) {
      used[i] = false;
      step_of_row[i] = i;
      row_of_step[i] = i;
    }
#pragma unroll
    for (int k = 0; k < N; ++k) {
      int p = -1;
      T best = T(0);
#pragma unroll
      for (int r = 0; r < N; ++r) {
        const T v = fabs(a[r][k]);
        if (!used[r] && (p < 0 || v > best)) {  // first unused row, then strictly larger
          best = v;
          p = r;
        }
      }
      T rk[N];
#pragma unroll
      for (int j = 0; j < N; ++j) {
        rk[j] = a[0][j];
#pragma unroll
        for (int r = 1; r < N; ++r) rk[j] = (p == r) ? a[r][j] : rk[j];
      }
      const T piv = rk[k];
      const T inv = T(1) / piv;
#pragma unroll
      for (int r = 0; r < N; ++r) {
        const bool isp = (p == r);
        const T l = a[r][k] / piv;
        const T lm = isp ? -inv : l;  // pivot row: 0 + inv * rk[j]
#pragma unroll
        for (int j = 0; j < N; ++j)
          if (j != k) a[r][j] = fma(-lm, rk[j], isp ? T(0) : a[r][j]);
        a[r][k] = isp ? inv : -l;
        if (isp) {
          used[r] = true;
          step_of_row[r] = k;
        }
      }
      row_of_step[k] = p;
    }
    __syncthreads();  // every thread has read its matrix
    // Row r holds row step_of_row[r] of (P A)^-1; A^-1[i][perm[m]] = X[i][m].
    if (valid) {
#pragma unroll
      for (int r = 0; r < N; ++r)
#pragma unroll
        for (int m = 0; m < N; ++m) my[step_of_row[r] * N + row_of_step[m]] = a[r][m];
    }
    __syncthreads();
    S* dst = out + b0 * NN;
    for (int e = tid; e < cnt * NN; e += kTpmThreads) {
      const int m = e / NN, r = e - m * NN;
      dst[e] = Conv<S, T>::store(sm[m * LD + r]);
    }
    __syncthreads();  // before the next iteration overwrites sm
  }
}

// ------------------------------------------------------------------------------------------
// 5 <= n <= 32: G lanes per matrix, one row per lane.

constexpr int kWarpsPerBlock = 4;

template <int G>
__device__ __forceinline__ unsigned group_max(unsigned v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if (G == 32) {
    v = __reduce_max_sync(kFullMask, v);
  } else
#endif
  {
#pragma unroll
    for (int off = G / 2; off >= 1; off /= 2) {
      const unsigned o = __shfl_xor_sync(kFullMask, v, off);
      v = o > v ? o : v;
    }
  }
  return v;
}

template <int G>
__device__ __forceinline__ unsigned group_bits(unsigned ballot, int gshift) {
  return G == 32 ? ballot : (ballot >> gshift) & ((1u << (G & 31)) - 1u);
}

// Lane (within the group) of the unused row with the largest |v| (NaN counts as 0; ties: the
// lowest lane). Used lanes have key 0, unused ones >= 1, so an unused row always wins.
template <int G>
__device__ __forceinline__ int pick_pivot(float v, bool used, int gshift) {
  float av = fabsf(v);
  av = (av == av) ? av : 0.0f;
  const unsigned key = used ? 0u : __float_as_uint(av) + 1u;
  const unsigned m = group_max<G>(key);
  const unsigned bal = __ballot_sync(kFullMask, key == m);
  return __ffs(group_bits<G>(bal, gshift)) - 1;
}
template <int G>
__device__ __forceinline__ int pick_pivot(double v, bool used, int gshift) {
  double av = fabs(v);
  av = (av == av) ? av : 0.0;
  const unsigned long long bits = (unsigned long long)__double_as_longlong(av);
  const unsigned hi = used ? 0u : (unsigned)(bits >> 32) + 1u;  // <= 0x7ff00001
  const unsigned lo = used ? 0u : (unsigned)bits;
  const unsigned mh = group_max<G>(hi);
  const bool cand = (hi == mh);
  const unsigned ml = group_max<G>(cand ? lo : 0u);
  const unsigned bal = __ballot_sync(kFullMask, cand && lo == ml);
  return __ffs(group_bits<G>(bal, gshift)) - 1;
}

template <int N>
struct RowPad {
  enum { value = N | 1 };  // odd row stride in shared memory: conflict-free row reads
};

template <class S, class T, int N>
__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    inv_warp_kernel(const S* __restrict__ in, S* __restrict__ out, int64_t batch) {
  constexpr int G = N <= 8 ? 8 : N <= 16 ? 16 : 32;
  constexpr int MPW = 32 / G;  // matrices per warp
  constexpr int NN = N * N;
  constexpr int LD = RowPad<N>::value;
  constexpr int MS = N * LD;  // matrix stride in shared memory
  __shared__ T sm[kWarpsPerBlock][MPW * MS];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int grp = lane / G, row = lane % G;
  const int gshift = grp * G;
  T* wsm = sm[warp];
  const int64_t wstride = (int64_t)gridDim.x * kWarpsPerBlock;
  // warp-uniform loop: every lane of the warp takes part in every shuffle/ballot
  for (int64_t w = (int64_t)blockIdx.x * kWarpsPerBlock + warp; w * MPW < batch; w += wstride) {
    const int64_t b0 = w * MPW;
    const int cnt = (int)(batch - b0 < MPW ? batch - b0 : MPW);
    const S* src = in + b0 * NN;
    for (int e = lane; e < cnt * NN; e += 32) {
      const int m = e / NN, r = e - m * NN, i = r / N, j = r - i * N;
      wsm[m * MS + i * LD + j] = Conv<S, T>::load(src[e]);
    }
    __syncwarp();
    const bool valid = grp < cnt && row < N;
    T a[N];
#pragma unroll
    for (int j = 0; j < N; ++j) a[j] = valid ? wsm[grp * MS + row * LD + j] : T(0);
    __syncwarp();
    bool used = !valid;
    int mystep = 0;
    int pr[N];  // pivot lane of each step (uniform within the group)
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const int p = pick_pivot<G>(a[k], used, gshift);
      const int srcl = gshift + p;
      const T piv = __shfl_sync(kFullMask, a[k], srcl);
      const T inv = T(1) / piv;
      const bool isp = (row == p);
      const T l = a[k] / piv;
      const T lm = isp ? -inv : l;
#pragma unroll
      for (int j = 0; j < N; ++j) {
        if (j == k) continue;
        const T r = __shfl_sync(kFullMask, a[j], srcl);  // pivot row, before its update
        a[j] = fma(-lm, r, isp ? T(0) : a[j]);
      }
      a[k] = isp ? inv : -l;
      if (isp) {
        used = true;
        mystep = k;
      }
      pr[k] = p;
    }
    // lane `row` holds row mystep of (P A)^-1 = X; A^-1[i][perm[m]] = X[i][m]
    if (valid) {
#pragma unroll
      for (int m = 0; m < N; ++m) wsm[grp * MS + mystep * LD + pr[m]] = a[m];
    }
    __syncwarp();
    S* dst = out + b0 * NN;
    for (int e = lane; e < cnt * NN; e += 32) {
      const int m = e / NN, r = e - m * NN, i = r / N, j = r - i * N;
      dst[e] = Conv<S, T>::store(wsm[m * MS + i * LD + j]);
    }
    __syncwarp();  // before the next iteration overwrites wsm
  }
}

// ------------------------------------------------------------------------------------------
// n > 32: one block per matrix.

constexpr int kMaxRowGroups = 32;

// Dynamic shared memory layout (T first, then ints; all offsets keep 16-byte alignment):
//   colbuf[n] T | rowbuf[n] T | pval[32] T | a[n*n] T (SMEM) or rows[R*n] T (in-place global)
//   | perm[n] int | invp[n] int | pidx[32] int
__host__ __device__ inline size_t align16(size_t b) { return (b + 15) & ~(size_t)15; }

template <class T>
__host__ __device__ inline size_t block_smem_t_elems(int n, int extra) {
  return (size_t)2 * n + kMaxRowGroups + (size_t)extra;
}
template <class T>
__host__ __device__ inline size_t block_smem_bytes(int n, int extra) {
  return align16(block_smem_t_elems<T>(n, extra) * sizeof(T)) +
         align16(((size_t)2 * n + kMaxRowGroups) * sizeof(int));
}

// MODE 0: working matrix in shared memory. MODE 1: in the output buffer (S == T), in place.
// MODE 2: in a separate global workspace (f16), wsmats matrices of it, one per block.
template <class S, class T, int MODE>
__global__ void __launch_bounds__(1024)
    inv_block_kernel(const S* __restrict__ in, S* out, T* ws, int64_t batch, int n, int cwt,
                     int rg, int extra) {
  extern __shared__ __align__(16) unsigned char smraw[];
  T* colbuf = reinterpret_cast<T*>(smraw);
  T* rowbuf = colbuf + n;
  T* pval = rowbuf + n;
  T* ext = pval + kMaxRowGroups;  // a (MODE 0) or row buffer (MODE 1)
  int* perm = reinterpret_cast<int*>(smraw + align16(block_smem_t_elems<T>(n, extra) * sizeof(T)));
  int* invp = perm + n;
  int* pidx = invp + n;

  const int tid = threadIdx.x, nt = blockDim.x;
  const int ct = tid % cwt, rgi = tid / cwt;  // column thread, row group (rgi < rg)
  const int64_t nn = (int64_t)n * n;

  for (int64_t b = blockIdx.x; b < batch; b += gridDim.x) {
    T* a;
    if (MODE == 0) a = ext;
    else if (MODE == 1) a = reinterpret_cast<T*>(out + b * nn);
    else a = ws + (int64_t)blockIdx.x * nn;
    const S* src = in + b * nn;
    for (int64_t e = tid; e < nn; e += nt) a[e] = Conv<S, T>::load(src[e]);
    for (int i = tid; i < n; i += nt) perm[i] = i;
    __syncthreads();
    // partial maxima of column 0 (the owners of column 0: ct == 0, one per row group)
    if (ct == 0) {
      T best = T(-1);
      int bi = -1;
      for (int i = rgi; i < n; i += rg) {
        const T v = fabs(a[(int64_t)i * n]);
        if (v > best) {  // NaN never wins
          best = v;
          bi = i;
        }
      }
      pval[rgi] = best;
      pidx[rgi] = bi;
    }
    __syncthreads();
    for (int k = 0; k < n; ++k) {
      // pivot: best of the row-group partials (same order in every thread: uniform result)
      T best = T(-1);
      int p = -1;
      for (int r = 0; r < rg; ++r) {
        const int ix = pidx[r];
        const T v = pval[r];
        if (ix >= 0 && (p < 0 || v > best || (v == best && ix < p))) {
          best = v;
          p = ix;
        }
      }
      if (p < 0) p = k;  // all NaN
      const T piv = a[(int64_t)p * n + k];
      // (A) swap rows k and p (column k excepted: it is rewritten below), pivot row to rowbuf,
      //     multipliers of the swapped rows to colbuf. Each element is read and written by one
      //     thread; column k is only read here.
      T* ak = a + (int64_t)k * n;
      T* ap = a + (int64_t)p * n;
      for (int j = tid; j < n; j += nt) {
        const T rj = ap[j];
        if (j != k && p != k) {
          ap[j] = ak[j];
          ak[j] = rj;
        }
        rowbuf[j] = (j == k) ? T(1) : rj;
      }
      for (int i = tid; i < n; i += nt) {
        const T v = (i == p) ? ak[k] : a[(int64_t)i * n + k];
        colbuf[i] = v / piv;  // true division (row k's entry is unused)
      }
      if (tid == 0 && p != k) {
        const int t = perm[k];
        perm[k] = perm[p];
        perm[p] = t;
      }
      __syncthreads();
      // (B) rank-1 update; the owners of column k+1 find its pivot candidates (rows > k)
      const T inv = T(1) / piv;
      if (rgi < rg) {
        for (int j = ct; j < n; j += cwt) {
          const T r = rowbuf[j];
          const bool nextc = (j == k + 1);
          T cbest = T(-1);
          int cidx = -1;
          for (int i = rgi; i < n; i += rg) {
            T* pa = a + (int64_t)i * n + j;
            T v;
            if (i == k) {
              v = r * inv;
            } else {
              const T base = (j == k) ? T(0) : *pa;
              v = fma(-colbuf[i], r, base);
            }
            *pa = v;
            if (nextc && i > k) {
              const T av = fabs(v);
              if (av > cbest) {
                cbest = av;
                cidx = i;
              }
            }
          }
          if (nextc) {
            pval[rgi] = cbest;
            pidx[rgi] = cidx;
          }
        }
      }
      __syncthreads();
    }
    // A^-1[i][j] = X[i][invp[j]] with invp[perm[m]] = m
    for (int m = tid; m < n; m += nt) invp[perm[m]] = m;
    __syncthreads();
    S* dst = out + b * nn;
    if (MODE != 1) {
      for (int64_t e = tid; e < nn; e += nt) {
        const int i = (int)(e / n), j = (int)(e - (int64_t)i * n);
        dst[e] = Conv<S, T>::store(a[(int64_t)i * n + invp[j]]);
      }
    } else {
      const int R = extra / n;  // rows per pass (>= 1)
      for (int i0 = 0; i0 < n; i0 += R) {
        const int rows = n - i0 < R ? n - i0 : R;
        for (int e = tid; e < rows * n; e += nt) ext[e] = a[(int64_t)i0 * n + e];
        __syncthreads();
        for (int e = tid; e < rows * n; e += nt) {
          const int r = e / n, j = e - r * n;
          dst[(int64_t)(i0 + r) * n + j] = Conv<S, T>::store(ext[r * n + invp[j]]);
        }
        __syncthreads();
      }
    }
    __syncthreads();  // shared memory is reused by the next matrix
  }
}

// ------------------------------------------------------------------------------------------
// Launchers.

inline int grid_cap(int64_t blocks) {
  const int64_t cap = 1 << 30;
  return (int)(blocks < cap ? (blocks > 0 ? blocks : 1) : cap);
}

template <class S, class T, int N>
int launch_thread(const S* in, S* out, int64_t batch, cudaStream_t st) {
  inv_thread_kernel<S, T, N>
      <<<grid_cap(div_up(batch, kTpmThreads)), kTpmThreads, 0, st>>>(in, out, batch);
  return launch_status();
}

template <class S, class T, int N>
int launch_warp(const S* in, S* out, int64_t batch, cudaStream_t st) {
  constexpr int G = N <= 8 ? 8 : N <= 16 ? 16 : 32;
  const int64_t warps = div_up(batch, 32 / G);
  inv_warp_kernel<S, T, N>
      <<<grid_cap(div_up(warps, kWarpsPerBlock)), 32 * kWarpsPerBlock, 0, st>>>(in, out, batch);
  return launch_status();
}

// Thread shape of the block kernel: cwt column threads (a multiple of 32, >= min(n, 1024)
// rounded up) times rg row groups.
inline void block_shape(int n, int* cwt, int* rg) {
  int c = (int)div_up(n, 32) * 32;
  if (c > 1024) c = 1024;
  const int target = n <= 64 ? 256 : n <= 128 ? 512 : 1024;
  int r = target / c;
  if (r < 1) r = 1;
  if (r > kMaxRowGroups) r = kMaxRowGroups;
  *cwt = c;
  *rg = r;
}

template <class S, class T>
int launch_block(const S* in, S* out, int64_t batch, int n, T* ws, size_t ws_bytes,
                 cudaStream_t st) {
  DeviceInfo di;
  cudaError_t e = device_info(&di);
  if (e != cudaSuccess) return (int)e;
  int cwt, rg;
  block_shape(n, &cwt, &rg);
  const int threads = cwt * rg;
  const int64_t nn = (int64_t)n * n;
  const size_t smem_mat = block_smem_bytes<T>(n, (int)nn);
  const int64_t max_blocks = (int64_t)di.sms * 32;
  if (smem_mat + 1024 <= (size_t)di.smem_optin) {
    constexpr auto kern = inv_block_kernel<S, T, 0>;
    if ((e = allow_smem<kern>(smem_mat)) != cudaSuccess) return (int)e;
    const int grid = (int)(batch < max_blocks ? batch : max_blocks);
    kern<<<grid, threads, smem_mat, st>>>(in, out, nullptr, batch, n, cwt, rg, (int)nn);
    return launch_status();
  }
  if (std::is_same<S, T>::value) {
    // in place in `out`; row buffer of R rows (<= 32 KiB, at least one row)
    int R = (int)(32768 / ((size_t)n * sizeof(T)));
    if (R < 1) R = 1;
    if (R > n) R = n;
    while (R > 1 && block_smem_bytes<T>(n, R * n) + 1024 > (size_t)di.smem_optin) --R;
    const size_t smem = block_smem_bytes<T>(n, R * n);
    if (smem + 1024 > (size_t)di.smem_optin) return (int)cudaErrorInvalidValue;
    constexpr auto kern = inv_block_kernel<S, T, 1>;
    if ((e = allow_smem<kern>(smem)) != cudaSuccess) return (int)e;
    const int grid = (int)(batch < max_blocks ? batch : max_blocks);
    kern<<<grid, threads, smem, st>>>(in, out, nullptr, batch, n, cwt, rg, R * n);
    return launch_status();
  }
  // separate float workspace (f16)
  const size_t mat_bytes = (size_t)nn * sizeof(T);
  if (ws == nullptr || ws_bytes < mat_bytes || ((uintptr_t)ws % 16) != 0)
    return (int)cudaErrorInvalidValue;
  int64_t wsmats = (int64_t)(ws_bytes / mat_bytes);
  if (wsmats > max_blocks) wsmats = max_blocks;
  const size_t smem = block_smem_bytes<T>(n, 0);
  constexpr auto kern = inv_block_kernel<S, T, 2>;
  if ((e = allow_smem<kern>(smem)) != cudaSuccess) return (int)e;
  const int grid = (int)(batch < wsmats ? batch : wsmats);
  kern<<<grid, threads, smem, st>>>(in, out, ws, batch, n, cwt, rg, 0);
  return launch_status();
}

template <class S, class T>
int inverse(const S* in, S* out, int64_t batch, int64_t n, void* ws, size_t ws_bytes,
            void* stream) {
  if (batch < 0 || n < 1 || n > kMaxN) return (int)cudaErrorInvalidValue;
  if (batch == 0) return 0;
  if (in == nullptr || out == nullptr) return (int)cudaErrorInvalidValue;
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  switch (n) {
#define OC_T(k) \
  case k: return launch_thread<S, T, k>(in, out, batch, st);
    OC_T(1) OC_T(2) OC_T(3) OC_T(4)
#undef OC_T
#define OC_W(k) \
  case k: return launch_warp<S, T, k>(in, out, batch, st);
    OC_W(5) OC_W(6) OC_W(7) OC_W(8) OC_W(9) OC_W(10) OC_W(11) OC_W(12) OC_W(13) OC_W(14)
    OC_W(15) OC_W(16) OC_W(17) OC_W(18) OC_W(19) OC_W(20) OC_W(21) OC_W(22) OC_W(23)
    OC_W(24) OC_W(25) OC_W(26) OC_W(27) OC_W(28) OC_W(29) OC_W(30) OC_W(31) OC_W(32)
#undef OC_W
    default:
      return launch_block<S, T>(in, out, batch, (int)n, static_cast<T*>(ws), ws_bytes, st);
  }
}

}  // namespace
}  // namespace oc_cuda

extern "C" {

int oc_cuda_inverse_f32(const float* in, float* out, int64_t batch, int64_t n, void* stream) {
  return oc_cuda::inverse<float, float>(in, out, batch, n, nullptr, 0, stream);
}

int oc_cuda_inverse_f64(const double* in, double* out, int64_t batch, int64_t n,
                        void* stream) {
  return oc_cuda::inverse<double, double>(in, out, batch, n, nullptr, 0, stream);
}

int oc_cuda_inverse_f16(const uint16_t* in, uint16_t* out, int64_t batch, int64_t n,
                        void* stream) {
  return oc_cuda::inverse<uint16_t, float>(in, out, batch, n, nullptr, 0, stream);
}

size_t oc_cuda_inverse_f16_workspace_bytes(int64_t batch, int64_t n) {
  if (batch <= 0 || n <= 32 || n > oc_cuda::kMaxN) return 0;
  oc_cuda::DeviceInfo di;
  if (oc_cuda::device_info(&di) != cudaSuccess) return 0;
  if (oc_cuda::block_smem_bytes<float>((int)n, (int)(n * n)) + 1024 <= (size_t)di.smem_optin)
    return 0;
  // one float matrix per resident block (2048 threads per SM on sm_80/sm_90), at most 256 MiB:
  // more matrices in flight add little once every SM is busy
  int cwt, rg;
  oc_cuda::block_shape((int)n, &cwt, &rg);
  const int64_t per_sm = 2048 / (cwt * rg) > 0 ? 2048 / (cwt * rg) : 1;
  int64_t mats = batch < di.sms * per_sm ? batch : di.sms * per_sm;
  const size_t mat = (size_t)(n * n) * sizeof(float), cap = (size_t)256 << 20;
  if ((size_t)mats * mat > cap) mats = (int64_t)(cap / mat) > 0 ? (int64_t)(cap / mat) : 1;
  return (size_t)mats * mat;
}

int oc_cuda_inverse_f16_ws(const uint16_t* in, uint16_t* out, int64_t batch, int64_t n,
                           void* ws, size_t ws_bytes, void* stream) {
  return oc_cuda::inverse<uint16_t, float>(in, out, batch, n, ws, ws_bytes, stream);
}

}  // extern "C"
