# Attributes, read once per kernel (at session creation): declared kind, default, check.

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


cdef void fill_native_attrs(Kernel* k, op, dict attrs):
    """int and float attributes into the kernel's slots, each kind in declaration order."""
    cdef int ni = 0, nf = 0
    for a in op.attrs:
        if a.kind == "int":
            k.ints[ni] = attrs[a.name]
            ni += 1
        elif a.kind == "float":
            k.floats[nf] = attrs[a.name]
            nf += 1
