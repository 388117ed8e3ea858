// Device queries and error strings for the ortcustom CUDA kernels.
#include <cuda_runtime.h>

#include "../kernels_cuda.h"

extern "C" {

const char* oc_cuda_error_string(int err) {
  const char* s = cudaGetErrorString(static_cast<cudaError_t>(err));
  return s ? s : "unknown CUDA error";
}

int oc_cuda_device_count(void) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // clear the (non-sticky) error of a failed initialization
    return 0;
  }
  return n > 0 ? n : 0;
}

}  // extern "C"
