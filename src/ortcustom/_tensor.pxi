# Reading inputs and allocating outputs on the run path (no GIL, no Python objects).
from libc.stdio cimport snprintf


cdef OrtStatus* get_input(const Kernel* k, OrtKernelContext* ctx, size_t i, Tensor* t) noexcept nogil:
    cdef const OrtValue* v = NULL
    cdef OrtTensorTypeAndShapeInfo* info = NULL
    cdef OrtStatus* st
    cdef size_t count = 0, n = 0
    cdef char msg[256]
    t.present = False
    t.data = NULL
    t.rank = 0
    t.size = 0
    t.type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED
    st = k.api.KernelContext_GetInputCount(ctx, &count)
    if st != NULL or i >= count:
        return st
    st = k.api.KernelContext_GetInput(ctx, i, &v)
    if st != NULL or v == NULL:
        return st
    st = k.api.GetTensorTypeAndShape(v, &info)
    if st != NULL:
        return st
    st = k.api.GetDimensionsCount(info, &t.rank)
    if st == NULL and t.rank > MAX_RANK:
        snprintf(msg, sizeof(msg), "input %zu has rank %zu; ortcustom's native kernels take at most %d dims",
                 i, t.rank, <int>MAX_RANK)
        k.api.ReleaseTensorTypeAndShapeInfo(info)
        return op_error(k, msg)
    if st == NULL:
        st = k.api.GetDimensions(info, t.shape, t.rank)
    if st == NULL:
        st = k.api.GetTensorElementType(info, &t.type)
    if st == NULL:
        st = k.api.GetTensorShapeElementCount(info, &n)
    k.api.ReleaseTensorTypeAndShapeInfo(info)
    if st != NULL:
        return st
    t.size = <int64_t>n
    st = k.api.GetTensorMutableData(<OrtValue*>v, &t.data)
    t.present = st == NULL
    return st


cdef OrtStatus* get_output(const Kernel* k, OrtKernelContext* ctx, size_t i, const int64_t* shape,
                           size_t rank, void** data) noexcept nogil:
    """Allocates output i; *data is NULL when the output is not used by the graph."""
    cdef OrtValue* v = NULL
    data[0] = NULL
    cdef OrtStatus* st = k.api.KernelContext_GetOutput(ctx, i, shape, rank, &v)
    if st != NULL or v == NULL:
        return st
    return k.api.GetTensorMutableData(v, data)
