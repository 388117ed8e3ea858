# OrtStatus in one place: made from Python strings (kernel creation) or C strings (compute).
from libc.stdio cimport snprintf


cdef OrtStatus* status(const OrtApi* api, OrtErrorCode code, str msg):
    b = msg.encode("utf-8", "replace")
    return api.CreateStatus(code, b)


cdef void release(const OrtApi* api, OrtStatus* st) noexcept nogil:
    if st != NULL:
        api.ReleaseStatus(st)


cdef bint ok(const OrtApi* api, OrtStatus* st) noexcept nogil:
    """True for success; a failure's status is released (for calls whose failure we tolerate)."""
    if st == NULL:
        return True
    api.ReleaseStatus(st)
    return False


cdef OrtStatus* kernel_error(const Kernel* k, OrtErrorCode code, const char* msg) noexcept nogil:
    """'<Op> (node '<name>'): <msg>'."""
    cdef char buf[MSG_BYTES + 256]
    snprintf(buf, sizeof(buf), "%s (node '%s'): %s", k.b.name, k.node, msg)
    return k.api.CreateStatus(code, buf)


cdef OrtStatus* op_error(const Kernel* k, const char* msg) noexcept nogil:
    return kernel_error(k, ORT_INVALID_ARGUMENT, msg)
