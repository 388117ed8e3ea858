# The glue module's shared declarations: its structs and the cdef functions its parts (the
# _*.pxi files included by _customop.pyx) call across files. Declared here, each part can be
# included in any order and names its own cimports.
from libc.stdint cimport int32_t, int64_t
from cpython.ref cimport PyObject

from ortcustom._ort cimport *
from ortcustom._kernel cimport oc_kernel, oc_attr, oc_context, oc_tensor

cdef enum:
    MAX_RANK = 16           # dims a native kernel's input may have
    STACK_INPUTS = 16       # inputs read into stack arrays; more are malloc'ed
    MSG_BYTES = 1024        # an error message from a kernel, at most

# A native op's (or Python op's) per-run entry point.
ctypedef OrtStatus* (*compute_fn)(const Kernel* k, OrtKernelContext* ctx) noexcept nogil

cdef struct Binding:
    OrtCustomOp op                       # first member: ORT gives callbacks &op
    const char* name
    const char* provider                 # NULL: the CPU provider
    size_t n_in
    size_t n_out
    ONNXTensorElementDataType* in_types
    ONNXTensorElementDataType* out_types
    OrtCustomOpInputOutputCharacteristic* in_chars
    OrtCustomOpInputOutputCharacteristic* out_chars
    OrtMemType* in_mem
    int in_min_arity, in_homogeneous, out_min_arity, out_homogeneous
    int since, until
    bint guard                           # catch-all for unaccepted types: kernel creation fails
    const oc_kernel* native              # NULL for Python kernels
    PyObject* owner                      # the _Binding (kept alive by _interned)

cdef struct Kernel:
    const Binding* b
    const OrtApi* api
    char* node                           # the node's name, for messages
    oc_attr* attrs                       # native kernels: in the kernel's order (one block)
    int32_t n_attrs
    void* state                          # native kernels: what oc_kernel.create stored
    PyObject* py                         # Python kernels: (op, attrs, out dtypes, plan), owned

cdef struct Tensor:
    void* data                 # NULL when absent (an optional input not given) or empty
    int64_t shape[MAX_RANK]
    size_t rank
    int64_t size               # number of elements
    ONNXTensorElementDataType type
    bint present

# The API table of the runtime that called RegisterCustomOps (shape inference gets none), and
# the same runtime's table for the optional API-18 entries (NULL on ORT 1.17).
cdef const OrtApi* g_api
cdef const OrtApi* g_api_optional

# _status.pxi
cdef OrtStatus* status(const OrtApi* api, OrtErrorCode code, str msg)
cdef void release(const OrtApi* api, OrtStatus* st) noexcept nogil
cdef bint ok(const OrtApi* api, OrtStatus* st) noexcept nogil
cdef OrtStatus* op_error(const Kernel* k, const char* msg) noexcept nogil
cdef OrtStatus* kernel_error(const Kernel* k, OrtErrorCode code, const char* msg) noexcept nogil

# _tensor.pxi
cdef OrtStatus* get_input(const Kernel* k, OrtKernelContext* ctx, size_t i, Tensor* t) noexcept nogil
cdef OrtStatus* get_output(const Kernel* k, OrtKernelContext* ctx, size_t i, const int64_t* shape,
                           size_t rank, void** data) noexcept nogil

# _attributes.pxi
cdef dict read_attributes(const OrtApi* api, const OrtKernelInfo* info, op)
cdef oc_attr* make_attrs(const oc_kernel* kd, dict values, int32_t* n) except NULL

# _native.pxi (the session's trampoline) and _direct.pxi (calls from Python)
cdef OrtStatus* native_compute(const Kernel* k, OrtKernelContext* ctx) noexcept nogil
cdef OrtStatus* native_create(const Kernel* k, Kernel* out)

# _python_ops.pxi
cdef OrtStatus* python_compute(const Kernel* k, OrtKernelContext* ctx) noexcept nogil
cdef object python_state(op, dict attrs, dict types)

# _shapes.pxi
cdef void infer_shapes(op, OrtShapeInferContext* ctx) except *
