# Native kernels called from Python, without ORT (ortcustom.kernels): the same oc_kernel, with host
# functions that allocate outputs and scratch memory through the caller's array library
# (ortcustom.kernels._Call, which takes the GIL for that only) and run tasks serially.
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport malloc, free
from libc.string cimport strncpy

from ortcustom._kernel cimport *

cdef struct DirectRun:
    oc_context c                   # first member: the host functions get their DirectRun back
    PyObject* call                 # the ortcustom.kernels._Call of this call
    int code
    char msg[MSG_BYTES]


cdef int direct_fail(oc_context* c, int code, const char* message) noexcept nogil:
    cdef DirectRun* r = <DirectRun*>c
    if r.code == OC_OK:
        r.code = code if code != OC_OK else OC_FAIL
        if message == NULL:
            message = "(no message)"
        strncpy(r.msg, message, MSG_BYTES - 1)
        r.msg[MSG_BYTES - 1] = 0
    return code


cdef int direct_python_error(DirectRun* r, e) noexcept:
    """A Python exception inside a host function: kept to be raised, and the kernel told."""
    call = <object>r.call
    if call.error is None:
        call.error = e
    return direct_fail(&r.c, OC_INVALID_ARGUMENT, str(e).encode("utf-8", "replace")[:MSG_BYTES - 1])


cdef int direct_output(oc_context* c, int32_t i, const int64_t* shape, int32_t rank, void** data) noexcept nogil:
    cdef DirectRun* r = <DirectRun*>c
    data[0] = NULL
    with gil:
        try:
            data[0] = <void*><size_t>(<object>r.call).output(i, tuple([shape[j] for j in range(rank)]))
            return OC_OK
        except BaseException as e:
            return direct_python_error(r, e)


cdef int direct_scratch(oc_context* c, size_t nbytes, void** data) noexcept nogil:
    cdef DirectRun* r = <DirectRun*>c
    data[0] = NULL
    with gil:
        try:
            data[0] = <void*><size_t>(<object>r.call).scratch(nbytes)
            return OC_OK
        except BaseException as e:
            return direct_python_error(r, e)


cdef oc_host DIRECT_HOST
DIRECT_HOST.abi_version = OC_ABI_VERSION
DIRECT_HOST.output = direct_output
DIRECT_HOST.parallel_for = serial_for
DIRECT_HOST.scratch = direct_scratch
DIRECT_HOST.fail = direct_fail


def run_direct(size_t kernel, call, list inputs, dict attrs, int device, int device_id, size_t stream):
    """Runs the oc_kernel at `kernel` once. `inputs`: per input (data pointer, shape, ONNX element
    type, oc device, present); `call`: the ortcustom.kernels._Call (outputs, scratch, op name).
    Raises the error a host function raised, else ValueError (bad input), MemoryError or
    RuntimeError."""
    cdef const oc_kernel* kd = <const oc_kernel*>kernel
    cdef DirectRun r
    cdef size_t n = len(inputs), i, j
    cdef oc_tensor* ins = <oc_tensor*>malloc(max(n, 1) * sizeof(oc_tensor))
    cdef int64_t* dims
    cdef size_t total = 0
    cdef int rc = OC_OK
    cdef void* state = NULL
    cdef oc_attr* a = NULL
    cdef int32_t n_attrs = 0
    for t in inputs:
        total += len(t[1])
    dims = <int64_t*>malloc(max(total, 1) * sizeof(int64_t))
    if ins == NULL or dims == NULL:
        free(ins)
        free(dims)
        raise MemoryError()
    name = call.op_name.encode()
    try:
        a = make_attrs(kd, attrs, &n_attrs)
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
        r.c.host = &DIRECT_HOST
        r.c.inputs = ins
        r.c.n_inputs = <int32_t>n
        r.c.n_outputs = call.n_outputs
        r.c.attrs = a
        r.c.n_attrs = n_attrs
        r.c.device = device
        r.c.device_id = device_id
        r.c.stream = <void*>stream
        r.c.state = NULL
        r.c.op_name = name
        r.call = <PyObject*>call
        r.code = OC_OK
        r.msg[0] = 0
        with nogil:
            if kd.create != NULL:
                rc = kd.create(&r.c, &state)
            if rc == OC_OK and r.code == OC_OK:
                r.c.state = state
                rc = kd.compute(&r.c)
                if kd.destroy != NULL:
                    kd.destroy(state)
    finally:
        free(ins)
        free(dims)
        free(a)
    if call.error is not None:
        raise call.error
    if rc != OC_OK or r.code != OC_OK:
        msg = f"{call.op_name}: {r.msg.decode('utf-8', 'replace') or 'the kernel failed without saying why'}"
        raise (ValueError if r.code == OC_INVALID_ARGUMENT else
               MemoryError if r.code == OC_OUT_OF_MEMORY else RuntimeError)(msg)
