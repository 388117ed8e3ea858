# The glue module's shared declarations: what its parts (the _*.pxi files included by
# _customop.pyx) call across files, so that each part can be included in any order.
from libc.stdint cimport int32_t, int64_t

from ortcustom._ort cimport *
from ortcustom._kernel cimport *

cdef class OpDef:
    cdef oc_op_def d
    cdef readonly object op            # the ortcustom.Op
    cdef readonly object types         # per binding row: {constraint: element type name}
    cdef oc_kernel pyk                 # Python ops: their kernel (names, signatures, Python's compute)
    cdef object _keep                  # what d's and pyk's pointers point into
    cdef void* _mem                    # one malloc'ed block of the arrays

# _attributes.pxi
cdef dict attrs_to_dict(op, const oc_attr* attrs)
cdef int fill_attr(oc_attr* a, const char* name, int32_t kind, value, list keep) except -1
cdef int check_attrs_hook(const oc_op_def* d, const oc_attr* attrs, char** message) noexcept with gil
cdef int _message(char** out, str text, int code) noexcept

# _python_ops.pxi
cdef oc_kernel python_kernel(int32_t device) noexcept

# _shapes.pxi
cdef void infer_shapes_hook(const oc_op_def* d, const OrtApi* api, OrtShapeInferContext* ctx) noexcept with gil
cdef int fill_expect(int64_t* expect, op, outs) except -1
cdef int rule_shapes_hook(const oc_op_def* d, const OrtApi* api, const OrtKernelInfo* info, const oc_attr* attrs,
                          int64_t* expect, char** message) noexcept with gil
