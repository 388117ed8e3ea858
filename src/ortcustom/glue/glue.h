/* The glue between ONNX Runtime and ortcustom kernels: what its two front ends call.
 *
 * Front ends: the Python module ortcustom._customop (declarations made into oc_op_def at run
 * time; Python kernels as host kernels) and a package's plain custom-op library (a table that
 * `python -m ortcustom library-source` generated at build time; no Python). Both hand oc_op_defs
 * to the same code: the OrtCustomOp structs, attribute reading, the per-run trampoline, shape
 * inference and the error messages exist once, here.
 */
#ifndef ORTCUSTOM_GLUE_H
#define ORTCUSTOM_GLUE_H

#include "ort_abi.h"
#include "ortcustom/op_def.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the Python front end does for ops that ask for it (host_shapes, host_checks). */
typedef struct oc_glue_hooks {
  /* output types and shapes from the declaration's Python rules */
  void (*infer_shapes)(const oc_op_def* op, const OrtApi* api, OrtShapeInferContext* ctx);
  /* the declaration's attribute checks; attrs in declaration order; returns OC_OK or a code with
     *message set (malloc'ed, freed by the glue) */
  int (*check_attrs)(const oc_op_def* op, const oc_attr* attrs, char** message);
  /* at kernel creation, what the Python rules say of the node's outputs (its input shapes as the
     graph has them; attrs in declaration order): per output, OC_MAX_RANK + 1 values in `expect`,
     its rank (-1: not said) then its dims (-1: not known), checked against what the kernel
     allocates at each run; returns OC_OK or a code with *message set (malloc'ed, freed by the
     glue): a rule that fails */
  int (*rule_shapes)(const oc_op_def* op, const OrtApi* api, const OrtKernelInfo* info, const oc_attr* attrs,
                     int64_t* expect, char** message);
} oc_glue_hooks;
void oc_glue_set_hooks(const oc_glue_hooks* hooks);

/* RegisterCustomOps' body: adds the domains to `options`. The defs must outlive every session
   made from them (generated tables are static; the Python module keeps its defs for the process).
   Returns NULL or an OrtStatus naming what failed (an older runtime, a kernel that does not match
   its declaration, several versions of one op, a domain another registration already put into
   these options, ...). Registering the same domain def again into the same options does nothing.
   What is made for ORT is freed when the glue is unloaded. */
OrtStatus* oc_glue_register(OrtSessionOptions* options, const OrtApiBase* base,
                            const oc_domain_def* const* domains, int32_t n_domains);
/* The same, with the opset of each domain that the models import where the host knows it
   (opsets[d] > 0; Python: Domain.at(v)): only then may an op have an `until`. */
OrtStatus* oc_glue_register_at(OrtSessionOptions* options, const OrtApiBase* base,
                               const oc_domain_def* const* domains, const int32_t* opsets, int32_t n_domains);

/* Why ONNX Runtime cannot be given `domain` (several versions of one op; an `until` where opset is
   0, unknown): returns 0, or -1 with the reason in message (at most cap bytes). */
int oc_glue_check_domain(const oc_domain_def* domain, int32_t opset, char* message, size_t cap);

/* The OrtCustomOps registration makes for an op name: its declarations `family` (one, or siblings:
   same name and span, one type signature each), in order: returns their count, and for the first
   `cap` of them the element types ORT is told (rows: n_inputs + n_outputs each, 0: any), the
   device (oc_device), whether it is the type guard and which declaration's kernel it runs. */
int32_t oc_glue_plan(const oc_op_def* const* family, int32_t n_family, int32_t* rows, int32_t* devices,
                     int32_t* guards, int32_t* which, int32_t cap);

/* Whether `kernel` implements `op` (names, attribute kinds, every type binding; ABI version).
   Returns 0, or -1 with the reason in message (at most cap bytes, NUL-terminated). */
int oc_glue_check_kernel(const oc_op_def* op, const oc_kernel* kernel, char* message, size_t cap);

/* ---- direct calls (Python front end): the same kernel outside ORT ---------------------------- */

/* How a direct call gets its outputs and device scratch memory (the caller's array library). */
typedef struct oc_direct_host {
  void* self;
  /* allocate output i; *data may be NULL for an empty tensor; returns OC_OK or a code + message */
  int (*output)(void* self, int32_t i, const int64_t* shape, int32_t rank, void** data, char** message);
  /* device scratch (CPU scratch is the glue's own) */
  int (*scratch)(void* self, size_t bytes, void** data, char** message);
  /* after a successful compute, once per string output the kernel allocated: its n elements (valid
     during the call only) */
  int (*strings)(void* self, int32_t i, const oc_string* elements, int64_t n, char** message);
} oc_direct_host;

/* A kernel's per-call state, made once per (kernel, attributes, element types) and reused. */
typedef struct oc_direct_kernel oc_direct_kernel;

/* Runs the kernel's create with `attrs` (in the kernel's order), the binding's element types and
   `consts` (NULL, or per declared input a tensor create reads where the input is declared constant;
   valid during the call). Returns NULL with *message (malloc'ed) and *code on failure. */
oc_direct_kernel* oc_direct_create(const oc_op_def* op, const oc_kernel* kernel, const int32_t* dtypes,
                                   const oc_attr* attrs, int32_t n_attrs, const oc_tensor* consts, int* code,
                                   char** message);
void oc_direct_destroy(oc_direct_kernel* k);

/* One call: inputs (n_inputs of them), on `device`; tasks on `threads` threads (<= 1: serially);
   `expect`: NULL, or what the outputs must be (oc_glue_hooks.rule_shapes' layout). Returns OC_OK,
   or a code with *message (malloc'ed) saying what failed, the op named. */
int oc_direct_run(const oc_direct_kernel* k, const oc_tensor* inputs, int32_t n_inputs, int32_t device,
                  int32_t device_id, void* stream, int32_t threads, const oc_direct_host* host,
                  const int64_t* expect, char** message);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ORTCUSTOM_GLUE_H */
