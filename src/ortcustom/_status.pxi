# OrtStatus in one place: made from Python strings (kernel creation) or C strings (compute).

cdef OrtStatus* status(const OrtApi* api, OrtErrorCode code, str msg):
    b = msg.encode("utf-8", "replace")
    return api.CreateStatus(code, b)


cdef inline void release(const OrtApi* api, OrtStatus* st) noexcept nogil:
    if st != NULL:
        api.ReleaseStatus(st)


cdef OrtStatus* op_error(const Kernel* k, const char* msg) noexcept nogil:
    """An INVALID_ARGUMENT status: '<Op> (node '<name>'): <msg>'."""
    cdef char buf[1024]
    snprintf(buf, sizeof(buf), "%s (node '%s'): %s", k.b.name, k.node, msg)
    return k.api.CreateStatus(ORT_INVALID_ARGUMENT, buf)


cdef inline bint ok(const OrtApi* api, OrtStatus* st) noexcept nogil:
    """True for success; a failure's status is released (for calls whose failure we tolerate)."""
    if st == NULL:
        return True
    api.ReleaseStatus(st)
    return False
