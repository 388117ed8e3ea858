# Cython view of src/ortcustom/glue/ort_abi.h (our own ONNX Runtime ABI declarations).
#
# Only what the glue code uses is declared here; the C compiler sees the full
# structs from the header, so the layout comes from there, not from this file.
# Every function pointer is `noexcept nogil`: ORT's entry points may be called
# without the GIL, and our `noexcept nogil` callbacks can be stored in OrtCustomOp.

from libc.stdint cimport int64_t, uint32_t

cdef extern from "ort_abi.h" nogil:

    # -- constants
    enum:
        ORTCUSTOM_ORT_API_VERSION         # the API our required entries need (17)
        ORTCUSTOM_ORT_API_OPTIONAL        # the API of the optional entries (18)
        ORTCUSTOM_CUSTOM_OP_MAX_VERSION   # highest OrtCustomOp.version we may set (18)

    # -- opaque handles
    ctypedef struct OrtStatus:
        pass
    ctypedef struct OrtSessionOptions:
        pass
    ctypedef struct OrtCustomOpDomain:
        pass
    ctypedef struct OrtKernelInfo:
        pass
    ctypedef struct OrtKernelContext:
        pass
    ctypedef struct OrtValue:
        pass
    ctypedef struct OrtTypeInfo:
        pass
    ctypedef struct OrtTensorTypeAndShapeInfo:
        pass
    ctypedef struct OrtMemoryInfo:
        pass
    ctypedef struct OrtShapeInferContext:
        pass
    ctypedef struct OrtOpAttr:
        pass
    ctypedef struct OrtLogger:
        pass

    ctypedef OrtStatus* OrtStatusPtr

    # -- enums
    ctypedef enum ONNXTensorElementDataType:
        ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED
        ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT
        ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8
        ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8
        ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16
        ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16
        ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32
        ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64
        ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING
        ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL
        ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16
        ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE
        ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32
        ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64
        ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX64
        ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX128
        ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16
        ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FN
        ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FNUZ
        ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2
        ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2FNUZ
        ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT4
        ONNX_TENSOR_ELEMENT_DATA_TYPE_INT4
        ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT4E2M1
        ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT2
        ONNX_TENSOR_ELEMENT_DATA_TYPE_INT2
        ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E8M0


    ctypedef enum OrtErrorCode:
        ORT_OK
        ORT_FAIL
        ORT_INVALID_ARGUMENT
        ORT_NO_SUCHFILE
        ORT_NO_MODEL
        ORT_ENGINE_ERROR
        ORT_RUNTIME_EXCEPTION
        ORT_INVALID_PROTOBUF
        ORT_MODEL_LOADED
        ORT_NOT_IMPLEMENTED
        ORT_INVALID_GRAPH
        ORT_EP_FAIL
        ORT_MODEL_LOAD_CANCELED
        ORT_MODEL_REQUIRES_COMPILATION
        ORT_NOT_FOUND
        ORT_DEVICE_RESET

    ctypedef enum OrtLoggingLevel:
        ORT_LOGGING_LEVEL_VERBOSE
        ORT_LOGGING_LEVEL_INFO
        ORT_LOGGING_LEVEL_WARNING
        ORT_LOGGING_LEVEL_ERROR
        ORT_LOGGING_LEVEL_FATAL

    ctypedef enum OrtMemType:
        OrtMemTypeCPUInput
        OrtMemTypeCPUOutput
        OrtMemTypeCPU
        OrtMemTypeDefault

    ctypedef enum OrtAllocatorType:
        OrtInvalidAllocator
        OrtDeviceAllocator
        OrtArenaAllocator
        OrtReadOnlyAllocator

    ctypedef enum OrtOpAttrType:
        ORT_OP_ATTR_UNDEFINED
        ORT_OP_ATTR_INT
        ORT_OP_ATTR_INTS
        ORT_OP_ATTR_FLOAT
        ORT_OP_ATTR_FLOATS
        ORT_OP_ATTR_STRING
        ORT_OP_ATTR_STRINGS
        ORT_OP_ATTR_GRAPH
        ORT_OP_ATTR_TENSOR

    ctypedef enum OrtCustomOpInputOutputCharacteristic:
        INPUT_OUTPUT_REQUIRED
        INPUT_OUTPUT_OPTIONAL
        INPUT_OUTPUT_VARIADIC

    # -- allocator handed out by ORT (leading members only)
    ctypedef struct OrtAllocator:
        uint32_t version
        void* (*Alloc)(OrtAllocator* self, size_t size) noexcept nogil
        void (*Free)(OrtAllocator* self, void* p) noexcept nogil
        const OrtMemoryInfo* (*Info)(const OrtAllocator* self) noexcept nogil

    # -- OrtApi: the entries we call (placeholders are left out)
    ctypedef struct OrtApi:
        # status
        OrtStatus* (*CreateStatus)(OrtErrorCode code, const char* msg) noexcept nogil
        const char* (*GetErrorMessage)(const OrtStatus* status) noexcept nogil
        void (*ReleaseStatus)(OrtStatus* status) noexcept nogil
        # registration
        OrtStatusPtr (*CreateCustomOpDomain)(const char* domain, OrtCustomOpDomain** out) noexcept nogil
        OrtStatusPtr (*CustomOpDomain_Add)(OrtCustomOpDomain* domain, const OrtCustomOp* op) noexcept nogil
        OrtStatusPtr (*AddCustomOpDomain)(OrtSessionOptions* options, OrtCustomOpDomain* domain) noexcept nogil
        void (*ReleaseCustomOpDomain)(OrtCustomOpDomain* domain) noexcept nogil
        # kernel info: attributes
        OrtStatusPtr (*KernelInfoGetAttribute_float)(const OrtKernelInfo* info, const char* name, float* out) noexcept nogil
        OrtStatusPtr (*KernelInfoGetAttribute_int64)(const OrtKernelInfo* info, const char* name, int64_t* out) noexcept nogil
        OrtStatusPtr (*KernelInfoGetAttribute_string)(const OrtKernelInfo* info, const char* name, char* out, size_t* size) noexcept nogil
        OrtStatusPtr (*KernelInfoGetAttributeArray_float)(const OrtKernelInfo* info, const char* name, float* out, size_t* size) noexcept nogil
        OrtStatusPtr (*KernelInfoGetAttributeArray_int64)(const OrtKernelInfo* info, const char* name, int64_t* out, size_t* size) noexcept nogil
        # kernel info: node
        OrtStatusPtr (*KernelInfo_GetInputCount)(const OrtKernelInfo* info, size_t* out) noexcept nogil
        OrtStatusPtr (*KernelInfo_GetInputTypeInfo)(const OrtKernelInfo* info, size_t index, OrtTypeInfo** out) noexcept nogil
        OrtStatusPtr (*KernelInfo_GetNodeName)(const OrtKernelInfo* info, char* out, size_t* size) noexcept nogil
        # kernel context
        OrtStatusPtr (*KernelContext_GetInputCount)(const OrtKernelContext* ctx, size_t* out) noexcept nogil
        OrtStatusPtr (*KernelContext_GetOutputCount)(const OrtKernelContext* ctx, size_t* out) noexcept nogil
        OrtStatusPtr (*KernelContext_GetInput)(const OrtKernelContext* ctx, size_t index, const OrtValue** out) noexcept nogil
        OrtStatusPtr (*KernelContext_GetOutput)(OrtKernelContext* ctx, size_t index, const int64_t* dims, size_t count, OrtValue** out) noexcept nogil
        OrtStatusPtr (*KernelContext_GetGPUComputeStream)(const OrtKernelContext* ctx, void** out) noexcept nogil
        OrtStatusPtr (*KernelContext_ParallelFor)(const OrtKernelContext* ctx, void (*fn)(void* data, size_t i) noexcept nogil, size_t total, size_t num_batch, void* data) noexcept nogil
        OrtStatusPtr (*KernelContext_GetAllocator)(const OrtKernelContext* ctx, const OrtMemoryInfo* mem_info, OrtAllocator** out) noexcept nogil
        OrtStatusPtr (*KernelContext_GetScratchBuffer)(const OrtKernelContext* ctx, const OrtMemoryInfo* mem_info, size_t bytes, void** out) noexcept nogil  # API 18
        # allocators
        OrtStatusPtr (*AllocatorFree)(OrtAllocator* allocator, void* p) noexcept nogil
        void (*ReleaseAllocator)(OrtAllocator* allocator) noexcept nogil
        # values and tensors
        OrtStatusPtr (*GetTensorTypeAndShape)(const OrtValue* value, OrtTensorTypeAndShapeInfo** out) noexcept nogil
        OrtStatusPtr (*GetTensorMutableData)(OrtValue* value, void** out) noexcept nogil
        OrtStatusPtr (*GetTensorMemoryInfo)(const OrtValue* value, const OrtMemoryInfo** out) noexcept nogil
        # type and shape info
        OrtStatusPtr (*GetTensorElementType)(const OrtTensorTypeAndShapeInfo* info, ONNXTensorElementDataType* out) noexcept nogil
        OrtStatusPtr (*GetDimensionsCount)(const OrtTensorTypeAndShapeInfo* info, size_t* out) noexcept nogil
        OrtStatusPtr (*GetDimensions)(const OrtTensorTypeAndShapeInfo* info, int64_t* dims, size_t count) noexcept nogil
        OrtStatusPtr (*GetSymbolicDimensions)(const OrtTensorTypeAndShapeInfo* info, const char** names, size_t count) noexcept nogil
        OrtStatusPtr (*GetTensorShapeElementCount)(const OrtTensorTypeAndShapeInfo* info, size_t* out) noexcept nogil
        void (*ReleaseTensorTypeAndShapeInfo)(OrtTensorTypeAndShapeInfo* info) noexcept nogil
        OrtStatusPtr (*CreateTensorTypeAndShapeInfo)(OrtTensorTypeAndShapeInfo** out) noexcept nogil
        OrtStatusPtr (*SetTensorElementType)(OrtTensorTypeAndShapeInfo* info, ONNXTensorElementDataType type) noexcept nogil
        OrtStatusPtr (*SetDimensions)(OrtTensorTypeAndShapeInfo* info, const int64_t* dims, size_t count) noexcept nogil
        OrtStatusPtr (*SetSymbolicDimensions)(OrtTensorTypeAndShapeInfo* info, const char** names, size_t count) noexcept nogil
        # memory info
        OrtStatusPtr (*MemoryInfoGetId)(const OrtMemoryInfo* info, int* out) noexcept nogil
        # type info
        OrtStatusPtr (*CastTypeInfoToTensorInfo)(const OrtTypeInfo* type_info, const OrtTensorTypeAndShapeInfo** out) noexcept nogil
        void (*ReleaseTypeInfo)(OrtTypeInfo* type_info) noexcept nogil
        # shape inference (1.17)
        OrtStatusPtr (*ShapeInferContext_GetInputCount)(const OrtShapeInferContext* ctx, size_t* out) noexcept nogil
        OrtStatusPtr (*ShapeInferContext_GetInputTypeShape)(const OrtShapeInferContext* ctx, size_t index, OrtTensorTypeAndShapeInfo** out) noexcept nogil
        OrtStatusPtr (*ShapeInferContext_GetAttribute)(const OrtShapeInferContext* ctx, const char* name, const OrtOpAttr** out) noexcept nogil
        OrtStatusPtr (*ShapeInferContext_SetOutputTypeShape)(const OrtShapeInferContext* ctx, size_t index, const OrtTensorTypeAndShapeInfo* info) noexcept nogil
        OrtStatusPtr (*ReadOpAttr)(const OrtOpAttr* attr, OrtOpAttrType type, void* data, size_t len, size_t* out) noexcept nogil

    ctypedef struct OrtApiBase:
        const OrtApi* (*GetApi)(uint32_t version) noexcept nogil
        const char* (*GetVersionString)() noexcept nogil

    # -- OrtCustomOp: all members (see the header for the op version each needs)
    ctypedef struct OrtCustomOp:
        uint32_t version
        void* (*CreateKernel)(const OrtCustomOp* op, const OrtApi* api, const OrtKernelInfo* info) noexcept nogil
        const char* (*GetName)(const OrtCustomOp* op) noexcept nogil
        const char* (*GetExecutionProviderType)(const OrtCustomOp* op) noexcept nogil
        ONNXTensorElementDataType (*GetInputType)(const OrtCustomOp* op, size_t index) noexcept nogil
        size_t (*GetInputTypeCount)(const OrtCustomOp* op) noexcept nogil
        ONNXTensorElementDataType (*GetOutputType)(const OrtCustomOp* op, size_t index) noexcept nogil
        size_t (*GetOutputTypeCount)(const OrtCustomOp* op) noexcept nogil
        void (*KernelCompute)(void* kernel, OrtKernelContext* ctx) noexcept nogil
        void (*KernelDestroy)(void* kernel) noexcept nogil
        OrtCustomOpInputOutputCharacteristic (*GetInputCharacteristic)(const OrtCustomOp* op, size_t index) noexcept nogil
        OrtCustomOpInputOutputCharacteristic (*GetOutputCharacteristic)(const OrtCustomOp* op, size_t index) noexcept nogil
        OrtMemType (*GetInputMemoryType)(const OrtCustomOp* op, size_t index) noexcept nogil
        int (*GetVariadicInputMinArity)(const OrtCustomOp* op) noexcept nogil
        int (*GetVariadicInputHomogeneity)(const OrtCustomOp* op) noexcept nogil
        int (*GetVariadicOutputMinArity)(const OrtCustomOp* op) noexcept nogil
        int (*GetVariadicOutputHomogeneity)(const OrtCustomOp* op) noexcept nogil
        OrtStatusPtr (*CreateKernelV2)(const OrtCustomOp* op, const OrtApi* api, const OrtKernelInfo* info, void** kernel) noexcept nogil
        OrtStatusPtr (*KernelComputeV2)(void* kernel, OrtKernelContext* ctx) noexcept nogil
        OrtStatusPtr (*InferOutputShapeFn)(const OrtCustomOp* op, OrtShapeInferContext* ctx) noexcept nogil
        int (*GetStartVersion)(const OrtCustomOp* op) noexcept nogil
        int (*GetEndVersion)(const OrtCustomOp* op) noexcept nogil
        size_t (*GetMayInplace)(int** input_index, int** output_index) noexcept nogil
        void (*ReleaseMayInplace)(int* input_index, int* output_index) noexcept nogil
        size_t (*GetAliasMap)(int** input_index, int** output_index) noexcept nogil
        void (*ReleaseAliasMap)(int* input_index, int* output_index) noexcept nogil

