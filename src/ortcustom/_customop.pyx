# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# (wraparound=False: never index with a negative number in these files)
"""ortcustom's Python front end to the glue (glue/): op declarations made into oc_op_def.

The glue (C++, shared with every package's plain custom-op library) makes the OrtCustomOp structs,
reads attributes, runs the per-run trampoline, infers `shape="X"` outputs and words every error.
This module hands it the domains of `ortcustom.register` (RegisterCustomOps below, called by ORT
inside register_custom_ops_library), runs Python kernels as kernels of the same ABI
(_python_ops.pxi), Python shape rules and attribute checks (hooks), and direct calls (_direct.pxi).
"""
from cpython.ref cimport PyObject
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport calloc, malloc, free
from libc.string cimport memset

from ortcustom._ort cimport *
from ortcustom._kernel cimport *

import contextlib
import threading

from .op_table import lower
from .types import name_of_enum

ORT_API_VERSION = ORTCUSTOM_ORT_API_VERSION
ABI_VERSION = OC_ABI_VERSION
CUDA_PROVIDER = "CUDAExecutionProvider"

include "_attributes.pxi"
include "_python_ops.pxi"
include "_shapes.pxi"
include "_direct.pxi"

_IO_KINDS = {OC_IO_REQUIRED: "required", OC_IO_OPTIONAL: "optional", OC_IO_VARIADIC: "variadic"}
_IO_CODES = dict(zip(_IO_KINDS.values(), _IO_KINDS.keys()))


cdef class OpDef:
    """One op declaration as the glue's oc_op_def, with its kernels (native: the bound library's;
    Python: this module's). Lives as long as the process once registered (ORT keeps pointers)."""

    def __cinit__(self):
        self._mem = NULL

    def __init__(self, op, kernel=None):
        """`kernel`: the op's NativeKernel (None for a Python op). The values come from
        op_table.lower (the one builder of the table); this only copies them into C."""
        t = lower(op)
        cdef Py_ssize_t n_in = len(t.inputs), n_out = len(t.outputs), n_at = len(t.attrs)
        cdef Py_ssize_t width = n_in + n_out, n_rows = len(t.bindings), cells
        cdef oc_io_def* ins
        cdef oc_io_def* outs
        cdef oc_attr_def* ats
        cdef int32_t* rows
        cdef const char** in_names
        cdef const char** out_names
        cdef oc_attr_spec* specs
        cdef oc_op_def* d
        self.op = op
        self._keep = []
        keep = self._keep
        self.types = t.types
        cells = (max(n_rows * width, 1) + 1) // 2 * 2  # an even count: the pointers after stay aligned
        self._mem = calloc(1, (n_in + n_out) * sizeof(oc_io_def) + max(n_at, 1) * sizeof(oc_attr_def)
                           + cells * sizeof(int32_t) + (width + 2) * sizeof(char*)
                           + (n_at + 1) * sizeof(oc_attr_spec))
        if self._mem == NULL:
            raise MemoryError()
        ins = <oc_io_def*>self._mem
        outs = ins + n_in
        ats = <oc_attr_def*>(outs + n_out)
        rows = <int32_t*>(ats + max(n_at, 1))
        in_names = <const char**>(rows + cells)
        out_names = in_names + (n_in + 1)
        specs = <oc_attr_spec*>(out_names + (n_out + 1))
        _fill_io(ins, in_names, t.inputs, keep)
        _fill_io(outs, out_names, t.outputs, keep)
        for j, a in enumerate(t.attrs):
            ats[j].name = specs[j].name = _b(a.name, keep)
            ats[j].kind = specs[j].kind = _KIND_CODES[a.kind]
            ats[j].required = a.required
            if not a.required:
                fill_attr(&ats[j].value, ats[j].name, ats[j].kind, a.default, keep)
            ats[j].has_min, ats[j].has_max = a.min is not None, a.max is not None
            ats[j].min = a.min if a.min is not None else 0
            ats[j].max = a.max if a.max is not None else 0
            if a.kind == "int":  # exact (Attr made int bounds ints within int64)
                ats[j].int_min = a.min if a.min is not None else 0
                ats[j].int_max = a.max if a.max is not None else 0
            if a.choices is not None:
                buf = array.array("q", a.choices)
                keep.append(buf)
                ats[j].n_choices = len(buf)
                ats[j].choices = <const int64_t*><size_t>buf.buffer_info()[0]
        for r, row in enumerate(t.bindings):
            for j in range(width):
                rows[r * width + j] = row[j]
        d = &self.d
        d.name = _b(t.name, keep)
        d.since, d.until = t.since, t.until
        d.n_inputs, d.n_outputs, d.n_attrs, d.n_bindings = n_in, n_out, n_at, n_rows
        d.inputs, d.outputs, d.attrs, d.bindings = ins, outs, ats, rows
        d.accepted = _b(t.accepted, keep)
        d.host_shapes, d.host_checks = t.host_shapes, t.host_checks
        d.host_data = <PyObject*>self
        if kernel is not None:
            d.cpu = <const oc_kernel*><size_t>kernel.cpu
            d.cuda = <const oc_kernel*><size_t>kernel.cuda
        else:
            self.pyk = python_kernel(OC_CPU)
            self.pyk.name = d.name
            self.pyk.inputs = in_names
            self.pyk.outputs = out_names
            self.pyk.attrs = specs
            self.pyk.signatures = rows
            self.pyk.n_signatures = n_rows
            d.cpu = &self.pyk
            # op.cuda: the same function runs on the CUDA provider with CuPy arrays
            d.cuda = &self.pyk if op.cuda else NULL

    def __dealloc__(self):
        free(self._mem)


cdef int _fill_io(oc_io_def* d, const char** names, tuple ios, list keep) except -1:
    for j, io in enumerate(ios):
        d[j].name = names[j] = _b(io.name, keep)
        d[j].kind, d[j].cpu, d[j].min_arity = _IO_CODES[io.kind], io.cpu, io.min_arity
        d[j].homogeneous, d[j].shape_of, d[j].constrained = io.homogeneous, io.shape_of, io.constrained
        d[j].constant = io.constant
    return 0


cdef const char* _b(str s, list keep) except NULL:
    b = s.encode()
    keep.append(b)
    return b


def check_kernel(OpDef d, size_t kernel):
    """Why the oc_kernel at `kernel` does not implement d's op (None when it does): the glue's
    check, the one a plain library's RegisterCustomOps runs too."""
    cdef char msg[2048]
    if oc_glue_check_kernel(&d.d, <const oc_kernel*>kernel, msg, sizeof(msg)) == 0:
        return None
    return msg.decode("utf-8", "replace")


# ---- domains handed to RegisterCustomOps ----------------------------------------------------

cdef class DomainDef:
    """A domain's oc_domain_def (its ops' OpDefs kept alive with it)."""
    cdef oc_domain_def d
    cdef const oc_op_def** ptrs
    cdef readonly list defs
    cdef readonly int32_t opset  # the models' opset of the domain where the user said (Domain.at), else 0
    cdef bytes _name

    def __init__(self, str name, defs, int32_t opset=0):
        self.defs = list(defs)
        self.opset = opset
        self._name = name.encode()
        self.ptrs = <const oc_op_def**>calloc(max(len(self.defs), 1), sizeof(oc_op_def*))
        if self.ptrs == NULL:
            raise MemoryError()
        for j, od in enumerate(self.defs):
            self.ptrs[j] = &(<OpDef>od).d
        self.d.name = self._name
        self.d.n_ops = len(self.defs)
        self.d.ops = self.ptrs

    def __dealloc__(self):
        free(self.ptrs)


# (domain name, ops) -> DomainDef, kept for the life of the process: sessions made from any
# SessionOptions they were added to point at them. Keyed by content, so registering the same domain
# again (into many SessionOptions) reuses the same structs and memory stays bounded.
cdef dict _interned = {}
_interning = threading.Lock()
# The domains the current register_custom_ops_library call on this thread is for: ORT calls
# RegisterCustomOps synchronously, on the thread that asked.
_pending = threading.local()
# How many `registering` blocks are open, on any thread: RegisterCustomOps with nothing pending on
# its own thread while one is open elsewhere means the handoff was missed (ORT called it on
# another thread).
cdef int _registering = 0
# Whether this module's initialisation has completed: a C static, 0 in a process that never
# imported it (ORT opens the file by path and calls RegisterCustomOps all the same).
cdef bint _initialised = False


def domain_def(str name, tuple ops, int32_t opset=0):
    """The DomainDef of (name, ops, opset), made once; binds native kernels (errors are Python's here)."""
    from .native import op_def

    key = (name, ops, opset)
    with _interning:
        got = _interned.get(key)
    if got is None:
        got = DomainDef(name, [op_def(op) for op in ops], opset)
        with _interning:
            got = _interned.setdefault(key, got)
    return got


def check_domain(DomainDef dd):
    """Why ORT cannot be given dd (None when it can): the glue's check, the one a plain library's
    RegisterCustomOps runs too (several versions of one op; an `until` with no opset given)."""
    cdef char msg[2048]
    if oc_glue_check_domain(&dd.d, dd.opset, msg, sizeof(msg)) == 0:
        return None
    return msg.decode("utf-8", "replace")


def _registrable(DomainDef dd):
    why = check_domain(dd)
    if why:
        raise ValueError(why)
    return dd


@contextlib.contextmanager
def registering(domains):
    """Makes RegisterCustomOps, called on this thread while the block runs, add `domains`."""
    pending = [_registrable(domain_def(d.name, d.registered_ops(), d.opset or 0)) for d in domains]
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


cdef oc_glue_hooks _HOOKS
_HOOKS.infer_shapes = infer_shapes_hook
_HOOKS.check_attrs = check_attrs_hook
_HOOKS.rule_shapes = rule_shapes_hook
oc_glue_set_hooks(&_HOOKS)


cdef extern from *:
    """
    /* RegisterCustomOps' answer when nothing was handed over: as C data, since it is also given
       before this module's initialisation (ORT opened the file by path, nobody imported it). */
    static const char oc_not_the_plain_library[] =
        "ortcustom: this is ortcustom's Python module, which registers the domains handed to "
        "ortcustom.register; give ONNX Runtime the plain library of ortcustom.get_library_path() instead";
    """
    const char* oc_not_the_plain_library


cdef public OrtStatus* RegisterCustomOps(OrtSessionOptions* options, const OrtApiBase* base) noexcept nogil:
    # ORT may open this file by path in a process that never imported it: then neither this
    # module's Python state nor the GIL machinery for it exists, and only C may run here.
    if not _initialised:
        return base.GetApi(1).CreateStatus(ORT_FAIL, oc_not_the_plain_library)
    return _register(options, base)


cdef OrtStatus* _register(OrtSessionOptions* options, const OrtApiBase* base) noexcept with gil:
    cdef const oc_domain_def** ptrs
    cdef int32_t* opsets
    cdef DomainDef dd
    cdef OrtStatus* st
    cdef const OrtApi* api = base.GetApi(1)
    domains = getattr(_pending, "domains", None)
    if domains is None:
        if not _registering:
            return api.CreateStatus(ORT_FAIL, oc_not_the_plain_library)
        return api.CreateStatus(ORT_FAIL, b"ortcustom: RegisterCustomOps was called on a thread other than the "
                                b"one registering domains (ortcustom.register); the domains were not handed "
                                b"over. Call register_custom_ops_library only through ortcustom.register")
    ptrs = <const oc_domain_def**>malloc(max(len(domains), 1) * sizeof(oc_domain_def*))
    opsets = <int32_t*>malloc(max(len(domains), 1) * sizeof(int32_t))
    if ptrs == NULL or opsets == NULL:
        free(ptrs)
        free(opsets)
        return api.CreateStatus(ORT_FAIL, b"ortcustom: out of memory registering custom ops")
    for j, dd in enumerate(domains):
        ptrs[j] = &dd.d
        opsets[j] = dd.opset
    st = oc_glue_register_at(options, base, ptrs, opsets, len(domains))
    free(ptrs)
    free(opsets)
    return st


def describe(domain):
    """What ORT is given for each op of `domain` (for tests and `python -m ortcustom info`): one
    dict per OrtCustomOp the glue makes (per provider, per combination of the types that decide the
    outputs' types; "any" where the kernel's binding is found at kernel creation), then the op's
    type guard; siblings (declarations of one name and span) together, one guard for them."""
    out = []
    cdef OpDef od
    cdef int32_t n, p, j, width, k
    cdef int32_t* rows
    cdef int32_t* devices
    cdef int32_t* guards
    cdef int32_t* which
    cdef const oc_op_def** family
    defs = domain_def(domain.name, domain.ops, getattr(domain, "opset", 0) or 0).defs
    families = {}  # siblings (one name and span) are planned together, as registration does
    for od in defs:
        families.setdefault((od.op.name, od.d.since, od.d.until), []).append(od)
    for members in families.values():
        od = members[0]
        width = od.d.n_inputs + od.d.n_outputs
        family = <const oc_op_def**>calloc(len(members), sizeof(oc_op_def*))
        if family == NULL:
            raise MemoryError()
        rows = devices = guards = which = NULL
        try:
            for k in range(len(members)):
                family[k] = &(<OpDef>members[k]).d
            n = oc_glue_plan(family, len(members), NULL, NULL, NULL, NULL, 0)
            rows = <int32_t*>calloc(max(n * width, 1), sizeof(int32_t))
            devices = <int32_t*>calloc(max(n, 1), sizeof(int32_t))
            guards = <int32_t*>calloc(max(n, 1), sizeof(int32_t))
            which = <int32_t*>calloc(max(n, 1), sizeof(int32_t))
            if rows == NULL or devices == NULL or guards == NULL or which == NULL:
                raise MemoryError()
            oc_glue_plan(family, len(members), rows, devices, guards, which, n)
            for p in range(n):
                provider = CUDA_PROVIDER if devices[p] == OC_CUDA else "CPUExecutionProvider"
                out.append(_describe_one(members[which[p]], provider, [rows[p * width + j] for j in range(width)],
                                         guards[p] != 0))
        finally:
            free(family)
            free(rows)
            free(devices)
            free(guards)
            free(which)
    return out


cdef dict _describe_one(OpDef od, str provider, list row, bint guard):
    d, op = &od.d, od.op
    n_in = d.n_inputs
    return {
        "name": op.name,
        "version": ORT_API_VERSION,
        "provider": provider,
        "input_types": [name_of_enum(t) if t else "any" for t in row[:n_in]],
        "output_types": [name_of_enum(t) if t else "any" for t in row[n_in:]],
        "input_memory": ["cpu" if d.inputs[j].cpu else "default" for j in range(n_in)],
        "input_kinds": [_IO_KINDS[d.inputs[j].kind] for j in range(n_in)],
        "output_kinds": [_IO_KINDS[d.outputs[j].kind] for j in range(d.n_outputs)],
        "since": d.since,
        "until": d.until,
        "type_guard": guard,
    }


# ---- what a kernel says of itself (ortcustom.native finds kernels with it) --------------------

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
    if kd.abi_version != OC_ABI_VERSION:
        return {"abi_version": kd.abi_version}
    outputs = _names(kd.outputs)
    attrs = []
    kinds = {v: k for k, v in _KIND_CODES.items()}
    while kd.attrs != NULL and kd.attrs[len(attrs)].name != NULL:
        a = kd.attrs[len(attrs)]
        attrs.append((a.name.decode("utf-8", "replace"), kinds.get(a.kind, "?")))
    return {"abi_version": kd.abi_version, "device": "cuda" if kd.device == OC_CUDA else "cpu", "attrs": attrs,
            "name": kd.name.decode("utf-8", "replace") if kd.name != NULL else "",
            "inputs": _names(kd.inputs), "outputs": outputs,
            "inplace": [kd.inplace[j] if kd.inplace != NULL else -1 for j in range(len(outputs))],
            "has_compute": kd.compute != NULL}


_initialised = True  # last: RegisterCustomOps serves the Python path from here on
