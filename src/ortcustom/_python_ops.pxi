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
# allocates for that output (one copy; with the GIL released when it is large).
#
# The `out=` path (opt-in, no copy of results): if the function has a keyword-only parameter named
# `out` (seen once per op, from its signature), and every output of the node can be shaped before
# the call from the declaration (an `Output(..., shape="<input name>")`, that input present at run
# time; not variadic), ORT's outputs are allocated first and the function is called with
# `out=(y0, y1, ...)`: writeable views of them (None for an optional output the node does not use),
# in output order, valid during the call only. It fills them and returns None (or returns them, or
# arrays of the same shapes and dtypes, which are then copied in). Otherwise it is called without
# `out`, so give it a default (`*, out=None`) and return the results; a function whose `out` has no
# default fails with a clear error when the outputs cannot be shaped in advance.

cimport numpy as cnp
from cpython.object cimport PyObject_Call
from cpython.ref cimport Py_INCREF
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from libc.string cimport memmove
import inspect
import traceback
import numpy as np

from .types import ELEMENT_TYPES as _ELEMENT_TYPES, name_of_dtype as _name_of_dtype, onnx_enum, name_of_enum

cnp.import_array()

cdef enum:
    N_ONNX_TYPES = 32       # ONNX element type enum values we map (all are below this)
    BIG_COPY = 1 << 16      # bytes from which a result is copied with the GIL released
    TRACEBACK_FRAMES = 3    # frames of a kernel's traceback in the ORT error

# ONNX element type -> NumPy type number (-1: none, e.g. bfloat16). Filled once, at import.
cdef int _typenums[N_ONNX_TYPES]
for _i in range(N_ONNX_TYPES):
    _typenums[_i] = -1
for _name, (_enum, _dt) in _ELEMENT_TYPES.items():
    if _dt is not None and 0 <= _enum < N_ONNX_TYPES:
        _typenums[_enum] = _dt.num


cdef int typenum_of(int onnx_type) except -1:
    if 0 <= onnx_type < N_ONNX_TYPES and _typenums[onnx_type] >= 0:
        return _typenums[onnx_type]
    raise TypeError(f"Python kernels take no {name_of_enum(onnx_type)} tensors")


cdef object view(Tensor* t, bint writeable):
    """A NumPy array viewing t's host memory (no copy)."""
    cdef cnp.npy_intp dims[MAX_RANK]
    cdef size_t i
    for i in range(t.rank):
        dims[i] = <cnp.npy_intp>t.shape[i]
    arr = cnp.PyArray_SimpleNewFromData(<int>t.rank, dims, typenum_of(<int>t.type), t.data)
    if not writeable:
        cnp.PyArray_CLEARFLAGS(<cnp.ndarray>arr, cnp.NPY_ARRAY_WRITEABLE)
    return arr


# ---- what is known of an op's function, once per op -----------------------------------------

cdef class _PyPlan:
    cdef object fn
    cdef bint wants_out          # has a keyword-only parameter `out`
    cdef bint out_required       # ... without a default
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
    p.out_required = p.wants_out and param.default is inspect.Parameter.empty
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


def python_plan(op):
    """The run-time plan of a Python op (its signature read once), made at kernel creation."""
    return _make_plan(op)


cdef object python_state(op, dict attrs, dict types):
    """What a Python kernel keeps: (op, attrs, output dtypes, plan)."""
    from .types import numpy_dtype
    out_dtypes = tuple(numpy_dtype(types.get(o.type, o.type)) for o in op.outputs)
    return (op, attrs, out_dtypes, _make_plan(op))


# ---- the run path ---------------------------------------------------------------------------

class _KernelError(Exception):
    pass


cdef OrtStatus* python_compute(const Kernel* k, OrtKernelContext* ctx) noexcept nogil:
    cdef Tensor stack_in[STACK_INPUTS]
    cdef Tensor* ins = stack_in
    cdef size_t n_in = 0, n_out = 0, i
    cdef void* stream = NULL
    cdef OrtStatus* st = k.api.KernelContext_GetInputCount(ctx, &n_in)
    if st == NULL:
        st = k.api.KernelContext_GetOutputCount(ctx, &n_out)
    if st == NULL and k.b.provider != NULL:
        st = k.api.KernelContext_GetGPUComputeStream(ctx, &stream)
    if st != NULL:
        return st
    if n_in > STACK_INPUTS:
        ins = <Tensor*>malloc(n_in * sizeof(Tensor))
        if ins == NULL:
            return op_error(k, "out of memory")
    for i in range(n_in):
        st = get_input(k, ctx, i, &ins[i])
        if st != NULL:
            break
    if st == NULL:
        with gil:
            st = _call_python(k, ctx, ins, n_in, n_out, stream)
    if ins != stack_in:
        free(ins)
    return st


cdef OrtStatus* _call_python(const Kernel* k, OrtKernelContext* ctx, Tensor* ins, size_t n_in,
                             size_t n_out, void* stream) noexcept:
    try:
        if k.b.provider != NULL:
            cp = cupy_module()
            with cp.cuda.ExternalStream(<size_t>stream):
                return _run(k, ctx, ins, n_in, n_out, True)
        return _run(k, ctx, ins, n_in, n_out, False)
    except _KernelError as e:
        return status(k.api, ORT_INVALID_ARGUMENT, f"{k.b.name.decode()} (node '{k.node.decode()}'): {e}")
    except BaseException as e:
        frames = traceback.extract_tb(e.__traceback__)
        tb = "".join(traceback.format_list(frames[max(0, len(frames) - TRACEBACK_FRAMES):])).rstrip()
        return status(k.api, ORT_FAIL, f"{k.b.name.decode()} (node '{k.node.decode()}'): the Python kernel "
                                       f"raised {type(e).__name__}: {e}\nTraceback (last frames):\n{tb}")


cdef OrtStatus* _run(const Kernel* k, OrtKernelContext* ctx, Tensor* ins, size_t n_in, size_t n_out,
                     bint cuda) except? NULL:
    cdef size_t i
    cdef Tensor o
    cdef OrtStatus* st
    cdef _PyPlan plan
    state = <tuple>k.py
    op = state[0]
    attrs = <dict>state[1]
    plan = <_PyPlan>state[3]
    args = PyTuple_New(n_in)
    for i in range(n_in):
        a = _input(k, &ins[i], i, cuda) if ins[i].present else None
        Py_INCREF(a)
        PyTuple_SET_ITEM(args, i, a)

    if plan.wants_out:
        ready = plan.can_prealloc and n_out <= len(plan.out_src)
        if ready:
            for i in range(n_out):
                if not ins[<size_t>plan.out_src[i]].present:
                    ready = False
                    break
        if ready:
            outs = PyTuple_New(n_out)
            for i in range(n_out):
                st = get_output(k, ctx, i, ins[<size_t>plan.out_src[i]].shape,
                                ins[<size_t>plan.out_src[i]].rank, &o.data)
                if st != NULL:
                    return st
                if o.data == NULL and ins[<size_t>plan.out_src[i]].size != 0:
                    a = None  # an optional output the node does not use
                else:
                    o.rank = ins[<size_t>plan.out_src[i]].rank
                    memcpy(o.shape, ins[<size_t>plan.out_src[i]].shape, o.rank * sizeof(int64_t))
                    o.size = ins[<size_t>plan.out_src[i]].size
                    o.type = k.b.out_types[i]
                    o.present = True
                    a = _output_view(&o, cuda)
                Py_INCREF(a)
                PyTuple_SET_ITEM(outs, i, a)
            kw = dict(attrs)
            kw["out"] = outs
            results = PyObject_Call(plan.fn, args, kw)
            if results is not None:
                _fill_given(k, op, state[2], outs, results, n_out, cuda)
            return NULL
        if plan.out_required:
            raise _KernelError(f"the Python kernel requires out=, but the outputs cannot be allocated "
                               f"before the call: {plan.why or 'an input they take their shape from is absent'}")

    results = PyObject_Call(plan.fn, args, attrs) if attrs else plan.fn(*args)
    if not isinstance(results, tuple):
        results = (results,)
    n_decl = len(op.outputs)
    bad = len(results) < n_out
    for i in range(n_out, len(results)):  # extras: only for optional outputs the node does not use
        bad = bad or i >= <size_t>n_decl or not op.outputs[i].optional
    if bad:
        raise _KernelError(f"the Python kernel returned {len(results)} outputs; the node has {n_out}")
    for i in range(n_out):
        last = min(i, len(op.outputs) - 1)  # extra outputs belong to a variadic last one
        r = results[i]
        if r is None:
            if op.outputs[last].optional:
                continue
            raise _KernelError(f"the Python kernel returned None for required output {op.outputs[last].name}")
        st = _copy_result(k, ctx, i, r, op.outputs[last].name, state[2][last], k.b.out_types[last], cuda)
        if st != NULL:
            return st
    return NULL


cdef object _input(const Kernel* k, Tensor* t, size_t i, bint cuda):
    if cuda and k.b.in_mem[min(i, k.b.n_in - 1)] != OrtMemTypeCPUInput:
        return cupy_view(t)
    return view(t, False)


cdef object _output_view(Tensor* t, bint cuda):
    return cupy_view(t) if cuda else view(t, True)


cdef object _checked(object r, str name, object want, int onnx_type, bint cuda):
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
        raise _KernelError(f"output {name} has dtype {arr.dtype}; the op declares {want}")
    if arr.ndim > MAX_RANK:
        raise _KernelError(f"output {name} has rank {arr.ndim}; at most {MAX_RANK}")
    return arr


cdef OrtStatus* _copy_result(const Kernel* k, OrtKernelContext* ctx, size_t i, object r, str name,
                             object want, ONNXTensorElementDataType onnx_type, bint cuda) except? NULL:
    """Allocates output i with r's shape and copies r into it."""
    cdef Tensor t
    cdef size_t j
    arr = _checked(r, name, want, <int>onnx_type, cuda)
    t.rank = arr.ndim
    shape = arr.shape
    for j in range(t.rank):
        t.shape[j] = shape[j]
    st = get_output(k, ctx, i, t.shape, t.rank, &t.data)
    if st != NULL or t.data == NULL or arr.size == 0:
        return st
    t.type = onnx_type
    t.size = arr.size
    t.present = True
    _copy_into(&t, arr, cuda)
    return NULL


cdef int _copy_into(Tensor* t, object arr, bint cuda) except -1:
    """arr (checked: t's shape and element type) into t's buffer."""
    if cuda:
        cupy_view(t)[...] = arr  # on the current stream: ORT's
        return 0
    return _copy_host(t.data, <cnp.ndarray>arr, t, None)


cdef int _copy_host(void* data, cnp.ndarray src, Tensor* t, object dst) except -1:
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


cdef int _fill_given(const Kernel* k, op, tuple out_dtypes, tuple outs, results, size_t n_out,
                     bint cuda) except -1:
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
        arr = _checked(r, op.outputs[i].name, out_dtypes[i], <int>k.b.out_types[i], cuda)
        if arr.shape != dst.shape:
            raise _KernelError(f"output {op.outputs[i].name} has shape {arr.shape}; with out= it must have "
                               f"the shape of {op.outputs[i].shape}: {dst.shape}")
        if cuda:
            dst[...] = arr
        else:  # dst is the view of ORT's buffer (there is no Tensor for it here)
            _copy_host(cnp.PyArray_DATA(<cnp.ndarray>dst), <cnp.ndarray>arr, NULL, dst)
    return 0


# ---- CuPy: ORT's device memory as CuPy arrays -------------------------------------------------

cdef object _cupy = None


cdef object cupy_module():
    global _cupy
    if _cupy is None:
        import cupy
        _cupy = cupy
    return _cupy


cdef object cupy_view(Tensor* t):
    """A CuPy array viewing t's device memory (no copy; valid while ORT holds the tensor)."""
    cp = cupy_module()
    dtype = cnp.PyArray_DescrFromType(typenum_of(<int>t.type))
    shape = tuple([t.shape[i] for i in range(t.rank)])
    if t.data == NULL or t.size == 0:
        return cp.empty(shape, dtype)
    mem = cp.cuda.UnownedMemory(<size_t>t.data, <size_t>t.size * dtype.itemsize, None)
    return cp.ndarray(shape, dtype, cp.cuda.MemoryPointer(mem, 0))


def _cupy_view_of(size_t ptr, shape, dtype):
    """For tests: a CuPy view of device memory at `ptr`, made the way the kernel path makes them."""
    cdef Tensor t
    cdef size_t i
    dt = np.dtype(dtype)
    t.data = <void*>ptr
    t.rank = len(shape)
    t.size = 1
    for i in range(t.rank):
        t.shape[i] = shape[i]
        t.size *= shape[i]
    t.type = <ONNXTensorElementDataType><int>onnx_enum(_name_of_dtype(dt))
    return cupy_view(&t)
