/* ortcustom/op_def.h: an op's declaration as C data, what the glue registers with ONNX Runtime.
 *
 * Nobody writes these by hand: ortcustom.op_table.lower(op) gives their values from the Python
 * declaration (ortcustom.Op); `python -m ortcustom library-source` prints them as a package's table
 * at build time, for the plain custom-op library that ONNX Runtime loads by path with no Python,
 * and the Python module copies them into the same structs at run time for
 * `ortcustom.session_options`. One glue (ortcustom/glue/) serves both.
 */
#ifndef ORTCUSTOM_OP_DEF_H
#define ORTCUSTOM_OP_DEF_H

#include "ortcustom/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped with any change below (the generated tables and the glue must agree). */
#define OC_OP_DEF_VERSION 4

typedef enum oc_io_kind { OC_IO_REQUIRED = 0, OC_IO_OPTIONAL = 1, OC_IO_VARIADIC = 2 } oc_io_kind;

typedef struct oc_io_def {
  const char* name;
  int32_t kind;        /* oc_io_kind */
  int32_t cpu;         /* inputs: stays in host memory on a GPU provider */
  int32_t min_arity;   /* variadic */
  int32_t homogeneous; /* variadic */
  int32_t shape_of;    /* outputs: the input whose shape it has (shape="X"), or -1 */
  int32_t constrained; /* its type is a type constraint's (the type guard takes any) */
  int32_t constant;    /* inputs: an initializer, read at kernel creation (create gets its data) */
} oc_io_def;

typedef struct oc_attr_def {
  const char* name;
  int32_t kind;     /* oc_attr_kind */
  int32_t required; /* else `value` is the default */
  oc_attr value;    /* the default (name and kind repeated) */
  /* What a value must be (int and float attributes; the glue refuses others at kernel creation):
     within [min, max] where has_min/has_max (float attributes: min, max; int attributes:
     int_min, int_max, compared exactly), one of choices[n_choices] where n_choices > 0. */
  int32_t has_min, has_max;
  double min, max;
  int32_t n_choices;
  const int64_t* choices;
  int64_t int_min, int_max;
} oc_attr_def;

/* An op: name, versions, signature, type bindings and its kernels. */
typedef struct oc_op_def {
  const char* name;
  int32_t since, until; /* opset range of the domain (until: INT32_MAX for open) */
  int32_t n_inputs, n_outputs, n_attrs, n_bindings;
  const oc_io_def* inputs;
  const oc_io_def* outputs;
  const oc_attr_def* attrs;
  const int32_t* bindings; /* n_bindings rows of (n_inputs + n_outputs) oc_dtype */
  const char* accepted;    /* the accepted types, for the error on any other ("(X: T) with T in {float}") */
  const oc_kernel* cpu;    /* NULL: none */
  const oc_kernel* cuda;   /* NULL: none */
  int32_t host_shapes;     /* output shapes from the host's rule (Python callables) */
  int32_t host_checks;     /* attribute checks by the host (Python Attr.check) at kernel creation */
  const void* host_data;   /* the host's own, handed to kernels as oc_context.host_data */
} oc_op_def;

typedef struct oc_domain_def {
  const char* name;
  int32_t n_ops;
  const oc_op_def* const* ops;
} oc_domain_def;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ORTCUSTOM_OP_DEF_H */
