# Reading inputs and allocating outputs on the run path (no GIL, no Python objects), and the
# runner that puts a kernel's tasks onto ORT's intra-op thread pool.

cdef struct Tensor:
    void* data                 # NULL when absent (an optional input not given) or empty
    int64_t shape[MAX_RANK]
    size_t rank
    int64_t size               # number of elements
    ONNXTensorElementDataType type
    bint present


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


cdef void format_shape(char* buf, size_t cap, const Tensor* t) noexcept nogil:
    cdef size_t i, used = 0
    cdef int w
    w = snprintf(buf, cap, "(")
    used = w
    for i in range(t.rank):
        if used >= cap:
            return
        w = snprintf(buf + used, cap - used, "%lld%s", <long long>t.shape[i], ", " if i + 1 < t.rank else "")
        used += w
    if used < cap:
        snprintf(buf + used, cap - used, ")")


cdef OrtStatus* shape_error(const Kernel* k, const char* input, const Tensor* t, const char* what) noexcept nogil:
    """'input X has shape (2, 3); <what>'."""
    cdef char shape[256]
    cdef char msg[512]
    format_shape(shape, sizeof(shape), t)
    snprintf(msg, sizeof(msg), "input %s has shape %s; %s", input, shape, what)
    return op_error(k, msg)


cdef struct OrtRunner:
    const OrtApi* api
    OrtKernelContext* ctx


cdef void ort_parallel_for(void* runner, oc_task_fn fn, size_t n, void* arg) noexcept nogil:
    cdef OrtRunner* r = <OrtRunner*>runner
    cdef size_t i
    cdef OrtStatus* st
    if n > 1:
        st = r.api.KernelContext_ParallelFor(r.ctx, fn, n, 0, arg)
        if st == NULL:
            return
        r.api.ReleaseStatus(st)  # no pool: run the tasks here
    for i in range(n):
        fn(arg, i)


cdef inline oc_parallel ort_pool(OrtRunner* r) noexcept nogil:
    cdef oc_parallel p
    p.run = ort_parallel_for
    p.runner = r
    return p
