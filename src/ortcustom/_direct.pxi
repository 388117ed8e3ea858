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


def cannot_allocate(op, int32_t i, tuple shape, dtype, e):
    """The error for output tensor i of a direct call that the array library could not allocate
    (NumPy's own words name no op: "array is too big", ...)."""
    name = op.outputs[min(i, len(op.outputs) - 1)].name
    return MemoryError(f"{op.name}: output {name} of shape {shape} ({dtype}) cannot be allocated: "
                       f"{exception_text(e)}")


ctypedef struct _RepeatCall:  # one run of a Repeat: its outputs, and what a host function raised first
    PyObject* repeat
    PyObject* results
    PyObject* error


cdef class Repeat:
    """A direct call's checks, done once, for its repeats (ortcustom.kernels: _Plan.repeats, by the
    inputs' types and shapes and the attributes): the kernel its first call made, the shape rules'
    word as the glue checks it, each output's NumPy type; run() takes new data of the same types and
    shapes (C-contiguous NumPy arrays, None for an absent input, a Python int where the first call
    had one) and checks nothing again. CPU only, no string input or output (those take the full path)."""
    cdef DirectKernel dk
    cdef object op
    cdef tuple enums  # per input its ONNX element type (0: absent)
    cdef tuple ints   # (position, NumPy dtype) of each input given as a Python int
    cdef tuple dtypes  # per output tensor its NumPy dtype
    cdef int32_t[:] typenums
    cdef int64_t* expect  # NULL: no shape rules

    def __init__(self, OpDef od, tuple row, tuple keyed, tuple out_dtypes, outs, tuple enums, tuple ints):
        """The first call's type row, attributes (as run_direct keyed them), output dtypes, shape rules'
        word (infer_outputs; None), per input its element type and its ints."""
        cdef size_t n_expect = od.d.n_outputs * (OC_MAX_RANK + 1), j
        self.dk = _direct_kernel(od, OC_CPU, row, keyed, None, NULL)
        self.op, self.enums, self.ints, self.dtypes = od.op, enums, ints, out_dtypes
        self.typenums = array.array("i", [np.dtype(d).num for d in out_dtypes])
        if outs is not None:
            self.expect = <int64_t*>malloc(n_expect * sizeof(int64_t))
            if self.expect == NULL:
                raise MemoryError()
            for j in range(n_expect):
                self.expect[j] = -1
            fill_expect(self.expect, od.op, outs)

    def __dealloc__(self):
        free(self.expect)

    def run(self, tuple inputs, int32_t threads):
        """The kernel on `inputs` (as the first call's: kernels.call's repeat key equal); its output,
        or a tuple of them."""
        cdef Py_ssize_t n = len(self.enums), i, j, at = 0
        cdef oc_tensor* ins = <oc_tensor*>malloc(max(n, 1) * sizeof(oc_tensor))
        cdef int64_t* dims = <int64_t*>malloc(max(n, 1) * OC_MAX_RANK * sizeof(int64_t))
        cdef cnp.ndarray a
        cdef _RepeatCall c
        cdef oc_direct_host host
        cdef char* msg = NULL
        cdef int rc
        if ins == NULL or dims == NULL:
            free(ins)
            free(dims)
            raise MemoryError()
        if self.ints:  # (as kernels._Operand makes them)
            given = list(inputs)
            for i, dt in self.ints:
                given[i] = np.asarray(given[i], dtype=dt)
            inputs = tuple(given)
        results = [None] * len(self.dtypes)
        try:
            for i in range(n):
                v = inputs[i] if i < len(inputs) else None
                ins[i].device = OC_CPU
                if v is None:
                    ins[i].data = NULL
                    ins[i].shape = dims
                    ins[i].rank = 0
                    ins[i].size = 0
                    ins[i].dtype = 0
                    ins[i].present = 0
                    continue
                a = v
                ins[i].data = cnp.PyArray_DATA(a)
                ins[i].shape = dims + at
                ins[i].rank = cnp.PyArray_NDIM(a)
                for j in range(ins[i].rank):
                    dims[at + j] = cnp.PyArray_DIMS(a)[j]
                at += ins[i].rank
                ins[i].size = cnp.PyArray_SIZE(a)
                ins[i].dtype = self.enums[i]
                ins[i].present = 1
            c.repeat = <PyObject*>self
            c.results = <PyObject*>results
            c.error = NULL
            host.self = &c
            host.output = _repeat_output
            host.scratch = _repeat_scratch
            host.strings = _repeat_strings
            with nogil:
                rc = oc_direct_run(self.dk.k, ins, <int32_t>n, OC_CPU, 0, NULL, threads, &host, self.expect, &msg)
        finally:
            free(ins)
            free(dims)
        if c.error != NULL:
            free(msg)
            e = <object>c.error
            Py_DECREF(e)
            raise e
        if rc != OC_OK:
            text = msg.decode("utf-8", "replace") if msg != NULL else f"{self.op.name}: the kernel failed"
            free(msg)
            raise _ERRORS.get(rc, RuntimeError)(text)
        return results[0] if len(results) == 1 else tuple(results)


cdef int _repeat_output(void* self, int32_t i, const int64_t* shape, int32_t rank, void** data,
                        char** message) noexcept with gil:
    cdef _RepeatCall* c = <_RepeatCall*>self
    cdef Repeat r = <Repeat>c.repeat
    cdef cnp.npy_intp dims[OC_MAX_RANK]
    cdef int32_t j
    try:
        for j in range(rank):
            dims[j] = shape[j]
        try:
            a = cnp.PyArray_EMPTY(rank, dims, r.typenums[i], 0)
        except (ValueError, MemoryError) as e:
            raise cannot_allocate(r.op, i, tuple([shape[j] for j in range(rank)]), r.dtypes[i], e) from None
        (<list>c.results)[i] = a
        data[0] = cnp.PyArray_DATA(a)
        return OC_OK
    except BaseException as e:
        data[0] = NULL
        if c.error == NULL:
            Py_INCREF(e)
            c.error = <PyObject*>e
        return _message(message, exception_text(e), OC_INVALID_ARGUMENT)


cdef int _repeat_scratch(void* self, size_t nbytes, void** data, char** message) noexcept with gil:
    data[0] = NULL  # (a repeat runs on the CPU, whose scratch is the glue's own)
    return _message(message, "no device scratch on the CPU", OC_FAIL)


cdef int _repeat_strings(void* self, int32_t i, const oc_string* elements, int64_t n, char** message) noexcept with gil:
    return _message(message, "a repeat has no string output", OC_FAIL)
