# Attributes, read once per kernel (at session creation): declared kind, default, check; and
# handed to native kernels as one block of oc_attr in the kernel's own order.
from libc.stdint cimport int64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, strlen

from ortcustom._kernel cimport oc_attr_spec, OC_ATTR_INT, OC_ATTR_FLOAT, OC_ATTR_STRING, OC_ATTR_INTS, OC_ATTR_FLOATS

from .registry import coerce_attr

class _AttrError(Exception):
    pass


cdef object _MISSING = object()


cdef object _read_attr(const OrtApi* api, const OrtKernelInfo* info, bytes name, str kind):
    """The attribute read as `kind`, or _MISSING when the node has none of that kind."""
    cdef int64_t i
    cdef float f
    cdef size_t n = 0
    cdef OrtStatus* st
    cdef char* sbuf
    cdef int64_t* ibuf
    cdef float* fbuf
    if kind == "int":
        st = api.KernelInfoGetAttribute_int64(info, name, &i)
        if st != NULL:
            release(api, st)
            return _MISSING
        return i
    if kind == "float":
        st = api.KernelInfoGetAttribute_float(info, name, &f)
        if st != NULL:
            release(api, st)
            return _MISSING
        return f
    if kind == "string":
        st = api.KernelInfoGetAttribute_string(info, name, NULL, &n)
        if st != NULL:
            release(api, st)
            return _MISSING
        sbuf = <char*>malloc(n + 1)
        if sbuf == NULL:
            raise MemoryError()
        try:
            st = api.KernelInfoGetAttribute_string(info, name, sbuf, &n)
            if st != NULL:
                release(api, st)
                return _MISSING
            return sbuf[:n - 1].decode("utf-8", "replace") if n else ""
        finally:
            free(sbuf)
    if kind == "ints":
        st = api.KernelInfoGetAttributeArray_int64(info, name, NULL, &n)
        if st != NULL:
            release(api, st)
            return _MISSING
        ibuf = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        if ibuf == NULL:
            raise MemoryError()
        try:
            st = api.KernelInfoGetAttributeArray_int64(info, name, ibuf, &n)
            if st != NULL:
                release(api, st)
                return _MISSING
            return tuple(ibuf[j] for j in range(n))
        finally:
            free(ibuf)
    if kind == "floats":
        st = api.KernelInfoGetAttributeArray_float(info, name, NULL, &n)
        if st != NULL:
            release(api, st)
            return _MISSING
        fbuf = <float*>malloc((n + 1) * sizeof(float))
        if fbuf == NULL:
            raise MemoryError()
        try:
            st = api.KernelInfoGetAttributeArray_float(info, name, fbuf, &n)
            if st != NULL:
                release(api, st)
                return _MISSING
            return tuple(fbuf[j] for j in range(n))
        finally:
            free(fbuf)
    raise AssertionError(kind)


cdef dict read_attributes(const OrtApi* api, const OrtKernelInfo* info, op):
    """The node's attributes as declared by `op`, with defaults; _AttrError says what is wrong."""
    out = {}
    for a in op.attrs:
        name = a.name.encode()
        value = _read_attr(api, info, name, a.kind)
        if value == () and _read_attr(api, info, name, "floats" if a.kind == "ints" else "ints"):
            value = _MISSING  # ORT reads an array of the other kind as empty, not as an error
        if value is _MISSING:
            for other in ("int", "float", "string", "ints", "floats"):
                got = _read_attr(api, info, name, other) if other != a.kind else _MISSING
                if got is not _MISSING and got != ():  # an empty array read: the other array kind
                    raise _AttrError(f"attribute {a.name!r} must be of type {a.kind}, but the node gives "
                                     f"a{'n' if other[0] == 'i' else ''} {other}")
            if a.required:
                raise _AttrError(f"required attribute {a.name!r} ({a.kind}) is missing")
            value = a.default
        value = coerce_attr(a, value)
        if a.check is not None:
            try:
                a.check(value)
            except (ValueError, TypeError) as e:
                raise _AttrError(f"attribute {a.name}={value!r} is invalid: {e}") from None
        out[a.name] = value
    return out


_KIND_CODES = {"int": OC_ATTR_INT, "float": OC_ATTR_FLOAT, "string": OC_ATTR_STRING, "ints": OC_ATTR_INTS,
               "floats": OC_ATTR_FLOATS}


cdef inline size_t _round8(size_t n) noexcept nogil:
    return (n + 7) & ~(<size_t>7)


cdef oc_attr* make_attrs(const oc_kernel* kd, dict values, int32_t* n_out) except NULL:
    """The attributes a native kernel reads (kd.attrs, checked against the declaration when the
    kernel was attached), from `values` (name -> Python value), in one malloc'ed block: the oc_attr
    array, then the strings and arrays they point to. Freed with free()."""
    cdef int32_t n = 0, j
    cdef size_t extra = 0, off, k
    cdef oc_attr* a
    cdef char* base
    cdef bytes sb
    if kd.attrs != NULL:
        while kd.attrs[n].name != NULL:
            n += 1
    items = []
    for j in range(n):
        v = values[kd.attrs[j].name.decode()]
        if kd.attrs[j].kind == OC_ATTR_STRING:
            v = v.encode("utf-8")
            extra += _round8(len(v) + 1)
        elif kd.attrs[j].kind == OC_ATTR_INTS:
            extra += _round8(len(v) * sizeof(int64_t))
        elif kd.attrs[j].kind == OC_ATTR_FLOATS:
            extra += _round8(len(v) * sizeof(float))
        items.append(v)
    off = _round8(max(n, 1) * sizeof(oc_attr))
    base = <char*>malloc(off + extra)
    if base == NULL:
        raise MemoryError()
    a = <oc_attr*>base
    for j in range(n):
        v = items[j]
        a[j].name = kd.attrs[j].name
        a[j].kind = kd.attrs[j].kind
        a[j].count = 1
        a[j].i = 0
        a[j].f = 0
        a[j].s = NULL
        a[j].ints = NULL
        a[j].floats = NULL
        if a[j].kind == OC_ATTR_INT:
            a[j].i = v
        elif a[j].kind == OC_ATTR_FLOAT:
            a[j].f = v
        elif a[j].kind == OC_ATTR_STRING:
            sb = v
            memcpy(base + off, <const char*>sb, len(sb) + 1)
            a[j].s = base + off
            a[j].count = len(sb)
            off += _round8(len(sb) + 1)
        elif a[j].kind == OC_ATTR_INTS:
            a[j].ints = <const int64_t*>(base + off)
            a[j].count = len(v)
            for k in range(len(v)):
                (<int64_t*>(base + off))[k] = v[k]
            off += _round8(len(v) * sizeof(int64_t))
        else:
            a[j].floats = <const float*>(base + off)
            a[j].count = len(v)
            for k in range(len(v)):
                (<float*>(base + off))[k] = v[k]
            off += _round8(len(v) * sizeof(float))
    n_out[0] = n
    return a
