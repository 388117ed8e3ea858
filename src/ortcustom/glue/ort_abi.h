/*
 * ort_abi.h -- ortcustom's own declarations of the ONNX Runtime C ABI.
 *
 * ONNX Runtime's Python wheels ship no C headers, so we declare here just the part
 * of the ABI that a custom-op library needs, plus the few session entries that the
 * test host tests/c_host/oc_host.c (plain ORT loading our libraries) calls. Only the binary layout matters: struct
 * member order, function signatures and enum values follow the published ABI;
 * everything else (layout of this file, parameter names, comments) is ours.
 *
 * Plain C; usable from C, C++ and Cython (see ortcustom/_ort.pxd). Linux/macOS
 * only: ORT's callbacks use the default C calling convention there.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The API version every entry we call needs (ORT 1.17): the minimum runtime. */
#define ORTCUSTOM_ORT_API_VERSION 17
/* The OrtApi table below runs through API 18 (ORT 1.18). Its API-18 entries may only be
 * called through a table that GetApi(ORTCUSTOM_ORT_API_OPTIONAL) returned. */
#define ORTCUSTOM_ORT_API_OPTIONAL 18
/* The API of GetTensorElementTypeAndShapeDataReference (ORT 1.24), the per-run input reading that
 * allocates nothing; called only through a table GetApi(ORTCUSTOM_ORT_API_SHAPE_REF) returned. */
#define ORTCUSTOM_ORT_API_SHAPE_REF 24
/* The table also runs on to KernelInfoGetAttributeArray_string (API 25, ORT 1.25), called only
 * through a table that GetApi(ORTCUSTOM_ORT_API_STRINGS) returned: a `strings` attribute needs it. */
#define ORTCUSTOM_ORT_API_STRINGS 25

/* Highest OrtCustomOp::version whose fields are all declared below (the alias-map
 * fields are read from op version 18 on). Never set an op's `version` above this,
 * nor above the API version of the running ORT (ORT rejects such ops). */
#define ORTCUSTOM_CUSTOM_OP_MAX_VERSION 18

/* ---------------------------------------------------------------- handles */
/* Opaque to us: only ever handled through pointers. */
typedef struct OrtStatus OrtStatus;
typedef struct OrtSessionOptions OrtSessionOptions;
typedef struct OrtCustomOpDomain OrtCustomOpDomain;
typedef struct OrtKernelInfo OrtKernelInfo;
typedef struct OrtKernelContext OrtKernelContext;
typedef struct OrtValue OrtValue;
typedef struct OrtTypeInfo OrtTypeInfo;
typedef struct OrtTensorTypeAndShapeInfo OrtTensorTypeAndShapeInfo;
typedef struct OrtMemoryInfo OrtMemoryInfo;
typedef struct OrtShapeInferContext OrtShapeInferContext;
typedef struct OrtOpAttr OrtOpAttr;
typedef struct OrtLogger OrtLogger;
typedef struct OrtEnv OrtEnv;
typedef struct OrtSession OrtSession;
typedef struct OrtRunOptions OrtRunOptions;
typedef struct OrtKeyValuePairs OrtKeyValuePairs;

/* NULL means success; anything else must be released with OrtApi::ReleaseStatus
 * (or handed back to ORT, which then owns it). */
typedef OrtStatus* OrtStatusPtr;

typedef struct OrtApi OrtApi;
typedef struct OrtApiBase OrtApiBase;
typedef struct OrtCustomOp OrtCustomOp;
typedef struct OrtAllocator OrtAllocator;

/* ------------------------------------------------------------------ enums */
/* Enumerator names are the ABI's. Values marked "API n" only appear with ORT 1.n
 * or newer; an older runtime never produces them. */

typedef enum ONNXTensorElementDataType {
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED = 0,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT = 1,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8 = 2,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8 = 3,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16 = 4,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16 = 5,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32 = 6,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64 = 7,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING = 8,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL = 9,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 = 10,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE = 11,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32 = 12,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64 = 13,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX64 = 14,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX128 = 15,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16 = 16,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FN = 17,    /* API 16 */
    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FNUZ = 18,  /* API 16 */
    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2 = 19,      /* API 16 */
    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2FNUZ = 20,  /* API 16 */
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT4 = 21,           /* API 19 */
    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT4 = 22,            /* API 19 */
    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT4E2M1 = 23,      /* API 24 */
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT2 = 24,           /* API 24 */
    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT2 = 25,            /* API 24 */
    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E8M0 = 26       /* API 28 */
} ONNXTensorElementDataType;

typedef enum OrtErrorCode {
    ORT_OK = 0,
    ORT_FAIL = 1,
    ORT_INVALID_ARGUMENT = 2,
    ORT_NO_SUCHFILE = 3,
    ORT_NO_MODEL = 4,
    ORT_ENGINE_ERROR = 5,
    ORT_RUNTIME_EXCEPTION = 6,
    ORT_INVALID_PROTOBUF = 7,
    ORT_MODEL_LOADED = 8,
    ORT_NOT_IMPLEMENTED = 9,
    ORT_INVALID_GRAPH = 10,
    ORT_EP_FAIL = 11,
    ORT_MODEL_LOAD_CANCELED = 12,         /* API 22 */
    ORT_MODEL_REQUIRES_COMPILATION = 13,  /* API 22 */
    ORT_NOT_FOUND = 14,                   /* API 23 */
    ORT_DEVICE_RESET = 15                 /* newer than API 26 */
} OrtErrorCode;

typedef enum OrtLoggingLevel {
    ORT_LOGGING_LEVEL_VERBOSE = 0,
    ORT_LOGGING_LEVEL_INFO = 1,
    ORT_LOGGING_LEVEL_WARNING = 2,
    ORT_LOGGING_LEVEL_ERROR = 3,
    ORT_LOGGING_LEVEL_FATAL = 4
} OrtLoggingLevel;

/* Where a custom op wants an input to live (OrtCustomOp::GetInputMemoryType). */
typedef enum OrtMemType {
    OrtMemTypeCPUInput = -2,
    OrtMemTypeCPUOutput = -1,
    OrtMemTypeCPU = OrtMemTypeCPUOutput,   /* same value, second name */
    OrtMemTypeDefault = 0
} OrtMemType;

typedef enum OrtAllocatorType {
    OrtInvalidAllocator = -1,
    OrtDeviceAllocator = 0,
    OrtArenaAllocator = 1,
    OrtReadOnlyAllocator = 2               /* API 23 */
} OrtAllocatorType;

/* Attribute kinds understood by OrtApi::ReadOpAttr. */
typedef enum OrtOpAttrType {
    ORT_OP_ATTR_UNDEFINED = 0,
    ORT_OP_ATTR_INT = 1,
    ORT_OP_ATTR_INTS = 2,
    ORT_OP_ATTR_FLOAT = 3,
    ORT_OP_ATTR_FLOATS = 4,
    ORT_OP_ATTR_STRING = 5,
    ORT_OP_ATTR_STRINGS = 6,
    ORT_OP_ATTR_GRAPH = 7,                 /* API 23 */
    ORT_OP_ATTR_TENSOR = 8                 /* API 23 */
} OrtOpAttrType;

/* Arity of one custom-op input or output. */
typedef enum OrtCustomOpInputOutputCharacteristic {
    INPUT_OUTPUT_REQUIRED = 0,
    INPUT_OUTPUT_OPTIONAL = 1,
    INPUT_OUTPUT_VARIADIC = 2
} OrtCustomOpInputOutputCharacteristic;

/* -------------------------------------------------------------- allocator */
/* Leading members only (the ones every version has; later versions append more).
 * Good for using an allocator that ORT hands us; never define one with this. */
struct OrtAllocator {
    uint32_t version;
    void* (*Alloc)(struct OrtAllocator* self, size_t size);
    void (*Free)(struct OrtAllocator* self, void* p);
    const OrtMemoryInfo* (*Info)(const struct OrtAllocator* self);
};

/* ----------------------------------------------------------- entry points */
/* What ORT hands to a custom-op library. Fixed forever: two members. */
struct OrtApiBase {
    const OrtApi* (*GetApi)(uint32_t version);   /* NULL if version unsupported */
    const char* (*GetVersionString)(void);       /* e.g. "1.17.1" */
};

/* The symbol ORT looks up in a custom-op library (defined in ortcustom/_customop.pyx):
 *
 *     OrtStatus* RegisterCustomOps(OrtSessionOptions* options, const OrtApiBase* api);
 */

/* ------------------------------------------------------------------ OrtApi */
/* ORT's function table, through API 18 and one entry of API 24. ORT only ever appends to it, so the API-17
 * prefix is valid on any runtime whose GetApi(17) succeeds (ORT >= 1.17); the API-18
 * entries only in a table from GetApi(18) (ORT >= 1.18). Slots we do not
 * call are pointer-sized placeholders named unused_<slot>; to use one, replace it
 * with the real declaration and add its slot check further down.
 * A trailing comment gives the ORT release that added an entry (API n came with
 * ORT 1.n); entries without one are in API 1. */
struct OrtApi {
    /* ---- API 1: slots 0..101 ---- */
    OrtStatus* (*CreateStatus)(OrtErrorCode code, const char* msg);
    void (*unused_1)(void);
    const char* (*GetErrorMessage)(const OrtStatus* status);
    OrtStatusPtr (*CreateEnv)(OrtLoggingLevel level, const char* log_id, OrtEnv** out);
    void (*unused_4)(void); void (*unused_5)(void); void (*unused_6)(void);
    /* path: a char string on Linux/macOS (wide characters on Windows only) */
    OrtStatusPtr (*CreateSession)(const OrtEnv* env, const char* model_path, const OrtSessionOptions* options, OrtSession** out);
    void (*unused_8)(void);
    /* outputs[i] NULL on entry: ORT allocates the value, the caller releases it */
    OrtStatusPtr (*Run)(OrtSession* session, const OrtRunOptions* run_options,
                        const char* const* input_names, const OrtValue* const* inputs, size_t input_count,
                        const char* const* output_names, size_t output_count, OrtValue** outputs);
    OrtStatusPtr (*CreateSessionOptions)(OrtSessionOptions** out);
    void (*unused_11)(void); void (*unused_12)(void); void (*unused_13)(void); void (*unused_14)(void);
    void (*unused_15)(void); void (*unused_16)(void); void (*unused_17)(void); void (*unused_18)(void);
    void (*unused_19)(void); void (*unused_20)(void); void (*unused_21)(void); void (*unused_22)(void);
    void (*unused_23)(void);
    OrtStatusPtr (*SetIntraOpNumThreads)(OrtSessionOptions* options, int threads);  /* 0: ORT's default */
    void (*unused_25)(void);
    OrtStatusPtr (*CreateCustomOpDomain)(const char* domain, OrtCustomOpDomain** out);
    OrtStatusPtr (*CustomOpDomain_Add)(OrtCustomOpDomain* domain, const OrtCustomOp* op);
    OrtStatusPtr (*AddCustomOpDomain)(OrtSessionOptions* options, OrtCustomOpDomain* domain);
    void (*unused_29)(void);
    void (*unused_30)(void);
    OrtStatusPtr (*SessionGetOutputCount)(const OrtSession* session, size_t* out);
    void (*unused_32)(void);
    void (*unused_33)(void); void (*unused_34)(void); void (*unused_35)(void);
    /* the name is allocated from `allocator`; give it back with AllocatorFree */
    void (*unused_36)(void);
    OrtStatusPtr (*SessionGetOutputName)(const OrtSession* session, size_t index, OrtAllocator* allocator, char** out);
    void (*unused_38)(void); void (*unused_39)(void); void (*unused_40)(void);
    void (*unused_41)(void); void (*unused_42)(void); void (*unused_43)(void); void (*unused_44)(void);
    void (*unused_45)(void); void (*unused_46)(void); void (*unused_47)(void);
    /* a tensor ORT allocates from `allocator` (a string tensor: `count` empty strings) */
    OrtStatusPtr (*CreateTensorAsOrtValue)(OrtAllocator* allocator, const int64_t* shape, size_t shape_len,
                                           ONNXTensorElementDataType type, OrtValue** out);
    /* wraps caller-owned memory (not copied): `data` must outlive the value */
    OrtStatusPtr (*CreateTensorWithDataAsOrtValue)(const OrtMemoryInfo* info, void* data, size_t bytes,
                                                   const int64_t* dims, size_t count,
                                                   ONNXTensorElementDataType type, OrtValue** out);
    void (*unused_50)(void);
    OrtStatusPtr (*GetTensorMutableData)(OrtValue* value, void** out);
    /* string tensors: s_len NUL-terminated strings in; the total bytes (no NULs); all elements
     * packed into s (s_len >= the total), element k starting at offsets[k] (offsets_len = count) */
    OrtStatusPtr (*FillStringTensor)(OrtValue* value, const char* const* s, size_t s_len);
    OrtStatusPtr (*GetStringTensorDataLength)(const OrtValue* value, size_t* len);
    OrtStatusPtr (*GetStringTensorContent)(const OrtValue* value, void* s, size_t s_len, size_t* offsets,
                                           size_t offsets_len);
    OrtStatusPtr (*CastTypeInfoToTensorInfo)(const OrtTypeInfo* type_info, const OrtTensorTypeAndShapeInfo** out);
    void (*unused_56)(void);
    OrtStatusPtr (*CreateTensorTypeAndShapeInfo)(OrtTensorTypeAndShapeInfo** out);
    OrtStatusPtr (*SetTensorElementType)(OrtTensorTypeAndShapeInfo* info, ONNXTensorElementDataType type);
    OrtStatusPtr (*SetDimensions)(OrtTensorTypeAndShapeInfo* info, const int64_t* dims, size_t count);
    OrtStatusPtr (*GetTensorElementType)(const OrtTensorTypeAndShapeInfo* info, ONNXTensorElementDataType* out);
    OrtStatusPtr (*GetDimensionsCount)(const OrtTensorTypeAndShapeInfo* info, size_t* out);
    OrtStatusPtr (*GetDimensions)(const OrtTensorTypeAndShapeInfo* info, int64_t* dims, size_t count);
    OrtStatusPtr (*GetSymbolicDimensions)(const OrtTensorTypeAndShapeInfo* info, const char** names, size_t count);
    OrtStatusPtr (*GetTensorShapeElementCount)(const OrtTensorTypeAndShapeInfo* info, size_t* out);
    OrtStatusPtr (*GetTensorTypeAndShape)(const OrtValue* value, OrtTensorTypeAndShapeInfo** out);
    void (*unused_66)(void); void (*unused_67)(void);
    void (*unused_68)(void);
    OrtStatusPtr (*CreateCpuMemoryInfo)(OrtAllocatorType type, OrtMemType mem_type, OrtMemoryInfo** out);
    void (*unused_70)(void);
    void (*unused_71)(void);
    OrtStatusPtr (*MemoryInfoGetId)(const OrtMemoryInfo* info, int* out);  /* the device ordinal */
    void (*unused_73)(void);
    void (*unused_74)(void);
    void (*unused_75)(void);
    OrtStatusPtr (*AllocatorFree)(OrtAllocator* allocator, void* p);
    void (*unused_77)(void);
    OrtStatusPtr (*GetAllocatorWithDefaultOptions)(OrtAllocator** out);  /* ORT's; never released */
    void (*unused_79)(void); void (*unused_80)(void); void (*unused_81)(void); void (*unused_82)(void);
    void (*unused_83)(void); void (*unused_84)(void);
    OrtStatusPtr (*KernelInfoGetAttribute_float)(const OrtKernelInfo* info, const char* name, float* out);
    OrtStatusPtr (*KernelInfoGetAttribute_int64)(const OrtKernelInfo* info, const char* name, int64_t* out);
    OrtStatusPtr (*KernelInfoGetAttribute_string)(const OrtKernelInfo* info, const char* name, char* out, size_t* size);
    OrtStatusPtr (*KernelContext_GetInputCount)(const OrtKernelContext* ctx, size_t* out);
    OrtStatusPtr (*KernelContext_GetOutputCount)(const OrtKernelContext* ctx, size_t* out);
    OrtStatusPtr (*KernelContext_GetInput)(const OrtKernelContext* ctx, size_t index, const OrtValue** out);
    OrtStatusPtr (*KernelContext_GetOutput)(OrtKernelContext* ctx, size_t index, const int64_t* dims, size_t count, OrtValue** out);
    void (*ReleaseEnv)(OrtEnv* env);
    void (*ReleaseStatus)(OrtStatus* status);
    void (*ReleaseMemoryInfo)(OrtMemoryInfo* info);
    void (*ReleaseSession)(OrtSession* session);
    void (*ReleaseValue)(OrtValue* value);
    void (*unused_97)(void);
    void (*ReleaseTypeInfo)(OrtTypeInfo* type_info);
    void (*ReleaseTensorTypeAndShapeInfo)(OrtTensorTypeAndShapeInfo* info);
    void (*ReleaseSessionOptions)(OrtSessionOptions* options);
    void (*ReleaseCustomOpDomain)(OrtCustomOpDomain* domain);

    /* ---- API 2: slots 102..118 ---- */
    void (*unused_102)(void); void (*unused_103)(void); void (*unused_104)(void); void (*unused_105)(void);
    void (*unused_106)(void); void (*unused_107)(void); void (*unused_108)(void); void (*unused_109)(void);
    void (*unused_110)(void); void (*unused_111)(void); void (*unused_112)(void); void (*unused_113)(void);
    void (*unused_114)(void); void (*unused_115)(void); void (*unused_116)(void); void (*unused_117)(void);
    void (*unused_118)(void);

    /* ---- API 3: slots 119..124 ---- */
    void (*unused_119)(void); void (*unused_120)(void); void (*unused_121)(void); void (*unused_122)(void);
    void (*unused_123)(void); void (*unused_124)(void);

    /* ---- API 4: slots 125..126 ---- */
    void (*unused_125)(void); void (*unused_126)(void);

    /* ---- API 5: slots 127..149 ---- */
    void (*unused_127)(void); void (*unused_128)(void); void (*unused_129)(void);
    /* a session option by name (the glue records there which library registered a domain) */
    OrtStatusPtr (*AddSessionConfigEntry)(OrtSessionOptions* options, const char* key, const char* value);  /* 1.5 */
    void (*unused_131)(void);
    void (*ReleaseAllocator)(OrtAllocator* allocator);  /* 1.5 */
    void (*unused_133)(void); void (*unused_134)(void);
    void (*unused_135)(void); void (*unused_136)(void); void (*unused_137)(void); void (*unused_138)(void);
    void (*unused_139)(void); void (*unused_140)(void); void (*unused_141)(void); void (*unused_142)(void);
    void (*unused_143)(void); void (*unused_144)(void); void (*unused_145)(void); void (*unused_146)(void);
    void (*unused_147)(void); void (*unused_148)(void); void (*unused_149)(void);

    /* ---- API 6: slots 150..157 ---- */
    void (*unused_150)(void); void (*unused_151)(void); void (*unused_152)(void); void (*unused_153)(void);
    void (*unused_154)(void); void (*unused_155)(void); void (*unused_156)(void); void (*unused_157)(void);

    /* ---- API 7: slots 158..161 ---- */
    void (*unused_158)(void); void (*unused_159)(void); void (*unused_160)(void); void (*unused_161)(void);

    /* ---- API 8: slots 162..169 ---- */
    OrtStatusPtr (*KernelInfoGetAttributeArray_float)(const OrtKernelInfo* info, const char* name, float* out, size_t* size);  /* 1.8 */
    OrtStatusPtr (*KernelInfoGetAttributeArray_int64)(const OrtKernelInfo* info, const char* name, int64_t* out, size_t* size);  /* 1.8 */
    void (*unused_164)(void); void (*unused_165)(void); void (*unused_166)(void); void (*unused_167)(void);
    void (*unused_168)(void); void (*unused_169)(void);

    /* ---- API 9: slots 170..191 ---- */
    void (*unused_170)(void); void (*unused_171)(void); void (*unused_172)(void); void (*unused_173)(void);
    void (*unused_174)(void); void (*unused_175)(void); void (*unused_176)(void); void (*unused_177)(void);
    void (*unused_178)(void); void (*unused_179)(void); void (*unused_180)(void); void (*unused_181)(void);
    void (*unused_182)(void); void (*unused_183)(void); void (*unused_184)(void); void (*unused_185)(void);
    void (*unused_186)(void); void (*unused_187)(void); void (*unused_188)(void); void (*unused_189)(void);
    void (*unused_190)(void); void (*unused_191)(void);

    /* ---- API 10: slots 192..203 ---- */
    void (*unused_192)(void);
    OrtStatusPtr (*KernelContext_GetGPUComputeStream)(const OrtKernelContext* ctx, void** out);  /* 1.10 */
    OrtStatusPtr (*GetTensorMemoryInfo)(const OrtValue* value, const OrtMemoryInfo** out);  /* 1.10 */
    void (*unused_195)(void); void (*unused_196)(void); void (*unused_197)(void); void (*unused_198)(void);
    void (*unused_199)(void); void (*unused_200)(void); void (*unused_201)(void); void (*unused_202)(void);
    void (*unused_203)(void);

    /* ---- API 11: slots 204..209 ---- */
    void (*unused_204)(void); void (*unused_205)(void); void (*unused_206)(void); void (*unused_207)(void);
    void (*unused_208)(void); void (*unused_209)(void);

    /* ---- API 12: slots 210..218 ---- */
    void (*unused_210)(void); void (*unused_211)(void); void (*unused_212)(void); void (*unused_213)(void);
    void (*unused_214)(void); void (*unused_215)(void); void (*unused_216)(void); void (*unused_217)(void);
    void (*unused_218)(void);

    /* ---- API 13: slots 219..224 ---- */
    void (*unused_219)(void); void (*unused_220)(void); void (*unused_221)(void); void (*unused_222)(void);
    void (*unused_223)(void); void (*unused_224)(void);

    /* ---- API 14: slots 225..238 ---- */
    void (*unused_225)(void); void (*unused_226)(void); void (*unused_227)(void);
    /* dlopen()s the library and calls its RegisterCustomOps; ORT closes it with the last session */
    OrtStatusPtr (*RegisterCustomOpsLibrary_V2)(OrtSessionOptions* options, const char* library_path);  /* 1.14 */
    void (*unused_229)(void);
    OrtStatusPtr (*KernelInfo_GetInputCount)(const OrtKernelInfo* info, size_t* out);  /* 1.14 */
    OrtStatusPtr (*KernelInfo_GetOutputCount)(const OrtKernelInfo* info, size_t* out);  /* 1.14 */
    void (*unused_232)(void);
    void (*unused_233)(void);
    OrtStatusPtr (*KernelInfo_GetInputTypeInfo)(const OrtKernelInfo* info, size_t index, OrtTypeInfo** out);  /* 1.14 */
    OrtStatusPtr (*KernelInfo_GetOutputTypeInfo)(const OrtKernelInfo* info, size_t index, OrtTypeInfo** out);  /* 1.14 */
    /* a TENSOR attribute as a new CPU OrtValue (release it); an error for any other kind */
    OrtStatusPtr (*KernelInfoGetAttribute_tensor)(const OrtKernelInfo* info, const char* name, OrtAllocator* allocator, OrtValue** out);  /* 1.14 */
    OrtStatusPtr (*HasSessionConfigEntry)(const OrtSessionOptions* options, const char* key, int* out);  /* 1.14 */
    /* value NULL: *size gets the size needed, NUL included */
    OrtStatusPtr (*GetSessionConfigEntry)(const OrtSessionOptions* options, const char* key, char* value, size_t* size);  /* 1.14 */

    /* ---- API 15: slots 239..254 ---- */
    void (*unused_239)(void); void (*unused_240)(void); void (*unused_241)(void); void (*unused_242)(void);
    void (*unused_243)(void);
    OrtStatusPtr (*KernelInfo_GetNodeName)(const OrtKernelInfo* info, char* out, size_t* size);  /* 1.15 */
    void (*unused_245)(void); void (*unused_246)(void); void (*unused_247)(void); void (*unused_248)(void);
    /* an input's value when the model gives it as an initializer (*is_constant 1; the value is
     * ORT's, alive as long as the session) */
    OrtStatusPtr (*KernelInfoGetConstantInput_tensor)(const OrtKernelInfo* info, size_t index, int* is_constant,
                                                      const OrtValue** out);  /* 1.15 */
    void (*unused_250)(void); void (*unused_251)(void);
    /* element `index` of a string tensor resized to `length` bytes; *buffer its bytes to write */
    OrtStatusPtr (*GetResizedStringTensorElementBuffer)(OrtValue* value, size_t index, size_t length, char** buffer);  /* 1.15 */
    OrtStatusPtr (*KernelContext_GetAllocator)(const OrtKernelContext* ctx, const OrtMemoryInfo* mem_info, OrtAllocator** out);  /* 1.15 */
    void (*unused_254)(void);

    /* ---- API 16: slots 255..265 ---- */
    void (*unused_255)(void); void (*unused_256)(void); void (*unused_257)(void); void (*unused_258)(void);
    void (*unused_259)(void); void (*unused_260)(void); void (*unused_261)(void); void (*unused_262)(void);
    void (*unused_263)(void); void (*unused_264)(void); void (*unused_265)(void);

    /* ---- API 17: slots 266..275 ---- */
    void (*unused_266)(void);
    OrtStatusPtr (*ShapeInferContext_GetInputCount)(const OrtShapeInferContext* ctx, size_t* out);  /* 1.17 */
    OrtStatusPtr (*ShapeInferContext_GetInputTypeShape)(const OrtShapeInferContext* ctx, size_t index, OrtTensorTypeAndShapeInfo** out);  /* 1.17 */
    OrtStatusPtr (*ShapeInferContext_GetAttribute)(const OrtShapeInferContext* ctx, const char* name, const OrtOpAttr** out);  /* 1.17 */
    OrtStatusPtr (*ShapeInferContext_SetOutputTypeShape)(const OrtShapeInferContext* ctx, size_t index, const OrtTensorTypeAndShapeInfo* info);  /* 1.17 */
    OrtStatusPtr (*SetSymbolicDimensions)(OrtTensorTypeAndShapeInfo* info, const char** names, size_t count);  /* 1.17 */
    OrtStatusPtr (*ReadOpAttr)(const OrtOpAttr* attr, OrtOpAttrType type, void* data, size_t len, size_t* out);  /* 1.17 */
    void (*unused_273)(void);
    OrtStatusPtr (*KernelContext_ParallelFor)(const OrtKernelContext* ctx, void (*fn)(void* data, size_t i), size_t total, size_t num_batch, void* data);  /* 1.17 */
    void (*unused_275)(void);

    /* ---- API 18: slots 276..279 (only through GetApi(18)) ---- */
    void (*unused_276)(void);
    /* Device memory from the EP's allocator for `mem_info`, tied to the kernel's compute
     * stream; the caller frees it (AllocatorFree of KernelContext_GetAllocator's allocator). */
    OrtStatusPtr (*KernelContext_GetScratchBuffer)(const OrtKernelContext* ctx, const OrtMemoryInfo* mem_info, size_t bytes, void** out);  /* 1.18 */
    void (*unused_278)(void); void (*unused_279)(void);

    /* ---- API 19..25: slots 280..417 (only through the GetApi(n) of the entry's API) ---- */
    void (*unused_280_297[18])(void);
    /* the pairs' arrays, valid while kvps lives */
    void (*GetKeyValuePairs)(const OrtKeyValuePairs* kvps, const char* const** keys, const char* const** values,
                             size_t* num_entries);  /* 1.22 */
    void (*unused_299)(void);
    void (*ReleaseKeyValuePairs)(OrtKeyValuePairs* kvps);  /* 1.22 */
    void (*unused_301_390[90])(void);
    /* the session's configuration entries, as the kernel is created (released by the caller) */
    OrtStatusPtr (*KernelInfo_GetConfigEntries)(const OrtKernelInfo* info, OrtKeyValuePairs** out);  /* 1.24 */
    void (*unused_392_413[22])(void);
    /* The element type and a pointer to the value's own dims (valid while the value lives; not
     * freed): what GetTensorTypeAndShape + 4 getters + Release give, without ORT allocating an
     * info object per call. */
    OrtStatusPtr (*GetTensorElementTypeAndShapeDataReference)(const OrtValue* value, ONNXTensorElementDataType* type,
                                                              const int64_t** shape, size_t* rank);  /* 1.24 */
    void (*unused_415)(void); void (*unused_416)(void);
    /* A strings attribute: *out an array of *size NUL-terminated copies (each element up to its
     * first NUL), all from `allocator`, which the caller frees (the array and each string). */
    OrtStatusPtr (*KernelInfoGetAttributeArray_string)(const OrtKernelInfo* info, const char* name, OrtAllocator* allocator, char*** out, size_t* size);  /* 1.25 */
};

/* ------------------------------------------------------------- OrtCustomOp */
/* One custom op (kernel + schema), filled in by us and read by ORT. ORT reads a
 * member only when `version` is at least the value noted for its group; members
 * of a group above `version` may be left NULL. */
struct OrtCustomOp {
    uint32_t version;   /* <= ORTCUSTOM_CUSTOM_OP_MAX_VERSION and <= the runtime's API */

    /* always read */
    void* (*CreateKernel)(const struct OrtCustomOp* op, const OrtApi* api, const OrtKernelInfo* info);
    const char* (*GetName)(const struct OrtCustomOp* op);
    const char* (*GetExecutionProviderType)(const struct OrtCustomOp* op);   /* NULL result: CPU */
    ONNXTensorElementDataType (*GetInputType)(const struct OrtCustomOp* op, size_t index);
    size_t (*GetInputTypeCount)(const struct OrtCustomOp* op);
    ONNXTensorElementDataType (*GetOutputType)(const struct OrtCustomOp* op, size_t index);
    size_t (*GetOutputTypeCount)(const struct OrtCustomOp* op);
    void (*KernelCompute)(void* kernel, OrtKernelContext* ctx);
    void (*KernelDestroy)(void* kernel);

    /* version >= 8: optional inputs/outputs (recent ORT calls these regardless: always set) */
    OrtCustomOpInputOutputCharacteristic (*GetInputCharacteristic)(const struct OrtCustomOp* op, size_t index);
    OrtCustomOpInputOutputCharacteristic (*GetOutputCharacteristic)(const struct OrtCustomOp* op, size_t index);

    /* version >= 13 */
    OrtMemType (*GetInputMemoryType)(const struct OrtCustomOp* op, size_t index);

    /* version >= 14: variadic last input/output */
    int (*GetVariadicInputMinArity)(const struct OrtCustomOp* op);
    int (*GetVariadicInputHomogeneity)(const struct OrtCustomOp* op);
    int (*GetVariadicOutputMinArity)(const struct OrtCustomOp* op);
    int (*GetVariadicOutputHomogeneity)(const struct OrtCustomOp* op);

    /* version >= 16: status-returning kernel entry points; when set they are used
     * instead of CreateKernel / KernelCompute */
    OrtStatusPtr (*CreateKernelV2)(const struct OrtCustomOp* op, const OrtApi* api, const OrtKernelInfo* info, void** kernel);
    OrtStatusPtr (*KernelComputeV2)(void* kernel, OrtKernelContext* ctx);

    /* version >= 17: shape inference and opset range (each may be NULL) */
    OrtStatusPtr (*InferOutputShapeFn)(const struct OrtCustomOp* op, OrtShapeInferContext* ctx);
    int (*GetStartVersion)(const struct OrtCustomOp* op);
    int (*GetEndVersion)(const struct OrtCustomOp* op);

    /* version >= 18: in-place and alias hints. Each Get* returns the length of two
     * arrays it allocates (input index, output index); ORT gives them back through
     * the matching Release*. Fill all four when declaring version 18. */
    size_t (*GetMayInplace)(int** input_index, int** output_index);
    void (*ReleaseMayInplace)(int* input_index, int* output_index);
    size_t (*GetAliasMap)(int** input_index, int** output_index);
    void (*ReleaseAliasMap)(int* input_index, int* output_index);
};

/* ------------------------------------------------------------ layout checks */
/* Compile-time guards against miscounting when editing the tables above. */
#ifdef __cplusplus
#define ORTCUSTOM_ABI_CHECK(cond) static_assert(cond, #cond)
#else
#define ORTCUSTOM_ABI_CHECK(cond) _Static_assert(cond, #cond)
#endif
#define ORTCUSTOM_SLOT(member) (offsetof(struct OrtApi, member) / sizeof(void*))

ORTCUSTOM_ABI_CHECK(sizeof(struct OrtApiBase) == 2 * sizeof(void*));
ORTCUSTOM_ABI_CHECK(sizeof(struct OrtApi) == 418 * sizeof(void*));
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(CreateStatus) == 0);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(GetErrorMessage) == 2);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(CreateEnv) == 3);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(CreateSession) == 7);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(Run) == 9);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(CreateSessionOptions) == 10);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(SetIntraOpNumThreads) == 24);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(CreateCustomOpDomain) == 26);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(CustomOpDomain_Add) == 27);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(AddCustomOpDomain) == 28);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(SessionGetOutputCount) == 31);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(SessionGetOutputName) == 37);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(CreateTensorWithDataAsOrtValue) == 49);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(CreateTensorAsOrtValue) == 48);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(GetTensorMutableData) == 51);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(FillStringTensor) == 52);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(GetStringTensorDataLength) == 53);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(GetStringTensorContent) == 54);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(CastTypeInfoToTensorInfo) == 55);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(CreateTensorTypeAndShapeInfo) == 57);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(SetTensorElementType) == 58);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(SetDimensions) == 59);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(GetTensorElementType) == 60);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(GetDimensionsCount) == 61);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(GetDimensions) == 62);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(GetSymbolicDimensions) == 63);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(GetTensorShapeElementCount) == 64);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(GetTensorTypeAndShape) == 65);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(CreateCpuMemoryInfo) == 69);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(MemoryInfoGetId) == 72);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(AllocatorFree) == 76);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(GetAllocatorWithDefaultOptions) == 78);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(KernelInfoGetAttribute_float) == 85);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(KernelInfoGetAttribute_int64) == 86);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(KernelInfoGetAttribute_string) == 87);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(KernelContext_GetInputCount) == 88);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(KernelContext_GetOutputCount) == 89);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(KernelContext_GetInput) == 90);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(KernelContext_GetOutput) == 91);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(ReleaseEnv) == 92);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(ReleaseStatus) == 93);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(ReleaseMemoryInfo) == 94);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(ReleaseSession) == 95);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(ReleaseValue) == 96);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(ReleaseTypeInfo) == 98);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(ReleaseTensorTypeAndShapeInfo) == 99);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(ReleaseSessionOptions) == 100);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(ReleaseCustomOpDomain) == 101);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(AddSessionConfigEntry) == 130);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(ReleaseAllocator) == 132);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(KernelInfoGetAttributeArray_float) == 162);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(KernelInfoGetAttributeArray_int64) == 163);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(KernelContext_GetGPUComputeStream) == 193);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(HasSessionConfigEntry) == 237);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(GetSessionConfigEntry) == 238);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(GetTensorMemoryInfo) == 194);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(RegisterCustomOpsLibrary_V2) == 228);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(KernelInfo_GetInputCount) == 230);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(KernelInfo_GetOutputCount) == 231);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(KernelInfo_GetInputTypeInfo) == 234);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(KernelInfo_GetOutputTypeInfo) == 235);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(KernelInfoGetAttribute_tensor) == 236);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(KernelInfo_GetNodeName) == 244);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(KernelInfoGetConstantInput_tensor) == 249);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(GetResizedStringTensorElementBuffer) == 252);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(KernelContext_GetAllocator) == 253);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(ShapeInferContext_GetInputCount) == 267);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(ShapeInferContext_GetInputTypeShape) == 268);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(ShapeInferContext_GetAttribute) == 269);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(ShapeInferContext_SetOutputTypeShape) == 270);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(SetSymbolicDimensions) == 271);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(ReadOpAttr) == 272);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(KernelContext_ParallelFor) == 274);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(KernelContext_GetScratchBuffer) == 277);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(GetKeyValuePairs) == 298);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(ReleaseKeyValuePairs) == 300);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(KernelInfo_GetConfigEntries) == 391);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(GetTensorElementTypeAndShapeDataReference) == 414);
ORTCUSTOM_ABI_CHECK(ORTCUSTOM_SLOT(KernelInfoGetAttributeArray_string) == 417);
ORTCUSTOM_ABI_CHECK(offsetof(struct OrtCustomOp, CreateKernel) == sizeof(void*));
ORTCUSTOM_ABI_CHECK(offsetof(struct OrtCustomOp, ReleaseAliasMap) == 25 * sizeof(void*));
ORTCUSTOM_ABI_CHECK(sizeof(struct OrtCustomOp) == 26 * sizeof(void*));

#undef ORTCUSTOM_SLOT
#undef ORTCUSTOM_ABI_CHECK

#ifdef __cplusplus
}  /* extern "C" */
#endif
