# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# (wraparound=False: never index with a negative number in these files)
"""The glue between ONNX Runtime and our kernels.

Each (op declaration, type binding) becomes one `OrtCustomOp` struct whose callbacks are the cdef
functions below; the struct is the first member of a `Binding`, so a callback gets its binding back
from the pointer ORT hands it. Bindings live as long as the process: ORT keeps raw pointers to them
in every session made from the options they were added to.

Per session, at kernel creation (`create_kernel`, holds the GIL): attributes are read and checked
once. Per run (`compute`): native kernels (ortcustom/kernel.h) go through one trampoline for every
op (_native.pxi, no GIL, no Python object), Python kernels through _python_ops.pxi. Errors come
back as OrtStatus, named after the op, the node and the input.
"""
from cpython.ref cimport PyObject, Py_INCREF, Py_DECREF
from libc.stdint cimport int64_t, uint16_t
from libc.stdlib cimport calloc, malloc, free
from libc.string cimport strlen, memcpy

from ortcustom._ort cimport *
from ortcustom._kernel cimport oc_kernel

import contextlib
import threading

from .types import onnx_enum, name_of_enum

cdef extern from *:
    """
    #if PY_VERSION_HEX >= 0x030D0000
    #define oc_py_finalizing() Py_IsFinalizing()
    #else
    #define oc_py_finalizing() _Py_IsFinalizing()
    #endif
    """
    int Py_IsInitialized() nogil
    int oc_py_finalizing() nogil

ORT_API_VERSION = ORTCUSTOM_ORT_API_VERSION
# The OrtCustomOp `version` we fill in: the fields we rely on (CreateKernelV2, KernelComputeV2,
# InferOutputShapeFn, GetStartVersion/GetEndVersion) are read from 17 on, and ORT refuses an op
# whose version is above its own API version, so this is also the minimum runtime (1.17).
cdef int OP_VERSION = 17

g_api = NULL
g_api_optional = NULL

# The parts; each declares what it shares in _customop.pxd, so their order does not matter.
include "_status.pxi"
include "_tensor.pxi"
include "_attributes.pxi"
include "_native.pxi"
include "_direct.pxi"
include "_python_ops.pxi"
include "_shapes.pxi"


cdef inline Binding* B(const OrtCustomOp* op) noexcept nogil:
    return <Binding*>op


# ---- OrtCustomOp callbacks: descriptions of the op ------------------------------------------

cdef const char* cb_name(const OrtCustomOp* op) noexcept nogil:
    return B(op).name

cdef const char* cb_provider(const OrtCustomOp* op) noexcept nogil:
    return B(op).provider

cdef ONNXTensorElementDataType cb_in_type(const OrtCustomOp* op, size_t i) noexcept nogil:
    return B(op).in_types[i]

cdef size_t cb_in_count(const OrtCustomOp* op) noexcept nogil:
    return B(op).n_in

cdef ONNXTensorElementDataType cb_out_type(const OrtCustomOp* op, size_t i) noexcept nogil:
    return B(op).out_types[i]

cdef size_t cb_out_count(const OrtCustomOp* op) noexcept nogil:
    return B(op).n_out

cdef OrtCustomOpInputOutputCharacteristic cb_in_char(const OrtCustomOp* op, size_t i) noexcept nogil:
    return B(op).in_chars[i]

cdef OrtCustomOpInputOutputCharacteristic cb_out_char(const OrtCustomOp* op, size_t i) noexcept nogil:
    return B(op).out_chars[i]

cdef OrtMemType cb_in_mem(const OrtCustomOp* op, size_t i) noexcept nogil:
    return B(op).in_mem[i]

cdef int cb_in_min_arity(const OrtCustomOp* op) noexcept nogil:
    return B(op).in_min_arity

cdef int cb_in_homogeneous(const OrtCustomOp* op) noexcept nogil:
    return B(op).in_homogeneous

cdef int cb_out_min_arity(const OrtCustomOp* op) noexcept nogil:
    return B(op).out_min_arity

cdef int cb_out_homogeneous(const OrtCustomOp* op) noexcept nogil:
    return B(op).out_homogeneous

cdef int cb_since(const OrtCustomOp* op) noexcept nogil:
    return B(op).since

cdef int cb_until(const OrtCustomOp* op) noexcept nogil:
    return B(op).until


# ---- kernels: creation (once per node and session), compute (per run), destruction ----------

cdef OrtStatus* cb_create_kernel(const OrtCustomOp* op, const OrtApi* api, const OrtKernelInfo* info,
                                 void** out) noexcept with gil:
    try:
        return (<_Binding>B(op).owner).create_kernel(api, info, out)
    except BaseException as e:  # a bug of ours: say so instead of crashing the process
        return status(api, ORT_FAIL, f"ortcustom: {B(op).name.decode()}: internal error at kernel creation: {e!r}")


cdef OrtStatus* cb_compute(void* kernel, OrtKernelContext* ctx) noexcept nogil:
    cdef Kernel* k = <Kernel*>kernel
    if k.b.native != NULL:
        return native_compute(k, ctx)
    return python_compute(k, ctx)


cdef void cb_destroy(void* kernel) noexcept nogil:
    # No GIL for native kernels: a session may be destroyed while the interpreter shuts down.
    free_kernel(<Kernel*>kernel)


cdef void free_kernel(Kernel* k) noexcept nogil:
    if k == NULL:
        return
    if k.b.native != NULL and k.b.native.destroy != NULL and k.state != NULL:
        k.b.native.destroy(k.state)
    if k.py != NULL:
        # a Python kernel's state is dropped with the GIL, unless the interpreter is going away
        # (then it is left to the process's end: taking the GIL there would hang or crash)
        if Py_IsInitialized() and not oc_py_finalizing():
            with gil:
                Py_DECREF(<object>k.py)
    free(k.attrs)
    free(k.node)
    free(k)


cdef OrtStatus* cb_infer_shape(const OrtCustomOp* op, OrtShapeInferContext* ctx) noexcept with gil:
    # ORT ignores (and leaks) a status returned from here, so nothing is returned: when the
    # declaration cannot say, the output's shape is simply left unknown.
    try:
        infer_shapes((<_Binding>B(op).owner).op, ctx)
    except BaseException:
        pass
    return NULL


cdef class _Binding:
    """Owns one OrtCustomOp (and what its pointers point to) for one op and type binding."""
    cdef Binding* b
    cdef readonly object op, types
    cdef object _keep

    def __cinit__(self):
        self.b = <Binding*>calloc(1, sizeof(Binding))
        if self.b == NULL:
            raise MemoryError()

    def __init__(self, op, dict types, str provider=None):
        """`types`: constraint -> element type name; None builds the type guard."""
        cdef Binding* b = self.b
        self.op = op
        self.types = types
        name = op.name.encode()
        prov = provider.encode() if provider else None
        self._keep = (name, prov)
        b.name = name
        b.provider = <const char*>prov if prov is not None else NULL
        b.owner = <PyObject*>self
        b.guard = types is None
        b.n_in = len(op.inputs)
        b.n_out = len(op.outputs)
        b.in_types = <ONNXTensorElementDataType*>calloc(b.n_in + 1, sizeof(ONNXTensorElementDataType))
        b.in_chars = <OrtCustomOpInputOutputCharacteristic*>calloc(b.n_in + 1, sizeof(OrtCustomOpInputOutputCharacteristic))
        b.in_mem = <OrtMemType*>calloc(b.n_in + 1, sizeof(OrtMemType))
        b.out_types = <ONNXTensorElementDataType*>calloc(b.n_out, sizeof(ONNXTensorElementDataType))
        b.out_chars = <OrtCustomOpInputOutputCharacteristic*>calloc(b.n_out, sizeof(OrtCustomOpInputOutputCharacteristic))
        if not (b.in_types and b.in_chars and b.in_mem and b.out_types and b.out_chars):
            raise MemoryError()
        b.in_min_arity = b.out_min_arity = 1
        b.in_homogeneous = b.out_homogeneous = 1
        for i, inp in enumerate(op.inputs):
            b.in_types[i] = self._elem(inp.type)
            b.in_chars[i] = _characteristic(inp)
            b.in_mem[i] = OrtMemTypeCPUInput if inp.cpu else OrtMemTypeDefault
            if inp.variadic:
                b.in_min_arity, b.in_homogeneous = inp.min_arity, inp.homogeneous
        for i, o in enumerate(op.outputs):
            b.out_types[i] = self._elem(o.type)
            b.out_chars[i] = _characteristic(o)
            if o.variadic:
                b.out_min_arity, b.out_homogeneous = o.min_arity, o.homogeneous
        b.since = op.since
        b.until = op.until if op.until is not None else 0x7fffffff
        if op.native is not None and types is not None:
            addr = op.kernel.cuda if provider == CUDA_PROVIDER else op.kernel.cpu
            b.native = <const oc_kernel*><size_t>addr

        b.op.version = OP_VERSION
        b.op.GetName = cb_name
        b.op.GetExecutionProviderType = cb_provider
        b.op.GetInputType = cb_in_type
        b.op.GetInputTypeCount = cb_in_count
        b.op.GetOutputType = cb_out_type
        b.op.GetOutputTypeCount = cb_out_count
        b.op.GetInputCharacteristic = cb_in_char
        b.op.GetOutputCharacteristic = cb_out_char
        b.op.GetInputMemoryType = cb_in_mem
        b.op.GetVariadicInputMinArity = cb_in_min_arity
        b.op.GetVariadicInputHomogeneity = cb_in_homogeneous
        b.op.GetVariadicOutputMinArity = cb_out_min_arity
        b.op.GetVariadicOutputHomogeneity = cb_out_homogeneous
        b.op.CreateKernelV2 = cb_create_kernel
        b.op.KernelComputeV2 = cb_compute
        b.op.KernelDestroy = cb_destroy
        if _shape_fn_safe(op):
            b.op.InferOutputShapeFn = cb_infer_shape
        b.op.GetStartVersion = cb_since
        b.op.GetEndVersion = cb_until

    cdef ONNXTensorElementDataType _elem(self, str t):
        if self.types is None:  # the guard accepts any type of a constraint, to report it
            return ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED if t in self.op.types else <ONNXTensorElementDataType><int>onnx_enum(t)
        return <ONNXTensorElementDataType><int>onnx_enum(self.types.get(t, t))

    def __dealloc__(self):
        if self.b != NULL:
            free(self.b.in_types); free(self.b.in_chars); free(self.b.in_mem)
            free(self.b.out_types); free(self.b.out_chars)
            free(self.b)

    cdef OrtStatus* create_kernel(self, const OrtApi* api, const OrtKernelInfo* info, void** out) except? NULL:
        node = kernel_node_name(api, info)
        where = f"{self.op.name} (node '{node}')"
        if self.b.guard:
            got = ", ".join(f"{inp.name}: {t}" for inp, t in zip(self.op.inputs, kernel_input_types(api, info)))
            return status(api, ORT_INVALID_ARGUMENT,
                          f"{where}: no kernel for input types ({got}); {self.op.name} accepts "
                          f"{self.op.accepted_types()}")
        try:
            attrs = read_attributes(api, info, self.op)
        except _AttrError as e:
            return status(api, ORT_INVALID_ARGUMENT, f"{where}: {e}")
        cdef Kernel* k = <Kernel*>calloc(1, sizeof(Kernel))
        cdef OrtStatus* st = NULL
        if k == NULL:
            return status(api, ORT_FAIL, f"{where}: out of memory")
        k.b = self.b
        k.api = api
        try:  # from here on, k is freed on any failure
            nb = node.encode()
            k.node = <char*>malloc(len(nb) + 1)
            if k.node == NULL:
                raise MemoryError()
            memcpy(k.node, <const char*>nb, len(nb) + 1)
            if self.b.native != NULL:
                k.attrs = make_attrs(self.b.native, attrs, &k.n_attrs)
                st = native_create(k, k)
            else:
                state = python_state(self.op, attrs, self.types)
                Py_INCREF(state)
                k.py = <PyObject*>state
        except BaseException:
            free_kernel(k)
            raise
        if st != NULL:
            free_kernel(k)
            return st
        out[0] = k
        return NULL


def _ort_minor():
    import onnxruntime
    major, minor = (int(p) for p in onnxruntime.__version__.split(".")[:2])
    return minor if major == 1 else 1000


cdef bint _shape_fn_safe(op):
    """ORT 1.17-1.23 dereference a missing optional input's type when they set up a custom op's
    shape inference, and crash, if a later input is given (`X, "", scale`): on those, ops that
    can be called that way get no shape function (their output types are still inferred)."""
    inner_optional = any(i.optional for i in op.inputs[:len(op.inputs) - 1])
    return not inner_optional or _ort_minor() >= 24


cdef OrtCustomOpInputOutputCharacteristic _characteristic(io):
    if io.variadic:
        return INPUT_OUTPUT_VARIADIC
    if io.optional:
        return INPUT_OUTPUT_OPTIONAL
    return INPUT_OUTPUT_REQUIRED


cdef str kernel_node_name(const OrtApi* api, const OrtKernelInfo* info):
    cdef size_t n = 0
    cdef OrtStatus* st = api.KernelInfo_GetNodeName(info, NULL, &n)
    if st != NULL or n == 0:
        release(api, st)
        return ""
    cdef char* buf = <char*>malloc(n)
    if buf == NULL:
        return ""
    try:
        st = api.KernelInfo_GetNodeName(info, buf, &n)
        if st != NULL:
            release(api, st)
            return ""
        return buf[:n - 1].decode("utf-8", "replace")
    finally:
        free(buf)


cdef list kernel_input_types(const OrtApi* api, const OrtKernelInfo* info):
    """Names of the element types of a node's inputs ('absent' for a missing optional one)."""
    cdef size_t n = 0, i
    cdef OrtTypeInfo* ti
    cdef const OrtTensorTypeAndShapeInfo* tsi
    cdef ONNXTensorElementDataType t
    out = []
    if not ok(api, api.KernelInfo_GetInputCount(info, &n)):
        return out
    for i in range(n):
        ti = NULL
        st = api.KernelInfo_GetInputTypeInfo(info, i, &ti)
        if st != NULL or ti == NULL:
            release(api, st)
            out.append("absent")
            continue
        tsi = NULL
        if ok(api, api.CastTypeInfoToTensorInfo(ti, &tsi)) and tsi != NULL and \
                ok(api, api.GetTensorElementType(tsi, &t)):
            out.append(name_of_enum(<int>t))
        else:
            out.append("non-tensor")
        api.ReleaseTypeInfo(ti)
    return out


# ---- domains handed to RegisterCustomOps ----------------------------------------------------

# (domain name, ops) -> (list of _Binding). Kept for the life of the process: sessions made from any
# SessionOptions they were added to point at them. Keyed by content, so registering the same domain
# again (into many SessionOptions) reuses the same structs and memory stays bounded.
cdef dict _interned = {}
_interning = threading.Lock()
cdef dict _domains = {}  # (domain name, ops) -> OrtCustomOpDomain*, made by RegisterCustomOps
# The domains the current register_custom_ops_library call on this thread is for: ORT calls
# RegisterCustomOps synchronously, on the thread that asked.
_pending = threading.local()
# How many `registering` blocks are open, on any thread: RegisterCustomOps with nothing pending on
# its own thread while one is open elsewhere means the handoff was missed (ORT called it on
# another thread), not that the library path was given to ORT directly.
cdef int _registering = 0


def _bindings_for(str name, tuple ops):
    key = (name, ops)
    with _interning:
        got = _interned.get(key)
        if got is None:
            got = _interned[key] = _make_bindings(ops)
    return got


CUDA_PROVIDER = "CUDAExecutionProvider"


def _make_bindings(tuple ops):
    """Per op: one binding per type binding and provider (CPU, unless a native op has only a CUDA
    kernel; CUDA for native ops with a CUDA kernel and Python ops declared cuda=True), then the
    type guard (CPU: the CUDA provider leaves to CPU a node it has no kernel for)."""
    got = []
    for op in ops:
        if op.native is None or op.kernel.cpu:
            for types in op.type_bindings():
                got.append(_Binding(op, types))
        if (op.native is not None and op.kernel.cuda) or op.cuda:  # op.cuda: a CuPy kernel
            for types in op.type_bindings():
                got.append(_Binding(op, types, CUDA_PROVIDER))
        if op.types:  # last, so that ORT picks the exact bindings first
            got.append(_Binding(op, None))
    return got


@contextlib.contextmanager
def registering(domains):
    """Makes RegisterCustomOps, called on this thread while the block runs, add `domains`."""
    pending = [(d.name, d.ops) for d in domains]
    for name, ops in pending:
        _bindings_for(name, ops)  # build them here, where errors are Python exceptions
    global _registering
    _pending.domains = pending
    with _interning:
        _registering += 1
    try:
        yield
    finally:
        _pending.domains = None
        with _interning:
            _registering -= 1



cdef bint _runtime_at_least(const OrtApiBase* base, int minor):
    """Whether the calling runtime is ORT >= 1.<minor> (its version string says)."""
    try:
        major, mnr = (<bytes>base.GetVersionString()).decode().split(".")[:2]
        return (int(major), int(mnr.split("-")[0].split("+")[0])) >= (1, minor)
    except ValueError:
        return False


cdef public OrtStatus* RegisterCustomOps(OrtSessionOptions* options, const OrtApiBase* base) noexcept with gil:
    cdef const OrtApi* api = base.GetApi(ORTCUSTOM_ORT_API_VERSION)
    cdef OrtCustomOpDomain* dom
    cdef OrtStatus* st
    cdef _Binding bnd
    if api == NULL:  # an older runtime: any API table can still make the status
        api = base.GetApi(1)
        return status(api, ORT_FAIL,
                      f"ortcustom needs ONNX Runtime >= 1.{ORTCUSTOM_ORT_API_VERSION}; this one is "
                      f"{(<bytes>base.GetVersionString()).decode()}")
    global g_api, g_api_optional
    g_api = api
    if g_api_optional == NULL and _runtime_at_least(base, ORTCUSTOM_ORT_API_OPTIONAL):
        g_api_optional = base.GetApi(ORTCUSTOM_ORT_API_OPTIONAL)  # older ORT would print an error
    try:
        domains = getattr(_pending, "domains", None)
        if domains is None:
            if _registering:
                return status(api, ORT_FAIL,
                              "ortcustom: RegisterCustomOps was called on a thread other than the one "
                              "registering domains (ortcustom.register); the domains were not handed "
                              "over. Call register_custom_ops_library only through ortcustom.register")
            # the path was given to ORT directly: the built-in ops, domain "ortcustom"
            from .ops import ALL
            domains = [("ortcustom", tuple(ALL))]
        for name, ops in domains:
            dom = <OrtCustomOpDomain*><size_t>_domains.get((name, ops), 0)
            if dom == NULL:
                # Never released: options and every session made from them refer to it. One per
                # distinct domain content, shared by every SessionOptions it is added to.
                st = api.CreateCustomOpDomain(name.encode(), &dom)
                if st != NULL:
                    return st
                for bnd in _bindings_for(name, ops):
                    st = api.CustomOpDomain_Add(dom, &bnd.b.op)
                    if st != NULL:
                        api.ReleaseCustomOpDomain(dom)  # no options refer to it yet
                        return st
                _domains[(name, ops)] = <size_t>dom
            st = api.AddCustomOpDomain(options, dom)
            if st != NULL:
                return st
        return NULL
    except BaseException as e:
        return status(api, ORT_FAIL, f"ortcustom: registering custom ops failed: {e!r}")


def describe(domain):
    """What ORT reads from each OrtCustomOp of `domain`, through the struct's own callbacks (for
    tests and `python -m ortcustom info`): one dict per binding."""
    cdef _Binding bnd
    cdef const OrtCustomOp* op
    cdef size_t i
    out = []
    for bnd in _bindings_for(domain.name, domain.ops):
        op = &bnd.b.op
        prov = op.GetExecutionProviderType(op)
        out.append({
            "name": op.GetName(op).decode(),
            "version": op.version,
            "provider": prov.decode() if prov != NULL else "CPUExecutionProvider",
            "input_types": [name_of_enum(op.GetInputType(op, i)) if op.GetInputType(op, i) else "any"
                            for i in range(op.GetInputTypeCount(op))],
            "output_types": [name_of_enum(op.GetOutputType(op, i)) if op.GetOutputType(op, i) else "any"
                             for i in range(op.GetOutputTypeCount(op))],
            "input_memory": ["cpu" if op.GetInputMemoryType(op, i) == OrtMemTypeCPUInput else "default"
                             for i in range(op.GetInputTypeCount(op))],
            "input_kinds": [_KINDS[op.GetInputCharacteristic(op, i)] for i in range(op.GetInputTypeCount(op))],
            "output_kinds": [_KINDS[op.GetOutputCharacteristic(op, i)] for i in range(op.GetOutputTypeCount(op))],
            "since": op.GetStartVersion(op),
            "until": op.GetEndVersion(op),
            "type_guard": bool(bnd.b.guard),
        })
    return out


_KINDS = {INPUT_OUTPUT_REQUIRED: "required", INPUT_OUTPUT_OPTIONAL: "optional", INPUT_OUTPUT_VARIADIC: "variadic"}
