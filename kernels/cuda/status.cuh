// A CUDA error as an ortcustom kernel's error: the one wording for every CUDA kernel (host code).
#pragma once

#include <cuda_runtime.h>

#include "ortcustom/kernel.hpp"

namespace oc_cuda {

// `what` failed with `e`: the run fails naming the CUDA error.
inline int failed(oc::Context& ctx, cudaError_t e, const char* what = "CUDA kernel launch") {
  return ctx.fail(OC_FAIL, "%s failed: %s (%d)", what, cudaGetErrorString(e), (int)e);
}

// OC_OK, or the error of `e` (a launch's, an asynchronous call's).
inline int status(oc::Context& ctx, cudaError_t e, const char* what = "CUDA kernel launch") {
  return e == cudaSuccess ? (int)OC_OK : failed(ctx, e, what);
}

// OC_OK, or the error of the launches just made (cudaGetLastError: nothing synchronized).
inline int launched(oc::Context& ctx) { return status(ctx, cudaGetLastError()); }

}  // namespace oc_cuda
