# Python kernels: the GIL is taken around the call only. Inputs are NumPy arrays viewing ORT's
# memory (read-only, valid during the call); results are written into the outputs ORT allocates.

cimport numpy as cnp
import traceback
import numpy as np

cnp.import_array()

cdef dict _typenum = {}  # ONNX element type -> NumPy type number


cdef int typenum_of(int onnx_type) except -1:
    got = _typenum.get(onnx_type)
    if got is None:
        from .types import numpy_dtype
        dt = numpy_dtype(name_of_enum(onnx_type)) if name_of_enum(onnx_type)[0] != "<" else None
        if dt is None:
            raise TypeError(f"Python kernels take no {name_of_enum(onnx_type)} tensors")
        got = _typenum[onnx_type] = dt.num
    return got


cdef object view(Tensor* t, bint writeable):
    cdef cnp.npy_intp dims[MAX_RANK]
    cdef size_t i
    for i in range(t.rank):
        dims[i] = <cnp.npy_intp>t.shape[i]
    arr = cnp.PyArray_SimpleNewFromData(<int>t.rank, dims, typenum_of(<int>t.type), t.data)
    if not writeable:
        cnp.PyArray_CLEARFLAGS(<cnp.ndarray>arr, cnp.NPY_ARRAY_WRITEABLE)
    return arr


cdef OrtStatus* python_compute(const Kernel* k, OrtKernelContext* ctx) noexcept nogil:
    with gil:
        try:
            return _python_compute(k, ctx)
        except _KernelError as e:
            return status(k.api, ORT_INVALID_ARGUMENT, f"{k.b.name.decode()} (node '{k.node.decode()}'): {e}")
        except BaseException as e:
            lines = traceback.format_exception(type(e), e, e.__traceback__)
            tb = "".join(lines[max(0, len(lines) - 3):]).rstrip()  # the last frames
            return status(k.api, ORT_FAIL, f"{k.b.name.decode()} (node '{k.node.decode()}'): the Python "
                                           f"kernel raised {type(e).__name__}: {e}\n{tb}")


class _KernelError(Exception):
    pass


cdef OrtStatus* _python_compute(const Kernel* k, OrtKernelContext* ctx) except? NULL:
    cdef Tensor t
    cdef size_t n_in = 0, n_out = 0, i
    cdef OrtStatus* st
    cdef int64_t shape[MAX_RANK]
    cdef void* data
    op, attrs, out_dtypes = <tuple>k.py
    st = k.api.KernelContext_GetInputCount(ctx, &n_in)
    if st != NULL:
        return st
    args = []
    for i in range(n_in):
        st = get_input(k, ctx, i, &t)
        if st != NULL:
            return st
        args.append(view(&t, False) if t.present else None)
    results = op.compute(*args, **attrs)
    if not isinstance(results, tuple):
        results = (results,)
    st = k.api.KernelContext_GetOutputCount(ctx, &n_out)
    if st != NULL:
        return st
    if len(results) < n_out or (len(results) > n_out and not all(
            o.optional for o in op.outputs[n_out:len(results)])):
        raise _KernelError(f"the Python kernel returned {len(results)} outputs; the node has {n_out}")
    for i in range(n_out):
        last = min(i, len(op.outputs) - 1)  # extra outputs belong to a variadic last one
        decl = op.outputs[last]
        if results[i] is None:
            if decl.optional:
                continue
            raise _KernelError(f"the Python kernel returned None for required output {decl.name}")
        want = out_dtypes[last]
        arr = np.asarray(results[i])
        if arr.dtype != want:
            raise _KernelError(f"output {decl.name} has dtype {arr.dtype}; the op declares {want}")
        if arr.ndim > MAX_RANK:
            raise _KernelError(f"output {decl.name} has rank {arr.ndim}; at most {MAX_RANK}")
        for j in range(arr.ndim):
            shape[j] = arr.shape[j]
        st = get_output(k, ctx, i, shape, arr.ndim, &data)
        if st != NULL:
            return st
        if data != NULL and arr.size:
            t.data = data
            t.rank = arr.ndim
            for j in range(arr.ndim):
                t.shape[j] = shape[j]
            t.type = k.b.out_types[last]
            np.copyto(view(&t, True), arr, casting="no")
    return NULL
