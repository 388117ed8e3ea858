/* The built-in CPU kernels' internal entry points, over raw contiguous buffers: what their ABI
 * entries (*_op.cpp, written against ortcustom/kernel.h) call once the inputs are checked. Not
 * installed. All functions are thread-safe (no global mutable state) and never throw: inputs are
 * assumed valid. Only the Inverse entry points can fail (out of memory): they return a status,
 * which the caller must check. */
#ifndef ORTCUSTOM_KERNELS_H
#define ORTCUSTOM_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "ortcustom/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs fn(arg, i) for every i in [0, n), possibly in parallel, and returns when all are done.
   The ABI entries (*_op.cpp, runner.h) make it the host's parallel_for: ONNX Runtime's intra-op
   pool in a session, OpenMP's in a direct call.
   Kernels split their work into n tasks themselves (n may be 1; it is never 0). */
typedef void (*oc_parallel_for_fn)(void* runner, oc_task_fn fn, size_t n, void* arg);
typedef struct oc_parallel {
  oc_parallel_for_fn run; /* NULL means: run serially on the calling thread */
  void* runner;
} oc_parallel;

/* A runner that runs the tasks in order on the calling thread. */
extern const oc_parallel oc_serial;

/* The instruction set the CPU kernels run with here: "avx512" (x86 with AVX-512 F/BW/VL/DQ),
   "avx2+fma" (x86 with AVX2, FMA and F16C) or "baseline": the best this CPU runs, capped by the
   environment variable ORTCUSTOM_ISA=baseline|avx2|avx512 (ORTCUSTOM_NO_AVX2, any value: baseline),
   read once per process. */
const char* oc_cpu_isa(void);
/* `iterations` rounds of a float32 multiply-add loop at the FMA units' throughput, with the pass
   oc_cpu_isa names; returns the flops done (fma_peak.cpp). */
double oc_fma_loop(int64_t iterations);
/* `rounds` round trips of a counter between the calling thread and a new one (handoff.cpp): the
   handoffs each side saw in order (2 rounds; -1 if no thread could start), and in *ns_one_way the
   mean time of one. */
int64_t oc_handoff(int64_t rounds, double* ns_one_way);
/* The bytes of a call's inputs and outputs the next call may still find in cache (an AMD core's L3;
   0 elsewhere): GroupNorm writes a large output past the caches only when more than this. */
long long oc_cache_keeps_bytes(void);

/* Status of the Inverse entry points: 0 on success, or OC_OUT_OF_MEMORY (kernel.h) when the scratch
   memory of the blocked path (n > 16: about (n + 130) * n elements per matrix in flight, a padded
   working copy and a panel; float for float16) could not be allocated; the output is then not the inverse (some matrices
   are left unwritten) and must not be used. */

/* Inverse of `batch` row-major n x n matrices, stored contiguously (in[b*n*n + i*n + j]).
   Gauss-Jordan elimination with partial (row) pivoting, blocked for large n. Singular matrices
   give inf/nan in their output (division by a zero pivot), never a crash or an error.
   out may be in itself (each matrix is read before it is written) or not overlap it. batch may
   be 0. n >= 1. Returns 0 or OC_OUT_OF_MEMORY (above). */
int oc_inverse_f32(const float* in, float* out, int64_t batch, int64_t n, oc_parallel par);
int oc_inverse_f64(const double* in, double* out, int64_t batch, int64_t n, oc_parallel par);
/* float16 as IEEE binary16 bits; computed in float. */
int oc_inverse_f16(const uint16_t* in, uint16_t* out, int64_t batch, int64_t n,
                   oc_parallel par);

/* Group normalization like torch.nn.functional.group_norm: x has shape (N, C, S) (S = product
   of the spatial dims, may be 1); groups divides C; scale and bias have C entries (either may
   be NULL, meaning 1 and 0).
   y = (x - mean_g) / sqrt(var_g + eps) * scale[c] + bias[c], with mean and biased variance over
   the C/groups * S elements of each (n, g). y may equal x (in place) or not overlap it. */
void oc_group_norm_f32(const float* x, const float* scale, const float* bias, float* y,
                       int64_t N, int64_t C, int64_t S, int64_t groups, double eps,
                       oc_parallel par);
void oc_group_norm_f64(const double* x, const double* scale, const double* bias, double* y,
                       int64_t N, int64_t C, int64_t S, int64_t groups, double eps,
                       oc_parallel par);
/* float16 as IEEE binary16 bits; statistics accumulated in float blocks merged in double. */
void oc_group_norm_f16(const uint16_t* x, const uint16_t* scale, const uint16_t* bias,
                       uint16_t* y, int64_t N, int64_t C, int64_t S, int64_t groups,
                       double eps, oc_parallel par);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ORTCUSTOM_KERNELS_H */
