# Output types and shapes at session creation for ops with Python shape rules (Output(shape=f));
# the glue infers shape="X" outputs itself.
from libc.stdint cimport int64_t
import itertools

cdef object _unknown_dims = itertools.count(1)


cdef bint _ok(const OrtApi* api, OrtStatus* st) noexcept:
    if st == NULL:
        return True
    api.ReleaseStatus(st)
    return False


cdef object _input_shape(const OrtApi* api, OrtShapeInferContext* ctx, size_t i):
    """(element type, dims) of input i; dims None when unknown. The info belongs to the context."""
    cdef OrtTensorTypeAndShapeInfo* info = NULL
    if not _ok(api, api.ShapeInferContext_GetInputTypeShape(ctx, i, &info)) or info == NULL:
        return None, None
    return _type_and_dims(api, info)


cdef object _kernel_input_shape(const OrtApi* api, const OrtKernelInfo* kinfo, size_t i):
    """(element type, dims) of the node's input i at kernel creation, as _input_shape."""
    cdef OrtTypeInfo* ti = NULL
    cdef const OrtTensorTypeAndShapeInfo* info = NULL
    if not _ok(api, api.KernelInfo_GetInputTypeInfo(kinfo, i, &ti)) or ti == NULL:
        return None, None  # absent (an optional input the node leaves out)
    try:
        if not _ok(api, api.CastTypeInfoToTensorInfo(ti, &info)) or info == NULL:
            return None, None
        return _type_and_dims(api, info)
    finally:
        api.ReleaseTypeInfo(ti)


cdef object _type_and_dims(const OrtApi* api, const OrtTensorTypeAndShapeInfo* info):
    cdef ONNXTensorElementDataType t
    cdef size_t n = 0, j
    cdef int64_t dims[OC_MAX_RANK]
    cdef const char* names[OC_MAX_RANK]
    if not _ok(api, api.GetTensorElementType(info, &t)) or not _ok(api, api.GetDimensionsCount(info, &n)):
        return None, None
    # ORT reports an input of unknown shape as rank 0: a rank-0 input is taken as unknown, so that
    # no wrong shape is ever declared (a missing shape is harmless, a wrong one is not).
    if n == 0 or n > OC_MAX_RANK:
        return <int>t, None
    if not _ok(api, api.GetDimensions(info, dims, n)) or not _ok(api, api.GetSymbolicDimensions(info, names, n)):
        return <int>t, None
    out = []
    for j in range(n):
        if dims[j] >= 0:
            out.append(dims[j])
        elif names[j] != NULL and names[j][0] != 0:
            out.append(names[j].decode())
        else:
            out.append(None)
    return <int>t, tuple(out)


cdef object _read_attr(const OrtApi* api, const OrtOpAttr* a, str kind):
    """An attribute of the node, read as its declared kind (None: it is of another kind)."""
    cdef int64_t i
    cdef float f
    cdef size_t n = 0
    if kind == "int":
        return i if _ok(api, api.ReadOpAttr(a, ORT_OP_ATTR_INT, &i, sizeof(i), &n)) else None
    if kind == "float":
        return f if _ok(api, api.ReadOpAttr(a, ORT_OP_ATTR_FLOAT, &f, sizeof(f), &n)) else None
    code = {"string": ORT_OP_ATTR_STRING, "ints": ORT_OP_ATTR_INTS, "floats": ORT_OP_ATTR_FLOATS}[kind]
    _ok(api, api.ReadOpAttr(a, code, NULL, 0, &n))  # the size; fails by design
    buf = bytearray(max(n, 1))
    cdef char* p = buf
    if not _ok(api, api.ReadOpAttr(a, code, p, n, &n)):
        return None
    if kind == "string":
        raw = bytes(buf[:n])
        if raw.endswith(b"\0") and _counts_the_nul():  # ORT 1.17's ReadOpAttr counts the terminator
            raw = raw[:-1]
        return raw.decode("utf-8", "replace")
    return tuple(array.array("q" if kind == "ints" else "f", bytes(buf[:n])))


_NUL_COUNTED = None


def _counts_the_nul() -> bool:
    """Whether this ORT's ReadOpAttr includes a string's terminating NUL in its size (1.17 does,
    1.31 does not; the version it changed in is unknown here, so every release before 1.24 is taken
    to)."""
    global _NUL_COUNTED
    if _NUL_COUNTED is None:
        import onnxruntime
        _NUL_COUNTED = tuple(int(x) for x in onnxruntime.__version__.split(".")[:2]) < (1, 24)
    return _NUL_COUNTED


cdef dict _shape_attrs(const OrtApi* api, OrtShapeInferContext* ctx, op):
    """The node's attributes for a shape rule, with the declared defaults (None: required, absent)."""
    from .registry import normalize
    cdef const OrtOpAttr* a = NULL
    out = {}
    for decl in op.attrs:
        value = None if decl.required else decl.default
        if _ok(api, api.ShapeInferContext_GetAttribute(ctx, decl.name.encode(), &a)) and a != NULL:
            got = _read_attr(api, a, decl.kind)
            if got is not None:
                value = got
        out[decl.name] = normalize(decl, value) if value is not None else None
    return out


cdef void infer_shapes_hook(const oc_op_def* d, const OrtApi* api, OrtShapeInferContext* ctx) noexcept with gil:
    # ORT ignores (and leaks) a status from shape inference: when the declaration cannot say, an
    # output's shape is left unknown; a rule that fails fails kernel creation (rule_shapes_hook).
    try:
        _infer(d, api, ctx)
    except BaseException:
        pass


cdef int rule_shapes_hook(const oc_op_def* d, const OrtApi* api, const OrtKernelInfo* info, const oc_attr* attrs,
                          int64_t* expect, char** message) noexcept with gil:
    """The rules again at kernel creation, on the node's input shapes as the graph has them: an
    error naming the op, node and rule where one fails; else per output what the kernel must give
    at each run (the known dims), which shape inference told ORT (it may plan and fold on it)."""
    from .inference import ShapeRuleError, infer_outputs
    cdef size_t n_in = 0, i
    op = (<OpDef>d.host_data).op
    try:
        if not _ok(api, api.KernelInfo_GetInputCount(info, &n_in)):
            return OC_OK
        ins = [_kernel_input_shape(api, info, i) for i in range(n_in)]
        fill_expect(expect, op, infer_outputs(op, [t for t, _ in ins], [s for _, s in ins],
                                              lambda: attrs_to_dict(op, attrs)))
        return OC_OK
    except ShapeRuleError as e:  # the glue names op and node
        return _message(message, e.detail, OC_FAIL)
    except NotText as e:  # a string attribute's bytes, where the op asks for text
        return _message(message, str(e), OC_INVALID_ARGUMENT)
    except BaseException as e:
        return _message(message, f"the shape rules could not be run: {exception_text(e)}", OC_FAIL)


cdef int _infer(const oc_op_def* d, const OrtApi* api, OrtShapeInferContext* ctx) except -1:
    from .inference import infer_outputs
    cdef size_t n_in = 0, i, j
    cdef OrtTensorTypeAndShapeInfo* info
    cdef int64_t dims[OC_MAX_RANK]
    cdef const char* names[OC_MAX_RANK]
    op = (<OpDef>d.host_data).op
    if not _ok(api, api.ShapeInferContext_GetInputCount(ctx, &n_in)):
        return 0
    ins = [_input_shape(api, ctx, i) for i in range(n_in)]
    outs = infer_outputs(op, [t for t, _ in ins], [s for _, s in ins], lambda: _shape_attrs(api, ctx, op))
    for i, (elem, shape) in enumerate(outs):
        if op.outputs[i].variadic or elem is None or shape is None or len(shape) > OC_MAX_RANK:
            continue  # the type alone is set by ORT from the matching binding
        keep = []
        for j, dim in enumerate(shape):
            if isinstance(dim, int):
                dims[j] = dim
                names[j] = b""
            else:  # a symbol; an unknown dim gets a name of its own (ORT takes equal names as equal sizes)
                s = (dim if dim is not None else f"ortcustom_py_unk_{next(_unknown_dims)}").encode()
                keep.append(s)
                dims[j] = -1
                names[j] = s
        info = NULL
        if not _ok(api, api.CreateTensorTypeAndShapeInfo(&info)):
            return 0
        if (_ok(api, api.SetTensorElementType(info, <ONNXTensorElementDataType><int>elem)) and
                _ok(api, api.SetDimensions(info, dims, len(shape))) and
                _ok(api, api.SetSymbolicDimensions(info, names, len(shape)))):
            _ok(api, api.ShapeInferContext_SetOutputTypeShape(ctx, i, info))
        api.ReleaseTensorTypeAndShapeInfo(info)
    return 0


cdef int fill_expect(int64_t* expect, op, outs) except -1:
    """What the kernel must give (the glue checks it: Run::expect_) for each output with a shape
    rule, from infer_outputs' `outs`: per declared output its rank, then its dims, -1 for what the
    rule leaves open (expect holds n_outputs * (OC_MAX_RANK + 1) values, -1 already)."""
    from .inference import ShapeRuleError
    cdef int32_t j
    for i, (_, shape) in enumerate(outs):
        if not callable(op.outputs[i].shape) or op.outputs[i].variadic or shape is None:
            continue
        if len(shape) > OC_MAX_RANK:
            raise ShapeRuleError(op, f"the shape rule of output {op.outputs[i].name} says rank {len(shape)}; "
                                     f"outputs have rank 0 to {OC_MAX_RANK}")
        expect[i * (OC_MAX_RANK + 1)] = len(shape)
        for j, dim in enumerate(shape):
            expect[i * (OC_MAX_RANK + 1) + 1 + j] = dim if isinstance(dim, int) else -1
    return 0
