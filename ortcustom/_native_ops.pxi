# Native ops: per-run glue from ORT's context to the C++ kernels. Each checks shapes, allocates
# its outputs and calls the kernel for the binding's element type (fixed at registration).

cdef OrtStatus* inverse_native(const Kernel* k, OrtKernelContext* ctx) noexcept nogil:
    cdef Tensor x
    cdef void* y = NULL
    cdef OrtRunner r
    cdef int64_t n, batch
    cdef OrtStatus* st = get_input(k, ctx, 0, &x)
    if st != NULL:
        return st
    if x.rank < 2 or x.shape[x.rank - 1] != x.shape[x.rank - 2]:
        return shape_error(k, "X", &x, "expected (..., N, N): square matrices in the last two dims")
    st = get_output(k, ctx, 0, x.shape, x.rank, &y)
    if st != NULL or x.size == 0 or y == NULL:
        return st
    n = x.shape[x.rank - 1]
    batch = x.size // (n * n)
    r.api = k.api
    r.ctx = ctx
    if k.b.dtype == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT:
        oc_inverse_f32(<const float*>x.data, <float*>y, batch, n, ort_pool(&r))
    elif k.b.dtype == ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE:
        oc_inverse_f64(<const double*>x.data, <double*>y, batch, n, ort_pool(&r))
    else:
        oc_inverse_f16(<const uint16_t*>x.data, <uint16_t*>y, batch, n, ort_pool(&r))
    return NULL




cdef OrtStatus* group_norm_native(const Kernel* k, OrtKernelContext* ctx) noexcept nogil:
    # inputs: X (N, C, ...), num_groups (optional int64 scalar, host memory), scale (C), bias (C)
    # attributes: ints[0] = num_groups (0: take the input), floats[0] = epsilon
    cdef Tensor x, g, scale, bias
    cdef void* y = NULL
    cdef OrtRunner r
    cdef int64_t groups, C, S = 1
    cdef size_t d
    cdef char msg[256]
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
    C = x.shape[1]
    for d in range(2, x.rank):
        S *= x.shape[d]
    if g.present:
        if g.size != 1:
            return shape_error(k, "num_groups", &g, "expected one int64 value")
        groups = (<const int64_t*>g.data)[0]
    else:
        groups = k.ints[0]
        if groups == 0:
            return op_error(k, "give num_groups, as the input num_groups or the attribute num_groups")
    if groups <= 0 or C % groups != 0:
        snprintf(msg, sizeof(msg), "num_groups must be positive and divide the %lld channels of X, got %lld",
                 <long long>C, <long long>groups)
        return op_error(k, msg)
    if scale.present and (scale.rank != 1 or scale.shape[0] != C):
        snprintf(msg, sizeof(msg), "expected (C,) = (%lld,), the channels of X", <long long>C)
        return shape_error(k, "scale", &scale, msg)
    if bias.present and (bias.rank != 1 or bias.shape[0] != C):
        snprintf(msg, sizeof(msg), "expected (C,) = (%lld,), the channels of X", <long long>C)
        return shape_error(k, "bias", &bias, msg)
    st = get_output(k, ctx, 0, x.shape, x.rank, &y)
    if st != NULL or x.size == 0 or y == NULL:
        return st
    r.api = k.api
    r.ctx = ctx
    if k.b.dtype == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT:
        oc_group_norm_f32(<const float*>x.data, <const float*>scale.data, <const float*>bias.data, <float*>y,
                          x.shape[0], C, S, groups, k.floats[0], ort_pool(&r))
    elif k.b.dtype == ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE:
        oc_group_norm_f64(<const double*>x.data, <const double*>scale.data, <const double*>bias.data, <double*>y,
                          x.shape[0], C, S, groups, k.floats[0], ort_pool(&r))
    else:
        oc_group_norm_f16(<const uint16_t*>x.data, <const uint16_t*>scale.data, <const uint16_t*>bias.data,
                          <uint16_t*>y, x.shape[0], C, S, groups, k.floats[0], ort_pool(&r))
    return NULL


native_table_names = ("inverse", "group_norm")


cdef native_fn native_lookup(str name):
    if name == "inverse":
        return inverse_native
    if name == "group_norm":
        return group_norm_native
    raise KeyError(name)
