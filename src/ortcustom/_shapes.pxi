# Output types and shapes at session creation (InferOutputShapeFn), from the op's declaration.
from libc.stdint cimport int64_t

cdef object _input_shape(const OrtApi* api, OrtShapeInferContext* ctx, size_t i):
    """(element type, dims) of input i; dims None when unknown. The info belongs to the context."""
    cdef OrtTensorTypeAndShapeInfo* info = NULL
    cdef ONNXTensorElementDataType t
    cdef size_t n = 0, j
    cdef int64_t dims[MAX_RANK]
    cdef const char* names[MAX_RANK]
    if not ok(api, api.ShapeInferContext_GetInputTypeShape(ctx, i, &info)) or info == NULL:
        return None, None
    if not ok(api, api.GetTensorElementType(info, &t)) or not ok(api, api.GetDimensionsCount(info, &n)):
        return None, None
    # ORT reports an input of unknown shape as rank 0: a rank-0 input is taken as unknown, so that
    # no wrong shape is ever declared (a missing shape is harmless, a wrong one is not).
    if n == 0 or n > MAX_RANK:
        return <int>t, None
    if not ok(api, api.GetDimensions(info, dims, n)) or not ok(api, api.GetSymbolicDimensions(info, names, n)):
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


cdef dict _shape_attrs(const OrtApi* api, OrtShapeInferContext* ctx, op):
    """The int and float attributes a shape rule may need, with defaults (None: required, absent)."""
    cdef const OrtOpAttr* a = NULL
    cdef size_t n = 0
    cdef int64_t i
    cdef float f
    out = {}
    for decl in op.attrs:
        value = None if decl.required else decl.default
        if ok(api, api.ShapeInferContext_GetAttribute(ctx, decl.name.encode(), &a)) and a != NULL:
            if decl.kind == "int" and ok(api, api.ReadOpAttr(a, ORT_OP_ATTR_INT, &i, sizeof(i), &n)):
                value = i
            elif decl.kind == "float" and ok(api, api.ReadOpAttr(a, ORT_OP_ATTR_FLOAT, &f, sizeof(f), &n)):
                value = f
        out[decl.name] = value
    return out


cdef void infer_shapes(op, OrtShapeInferContext* ctx) except *:
    from .inference import infer_outputs
    cdef const OrtApi* api = g_api
    cdef size_t n_in = 0, i, j
    cdef OrtTensorTypeAndShapeInfo* info
    cdef int64_t dims[MAX_RANK]
    cdef const char* names[MAX_RANK]
    if api == NULL or not ok(api, api.ShapeInferContext_GetInputCount(ctx, &n_in)):
        return
    ins = [_input_shape(api, ctx, i) for i in range(n_in)]
    outs = infer_outputs(op, [t for t, _ in ins], [s for _, s in ins], lambda: _shape_attrs(api, ctx, op))
    for i, (elem, shape) in enumerate(outs):
        if op.outputs[i].variadic or elem is None or shape is None or len(shape) > MAX_RANK:
            continue  # the type alone is set by ORT from the matching binding
        keep = []
        for j, d in enumerate(shape):
            if isinstance(d, int):
                dims[j] = d
                names[j] = b""
            else:  # a symbol; an unknown dim needs a name of its own, or ORT writes it as -1
                s = (d if d is not None else f"{op.name}_{op.outputs[i].name}_{j}").encode()
                keep.append(s)
                dims[j] = -1
                names[j] = s
        info = NULL
        if not ok(api, api.CreateTensorTypeAndShapeInfo(&info)):
            return
        if (ok(api, api.SetTensorElementType(info, <ONNXTensorElementDataType><int>elem)) and
                ok(api, api.SetDimensions(info, dims, len(shape))) and
                ok(api, api.SetSymbolicDimensions(info, names, len(shape)))):
            release(api, api.ShapeInferContext_SetOutputTypeShape(ctx, i, info))
        api.ReleaseTensorTypeAndShapeInfo(info)
