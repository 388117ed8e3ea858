# Cython view of ortcustom/kernel.h and ortcustom/op_def.h (the kernel ABI and op declarations as
# C data), and of the glue's front-end API (glue/glue.h).
from libc.stdint cimport int32_t, int64_t, uint32_t

from ortcustom._ort cimport OrtApi, OrtApiBase, OrtStatus, OrtSessionOptions, OrtShapeInferContext, OrtKernelInfo

cdef extern from "ortcustom/kernel.h" nogil:
    enum:
        OC_ABI_VERSION
        OC_MAX_RANK
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
        OC_ATTR_STRINGS
        OC_ATTR_TENSOR
        OC_STRING

    ctypedef struct oc_string:
        const char* data
        int64_t size

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
        const char* const* strings
        const int64_t* lengths
        const oc_tensor* tensor

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
        int (*set_string)(oc_context* ctx, int32_t i, int64_t index, const char* bytes, int64_t size) noexcept nogil
        int (*config)(oc_context* ctx, const char* key, const char** value) noexcept nogil

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
        const int32_t* dtypes
        const void* host_data

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
        const int32_t* signatures
        int32_t n_signatures
        const int32_t* inplace
        oc_create_fn create
        oc_destroy_fn destroy
        oc_compute_fn compute

    int oc_output(oc_context* ctx, int32_t i, const int64_t* shape, int32_t rank, void** data)
    int oc_fail(oc_context* ctx, int code, const char* message)
    int oc_set_string(oc_context* ctx, int32_t i, int64_t index, const char* bytes, int64_t size)


cdef extern from "ortcustom/op_def.h" nogil:
    enum:
        OC_IO_REQUIRED
        OC_IO_OPTIONAL
        OC_IO_VARIADIC

    ctypedef struct oc_io_def:
        const char* name
        int32_t kind
        int32_t cpu
        int32_t min_arity
        int32_t homogeneous
        int32_t shape_of
        int32_t constrained
        int32_t constant

    ctypedef struct oc_attr_def:
        const char* name
        int32_t kind
        int32_t required
        oc_attr value
        int32_t has_min
        int32_t has_max
        double min
        double max
        int32_t n_choices
        const int64_t* choices
        int64_t int_min
        int64_t int_max

    ctypedef struct oc_op_def:
        const char* name
        int32_t since
        int32_t until
        int32_t n_inputs
        int32_t n_outputs
        int32_t n_attrs
        int32_t n_bindings
        const oc_io_def* inputs
        const oc_io_def* outputs
        const oc_attr_def* attrs
        const int32_t* bindings
        const char* accepted
        const oc_kernel* cpu
        const oc_kernel* cuda
        int32_t host_shapes
        int32_t host_checks
        const void* host_data

    ctypedef struct oc_domain_def:
        const char* name
        int32_t n_ops
        const oc_op_def* const* ops


cdef extern from "glue.h" nogil:
    ctypedef struct oc_glue_hooks:
        void (*infer_shapes)(const oc_op_def* op, const OrtApi* api, OrtShapeInferContext* ctx) noexcept
        int (*check_attrs)(const oc_op_def* op, const oc_attr* attrs, char** message) noexcept
        int (*rule_shapes)(const oc_op_def* op, const OrtApi* api, const OrtKernelInfo* info, const oc_attr* attrs,
                           int64_t* expect, char** message) noexcept
    void oc_glue_set_hooks(const oc_glue_hooks* hooks)
    OrtStatus* oc_glue_register_at(OrtSessionOptions* options, const OrtApiBase* base,
                                   const oc_domain_def* const* domains, const int32_t* opsets, int32_t n_domains)
    int oc_glue_check_domain(const oc_domain_def* domain, int32_t opset, char* message, size_t cap)
    int32_t oc_glue_plan(const oc_op_def* const* family, int32_t n_family, int32_t* rows, int32_t* devices,
                         int32_t* guards, int32_t* which, int32_t cap)
    int oc_glue_check_kernel(const oc_op_def* op, const oc_kernel* kernel, char* message, size_t cap)

    ctypedef struct oc_direct_host:
        void* self
        int (*output)(void* self, int32_t i, const int64_t* shape, int32_t rank, void** data, char** message) noexcept
        int (*scratch)(void* self, size_t bytes, void** data, char** message) noexcept
        int (*strings)(void* self, int32_t i, const oc_string* elements, int64_t n, char** message) noexcept
    ctypedef struct oc_direct_kernel
    oc_direct_kernel* oc_direct_create(const oc_op_def* op, const oc_kernel* kernel, const int32_t* dtypes,
                                       const oc_attr* attrs, int32_t n_attrs, const oc_tensor* consts, int* code,
                                       char** message)
    void oc_direct_destroy(oc_direct_kernel* k)
    int oc_direct_run(const oc_direct_kernel* k, const oc_tensor* inputs, int32_t n_inputs, int32_t device,
                      int32_t device_id, void* stream, int32_t threads, const oc_direct_host* host,
                      const int64_t* expect, char** message)
