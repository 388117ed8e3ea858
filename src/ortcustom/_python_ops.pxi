# Python kernels. The GIL is taken around the Python call only: inputs are read before it, and
# large results are copied into ORT's outputs with it released.
#
# CPU: inputs are NumPy arrays viewing ORT's memory (read-only, valid during the call only: do not
# keep them). CUDA (bindings whose provider is "CUDAExecutionProvider"): inputs are CuPy arrays
# viewing ORT's device memory (inputs declared `cpu=True` stay NumPy views), and the function runs
# under `cupy.cuda.ExternalStream(<ORT's compute stream>)`, so what it launches is ordered with ORT.
#
# Results: the function returns one array or a tuple of them (None for an optional output it does
# not produce); each is checked against the declared element type and copied into the buffer ORT
# allocates for that output (one copy; with the GIL released when it is large). A function with a
# keyword-only parameter `out_dtypes` gets each output tensor's NumPy dtype (a tuple, a variadic
# output's tensors one each): how it learns the types of a heterogeneous variadic output's tensors,
# which are the node's.
#
# The `out=` path (opt-in, no copy of results): if the function has a keyword-only parameter named
# `out` (seen once per op, from its signature), and every output of the node can be shaped before
# the call from the declaration (an `Output(..., shape="<input name>")`, that input present at run
# time; not variadic), ORT's outputs are allocated first and the function is called with
# `out=(y0, y1, ...)`: writeable views of them (None for an optional output the node does not use),
# in output order, valid during the call only. It fills them and returns None (or returns them, or
# arrays of the same shapes and dtypes, which are then copied in). A function that assigns to its
# `out` parameter (`out = ...`: seen in its code) must return its outputs: None from it is an error,
# since what it computed never reached ORT's buffers. Otherwise it is called without
# `out`, so give it a default (`*, out=None`) and return the results; a function whose `out` has no
# default fails with a clear error when the outputs cannot be shaped in advance.

cimport numpy as cnp
from cpython.object cimport PyObject_Call
from cpython.ref cimport Py_INCREF, Py_DECREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.string cimport memmove
import dis
import inspect
import traceback
import numpy as np

from .errors import exception_text, message_text
from .types import ELEMENT_TYPES as _ELEMENT_TYPES, name_of_enum

cnp.import_array()

cdef enum:
    N_ONNX_TYPES = 32       # ONNX element type enum values we map (all are below this)
    BIG_COPY = 1 << 16      # bytes from which a result is copied with the GIL released
    TRACEBACK_FRAMES = 3    # frames of a kernel's traceback in the ORT error

# ONNX element type -> NumPy type number (-1: none, e.g. bfloat16). Filled once, at import.
cdef int _typenums[N_ONNX_TYPES]
for _i in range(N_ONNX_TYPES):
    _typenums[_i] = -1
for _t in _ELEMENT_TYPES.values():
    if _t.numpy is not None and 0 <= _t.onnx < N_ONNX_TYPES:
        _typenums[_t.onnx] = _t.numpy.num


cdef int typenum_of(int onnx_type) except -1:
    if 0 <= onnx_type < N_ONNX_TYPES and _typenums[onnx_type] >= 0:
        return _typenums[onnx_type]
    raise TypeError(f"Python kernels take no {name_of_enum(onnx_type)} tensors")


cdef object view(const oc_tensor* t, bint writeable):
    """A NumPy array viewing t's host memory (no copy); a string tensor: an object array of str."""
    cdef cnp.npy_intp dims[OC_MAX_RANK]
    cdef int32_t i
    if t.dtype == OC_STRING:
        return _text_array(t)
    for i in range(t.rank):
        dims[i] = <cnp.npy_intp>t.shape[i]
    arr = cnp.PyArray_SimpleNewFromData(<int>t.rank, dims, typenum_of(<int>t.dtype), <void*>t.data)
    if not writeable:
        cnp.PyArray_CLEARFLAGS(<cnp.ndarray>arr, cnp.NPY_ARRAY_WRITEABLE)
    return arr


cdef object _text_array(const oc_tensor* t):
    """A string input's elements (UTF-8: the glue checked) as a read-only object array of str, as
    onnxruntime gives string tensors to Python."""
    cdef const oc_string* e = <const oc_string*>t.data
    cdef int64_t j
    arr = np.empty(tuple([t.shape[j] for j in range(t.rank)]), object)
    if t.size:
        arr.reshape(-1)[:] = [PyUnicode_DecodeUTF8(e[j].data, e[j].size, NULL) for j in range(t.size)]
    arr.flags.writeable = False
    return arr


cdef int _set_strings(oc_context* ctx, int32_t i, object r, str name, str whose="the op declares") except -1:
    """String output i: allocated with r's shape, each element set from r's (str, or bytes)."""
    cdef int64_t dims[OC_MAX_RANK]
    cdef int32_t j
    cdef Py_ssize_t k
    cdef bytes b
    arr = r if cnp.PyArray_Check(r) else np.asarray(r, object)
    if arr.dtype.kind not in "UOS":
        raise _KernelError(f"output {name} has dtype {arr.dtype}; {whose} string")
    if arr.ndim > OC_MAX_RANK:
        raise _KernelError(f"output {name} has rank {arr.ndim}; at most {OC_MAX_RANK}")
    for j in range(arr.ndim):
        dims[j] = arr.shape[j]
    _output(ctx, i, dims, arr.ndim)
    for k, v in enumerate(arr.reshape(-1)):
        if isinstance(v, str):
            try:
                b = (<str>v).encode("utf-8")
            except UnicodeEncodeError as e:
                raise _KernelError(f"output {name} element {k} cannot be UTF-8 ({e.reason})") from None
        elif isinstance(v, bytes):
            b = <bytes>v
        else:
            raise _KernelError(f"output {name} element {k} is {type(v).__name__}; a string tensor holds str")
        if oc_set_string(ctx, i, k, <const char*>b, len(b)) != OC_OK:
            raise _OutputFailed()
    return 0


# ---- what is known of an op's function, once per op -----------------------------------------

cdef class _PyPlan:
    cdef object fn
    cdef bint wants_out          # has a keyword-only parameter `out`
    cdef bint wants_dtypes       # has a keyword-only parameter `out_dtypes`: gets each output's dtype
    cdef bint out_required       # ... without a default
    cdef bint rebinds_out        # assigns to its `out` parameter: must then return its outputs
    cdef bint can_prealloc       # every declared output takes the shape of an input
    cdef tuple out_src           # per declared output: the index of that input
    cdef str why                 # when not can_prealloc: why (for out_required's error)




cdef _PyPlan _make_plan(op):
    cdef _PyPlan p = _PyPlan()
    p.fn = op.compute
    try:
        param = inspect.signature(p.fn).parameters.get("out")
    except (TypeError, ValueError):  # some builtins have no signature
        param = None
    p.wants_out = param is not None and param.kind is inspect.Parameter.KEYWORD_ONLY
    try:
        dtypes = inspect.signature(p.fn).parameters.get("out_dtypes")
    except (TypeError, ValueError):
        dtypes = None
    p.wants_dtypes = dtypes is not None and dtypes.kind is inspect.Parameter.KEYWORD_ONLY
    p.out_required = p.wants_out and param.default is inspect.Parameter.empty
    p.rebinds_out = p.wants_out and _assigns(p.fn, "out")
    names = [i.name for i in op.inputs]
    src, p.why = [], None
    for o in op.outputs:
        if o.variadic:
            p.why = f"output {o.name} is variadic"
        elif not isinstance(o.shape, str):
            p.why = f"output {o.name} does not declare shape=<an input's name>"
        else:
            src.append(names.index(o.shape))  # a variadic input: its first tensor
            continue
        break
    p.can_prealloc = p.why is None
    p.out_src = tuple(src)
    return p


def _assigns(fn, name) -> bool:
    """Whether fn's own code assigns to (or deletes) its local `name`."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    for ins in dis.get_instructions(code):
        if ins.opname.startswith(("STORE_FAST", "DELETE_FAST", "STORE_DEREF", "DELETE_DEREF")):
            # (3.13 pairs two stores in one instruction: its argval is both names)
            if ins.argval == name or (isinstance(ins.argval, tuple) and name in ins.argval):
                return True
    return False


# ---- Python kernels as kernels of the ABI: the glue runs them like any other ----------------

class _KernelError(Exception):
    pass


cdef oc_kernel python_kernel(int32_t device) noexcept:
    cdef oc_kernel k
    memset(&k, 0, sizeof(k))
    k.abi_version = OC_ABI_VERSION
    k.device = device
    k.create = py_create
    k.destroy = py_destroy
    k.compute = py_compute
    return k


cdef int py_create(oc_context* ctx, void** state) noexcept nogil:
    with gil:
        try:
            op = (<OpDef>ctx.host_data).op
            # per output tensor (a heterogeneous variadic output's: each the node's own type)
            out_dtypes = tuple([np.dtype(cnp.PyArray_DescrFromType(typenum_of(ctx.output_dtypes[j])))
                                for j in range(ctx.n_outputs)])
            try:
                values = attrs_to_dict(op, ctx.attrs)
            except NotText as e:
                return _fail(ctx, OC_INVALID_ARGUMENT, str(e))
            st = (op, values, out_dtypes, _make_plan(op))
            Py_INCREF(st)
            state[0] = <PyObject*>st
            return OC_OK
        except BaseException as e:
            return _fail(ctx, OC_FAIL, f"the Python kernel could not be set up: {exception_text(e)}")


cdef void py_destroy(void* state) noexcept nogil:
    # Dropped with the GIL, unless the interpreter is going away (then it is left to the process's
    # end: taking the GIL there would hang or crash).
    if Py_IsInitialized() and not oc_py_finalizing():
        with gil:
            Py_DECREF(<object>state)


cdef int py_compute(oc_context* ctx) noexcept nogil:
    with gil:
        try:
            if ctx.device == OC_CUDA:
                cp = cupy_module()
                with cp.cuda.ExternalStream(<size_t>ctx.stream):
                    _run(ctx, True)
            else:
                _run(ctx, False)
            return OC_OK
        except _KernelError as e:
            return _fail(ctx, OC_INVALID_ARGUMENT, str(e))
        except _OutputFailed:
            return OC_FAIL  # the glue has the message
        except BaseException as e:
            return _fail(ctx, OC_FAIL, _raised(e))


cdef str _raised(e):
    """What a kernel's exception says, with its last frames; never fails itself (an error here
    would leave the glue believing the kernel returned normally)."""
    text = f"the Python kernel raised {exception_text(e)}"
    try:
        frames = traceback.extract_tb(e.__traceback__)
        tb = "".join(traceback.format_list(frames[max(0, len(frames) - TRACEBACK_FRAMES):])).rstrip()
        return f"{text}\nTraceback (last frames):\n{tb}"
    except BaseException:
        return text


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


class _OutputFailed(Exception):
    pass


cdef int _fail(oc_context* ctx, int code, str msg) noexcept:
    b = msg.encode("utf-8", "replace")
    return oc_fail(ctx, code, b)


cdef void* _output(oc_context* ctx, int32_t i, const int64_t* shape, int32_t rank) except? NULL:
    cdef void* data = NULL
    if oc_output(ctx, i, shape, rank, &data) != OC_OK:
        raise _OutputFailed()
    return data


cdef int _run(oc_context* ctx, bint cuda) except -1:
    cdef int32_t i, n_in = ctx.n_inputs, n_out = ctx.n_outputs
    cdef const oc_tensor* ins = ctx.inputs
    cdef oc_tensor o
    cdef _PyPlan plan
    state = <tuple>ctx.state
    op = state[0]
    attrs = <dict>state[1]
    out_dtypes = state[2]
    plan = <_PyPlan>state[3]
    n_decl = len(op.outputs)
    if plan.wants_dtypes:  # what each output tensor must be (a heterogeneous variadic's: the node's types)
        attrs = dict(attrs)
        attrs["out_dtypes"] = out_dtypes
    args = PyTuple_New(n_in)
    for i in range(n_in):
        a = (cupy_view(&ins[i]) if cuda and ins[i].device == OC_CUDA else view(&ins[i], False)) if ins[i].present else None
        Py_INCREF(a)
        PyTuple_SET_ITEM(args, i, a)

    if plan.wants_out:
        ready = plan.can_prealloc
        if ready:
            for i in range(n_decl):  # (string outputs are set element by element: never given as out=)
                if not ins[<int32_t>plan.out_src[i]].present or ctx.dtypes[len(op.inputs) + i] == OC_STRING:
                    ready = False
                    break
        if ready:
            outs = PyTuple_New(n_decl)
            for i in range(n_decl):
                src = &ins[<int32_t>plan.out_src[i]]
                o = src[0]
                o.data = _output(ctx, i, src.shape, src.rank)
                o.dtype = ctx.dtypes[len(op.inputs) + i]
                if o.data == NULL and src.size != 0:
                    a = None  # an optional output the node does not use
                else:
                    a = cupy_view(&o) if cuda else view(&o, True)
                Py_INCREF(a)
                PyTuple_SET_ITEM(outs, i, a)
            kw = dict(attrs)
            kw["out"] = outs
            results = PyObject_Call(plan.fn, args, kw)
            if results is not None:
                _fill_given(op, out_dtypes, outs, results, n_decl, cuda)
            elif plan.rebinds_out:
                raise _KernelError("the Python kernel assigns to its parameter `out` and returned None: what it "
                                   "computed never reached ORT's outputs. Write into the arrays it is given "
                                   "(out[0][...] = y), or return the outputs")
            return 0
        if plan.out_required:
            raise _KernelError(f"the Python kernel requires out=, but the outputs cannot be allocated "
                               f"before the call: {plan.why or 'an input they take their shape from is absent'}")

    results = PyObject_Call(plan.fn, args, attrs) if attrs else plan.fn(*args)
    if not isinstance(results, tuple):
        results = (results,)
    if len(results) > n_out and not all(r is None for r in results[n_out:]):
        raise _KernelError(f"the Python kernel returned {len(results)} outputs; the node has {n_out}")
    for i in range(min(n_out, len(results))):
        last = min(i, n_decl - 1)  # extra outputs belong to a variadic last one
        r = results[i]
        if r is None:
            if op.outputs[last].optional:
                continue
            raise _KernelError(f"the Python kernel returned None for required output {op.outputs[last].name}")
        decl = op.outputs[last]
        if decl.homogeneous:
            _copy_result(ctx, i, r, decl.name, out_dtypes[i], ctx.output_dtypes[i], cuda)
        else:  # its tensors' types are the node's: say which tensor, and whose type
            _copy_result(ctx, i, r, f"{decl.name} (the node's output {i})", out_dtypes[i], ctx.output_dtypes[i],
                         cuda, "the node gives it")
    if len(results) < n_out and not all(o.optional for o in op.outputs[len(results):]):
        raise _KernelError(f"the Python kernel returned {len(results)} outputs; the node has {n_out}")
    return 0


cdef object _checked(object r, str name, object want, int onnx_type, bint cuda, str whose="the op declares"):
    """r as an array of the declared dtype (TypeError-free: a _KernelError otherwise)."""
    try:
        if cuda:
            arr = cupy_module().asarray(r)
        elif cnp.PyArray_Check(r):
            arr = r
        else:
            arr = np.asarray(r)
    except (TypeError, ValueError) as e:  # e.g. a ragged list
        raise _KernelError(f"output {name} is not an array ({type(r).__name__}: {e})") from None
    if not cuda and cnp.PyArray_TYPE(<cnp.ndarray>arr) == _typenums[onnx_type]:
        pass
    elif arr.dtype != want:
        raise _KernelError(f"output {name} has dtype {arr.dtype}; {whose} {want}")
    if arr.ndim > OC_MAX_RANK:
        raise _KernelError(f"output {name} has rank {arr.ndim}; at most {OC_MAX_RANK}")
    return arr


cdef int _copy_result(oc_context* ctx, int32_t i, object r, str name, object want, int onnx_type,
                      bint cuda, str whose="the op declares") except -1:
    """Allocates output i with r's shape and copies r into it."""
    cdef oc_tensor t
    cdef int64_t dims[OC_MAX_RANK]
    cdef int32_t j
    if onnx_type == OC_STRING:
        return _set_strings(ctx, i, r, name, whose)
    arr = _checked(r, name, want, onnx_type, cuda, whose)
    shape = arr.shape
    for j in range(arr.ndim):
        dims[j] = shape[j]
    memset(&t, 0, sizeof(t))
    t.rank = arr.ndim
    t.shape = dims
    t.data = _output(ctx, i, dims, t.rank)
    if t.data == NULL or arr.size == 0:
        return 0
    t.dtype = onnx_type
    t.size = arr.size
    t.present = 1
    if cuda:
        cupy_view(&t)[...] = arr  # on the current stream: ORT's
        return 0
    return _copy_host(<void*>t.data, <cnp.ndarray>arr, &t, None)


cdef int _copy_host(void* data, cnp.ndarray src, const oc_tensor* t, object dst) except -1:
    """src into the C-contiguous host buffer `data` of src's shape and element type, which is the
    array `dst` or, when dst is None, the tensor t. One memmove when src is C-contiguous in native
    byte order; otherwise NumPy copies it element by element (any strides, byte order, overlap)."""
    cdef const void* p = cnp.PyArray_DATA(src)
    cdef size_t nbytes
    if cnp.PyArray_IS_C_CONTIGUOUS(src) and cnp.PyArray_ISNOTSWAPPED(src):
        if p == data:  # the buffer itself (a view of it with other strides takes the path below)
            return 0
        nbytes = <size_t>cnp.PyArray_NBYTES(src)
        if nbytes >= BIG_COPY:
            with nogil:
                memmove(data, p, nbytes)
        else:
            memmove(data, p, nbytes)
        return 0
    if dst is None:
        dst = view(t, True)
    cnp.PyArray_CopyInto(<cnp.ndarray>dst, src)
    return 0


cdef int _fill_given(op, tuple out_dtypes, tuple outs, results, size_t n_out, bint cuda) except -1:
    """out= path, the function returned something: the out views themselves, or arrays to copy."""
    cdef size_t i
    if not isinstance(results, tuple):
        results = (results,)
    if len(results) > n_out:
        raise _KernelError(f"the Python kernel returned {len(results)} outputs; the node has {n_out}")
    for i in range(len(results)):
        r, dst = results[i], outs[i]
        if r is None or r is dst or dst is None:
            continue
        arr = _checked(r, op.outputs[i].name, out_dtypes[i], _ENUM_OF_DTYPE[out_dtypes[i]], cuda)
        if arr.shape != dst.shape:
            raise _KernelError(f"output {op.outputs[i].name} has shape {arr.shape}; with out= it must have "
                               f"the shape of {op.outputs[i].shape}: {dst.shape}")
        if cuda:
            dst[...] = arr
        else:  # dst is the view of ORT's buffer
            _copy_host(cnp.PyArray_DATA(<cnp.ndarray>dst), <cnp.ndarray>arr, NULL, dst)
    return 0


_ENUM_OF_DTYPE = {t.numpy: t.onnx for t in _ELEMENT_TYPES.values() if t.numpy is not None}


# ---- CuPy: device memory as CuPy arrays --------------------------------------------------------

cdef object _cupy = None


cdef object cupy_module():
    global _cupy
    if _cupy is None:
        import cupy
        _cupy = cupy
    return _cupy


cdef object cupy_view(const oc_tensor* t):
    """A CuPy array viewing t's device memory (no copy; valid while its owner holds it)."""
    cp = cupy_module()
    dtype = cnp.PyArray_DescrFromType(typenum_of(<int>t.dtype))
    shape = tuple([t.shape[i] for i in range(t.rank)])
    if t.data == NULL or t.size == 0:
        return cp.empty(shape, dtype)
    mem = cp.cuda.UnownedMemory(<size_t>t.data, <size_t>t.size * dtype.itemsize, None)
    return cp.ndarray(shape, dtype, cp.cuda.MemoryPointer(mem, 0))
