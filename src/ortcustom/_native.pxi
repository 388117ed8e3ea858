# Native kernels (ortcustom/kernel.h) in an ORT session: ONE trampoline for every op and provider.
# Per run, with no GIL and no Python object: the inputs are read into oc_tensors, the kernel's
# compute is called with an oc_context whose host functions are ORT's (outputs, intra-op pool,
# stream-ordered scratch memory on the kernel's device), and a failure becomes an OrtStatus that
# names the op and the node.
from libc.stdint cimport int32_t, int64_t, uint32_t
from libc.stdlib cimport malloc, free
from libc.stdio cimport snprintf
from libc.string cimport strncpy

from ortcustom._kernel cimport *

cdef extern from *:
    """
    #include <new>
    /* ORT's arena may throw (out of memory) out of KernelContext_GetScratchBuffer, which is not
       guarded by ORT: the exception must not cross the kernel's frames. */
    static OrtStatus* oc_scratch_buffer(const OrtApi* api, OrtKernelContext* ctx,
                                        const OrtMemoryInfo* mem, size_t bytes, void** out) {
      try {
        return api->KernelContext_GetScratchBuffer(ctx, mem, bytes, out);
      } catch (...) {
        *out = nullptr;
        return api->CreateStatus(ORT_FAIL, "ONNX Runtime could not allocate the memory");
      }
    }
    """
    OrtStatus* oc_scratch_buffer(const OrtApi* api, OrtKernelContext* ctx, const OrtMemoryInfo* mem,
                                 size_t bytes, void** out) noexcept nogil

cdef enum:
    MAX_SCRATCH = 8     # scratch buffers a kernel may hold during one compute

cdef struct OrtRun:
    oc_context c                    # first member: the host functions get their OrtRun back
    const Kernel* k
    OrtKernelContext* ctx
    size_t node_outputs             # outputs the node has (trailing optional ones may be omitted)
    const OrtMemoryInfo* mem        # the device memory of the first device input (scratch)
    OrtAllocator* alloc             # frees the scratch buffers
    void* scratch[MAX_SCRATCH]
    int n_scratch
    int code
    char msg[MSG_BYTES]


cdef int run_fail(oc_context* c, int code, const char* message) noexcept nogil:
    cdef OrtRun* r = <OrtRun*>c
    if r.code == OC_OK:  # the first error is the one that explains
        r.code = code if code != OC_OK else OC_FAIL
        if message == NULL:
            message = "(no message)"
        strncpy(r.msg, message, MSG_BYTES - 1)
        r.msg[MSG_BYTES - 1] = 0
    return code


cdef int run_fail_status(OrtRun* r, OrtStatus* st) noexcept nogil:
    """An ORT failure inside a host function: its message, then the status is released."""
    cdef int rc = run_fail(&r.c, OC_FAIL, r.k.api.GetErrorMessage(st))
    r.k.api.ReleaseStatus(st)
    return rc


cdef int run_output(oc_context* c, int32_t i, const int64_t* shape, int32_t rank, void** data) noexcept nogil:
    cdef OrtRun* r = <OrtRun*>c
    cdef char msg[128]
    data[0] = NULL
    if i < 0 or i >= c.n_outputs:
        snprintf(msg, sizeof(msg), "the kernel asked for output %d; the op has %d", i, c.n_outputs)
        return run_fail(c, OC_FAIL, msg)
    if <size_t>i >= r.node_outputs:  # an optional output the node omits
        return OC_OK
    cdef OrtStatus* st = get_output(r.k, r.ctx, i, shape, rank, data)
    if st != NULL:
        data[0] = NULL
        return run_fail_status(r, st)
    return OC_OK


cdef void run_parallel_for(oc_context* c, size_t n, oc_task_fn fn, void* arg) noexcept nogil:
    cdef OrtRun* r = <OrtRun*>c
    cdef size_t i
    cdef OrtStatus* st
    if n > 1:
        st = r.k.api.KernelContext_ParallelFor(r.ctx, fn, n, 0, arg)
        if st == NULL:
            return
        r.k.api.ReleaseStatus(st)  # no pool: run the tasks here
    for i in range(n):
        fn(arg, i)


cdef int run_scratch(oc_context* c, size_t bytes, void** data) noexcept nogil:
    cdef OrtRun* r = <OrtRun*>c
    cdef OrtStatus* st
    data[0] = NULL
    if r.n_scratch == MAX_SCRATCH:
        return run_fail(c, OC_FAIL, "a kernel may hold at most 8 scratch buffers")
    if c.device == OC_CPU:
        data[0] = aligned_malloc(bytes)
        if data[0] == NULL:
            return run_fail(c, OC_FAIL, "out of memory for scratch memory")
    else:
        if g_api_optional == NULL:
            return run_fail(c, OC_FAIL, "device scratch memory needs ONNX Runtime >= 1.18")
        if r.mem == NULL:
            return run_fail(c, OC_FAIL, "device scratch memory needs an input on the device")
        if r.alloc == NULL:  # first, so that nothing is held when it fails
            st = r.k.api.KernelContext_GetAllocator(r.ctx, r.mem, &r.alloc)
            if st != NULL:
                r.alloc = NULL
                return run_fail_status(r, st)
        st = oc_scratch_buffer(g_api_optional, r.ctx, r.mem, bytes, data)
        if st == NULL and data[0] == NULL:
            st = r.k.api.CreateStatus(ORT_FAIL, "no memory returned")
        if st != NULL:
            data[0] = NULL
            return run_fail_status(r, st)
    r.scratch[r.n_scratch] = data[0]
    r.n_scratch += 1
    return OC_OK


cdef void* aligned_malloc(size_t bytes) noexcept nogil:
    """16-byte aligned (malloc's own alignment on 64-bit glibc and macOS); never NULL for 0."""
    return malloc(bytes if bytes > 0 else 1)


cdef void run_release_scratch(OrtRun* r) noexcept nogil:
    cdef int i
    for i in range(r.n_scratch):
        if r.c.device == OC_CPU:
            free(r.scratch[i])
        elif r.alloc != NULL:
            ok(r.k.api, r.k.api.AllocatorFree(r.alloc, r.scratch[i]))
    r.n_scratch = 0
    if r.alloc != NULL:
        r.k.api.ReleaseAllocator(r.alloc)
        r.alloc = NULL


cdef oc_host ORT_HOST
ORT_HOST.abi_version = OC_ABI_VERSION
ORT_HOST.output = run_output
ORT_HOST.parallel_for = run_parallel_for
ORT_HOST.scratch = run_scratch
ORT_HOST.fail = run_fail


cdef OrtStatus* native_compute(const Kernel* k, OrtKernelContext* ctx) noexcept nogil:
    cdef OrtRun r
    cdef Tensor stack_t[STACK_INPUTS]
    cdef oc_tensor stack_in[STACK_INPUTS]
    cdef Tensor* ts = stack_t
    cdef oc_tensor* ins = stack_in
    cdef size_t n_in = 0, n_out = 0, i
    cdef const OrtValue* v
    cdef int dev_id = 0
    cdef bint cuda = k.b.provider != NULL
    cdef OrtStatus* st = k.api.KernelContext_GetInputCount(ctx, &n_in)
    if st == NULL:
        st = k.api.KernelContext_GetOutputCount(ctx, &n_out)
    if st != NULL:
        return st
    if n_in < k.b.n_in:  # trailing optional inputs the node omits: the kernel sees them absent
        n_in = k.b.n_in
    r.node_outputs = n_out
    if n_out < k.b.n_out:
        n_out = k.b.n_out
    if n_in > STACK_INPUTS:
        ts = <Tensor*>malloc(n_in * sizeof(Tensor))
        ins = <oc_tensor*>malloc(n_in * sizeof(oc_tensor))
        if ts == NULL or ins == NULL:
            free(ts)
            free(ins)
            return kernel_error(k, ORT_FAIL, "out of memory")
    r.k = k
    r.ctx = ctx
    r.mem = NULL
    r.alloc = NULL
    r.n_scratch = 0
    r.code = OC_OK
    r.msg[0] = 0
    for i in range(n_in):
        st = get_input(k, ctx, i, &ts[i])
        if st != NULL:
            break
        ins[i].data = ts[i].data
        ins[i].shape = ts[i].shape
        ins[i].size = ts[i].size
        ins[i].rank = <int32_t>ts[i].rank
        ins[i].dtype = <int32_t>ts[i].type
        ins[i].present = ts[i].present
        ins[i].device = OC_CPU
        if cuda and k.b.in_mem[min(i, k.b.n_in - 1)] != OrtMemTypeCPUInput:
            ins[i].device = OC_CUDA
            if r.mem == NULL and ts[i].present:
                v = NULL
                if ok(k.api, k.api.KernelContext_GetInput(ctx, i, &v)) and v != NULL:
                    if not ok(k.api, k.api.GetTensorMemoryInfo(v, &r.mem)):
                        r.mem = NULL
    if st == NULL:
        r.c.host = &ORT_HOST
        r.c.inputs = ins
        r.c.n_inputs = <int32_t>n_in
        r.c.n_outputs = <int32_t>n_out
        r.c.attrs = k.attrs
        r.c.n_attrs = k.n_attrs
        r.c.device = OC_CUDA if cuda else OC_CPU
        r.c.device_id = 0
        r.c.stream = NULL
        r.c.state = k.state
        r.c.op_name = k.b.name
        if cuda:
            st = k.api.KernelContext_GetGPUComputeStream(ctx, &r.c.stream)
            if st == NULL and r.c.stream == NULL:
                st = op_error(k, "ORT gave no CUDA stream to run on")
            if st == NULL and r.mem != NULL and ok(k.api, k.api.MemoryInfoGetId(r.mem, &dev_id)):
                r.c.device_id = dev_id
    if st == NULL:
        if k.b.native.compute(&r.c) != OC_OK or r.code != OC_OK:
            if r.msg[0] == 0:
                strncpy(r.msg, "the kernel failed without saying why", MSG_BYTES - 1)
            st = kernel_error(k, ORT_INVALID_ARGUMENT if r.code == OC_INVALID_ARGUMENT else ORT_FAIL, r.msg)
        run_release_scratch(&r)
    if ts != stack_t:
        free(ts)
        free(ins)
    return st


cdef OrtStatus* native_create(const Kernel* k, Kernel* out):
    """At kernel creation, after the attributes: the kernel's own create (if any), with the attrs
    and the input element types of this binding."""
    cdef const oc_kernel* kd = k.b.native
    cdef OrtRun r
    cdef oc_tensor ins[STACK_INPUTS]
    cdef size_t i, n = min(k.b.n_in, <size_t>STACK_INPUTS)
    cdef void* state = NULL
    cdef int rc
    out.state = NULL
    if kd.create == NULL:
        return NULL
    for i in range(n):
        ins[i].data = NULL
        ins[i].shape = NULL
        ins[i].size = 0
        ins[i].rank = 0
        ins[i].dtype = <int32_t>k.b.in_types[i]
        ins[i].present = 1
        ins[i].device = OC_CUDA if k.b.provider != NULL and k.b.in_mem[i] != OrtMemTypeCPUInput else OC_CPU
    r.k = k
    r.ctx = NULL
    r.code = OC_OK
    r.msg[0] = 0
    r.n_scratch = 0
    r.c.host = &CREATE_HOST
    r.c.inputs = ins
    r.c.n_inputs = <int32_t>n
    r.c.n_outputs = <int32_t>k.b.n_out
    r.c.attrs = k.attrs
    r.c.n_attrs = k.n_attrs
    r.c.device = OC_CUDA if k.b.provider != NULL else OC_CPU
    r.c.device_id = 0
    r.c.stream = NULL
    r.c.state = NULL
    r.c.op_name = k.b.name
    with nogil:
        rc = kd.create(&r.c, &state)
    if rc != OC_OK or r.code != OC_OK:
        if r.msg[0] == 0:
            strncpy(r.msg, "the kernel's create failed without saying why", MSG_BYTES - 1)
        return kernel_error(k, ORT_INVALID_ARGUMENT if r.code == OC_INVALID_ARGUMENT else ORT_FAIL, r.msg)
    out.state = state
    return NULL


cdef int create_output(oc_context* c, int32_t i, const int64_t* shape, int32_t rank, void** data) noexcept nogil:
    data[0] = NULL
    return run_fail(c, OC_FAIL, "create cannot allocate outputs")


cdef int create_scratch(oc_context* c, size_t bytes, void** data) noexcept nogil:
    data[0] = NULL
    return run_fail(c, OC_FAIL, "create has no scratch memory (allocate what the kernel keeps itself)")


cdef void serial_for(oc_context* c, size_t n, oc_task_fn fn, void* arg) noexcept nogil:
    cdef size_t i
    for i in range(n):
        fn(arg, i)


cdef oc_host CREATE_HOST
CREATE_HOST.abi_version = OC_ABI_VERSION
CREATE_HOST.output = create_output
CREATE_HOST.parallel_for = serial_for
CREATE_HOST.scratch = create_scratch
CREATE_HOST.fail = run_fail


# ---- what a kernel says of itself, for ortcustom.native's checks against the declaration ------

_ATTR_KIND_NAMES = {OC_ATTR_INT: "int", OC_ATTR_FLOAT: "float", OC_ATTR_STRING: "string",
                    OC_ATTR_INTS: "ints", OC_ATTR_FLOATS: "floats"}

ABI_VERSION = OC_ABI_VERSION


cdef list _names(const char* const* p):
    out = []
    if p != NULL:
        while p[len(out)] != NULL:
            out.append(p[len(out)].decode("utf-8", "replace"))
    return out


def kernel_info(size_t address):
    """The oc_kernel at `address` as a dict; only abi_version when it is not ours (the rest of
    the layout may differ)."""
    cdef const oc_kernel* kd = <const oc_kernel*>address
    cdef int i = 0
    if kd.abi_version != OC_ABI_VERSION:
        return {"abi_version": kd.abi_version}
    attrs = []
    if kd.attrs != NULL:
        while kd.attrs[i].name != NULL:
            attrs.append((kd.attrs[i].name.decode("utf-8", "replace"),
                          _ATTR_KIND_NAMES.get(kd.attrs[i].kind, f"unknown kind {kd.attrs[i].kind}")))
            i += 1
    dtypes = []
    if kd.dtypes != NULL:
        i = 0
        while kd.dtypes[i] != 0:
            dtypes.append(kd.dtypes[i])
            i += 1
    outputs = _names(kd.outputs)
    inplace = [kd.inplace[j] if kd.inplace != NULL else -1 for j in range(len(outputs))]
    return {"abi_version": kd.abi_version, "device": "cuda" if kd.device == OC_CUDA else "cpu",
            "name": kd.name.decode("utf-8", "replace") if kd.name != NULL else "",
            "inputs": _names(kd.inputs), "outputs": outputs, "attrs": attrs, "dtypes": dtypes,
            "inplace": inplace, "has_compute": kd.compute != NULL}
