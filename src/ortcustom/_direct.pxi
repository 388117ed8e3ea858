# Native kernels called from Python, without ORT (ortcustom.kernels, torch ops): the glue's direct
# path, with outputs and device scratch from the caller's array library (ortcustom.kernels._Call,
# with the GIL for that only). A kernel's create runs once per (op, device, types, attributes, and
# the values of its constant inputs).
from libc.stdlib cimport malloc, free

cdef class DirectKernel:
    cdef oc_direct_kernel* k
    cdef object od  # the OpDef whose oc_op_def k points at: alive as long as k

    def __dealloc__(self):
        oc_direct_destroy(self.k)


def address(cnp.ndarray a):
    """A NumPy array's data pointer: a.ctypes.data without building a ctypes object (~1.5 us of
    each direct call's input and output otherwise)."""
    return <size_t>cnp.PyArray_DATA(a)


cdef dict _direct_kernels = {}
_direct_lock = threading.Lock()
_ERRORS = {OC_INVALID_ARGUMENT: ValueError, OC_OUT_OF_MEMORY: MemoryError}


cdef DirectKernel _direct_kernel(OpDef od, int32_t device, tuple row, tuple attrs, object consts,
                                 const oc_tensor* ins):
    key = (od, device, row, attrs, consts)
    got = _direct_kernels.get(key)
    if got is not None:
        return got
    cdef const oc_kernel* kd = od.d.cuda if device == OC_CUDA else od.d.cpu
    cdef int32_t n = 0, j
    cdef int code = OC_OK
    cdef char* msg = NULL
    cdef int32_t[::1] dtypes = array.array("i", row)  # the declared inputs' types, then each output tensor's
    while kd.attrs != NULL and kd.attrs[n].name != NULL:
        n += 1
    cdef oc_attr* block = <oc_attr*>malloc(max(n, 1) * sizeof(oc_attr))
    if block == NULL:
        raise MemoryError()
    cdef DirectKernel dk = DirectKernel()
    dk.od = od
    keep = []
    values = dict(attrs)
    by_name = {a.name: a for a in od.op.attrs}
    try:
        for j in range(n):
            name = kd.attrs[j].name.decode()
            fill_attr(&block[j], kd.attrs[j].name, kd.attrs[j].kind, values[name], keep)
        dk.k = oc_direct_create(&od.d, kd, &dtypes[0], len(row) - od.d.n_inputs, block, n,
                                ins if consts is not None else NULL, &code, &msg)
    finally:
        free(block)
    if dk.k == NULL:
        text = msg.decode("utf-8", "replace") if msg != NULL else f"{od.op.name}: the kernel's create failed"
        free(msg)
        raise _ERRORS.get(code, RuntimeError)(text)
    with _direct_lock:
        if len(_direct_kernels) > 1024:  # bounded: many distinct attribute values in one process
            _direct_kernels.clear()
        _direct_kernels[key] = dk
    return dk


cdef int _direct_output(void* self, int32_t i, const int64_t* shape, int32_t rank, void** data,
                        char** message) noexcept with gil:
    call = <object>self
    try:
        data[0] = <void*><size_t>call.output(i, tuple([shape[j] for j in range(rank)]))
        return OC_OK
    except BaseException as e:
        data[0] = NULL
        if call.error is None:
            call.error = e
        return _message(message, exception_text(e), OC_INVALID_ARGUMENT)


cdef int _direct_scratch(void* self, size_t nbytes, void** data, char** message) noexcept with gil:
    call = <object>self
    try:
        data[0] = <void*><size_t>call.scratch(nbytes)
        return OC_OK
    except BaseException as e:
        data[0] = NULL
        if call.error is None:
            call.error = e
        return _message(message, exception_text(e), OC_INVALID_ARGUMENT)


cdef int _direct_strings(void* self, int32_t i, const oc_string* elements, int64_t n, char** message) noexcept with gil:
    call = <object>self
    cdef int64_t j
    try:
        call.strings(i, [PyUnicode_DecodeUTF8(elements[j].data, elements[j].size, NULL) for j in range(n)])
        return OC_OK
    except BaseException as e:
        if call.error is None:
            call.error = e
        return _message(message, exception_text(e), OC_FAIL)


def run_direct(OpDef od, int32_t device, tuple row, call, list inputs, tuple attrs, int32_t threads,
               int32_t device_id, size_t stream, outs=None, consts=None):
    """Runs od's kernel for `device` once. `row`: the element types of the declared inputs, then of each
    output tensor (a variadic output's one each);
    `inputs`: per input (data pointer, shape, ONNX element type, oc device, present); `attrs`:
    sorted (name, normalized value) pairs; `call`: the ortcustom.kernels._Call (outputs, scratch);
    `outs`: None, or inference.infer_outputs' word on the outputs (the shape rules' shapes are
    checked); `consts`: None, or (for an op with constant inputs) what identifies their values: the
    kernel's create reads them, once per distinct value. Raises the error a host function raised,
    else ValueError (bad input), MemoryError or RuntimeError."""
    cdef DirectKernel dk
    cdef size_t n = len(inputs), i, j, total = 0
    cdef oc_tensor* ins
    cdef int64_t* dims
    cdef oc_direct_host host
    cdef char* msg = NULL
    cdef int rc
    cdef int64_t* expect = NULL
    cdef size_t n_expect = od.d.n_outputs * (OC_MAX_RANK + 1)
    for t in inputs:
        total += len(t[1])
    ins = <oc_tensor*>malloc(max(n, 1) * sizeof(oc_tensor))
    dims = <int64_t*>malloc(max(total, 1) * sizeof(int64_t))
    if outs is not None:
        expect = <int64_t*>malloc(n_expect * sizeof(int64_t))
    if ins == NULL or dims == NULL or (outs is not None and expect == NULL):
        free(ins)
        free(dims)
        free(expect)
        raise MemoryError()
    try:
        if expect != NULL:
            for i in range(n_expect):
                expect[i] = -1
            fill_expect(expect, od.op, outs)
        total = 0
        for i in range(n):
            ptr, shape, dtype, dev, present = inputs[i]
            ins[i].data = <const void*><size_t>ptr
            ins[i].shape = dims + total
            ins[i].rank = len(shape)
            ins[i].size = 1 if present else 0
            for j in range(len(shape)):
                dims[total + j] = shape[j]
                ins[i].size *= shape[j]
            total += len(shape)
            ins[i].dtype = dtype
            ins[i].device = dev
            ins[i].present = present
        dk = _direct_kernel(od, device, row, attrs, consts, ins)
        host.self = <void*>call
        host.output = _direct_output
        host.scratch = _direct_scratch
        host.strings = _direct_strings
        with nogil:
            rc = oc_direct_run(dk.k, ins, <int32_t>n, device, device_id, <void*>stream, threads, &host, expect, &msg)
    finally:
        free(ins)
        free(dims)
        free(expect)
    if call.error is not None:
        free(msg)
        raise call.error
    if rc != OC_OK:
        text = msg.decode("utf-8", "replace") if msg != NULL else f"{od.op.name}: the kernel failed"
        free(msg)
        raise _ERRORS.get(rc, RuntimeError)(text)
