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


native_table_names = ("inverse",)


cdef native_fn native_lookup(str name):
    if name == "inverse":
        return inverse_native
    raise KeyError(name)
