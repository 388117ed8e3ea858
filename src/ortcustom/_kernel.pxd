# Cython view of ortcustom/kernel.h: the C ABI between the glue and native kernels.
from libc.stdint cimport int32_t, int64_t, uint32_t

cdef extern from "ortcustom/kernel.h" nogil:
    enum:
        OC_ABI_VERSION
        OC_OK
        OC_INVALID_ARGUMENT
        OC_FAIL
        OC_OUT_OF_MEMORY
        OC_CPU
        OC_CUDA
        OC_ATTR_INT
        OC_ATTR_FLOAT
        OC_ATTR_STRING
        OC_ATTR_INTS
        OC_ATTR_FLOATS

    ctypedef struct oc_tensor:
        const void* data
        const int64_t* shape
        int64_t size
        int32_t rank
        int32_t dtype
        int32_t device
        int32_t present

    ctypedef struct oc_attr:
        const char* name
        int32_t kind
        int64_t count
        int64_t i
        double f
        const char* s
        const int64_t* ints
        const float* floats

    ctypedef struct oc_attr_spec:
        const char* name
        int32_t kind

    ctypedef void (*oc_task_fn)(void* arg, size_t i) noexcept nogil

    ctypedef struct oc_context

    ctypedef struct oc_host:
        uint32_t abi_version
        int (*output)(oc_context* ctx, int32_t i, const int64_t* shape, int32_t rank, void** data) noexcept nogil
        void (*parallel_for)(oc_context* ctx, size_t n, oc_task_fn fn, void* arg) noexcept nogil
        int (*scratch)(oc_context* ctx, size_t bytes, void** data) noexcept nogil
        int (*fail)(oc_context* ctx, int code, const char* message) noexcept nogil

    ctypedef struct oc_context:
        const oc_host* host
        const oc_tensor* inputs
        int32_t n_inputs
        int32_t n_outputs
        const oc_attr* attrs
        int32_t n_attrs
        int32_t device
        int32_t device_id
        void* stream
        void* state
        const char* op_name

    ctypedef int (*oc_compute_fn)(oc_context* ctx) noexcept nogil
    ctypedef int (*oc_create_fn)(oc_context* ctx, void** state) noexcept nogil
    ctypedef void (*oc_destroy_fn)(void* state) noexcept nogil

    ctypedef struct oc_kernel:
        uint32_t abi_version
        int32_t device
        const char* name
        const char* const* inputs
        const char* const* outputs
        const oc_attr_spec* attrs
        const int32_t* dtypes
        const int32_t* inplace
        oc_create_fn create
        oc_destroy_fn destroy
        oc_compute_fn compute
