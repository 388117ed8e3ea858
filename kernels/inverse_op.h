// Inverse's kernel spec and input checks, shared by its CPU and CUDA entries.
#ifndef ORTCUSTOM_INVERSE_OP_H
#define ORTCUSTOM_INVERSE_OP_H

#include "ortcustom/kernel.hpp"

namespace oc_ops {

inline constexpr const char* kInverseInputs[] = {"X", nullptr};
inline constexpr const char* kInverseOutputs[] = {"Y", nullptr};
inline constexpr int32_t kInverseSignatures[][2] = {  // X, Y
    {OC_FLOAT, OC_FLOAT}, {OC_DOUBLE, OC_DOUBLE}, {OC_FLOAT16, OC_FLOAT16}};
// The CPU kernel may write Y over X (each matrix is read before its rows are written); the CUDA
// kernels may not.
inline constexpr int32_t kInverseInplace[] = {0};
inline constexpr oc::Spec kInverseSpec = {kInverseInputs, kInverseOutputs, nullptr,
                                          OC_SIGNATURES(kInverseSignatures), kInverseInplace};
inline constexpr oc::Spec kInverseSpecCuda = {kInverseInputs, kInverseOutputs, nullptr,
                                              OC_SIGNATURES(kInverseSignatures), nullptr};

struct InverseArgs {
  const void* x;
  void* y;  // nullptr: nothing to compute (empty, or the output is not used)
  int64_t batch, n;
};

// Checks X is (..., N, N) and allocates Y.
inline int inverse_prepare(oc::Context& ctx, InverseArgs* a) {
  const oc_tensor& x = ctx.input(0);
  a->y = nullptr;
  if (x.rank < 2 || x.shape[x.rank - 1] != x.shape[x.rank - 2])
    return ctx.bad_shape(0, "X", "expected (..., N, N): square matrices in the last two dims");
  if (int rc = ctx.output(0, x, &a->y)) return rc;
  if (x.size == 0) a->y = nullptr;
  a->x = x.data;
  a->n = x.shape[x.rank - 1];
  a->batch = x.size > 0 ? x.size / (a->n * a->n) : 0;
  return OC_OK;
}

}  // namespace oc_ops

#endif  // ORTCUSTOM_INVERSE_OP_H
