# Native ops: per-run glue from ORT's context to the kernels. For each op, one `*_prepare` checks
# the inputs and allocates the outputs; the CPU and CUDA entry points then differ only in the
# call (element type fixed at registration; CUDA: ORT's stream, launch errors as ORT errors).

cdef extern from *:
    """
    #if ORTCUSTOM_CUDA
    #include "ortcustom/kernels_cuda.h"
    #else
    /* Built without CUDA: no CUDA binding is ever registered, so these are never reached. */
    #define oc_cuda_inverse_f32(...) (-1)
    #define oc_cuda_inverse_f64(...) (-1)
    #define oc_cuda_inverse_f16(...) (-1)
    #define oc_cuda_group_norm_f32(...) (-1)
    #define oc_cuda_group_norm_f64(...) (-1)
    #define oc_cuda_group_norm_f16(...) (-1)
    #define oc_cuda_error_string(e) "ortcustom was built without CUDA"
    #define oc_cuda_device_count() 0
    #define oc_cuda_inverse_f16_workspace_bytes(b, n) ((size_t)0)
    #define oc_cuda_inverse_f16_ws(...) (-1)
    #endif
    """
    int ORTCUSTOM_CUDA
    int oc_cuda_inverse_f32(const float*, float*, int64_t, int64_t, void*) nogil
    int oc_cuda_inverse_f64(const double*, double*, int64_t, int64_t, void*) nogil
    int oc_cuda_inverse_f16(const uint16_t*, uint16_t*, int64_t, int64_t, void*) nogil
    int oc_cuda_group_norm_f32(const float*, const float*, const float*, float*,
                               int64_t, int64_t, int64_t, int64_t, double, void*) nogil
    int oc_cuda_group_norm_f64(const double*, const double*, const double*, double*,
                               int64_t, int64_t, int64_t, int64_t, double, void*) nogil
    int oc_cuda_group_norm_f16(const uint16_t*, const uint16_t*, const uint16_t*, uint16_t*,
                               int64_t, int64_t, int64_t, int64_t, double, void*) nogil
    const char* oc_cuda_error_string(int) nogil
    int oc_cuda_device_count() nogil
    size_t oc_cuda_inverse_f16_workspace_bytes(int64_t batch, int64_t n) nogil
    int oc_cuda_inverse_f16_ws(const uint16_t*, uint16_t*, int64_t, int64_t, void*, size_t, void*) nogil


cdef OrtStatus* cuda_stream(const Kernel* k, OrtKernelContext* ctx, void** stream) noexcept nogil:
    cdef OrtStatus* st = k.api.KernelContext_GetGPUComputeStream(ctx, stream)
    if st == NULL and stream[0] == NULL:
        return op_error(k, "ORT gave no CUDA stream to run on")
    return st


cdef OrtStatus* cuda_result(const Kernel* k, int err) noexcept nogil:
    cdef char msg[256]
    if err == 0:
        return NULL
    snprintf(msg, sizeof(msg), "CUDA kernel launch failed: %s (%d)", oc_cuda_error_string(err), err)
    return op_error(k, msg)


# ---- Inverse -------------------------------------------------------------------------------

cdef struct InverseArgs:
    const void* x
    void* y          # NULL: nothing to compute (empty tensor or output not used)
    int64_t batch
    int64_t n


cdef OrtStatus* inverse_prepare(const Kernel* k, OrtKernelContext* ctx, InverseArgs* a) noexcept nogil:
    cdef Tensor x
    a.y = NULL
    cdef OrtStatus* st = get_input(k, ctx, 0, &x)
    if st != NULL:
        return st
    if x.rank < 2 or x.shape[x.rank - 1] != x.shape[x.rank - 2]:
        return shape_error(k, "X", &x, "expected (..., N, N): square matrices in the last two dims")
    st = get_output(k, ctx, 0, x.shape, x.rank, &a.y)
    if st != NULL or x.size == 0:
        a.y = NULL
        return st
    a.x = x.data
    a.n = x.shape[x.rank - 1]
    a.batch = x.size // (a.n * a.n)
    return NULL


cdef OrtStatus* inverse_cpu(const Kernel* k, OrtKernelContext* ctx) noexcept nogil:
    cdef InverseArgs a
    cdef OrtRunner r
    cdef int err
    cdef char msg[512]
    cdef OrtStatus* st = inverse_prepare(k, ctx, &a)
    if st != NULL or a.y == NULL:
        return st
    r.api = k.api
    r.ctx = ctx
    if k.b.dtype == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT:
        err = oc_inverse_f32(<const float*>a.x, <float*>a.y, a.batch, a.n, ort_pool(&r))
    elif k.b.dtype == ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE:
        err = oc_inverse_f64(<const double*>a.x, <double*>a.y, a.batch, a.n, ort_pool(&r))
    else:
        err = oc_inverse_f16(<const uint16_t*>a.x, <uint16_t*>a.y, a.batch, a.n, ort_pool(&r))
    if err != 0:  # the only failure: OC_OUT_OF_MEMORY (the output is not the inverse)
        snprintf(msg, sizeof(msg), "%s (node '%s'): out of memory for the scratch space of %lld x %lld "
                 "matrices", k.b.name, k.node, <long long>a.n, <long long>a.n)
        return k.api.CreateStatus(ORT_FAIL, msg)
    return NULL


cdef OrtStatus* inverse_cuda(const Kernel* k, OrtKernelContext* ctx) noexcept nogil:
    cdef InverseArgs a
    cdef void* stream = NULL
    cdef size_t ws_bytes
    cdef OrtStatus* st = inverse_prepare(k, ctx, &a)
    if st != NULL or a.y == NULL:
        return st
    st = cuda_stream(k, ctx, &stream)
    if st != NULL:
        return st
    if k.b.dtype == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT:
        return cuda_result(k, oc_cuda_inverse_f32(<const float*>a.x, <float*>a.y, a.batch, a.n, stream))
    if k.b.dtype == ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE:
        return cuda_result(k, oc_cuda_inverse_f64(<const double*>a.x, <double*>a.y, a.batch, a.n, stream))
    ws_bytes = oc_cuda_inverse_f16_workspace_bytes(a.batch, a.n)
    if ws_bytes > 0:
        return inverse_cuda_f16_workspace(k, ctx, &a, ws_bytes, stream)
    return cuda_result(k, oc_cuda_inverse_f16(<const uint16_t*>a.x, <uint16_t*>a.y, a.batch, a.n, stream))


cdef OrtStatus* inverse_cuda_f16_workspace(const Kernel* k, OrtKernelContext* ctx, const InverseArgs* a,
                                           size_t ws_bytes, void* stream) noexcept nogil:
    # float16 matrices too large for a float copy in shared memory get one in a device scratch
    # buffer: ORT's allocator for X's device, tied to ORT's stream (API 18). It is freed right after
    # the launch, as ORT's own kernels free theirs: the arena reuses it in stream order.
    cdef const OrtValue* xv = NULL
    cdef const OrtMemoryInfo* mem = NULL
    cdef OrtAllocator* alloc = NULL
    cdef void* ws = NULL
    cdef OrtStatus* st
    cdef char msg[512]
    if g_api_optional == NULL:
        snprintf(msg, sizeof(msg), "float16 with N = %lld needs a device workspace on this GPU, which ORT "
                 "gives custom ops from 1.18 on; use ORT >= 1.18 or float32", <long long>a.n)
        return op_error(k, msg)
    st = k.api.KernelContext_GetInput(ctx, 0, &xv)
    if st == NULL:
        st = k.api.GetTensorMemoryInfo(xv, &mem)
    if st == NULL:
        # first, as nothing is held yet: out of memory, ORT's arena throws through here (ORT's
        # CustomOpKernel::Compute turns that into the run's error)
        st = g_api_optional.KernelContext_GetScratchBuffer(ctx, mem, ws_bytes, &ws)
        if st == NULL and ws == NULL:
            st = k.api.CreateStatus(ORT_FAIL, "no memory returned")
        if st != NULL:
            snprintf(msg, sizeof(msg), "float16 with N = %lld: could not get a %zu-byte device workspace: %s",
                     <long long>a.n, ws_bytes, k.api.GetErrorMessage(st))
            release(k.api, st)
            st = op_error(k, msg)
    if st == NULL:
        st = k.api.KernelContext_GetAllocator(ctx, mem, &alloc)  # the one that frees the workspace
    if st == NULL:
        st = cuda_result(k, oc_cuda_inverse_f16_ws(<const uint16_t*>a.x, <uint16_t*>a.y, a.batch, a.n,
                                                   ws, ws_bytes, stream))
    if ws != NULL and alloc != NULL:
        ok(k.api, k.api.AllocatorFree(alloc, ws))
    if alloc != NULL:
        k.api.ReleaseAllocator(alloc)
    return st


# ---- GroupNorm -----------------------------------------------------------------------------

cdef struct GroupNormArgs:
    const void* x
    const void* scale    # NULL: 1
    const void* bias     # NULL: 0
    void* y              # NULL: nothing to compute
    int64_t N, C, S, groups
    double eps


cdef OrtStatus* group_norm_prepare(const Kernel* k, OrtKernelContext* ctx, GroupNormArgs* a) noexcept nogil:
    # inputs: X (N, C, ...), num_groups (optional int64 scalar, host memory), scale (C), bias (C)
    # attributes: ints[0] = num_groups (0: take the input), floats[0] = epsilon
    cdef Tensor x, g, scale, bias
    cdef size_t d
    cdef char msg[256]
    a.y = NULL
    cdef OrtStatus* st = get_input(k, ctx, 0, &x)
    if st == NULL:
        st = get_input(k, ctx, 1, &g)
    if st == NULL:
        st = get_input(k, ctx, 2, &scale)
    if st == NULL:
        st = get_input(k, ctx, 3, &bias)
    if st != NULL:
        return st
    if x.rank < 2:
        return shape_error(k, "X", &x, "expected (N, C, ...): rank 2 or more")
    a.N = x.shape[0]
    a.C = x.shape[1]
    a.S = 1
    if x.size > 0:  # an empty X's dims may multiply past int64, e.g. (0, C, 2**62, 2**62)
        for d in range(2, x.rank):
            a.S *= x.shape[d]
    if g.present:
        if g.size != 1:
            return shape_error(k, "num_groups", &g, "expected one int64 value")
        a.groups = (<const int64_t*>g.data)[0]
    else:
        a.groups = k.ints[0]
        if a.groups == 0:
            return op_error(k, "give num_groups, as the input num_groups or the attribute num_groups")
    if a.groups <= 0 or a.C % a.groups != 0:
        snprintf(msg, sizeof(msg), "num_groups must be positive and divide the %lld channels of X, got %lld",
                 <long long>a.C, <long long>a.groups)
        return op_error(k, msg)
    if scale.present and (scale.rank != 1 or scale.shape[0] != a.C):
        snprintf(msg, sizeof(msg), "expected (C,) = (%lld,), the channels of X", <long long>a.C)
        return shape_error(k, "scale", &scale, msg)
    if bias.present and (bias.rank != 1 or bias.shape[0] != a.C):
        snprintf(msg, sizeof(msg), "expected (C,) = (%lld,), the channels of X", <long long>a.C)
        return shape_error(k, "bias", &bias, msg)
    st = get_output(k, ctx, 0, x.shape, x.rank, &a.y)
    if st != NULL or x.size == 0:
        a.y = NULL
        return st
    a.x = x.data
    a.scale = scale.data
    a.bias = bias.data
    a.eps = k.floats[0]
    return NULL


cdef OrtStatus* group_norm_cpu(const Kernel* k, OrtKernelContext* ctx) noexcept nogil:
    cdef GroupNormArgs a
    cdef OrtRunner r
    cdef OrtStatus* st = group_norm_prepare(k, ctx, &a)
    if st != NULL or a.y == NULL:
        return st
    r.api = k.api
    r.ctx = ctx
    if k.b.dtype == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT:
        oc_group_norm_f32(<const float*>a.x, <const float*>a.scale, <const float*>a.bias, <float*>a.y,
                          a.N, a.C, a.S, a.groups, a.eps, ort_pool(&r))
    elif k.b.dtype == ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE:
        oc_group_norm_f64(<const double*>a.x, <const double*>a.scale, <const double*>a.bias, <double*>a.y,
                          a.N, a.C, a.S, a.groups, a.eps, ort_pool(&r))
    else:
        oc_group_norm_f16(<const uint16_t*>a.x, <const uint16_t*>a.scale, <const uint16_t*>a.bias,
                          <uint16_t*>a.y, a.N, a.C, a.S, a.groups, a.eps, ort_pool(&r))
    return NULL


cdef OrtStatus* group_norm_cuda(const Kernel* k, OrtKernelContext* ctx) noexcept nogil:
    cdef GroupNormArgs a
    cdef void* stream = NULL
    cdef OrtStatus* st = group_norm_prepare(k, ctx, &a)
    if st != NULL or a.y == NULL:
        return st
    st = cuda_stream(k, ctx, &stream)
    if st != NULL:
        return st
    if k.b.dtype == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT:
        return cuda_result(k, oc_cuda_group_norm_f32(<const float*>a.x, <const float*>a.scale, <const float*>a.bias,
                                                     <float*>a.y, a.N, a.C, a.S, a.groups, a.eps, stream))
    if k.b.dtype == ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE:
        return cuda_result(k, oc_cuda_group_norm_f64(<const double*>a.x, <const double*>a.scale, <const double*>a.bias,
                                                     <double*>a.y, a.N, a.C, a.S, a.groups, a.eps, stream))
    return cuda_result(k, oc_cuda_group_norm_f16(<const uint16_t*>a.x, <const uint16_t*>a.scale,
                                                 <const uint16_t*>a.bias, <uint16_t*>a.y, a.N, a.C, a.S,
                                                 a.groups, a.eps, stream))


# ---- the table -----------------------------------------------------------------------------

native_table_names = ("inverse", "group_norm")


cdef native_fn native_lookup(str name, bint cuda):
    if name == "inverse":
        return inverse_cuda if cuda else inverse_cpu
    if name == "group_norm":
        return group_norm_cuda if cuda else group_norm_cpu
    raise KeyError(name)


def cpu_isa():
    """The instruction set the CPU kernels run with: "avx2+fma" or "baseline"."""
    return oc_cpu_isa().decode()


def cuda_built():
    """Whether the CUDA kernels were compiled in."""
    return bool(ORTCUSTOM_CUDA)


def cuda_device_count():
    """CUDA devices usable now (0 without a driver or a GPU, or when built without CUDA)."""
    return oc_cuda_device_count()
