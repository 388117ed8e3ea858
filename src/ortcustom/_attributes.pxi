# Attribute values between Python and oc_attr: declared defaults and direct calls' values into
# oc_attr (the glue reads a node's attributes itself), oc_attr into Python for Python kernels and
# the declarations' checks.
from cpython.ref cimport PyObject
from libc.stdint cimport int64_t
from libc.stdlib cimport malloc
from libc.string cimport memcpy, memset

import array

from .registry import NotText, text_of
from .types import ATTR_KINDS as _ATTR_KINDS

_KIND_CODES = {k.name: k.code for k in _ATTR_KINDS.values()}  # = kernel.h's (tests/test_type_tables.py)


cdef int fill_attr(oc_attr* a, const char* name, int32_t kind, value, list keep) except -1:
    """`value` (normalized: int, float, str or a tuple) into `a`; its storage appended to keep."""
    memset(a, 0, sizeof(oc_attr))
    a.name = name
    a.kind = kind
    a.count = 1
    if kind == OC_ATTR_INT:
        a.i = value
    elif kind == OC_ATTR_FLOAT:
        a.f = value
    elif kind == OC_ATTR_STRING:  # bytes (Attr(bytes=True)) exactly; text as UTF-8
        b = value if isinstance(value, bytes) else value.encode("utf-8")
        keep.append(b)
        a.s = b
        a.count = len(b)
    elif kind == OC_ATTR_TENSOR:  # a C-contiguous array (registry._tensor); its oc_tensor kept alive
        fill_tensor_attr(a, getattr(value, "array", value), keep)
    elif kind == OC_ATTR_STRINGS:  # each element's bytes exactly (kept alive in `keep`)
        elems = [v if isinstance(v, bytes) else v.encode("utf-8") for v in value]
        keep.append(elems)
        ptrs = array.array("Q", [<size_t><const char*>b for b in elems])
        lens = array.array("q", [len(b) for b in elems])
        keep.append(ptrs)
        keep.append(lens)
        a.count = len(elems)
        a.strings = <const char* const*><size_t>ptrs.buffer_info()[0]
        a.lengths = <const int64_t*><size_t>lens.buffer_info()[0]
    else:
        buf = array.array("q" if kind == OC_ATTR_INTS else "f", value)
        keep.append(buf)
        a.count = len(buf)
        if kind == OC_ATTR_INTS:
            a.ints = <const int64_t*><size_t>buf.buffer_info()[0]
        else:
            a.floats = <const float*><size_t>buf.buffer_info()[0]
    return 0


cdef int fill_tensor_attr(oc_attr* a, arr, list keep) except -1:
    from .strings import pack
    from .types import name_of_dtype, onnx_enum
    cdef oc_tensor* t
    cdef int64_t* dims
    cdef int32_t j
    block = array.array("b", bytes(sizeof(oc_tensor) + sizeof(int64_t) * max(arr.ndim, 1)))
    keep.append(block)
    t = <oc_tensor*><size_t>block.buffer_info()[0]
    dims = <int64_t*>(<char*>t + sizeof(oc_tensor))
    for j in range(arr.ndim):
        dims[j] = arr.shape[j]
    t.shape = dims
    t.rank = arr.ndim
    t.size = arr.size
    t.dtype = onnx_enum(name_of_dtype(arr.dtype))
    t.device = OC_CPU
    t.present = 1
    if t.dtype == OC_STRING:
        packed = pack(arr)
        keep.append(packed)
        t.data = <const void*><size_t>(packed[1].ctypes.data if arr.size else 0)
    else:
        keep.append(arr)
        t.data = <const void*><size_t>(arr.ctypes.data if arr.size else 0)
    a.tensor = t
    a.count = arr.size
    return 0


cdef object tensor_value(const oc_tensor* t):
    """A tensor attribute as a new NumPy array (text: an object array of str)."""
    cdef int32_t j
    if t.dtype == OC_STRING:
        arr = _text_array(t)
        arr.flags.writeable = True
        return arr
    shape = tuple([t.shape[j] for j in range(t.rank)])
    dtype = np.dtype(cnp.PyArray_DescrFromType(typenum_of(t.dtype)))
    if t.size == 0:
        return np.empty(shape, dtype)
    return np.frombuffer((<const char*>t.data)[:t.size * dtype.itemsize], dtype).reshape(shape).copy()


cdef object attr_value(const oc_attr* a, bint raw):
    """A's value as Python; a string's `count` bytes exactly (embedded NULs kept): bytes when `raw`
    (Attr(bytes=True)), else text (registry.NotText when they are not UTF-8)."""
    if a.kind == OC_ATTR_INT:
        return a.i
    if a.kind == OC_ATTR_FLOAT:
        return a.f
    if a.kind == OC_ATTR_STRING:
        b = a.s[:a.count] if a.s != NULL else b""
        return b if raw else text_of(b)
    if a.kind == OC_ATTR_STRINGS:
        elems = [a.strings[j][:a.lengths[j]] for j in range(a.count)]
        return tuple(elems) if raw else tuple([text_of(b) for b in elems])
    if a.kind == OC_ATTR_INTS:
        return tuple([a.ints[j] for j in range(a.count)])
    if a.kind == OC_ATTR_TENSOR:
        return tensor_value(a.tensor)
    return tuple([a.floats[j] for j in range(a.count)])


cdef dict attrs_to_dict(op, const oc_attr* attrs):
    """The node's attributes (declaration order) as {name: value}."""
    out = {}
    for j, a in enumerate(op.attrs):
        try:
            out[a.name] = attr_value(&attrs[j], a.bytes)
        except NotText as e:
            raise NotText(f"attribute {a.name}: the node's {e}") from None
    return out


cdef int check_attrs_hook(const oc_op_def* d, const oc_attr* attrs, char** message) noexcept with gil:
    """The declaration's Attr.check on the node's attributes (at kernel creation)."""
    from .registry import invalid
    op = (<OpDef>d.host_data).op
    try:
        try:
            values = attrs_to_dict(op, attrs)
        except NotText as e:
            return _message(message, str(e), OC_INVALID_ARGUMENT)
        for a in op.attrs:
            if a.check is not None:  # bounds and choices: the glue checked them already
                try:
                    a.check(values[a.name])
                except (ValueError, TypeError) as e:
                    return _message(message, invalid(a, values[a.name], message_text(e)), OC_INVALID_ARGUMENT)
        return OC_OK
    except BaseException as e:  # (a message that cannot be made included)
        return _message(message, f"checking the attributes failed: {exception_text(e)}", OC_FAIL)


cdef int _message(char** out, str text, int code) noexcept:
    """A malloc'ed copy of text for the glue (which frees it); returns code."""
    b = text.encode("utf-8", "replace")
    out[0] = <char*>malloc(len(b) + 1)
    if out[0] != NULL:
        memcpy(out[0], <const char*>b, len(b) + 1)
    return code
