/* ortcustom CUDA kernels: plain C entry points over raw device buffers.
 * No Python, no ONNX Runtime types, and no CUDA headers needed to include this file (streams are
 * passed as void*, a cudaStream_t).
 *
 * All launches go to `stream` (ORT's compute stream). Nothing is launched on the default stream
 * (unless `stream` itself is NULL), nothing synchronizes the device or the stream, nothing
 * allocates device memory. Each launcher returns 0 (cudaSuccess) or a cudaError_t value: the
 * error of an argument check (cudaErrorInvalidValue), of a device attribute query, or of the
 * launch (cudaGetLastError() after launching, which is non-blocking; note that it also reports,
 * and clears, an earlier pending non-sticky error of the calling thread). Pointers are device
 * pointers on the calling thread's current device. Semantics as the CPU kernels (kernels.h). */
#ifndef ORTCUSTOM_KERNELS_CUDA_H
#define ORTCUSTOM_KERNELS_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest n the inverse supports; larger n returns cudaErrorInvalidValue. */
#define OC_CUDA_INVERSE_MAX_N 1024

/* Inverse of `batch` contiguous row-major n x n matrices (Gauss-Jordan, partial pivoting).
   Singular matrices give inf/nan. batch may be 0 (returns 0, launches nothing). 1 <= n <= 1024.
   in and out never alias. */
int oc_cuda_inverse_f32(const float* in, float* out, int64_t batch, int64_t n, void* stream);
int oc_cuda_inverse_f64(const double* in, double* out, int64_t batch, int64_t n, void* stream);
/* float16 as IEEE binary16 bits, computed in float. The float working copy of a matrix lives in
   shared memory, so without a workspace n is limited by the device's shared memory per block
   (n <= 237 on H100/H200 (227 KiB), n <= 201 on A100 (163 KiB)); larger n returns
   cudaErrorInvalidValue: use oc_cuda_inverse_f16_ws. */
int oc_cuda_inverse_f16(const uint16_t* in, uint16_t* out, int64_t batch, int64_t n,
                        void* stream);
/* float16 inverse for any n <= 1024 with a caller-provided device workspace (16-byte aligned),
   used on `stream` only. oc_cuda_inverse_f16_workspace_bytes gives the bytes it wants (0 when
   oc_cuda_inverse_f16 needs none; at most 256 MiB); any size of at least n*n*4 bytes works
   (fewer matrices then run concurrently). Returns cudaErrorInvalidValue when a workspace is
   needed and ws_bytes < n*n*4. */
size_t oc_cuda_inverse_f16_workspace_bytes(int64_t batch, int64_t n);
int oc_cuda_inverse_f16_ws(const uint16_t* in, uint16_t* out, int64_t batch, int64_t n,
                           void* ws, size_t ws_bytes, void* stream);

/* Group normalization over x of shape (N, C, S); groups divides C (else cudaErrorInvalidValue);
   scale/bias have C entries and may be NULL (1 and 0); y may equal x (in place) or not overlap
   it. Mean and biased variance over the C/groups*S elements of each (n, g). Any of N, C, S == 0
   returns 0 without launching. */
int oc_cuda_group_norm_f32(const float* x, const float* scale, const float* bias, float* y,
                           int64_t N, int64_t C, int64_t S, int64_t groups, double eps,
                           void* stream);
int oc_cuda_group_norm_f64(const double* x, const double* scale, const double* bias, double* y,
                           int64_t N, int64_t C, int64_t S, int64_t groups, double eps,
                           void* stream);
/* float16 as IEEE binary16 bits; accumulated in float, merged in double. */
int oc_cuda_group_norm_f16(const uint16_t* x, const uint16_t* scale, const uint16_t* bias,
                           uint16_t* y, int64_t N, int64_t C, int64_t S, int64_t groups,
                           double eps, void* stream);

/* Message for a cudaError_t value (never NULL). */
const char* oc_cuda_error_string(int err);
/* Number of CUDA devices usable now; 0 when there is no driver or no GPU (never fails, never
   prints). */
int oc_cuda_device_count(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ORTCUSTOM_KERNELS_CUDA_H */
