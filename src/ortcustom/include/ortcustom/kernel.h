/* ortcustom/kernel.h: the C ABI between ortcustom and a native kernel.
 *
 * This header is all a kernel knows of ortcustom: no ONNX Runtime, no Python. It is C, so that C,
 * C++, CUDA or any language with a C ABI can implement it; ortcustom/kernel.hpp adds a thin C++
 * layer (typed views, element-type dispatch, formatted errors). Find it with
 * `ortcustom.get_include()` or Meson's `dependency('ortcustom')`.
 *
 * A kernel library (a Python extension module or a plain shared library) exports one function per
 * kernel and device:
 *
 *     const oc_kernel* ortcustom_kernel_<name>_cpu(void);
 *     const oc_kernel* ortcustom_kernel_<name>_cuda(void);    (optional; a CUDA build only)
 *
 * and an `ortcustom.Op(..., native="<module>:<name>")` declaration names it. When the kernel is
 * attached to the declaration, ortcustom checks `abi_version`, the input, output and attribute
 * names and kinds (in order) and the element types, and refuses a mismatch with a clear error.
 *
 * At run time ortcustom calls `compute` with an oc_context: the inputs, the node's attributes
 * (read and checked once, when the session creates the kernel; in the kernel's own order), a way
 * to allocate each output, a parallel-for, scratch memory and, on a GPU, the stream and device.
 * The same kernel runs in an ONNX Runtime session (ORT's outputs, intra-op pool and CUDA stream)
 * and in a direct call from Python (the caller's array library, OpenMP's pool, the library's stream).
 *
 * Rules for kernels (the host enforces what it can; a breach is an error naming the op, never a
 * crash or a silent result):
 *  - compute returns OC_OK, or the code that oc_fail returned (its message then names the problem;
 *    ortcustom adds the op, the node and turns it into the ORT error or Python exception).
 *  - compute allocates every output the node uses, once, with rank 0..OC_MAX_RANK; an output the
 *    op declares shape="<input>" must get exactly that input's shape.
 *  - compute may run on several threads at once for one node: it must not modify shared state.
 *  - a parallel_for task may call oc_fail, oc_scratch, oc_set_string and oc_config (thread-safe), never
 *    oc_output or oc_parallel_for.
 *  - a CUDA kernel launches only on `ctx->stream`, on device `ctx->device_id` (the device its
 *    inputs are on; kernel.hpp's OC_KERNEL makes it current), and never synchronizes.
 *  - no C++ exception may leave create, compute or destroy (kernel.hpp's OC_KERNEL and
 *    OC_KERNEL_STATEFUL catch them; destroy must not fail).
 */
#ifndef ORTCUSTOM_KERNEL_H
#define ORTCUSTOM_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change; a kernel built against another version is refused. */
#define OC_ABI_VERSION 5

/* Dims of a tensor a kernel takes or makes, at most. */
#define OC_MAX_RANK 16

/* Element types: ONNX's TensorProto.DataType numbers. */
typedef enum oc_dtype {
  OC_UNDEFINED = 0,
  OC_FLOAT = 1,
  OC_UINT8 = 2,
  OC_INT8 = 3,
  OC_UINT16 = 4,
  OC_INT16 = 5,
  OC_INT32 = 6,
  OC_INT64 = 7,
  OC_STRING = 8,   /* oc_string elements (see below) */
  OC_BOOL = 9,
  OC_FLOAT16 = 10, /* IEEE binary16 bits */
  OC_DOUBLE = 11,
  OC_UINT32 = 12,
  OC_UINT64 = 13,
  OC_BFLOAT16 = 16,
  OC_FLOAT8E4M3FN = 17, /* the float8 types: their bits, one byte each */
  OC_FLOAT8E4M3FNUZ = 18,
  OC_FLOAT8E5M2 = 19,
  OC_FLOAT8E5M2FNUZ = 20,
  OC_UINT4 = 21, /* 4-bit integers, two per byte: element 2k in the low nibble of byte k, so a tensor of */
  OC_INT4 = 22   /* n elements has (n + 1) / 2 bytes (kernel.hpp: oc::tensor_bytes, get4/set4) */
} oc_dtype;

/* Where a tensor's memory is, and which device a kernel runs on. */
typedef enum oc_device { OC_CPU = 0, OC_CUDA = 1 } oc_device;

typedef enum oc_attr_kind {
  OC_ATTR_INT = 1,    /* i */
  OC_ATTR_FLOAT = 2,  /* f */
  OC_ATTR_STRING = 3, /* s: count bytes exactly as the node stores them (any byte, NULs
                         included; usually UTF-8 text), then a NUL */
  OC_ATTR_INTS = 4,   /* ints[count] */
  OC_ATTR_FLOATS = 5, /* floats[count] */
  OC_ATTR_STRINGS = 6, /* strings[count], each lengths[j] bytes then a NUL (ONNX Runtime's C API reads
                          each only up to its first NUL: a session's elements hold none) */
  OC_ATTR_TENSOR = 7   /* *tensor: a tensor in host memory (count: its element count) */
} oc_attr_kind;

/* Status codes: what compute, create and the context's functions return. */
typedef enum oc_status {
  OC_OK = 0,
  OC_INVALID_ARGUMENT = 1, /* bad input: an ORT INVALID_ARGUMENT, a Python ValueError */
  OC_FAIL = 2,             /* anything else (a failed launch, ...): ORT FAIL, RuntimeError */
  OC_OUT_OF_MEMORY = 3     /* ORT FAIL, Python MemoryError */
} oc_status;

/* One element of a string tensor: `size` bytes of UTF-8 (checked by ortcustom), then a NUL that
   is not counted (an element may hold NULs of its own). An input of type OC_STRING has `data`
   pointing to `size` of these, valid during compute. A kernel never writes a string output's
   memory: it allocates the output with oc_output (which gives *data NULL; every element starts
   empty) and sets each element with oc_set_string, which copies the bytes. */
typedef struct oc_string {
  const char* data;
  int64_t size;
} oc_string;

/* An input (or, in create, the element type of one). */
typedef struct oc_tensor {
  const void* data;     /* NULL when absent or empty */
  const int64_t* shape; /* rank dims */
  int64_t size;         /* number of elements (0 when absent) */
  int32_t rank;
  int32_t dtype;        /* oc_dtype; OC_UNDEFINED when absent */
  int32_t device;       /* oc_device of `data` (an input declared cpu=True stays OC_CPU) */
  int32_t present;      /* 0: an optional input the node does not give */
} oc_tensor;

/* An attribute's value, resolved before the first compute. Pointers stay valid while the kernel
   lives. */
typedef struct oc_attr {
  const char* name;
  int32_t kind; /* oc_attr_kind */
  int32_t reserved;
  int64_t count;
  int64_t i;
  double f;
  const char* s;
  const int64_t* ints;
  const float* floats;
  const char* const* strings;
  const int64_t* lengths; /* strings' byte lengths */
  const struct oc_tensor* tensor;
} oc_attr;

/* An attribute the kernel reads: its name and kind, in the order the kernel indexes them. */
typedef struct oc_attr_spec {
  const char* name;
  int32_t kind;
} oc_attr_spec;

typedef void (*oc_task_fn)(void* arg, size_t i);

typedef struct oc_context oc_context;

/* What ortcustom provides to a running kernel (reach it through the oc_* inline functions). */
typedef struct oc_host {
  uint32_t abi_version;
  /* Allocates output i with the given shape; *data is NULL when the node does not use the output
     (or it has no elements). Call it once per output. */
  int (*output)(oc_context* ctx, int32_t i, const int64_t* shape, int32_t rank, void** data);
  /* Runs fn(arg, i) for i in [0, n) on the CPU (ORT's intra-op pool in a session; OpenMP's pool,
     ortcustom.kernels.threads() threads, in a direct call) and returns when all are done. */
  void (*parallel_for)(oc_context* ctx, size_t n, oc_task_fn fn, void* arg);
  /* `bytes` of memory on the kernel's device (16-byte aligned), valid until compute returns, and
     (CUDA) ordered on the kernel's stream. */
  int (*scratch)(oc_context* ctx, size_t bytes, void** data);
  /* Records the error message (copied) and returns `code`: `return oc_fail(ctx, ...)`. */
  int (*fail)(oc_context* ctx, int code, const char* message);
  /* Sets element `index` of string output i (allocated with oc_output) to `size` bytes copied from
     `bytes` (UTF-8; anything else is an error naming the output and the element). Bytes inside a
     string input's elements (an element, or a part of one that starts and ends at a character's
     edge) are known UTF-8 and not checked again: set an unchanged element from the input itself.
     Thread-safe for distinct elements: parallel_for tasks may call it. */
  int (*set_string)(oc_context* ctx, int32_t i, int64_t index, const char* bytes, int64_t size);
  /* The session's configuration entry `key` (*value NULL when it is unset; valid while the kernel
     lives). By ONNX Runtime's convention an op's own entries are "custom_op.<op name>.<key>"
     (`so.add_session_config_entry("custom_op.MyOp.vocab_size", "30522")`). Returns OC_OK, or
     OC_FAIL where the runtime cannot tell (ONNX Runtime older than 1.24). A direct call has no
     session: every entry is unset. Thread-safe; create may call it too. */
  int (*config)(oc_context* ctx, const char* key, const char** value);
} oc_host;

struct oc_context {
  const oc_host* host;
  const oc_tensor* inputs; /* n_inputs of them: the declared ones (absent optional ones included),
                              then the extra ones of a variadic last input */
  int32_t n_inputs;
  int32_t n_outputs;
  const oc_attr* attrs; /* in the kernel's attr_specs order */
  int32_t n_attrs;
  int32_t device;       /* oc_device the kernel runs on */
  int32_t device_id;    /* CUDA: the device of the inputs and the stream; CPU: 0 */
  int32_t reserved;
  void* stream;         /* CUDA: the cudaStream_t to launch on; CPU: NULL */
  void* state;          /* what create stored (NULL without create) */
  const char* op_name;  /* for messages */
  const int32_t* dtypes; /* the element types of this binding: each declared input, then each
                            declared output (a row of oc_kernel.signatures) */
  const void* host_data; /* the host's own (Python kernels find their function here) */
  const int32_t* output_dtypes; /* n_outputs: each output tensor's element type, a variadic output's
                                   tensors one each (homogeneous=False: each the node's own); in
                                   create too */
};

typedef int (*oc_compute_fn)(oc_context* ctx);
/* Once per node (session) or call (direct), before the first compute, with attrs and the inputs'
   element types (no data, no shapes), except an input the op declares constant: its data and shape
   (the model's initializer; valid during create only: keep what you need in *state). Check
   attributes, precompute, store *state. */
typedef int (*oc_create_fn)(oc_context* ctx, void** state);
typedef void (*oc_destroy_fn)(void* state);

/* A kernel: what a library's ortcustom_kernel_<name>_<device>() returns (a pointer to static
   data). NULL-terminated lists. */
typedef struct oc_kernel {
  uint32_t abi_version;           /* OC_ABI_VERSION */
  int32_t device;                 /* oc_device */
  const char* name;               /* the kernel's name, for messages */
  const char* const* inputs;      /* input names, as the op declares them */
  const char* const* outputs;     /* output names */
  const oc_attr_spec* attrs;      /* attributes read, ending with {NULL, 0}; NULL: none */
  /* The type bindings the kernel implements: n_signatures rows of (inputs + outputs) oc_dtype,
     each input's then each output's element type (a variadic input or output: one entry for all
     its tensors; OC_UNDEFINED: any type, the kernel checks it). Every binding the op declares must
     be one of these rows, or the op is refused when the kernel is attached. */
  const int32_t* signatures;
  int32_t n_signatures;
  const int32_t* inplace;         /* per output, the input it may be written over exactly (the
                                     same buffer), or -1; NULL: outputs never alias inputs */
  oc_create_fn create;            /* optional */
  oc_destroy_fn destroy;          /* optional */
  oc_compute_fn compute;
} oc_kernel;

#define OC_KERNEL_SYMBOL_PREFIX "ortcustom_kernel_"

/* ---- the context's functions ---------------------------------------------------------------- */

static inline int oc_output(oc_context* ctx, int32_t i, const int64_t* shape, int32_t rank,
                            void** data) {
  return ctx->host->output(ctx, i, shape, rank, data);
}
static inline void oc_parallel_for(oc_context* ctx, size_t n, oc_task_fn fn, void* arg) {
  ctx->host->parallel_for(ctx, n, fn, arg);
}
static inline int oc_scratch(oc_context* ctx, size_t bytes, void** data) {
  return ctx->host->scratch(ctx, bytes, data);
}
static inline int oc_fail(oc_context* ctx, int code, const char* message) {
  return ctx->host->fail(ctx, code, message);
}
static inline int oc_set_string(oc_context* ctx, int32_t i, int64_t index, const char* bytes, int64_t size) {
  return ctx->host->set_string(ctx, i, index, bytes, size);
}
static inline int oc_config(oc_context* ctx, const char* key, const char** value) {
  return ctx->host->config(ctx, key, value);
}

#if defined(_WIN32)
#define OC_EXPORT __declspec(dllexport)
#else
#define OC_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ORTCUSTOM_KERNEL_H */
