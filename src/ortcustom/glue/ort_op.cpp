// ONNX Runtime's side of the glue: a few OrtCustomOps per op (per provider, one per combination of
// the types that decide an output's type) plus a type guard, kernel creation (the node's type
// binding found, attributes read once), the per-run trampoline, shape inference, and registration
// (what a SessionOptions may hold, freed again when ORT unloads a plain library).
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "attrs.hpp"
#include "glue.h"
#include "run.hpp"

namespace oc_glue {

namespace {

const char* const kCudaProvider = "CUDAExecutionProvider";
// The OrtCustomOp version we fill in: CreateKernelV2/KernelComputeV2, InferOutputShapeFn and the
// opset range are read from 17 on, and ORT refuses an op above its own API version: so 17 is also
// the oldest runtime (1.17).
const uint32_t kOpVersion = ORTCUSTOM_ORT_API_VERSION;

const OrtApi* g_api = nullptr;     // the runtime's table (shape inference is given none)
const OrtApi* g_api18 = nullptr;   // the same runtime's API-18 table, NULL before ORT 1.18
const OrtApi* g_api24 = nullptr;   // its API-24 table (inputs read without an allocation), NULL before 1.24
const OrtApi* g_api25 = nullptr;   // its API-25 table (strings attributes), NULL before ORT 1.25
const char* g_ort_version = "";    // for messages
oc_glue_hooks g_hooks = {nullptr, nullptr, nullptr};

struct GlueOp;

// Siblings: several declarations of one op name (same span and interface, one type signature and
// kernel each). ORT makes one schema per name and runs the first op whose types match a node; the
// glue makes their OrtCustomOps so that at most one sibling's match any node (plan_family), and
// shape inference and errors speak for the declaration the node's types pick.
struct Family {
  std::vector<const oc_op_def*> defs;
  std::vector<const GlueOp*> first;  // per def: its first OrtCustomOp (shape inference speaks as it)
  std::string accepted;              // every sibling's accepted types, for the error on others
};

// Standard layout (ORT hands callbacks &op, the first member). Made once per (def, row, provider)
// and kept while the glue is loaded: sessions point at them.
struct GlueOp {
  OrtCustomOp op;
  const oc_op_def* def;
  const oc_kernel* kernel;  // nullptr: the type guard (fails kernel creation, naming the types)
  int32_t* row;             // what ORT is told, per input then output: an element type, or 0 (any)
                            // where only the kernel's binding search decides (owned)
  bool cuda;
  int32_t* type_of;         // per output (shape inference): the input whose element type it has, -1
  int32_t* fixed_type;      // ... else the one type every binding gives it (0: none) (both owned)
  const Family* family;     // its siblings (owned by the registry), nullptr when the name has one declaration
};

static_assert(std::is_standard_layout<GlueOp>::value, "ORT's &op must be the GlueOp's address");
const GlueOp* G(const OrtCustomOp* op) { return reinterpret_cast<const GlueOp*>(op); }

OrtStatus* make_status(const OrtApi* api, int code, const std::string& msg) {
  return api->CreateStatus(code == OC_INVALID_ARGUMENT ? ORT_INVALID_ARGUMENT : ORT_FAIL, msg.c_str());
}

// ---- descriptions ------------------------------------------------------------------------------

const char* cb_name(const OrtCustomOp* op) { return G(op)->def->name; }
const char* cb_provider(const OrtCustomOp* op) { return G(op)->cuda ? kCudaProvider : nullptr; }
size_t cb_in_count(const OrtCustomOp* op) { return (size_t)G(op)->def->n_inputs; }
size_t cb_out_count(const OrtCustomOp* op) { return (size_t)G(op)->def->n_outputs; }
ONNXTensorElementDataType cb_in_type(const OrtCustomOp* op, size_t i) {
  return (ONNXTensorElementDataType)G(op)->row[i];
}
ONNXTensorElementDataType cb_out_type(const OrtCustomOp* op, size_t i) {
  return (ONNXTensorElementDataType)G(op)->row[G(op)->def->n_inputs + i];
}
OrtCustomOpInputOutputCharacteristic cb_in_char(const OrtCustomOp* op, size_t i) {
  return (OrtCustomOpInputOutputCharacteristic)G(op)->def->inputs[i].kind;
}
OrtCustomOpInputOutputCharacteristic cb_out_char(const OrtCustomOp* op, size_t i) {
  return (OrtCustomOpInputOutputCharacteristic)G(op)->def->outputs[i].kind;
}
OrtMemType cb_in_mem(const OrtCustomOp* op, size_t i) {
  return G(op)->def->inputs[i].cpu ? OrtMemTypeCPUInput : OrtMemTypeDefault;
}
const oc_io_def* last(const oc_io_def* ios, int32_t n) { return n > 0 ? &ios[n - 1] : nullptr; }
int cb_in_min_arity(const OrtCustomOp* op) {
  const oc_io_def* d = last(G(op)->def->inputs, G(op)->def->n_inputs);
  return d && d->kind == OC_IO_VARIADIC ? d->min_arity : 1;
}
int cb_in_homogeneous(const OrtCustomOp* op) {
  const oc_io_def* d = last(G(op)->def->inputs, G(op)->def->n_inputs);
  return d && d->kind == OC_IO_VARIADIC ? d->homogeneous : 1;
}
int cb_out_min_arity(const OrtCustomOp* op) {
  const oc_io_def* d = last(G(op)->def->outputs, G(op)->def->n_outputs);
  return d && d->kind == OC_IO_VARIADIC ? d->min_arity : 1;
}
int cb_out_homogeneous(const OrtCustomOp* op) {
  const oc_io_def* d = last(G(op)->def->outputs, G(op)->def->n_outputs);
  return d && d->kind == OC_IO_VARIADIC ? d->homogeneous : 1;
}
int cb_since(const OrtCustomOp* op) { return G(op)->def->since; }
int cb_until(const OrtCustomOp* op) { return G(op)->def->until; }

// ---- kernel creation ---------------------------------------------------------------------------

// Kernels alive (made by ORT, not yet destroyed): what is made at registration is freed at unload
// only when none is left (at process exit sessions may outlive us).
std::atomic<long> g_live_kernels{0};

struct Kernel {
  const GlueOp* g = nullptr;
  const int32_t* row = nullptr;  // the node's type binding: a row of def->bindings
  const OrtApi* api;
  std::string node;
  Attrs attrs;              // in the declaration's order
  std::vector<oc_attr> ka;  // in the kernel's order (pointing into attrs)
  std::vector<int64_t> expect;  // the outputs' shapes by the Python rules (oc_glue_hooks.rule_shapes)
  Config config;                // the session's configuration entries (oc_config)
  void* state = nullptr;
};

std::string node_name(const OrtApi* api, const OrtKernelInfo* info) {
  size_t n = 0;
  OrtStatus* st = api->KernelInfo_GetNodeName(info, nullptr, &n);
  if (st != nullptr || n == 0) {
    if (st) api->ReleaseStatus(st);
    return "";
  }
  std::string out(n, '\0');
  st = api->KernelInfo_GetNodeName(info, &out[0], &n);
  if (st != nullptr) {
    api->ReleaseStatus(st);
    return "";
  }
  out.resize(n > 0 ? n - 1 : 0);
  return out;
}

std::string node_input_types(const OrtApi* api, const OrtKernelInfo* info, const oc_op_def* def) {
  size_t n = 0;
  std::string out;
  OrtStatus* st = api->KernelInfo_GetInputCount(info, &n);
  if (st) {
    api->ReleaseStatus(st);
    return out;
  }
  for (size_t i = 0; i < n; ++i) {
    OrtTypeInfo* ti = nullptr;
    const OrtTensorTypeAndShapeInfo* tsi = nullptr;
    ONNXTensorElementDataType t = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    const char* text = "absent";
    st = api->KernelInfo_GetInputTypeInfo(info, i, &ti);
    if (st) api->ReleaseStatus(st);
    if (!st && ti) {
      text = "non-tensor";
      st = api->CastTypeInfoToTensorInfo(ti, &tsi);
      if (!st && tsi) st = api->GetTensorElementType(tsi, &t);
      if (st) api->ReleaseStatus(st);
      else if (tsi) text = dtype_text(t);
      api->ReleaseTypeInfo(ti);
    }
    const char* name = def->inputs[i < (size_t)def->n_inputs ? i : def->n_inputs - 1].name;
    out += format("%s%s: %s", i ? ", " : "", name, text);
  }
  return out;
}

void destroy_kernel(Kernel* k) {
  destroy_state(k->g->kernel, k->state);
  delete k;
  g_live_kernels.fetch_sub(1);
}

// The element type of each of the node's inputs (0: absent, not a tensor, or unknown).
std::vector<int32_t> node_types(const OrtApi* api, const OrtKernelInfo* info) {
  size_t n = 0;
  std::vector<int32_t> out;
  OrtStatus* st = api->KernelInfo_GetInputCount(info, &n);
  if (st) {
    api->ReleaseStatus(st);
    return out;
  }
  out.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    OrtTypeInfo* ti = nullptr;
    const OrtTensorTypeAndShapeInfo* tsi = nullptr;
    ONNXTensorElementDataType t = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    st = api->KernelInfo_GetInputTypeInfo(info, i, &ti);
    if (!st && ti) st = api->CastTypeInfoToTensorInfo(ti, &tsi);
    if (!st && tsi) st = api->GetTensorElementType(tsi, &t);
    if (st) api->ReleaseStatus(st);
    else out[i] = (int32_t)t;
    if (ti) api->ReleaseTypeInfo(ti);
  }
  return out;
}

bool has_constant(const oc_op_def* def) {
  for (int32_t i = 0; i < def->n_inputs; ++i)
    if (def->inputs[i].constant) return true;
  return false;
}

// Whether some binding has `type` (or any type) in column j: what each tensor of a
// heterogeneous variadic input may be, independently of the others.
bool column_takes(const oc_op_def* def, int32_t j, int32_t type) {
  const int32_t width = def->n_inputs + def->n_outputs;
  for (int32_t b = 0; b < def->n_bindings; ++b) {
    const int32_t t = def->bindings[(size_t)b * width + j];
    if (t == 0 || t == type) return true;
  }
  return false;
}

// The first binding (row of def->bindings) that the node's input types and `fixed` (what ORT was
// told, 0: any; nullptr: nothing fixed) agree with; nullptr: none (the op does not take these types).
const int32_t* match_binding(const oc_op_def* def, const int32_t* fixed, const std::vector<int32_t>& types) {
  const int32_t n_in = def->n_inputs, width = def->n_inputs + def->n_outputs;
  if (n_in > 0 && def->inputs[n_in - 1].kind == OC_IO_VARIADIC && !def->inputs[n_in - 1].homogeneous)
    for (size_t i = (size_t)n_in - 1; i < types.size(); ++i)  // ORT checks none of them (its type is "any")
      if (types[i] != 0 && !column_takes(def, n_in - 1, types[i])) return nullptr;
  for (int32_t b = 0; b < def->n_bindings; ++b) {
    const int32_t* r = def->bindings + (size_t)b * width;
    bool ok = true;
    for (int32_t j = 0; fixed && j < width && ok; ++j) ok = fixed[j] == 0 || fixed[j] == r[j];
    for (size_t i = 0; i < types.size() && ok; ++i) {
      if (n_in == 0) return nullptr;
      // a variadic last input: each of its tensors has the declared entry's type, if homogeneous
      const int32_t j = i < (size_t)n_in ? (int32_t)i : n_in - 1;
      if (def->inputs[j].kind == OC_IO_VARIADIC && !def->inputs[j].homogeneous) break;
      ok = types[i] == 0 || r[j] == 0 || types[i] == r[j];
    }
    if (ok) return r;
  }
  return nullptr;
}

// The node's binding for the op ORT picked (once per node).
const int32_t* find_binding(const GlueOp* g, const std::vector<int32_t>& types) {
  return match_binding(g->def, g->row, types);
}

// The session's configuration entries, copied (KernelInfo_GetConfigEntries: ORT >= 1.24).
OrtStatus* read_config(const OrtKernelInfo* info, Config* config) {
  if (g_api24 == nullptr) {
    config->unknown = format("ONNX Runtime %s gives a kernel no session configuration entries (1.24 or newer "
                             "does)", g_ort_version);
    return nullptr;
  }
  OrtKeyValuePairs* kv = nullptr;
  OrtStatus* st = g_api24->KernelInfo_GetConfigEntries(info, &kv);
  if (st || kv == nullptr) return st;
  const char* const* keys = nullptr;
  const char* const* values = nullptr;
  size_t n = 0;
  g_api24->GetKeyValuePairs(kv, &keys, &values, &n);
  for (size_t j = 0; j < n; ++j) config->entries.emplace_back(keys[j], values[j] ? values[j] : "");
  g_api24->ReleaseKeyValuePairs(kv);
  return nullptr;
}

// What create gets of the inputs declared constant (ORT's initializers; string elements copied into
// bytes/elems): per declared input, into consts (dims: OC_MAX_RANK per input). An input the node
// gives that is not an initializer is an error naming it.
OrtStatus* read_constants(const OrtApi* api, const OrtKernelInfo* info, const Kernel* k,
                          const std::vector<int32_t>& types, std::vector<oc_tensor>* consts,
                          std::vector<int64_t>* dims, std::vector<std::vector<char>>* bytes,
                          std::vector<std::vector<oc_string>>* elems) {
  const oc_op_def* def = k->g->def;
  consts->assign((size_t)def->n_inputs, oc_tensor());
  dims->assign((size_t)def->n_inputs * OC_MAX_RANK, 0);
  bytes->resize((size_t)def->n_inputs);
  elems->resize((size_t)def->n_inputs);
  for (int32_t i = 0; i < def->n_inputs; ++i) {
    if (!def->inputs[i].constant) continue;
    oc_tensor& t = (*consts)[(size_t)i];
    memset(&t, 0, sizeof t);
    t.shape = dims->data() + (size_t)i * OC_MAX_RANK;
    t.dtype = k->row[i];
    if ((size_t)i >= types.size() || types[(size_t)i] == 0) continue;  // an optional input the node omits
    int is_constant = 0;
    const OrtValue* v = nullptr;
    OrtStatus* st = api->KernelInfoGetConstantInput_tensor(info, (size_t)i, &is_constant, &v);
    if (st) return st;
    if (!is_constant || v == nullptr)
      return make_status(api, OC_INVALID_ARGUMENT,
                         where(def, k->node, format("input %s must be an initializer of the model (a constant): the "
                                                    "kernel reads it when it is created", def->inputs[i].name)));
    ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    size_t rank = 0, count = 0;
    st = describe(api, v, &type, dims->data() + (size_t)i * OC_MAX_RANK, &rank, &count);
    if (st) return st;
    if (rank > OC_MAX_RANK)
      return make_status(api, OC_INVALID_ARGUMENT,
                         where(def, k->node, format("input %s has rank %zu; ortcustom kernels take at most %d dims",
                                                    def->inputs[i].name, rank, OC_MAX_RANK)));
    t.rank = (int32_t)rank;
    t.size = (int64_t)count;
    t.dtype = (int32_t)type;
    t.present = 1;
    t.device = k->g->cuda && !def->inputs[i].cpu ? OC_CUDA : OC_CPU;
    if (type == ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING) {
      if (count) st = read_string_elements(api, v, count, &(*bytes)[(size_t)i], &(*elems)[(size_t)i]);
      t.data = count ? (*elems)[(size_t)i].data() : nullptr;
    } else {
      st = api->GetTensorMutableData(const_cast<OrtValue*>(v), const_cast<void**>(&t.data));
    }
    if (st) return st;
  }
  return nullptr;
}

OrtStatus* cb_create(const OrtCustomOp* op, const OrtApi* api, const OrtKernelInfo* info, void** out) {
  const GlueOp* g = G(op);
  const oc_op_def* def = g->def;
  *out = nullptr;
  try {
    std::unique_ptr<Kernel> k(new Kernel());
    k->g = g;
    k->api = api;
    k->node = node_name(api, info);
    const std::vector<int32_t> types = node_types(api, info);
    if (g->kernel != nullptr) k->row = find_binding(g, types);
    if (k->row == nullptr)
      return make_status(api, OC_INVALID_ARGUMENT,
                         where(def, k->node, format("no kernel for input types (%s); %s accepts %s",
                                                    node_input_types(api, info, def).c_str(), def->name,
                                                    g->family ? g->family->accepted.c_str()
                                                    : def->accepted ? def->accepted : "other types")));
    std::string err;
    if (!read_attrs(api, info, def, &k->attrs, &err, g_api25, g_ort_version)) return make_status(api, OC_INVALID_ARGUMENT, where(def, k->node, err));
    auto host_error = [&](int rc, char* msg, const char* otherwise) {
      std::string m = msg ? msg : otherwise;
      free(msg);
      return make_status(api, rc, where(def, k->node, m));
    };
    if (def->host_checks && g_hooks.check_attrs) {
      char* msg = nullptr;
      const int rc = g_hooks.check_attrs(def, k->attrs.values.data(), &msg);
      if (rc != OC_OK) return host_error(rc, msg, "invalid attribute");
    }
    if (def->host_shapes && g_hooks.rule_shapes) {
      k->expect.assign((size_t)def->n_outputs * (OC_MAX_RANK + 1), -1);
      char* msg = nullptr;
      const int rc = g_hooks.rule_shapes(def, api, info, k->attrs.values.data(), k->expect.data(), &msg);
      if (rc != OC_OK) return host_error(rc, msg, "a shape rule failed");
    }
    k->ka = kernel_order(g->kernel, def, k->attrs);
    const oc_kernel* kd = g->kernel;
    std::vector<oc_tensor> consts;
    std::vector<int64_t> const_dims;
    std::vector<std::vector<char>> const_bytes;
    std::vector<std::vector<oc_string>> const_elems;
    if (has_constant(def)) {
      OrtStatus* st = read_constants(api, info, k.get(), types, &consts, &const_dims, &const_bytes, &const_elems);
      if (st) return st;
    }
    if (OrtStatus* st = read_config(info, &k->config)) return st;
    if (kd->create) {
      CreateRun r(def, kd, g->cuda ? OC_CUDA : OC_CPU, k->row, k->ka, consts.empty() ? nullptr : consts.data(),
                  &k->config);
      const int rc = r.create(&k->state);
      if (rc != OC_OK) return make_status(api, rc, where(def, k->node, r.message()));
    }
    *out = k.release();
    g_live_kernels.fetch_add(1);
    return nullptr;
  } catch (const std::bad_alloc&) {
    return make_status(api, OC_FAIL, where(def, "", "out of memory at kernel creation"));
  }
}

void cb_destroy(void* kernel) { destroy_kernel(static_cast<Kernel*>(kernel)); }

// ---- the per-run trampoline --------------------------------------------------------------------

enum { kStackInputs = 16 };

class OrtRun : public Run {
 public:
  OrtRun(const Kernel* k, OrtKernelContext* ctx)
      : Run(k->g->def, k->g->kernel, k->g->cuda ? OC_CUDA : OC_CPU), k_(k), api_(k->api), ctx_(ctx) {
    if (!k->expect.empty()) expect_ = k->expect.data();
    config_ = &k->config;
  }
  ~OrtRun() override {
    if (alloc_) api_->ReleaseAllocator(alloc_);
  }

  OrtStatus* run();

 protected:
  int alloc_output(int32_t i, const int64_t* shape, int32_t rank, void** data) override {
    if ((size_t)i >= node_outputs_) return OC_OK;  // an optional output the node omits
    OrtValue* v = nullptr;
    OrtStatus* st = api_->KernelContext_GetOutput(ctx_, (size_t)i, shape, (size_t)rank, &v);
    if (!st && v && output_dtype(i) == OC_STRING) {  // its elements: store_string
      if (string_out_.size() < (size_t)c.n_outputs) string_out_.resize((size_t)c.n_outputs, nullptr);
      string_out_[(size_t)i] = v;
      return OC_OK;
    }
    if (!st && v) st = api_->GetTensorMutableData(v, data);
    return st ? status_fail(st) : OC_OK;
  }
  int store_string(int32_t i, int64_t j, const char* p, int64_t n) override {
    OrtValue* v = (size_t)i < string_out_.size() ? string_out_[(size_t)i] : nullptr;
    if (v == nullptr) return OC_OK;  // an optional output the node omits
    char* buf = nullptr;
    OrtStatus* st = api_->GetResizedStringTensorElementBuffer(v, (size_t)j, (size_t)n, &buf);
    if (st) return status_fail(st);
    if (n > 0) memcpy(buf, p, (size_t)n);
    return OC_OK;
  }
  int alloc_device_scratch(size_t bytes, void** data) override;
  void free_device_scratch(void* p) override {
    if (alloc_) release(api_->AllocatorFree(alloc_, p));
  }
  void run_tasks(size_t n, oc_task_fn fn, void* arg) override {
    OrtStatus* st = api_->KernelContext_ParallelFor(ctx_, fn, n, 0, arg);
    if (st == nullptr) return;
    api_->ReleaseStatus(st);  // no pool: run them here
    for (size_t i = 0; i < n; ++i) fn(arg, i);
  }
  bool output_wanted(int32_t i) const override { return (size_t)i < node_outputs_ && Run::output_wanted(i); }

 private:
  void release(OrtStatus* st) {
    if (st) api_->ReleaseStatus(st);
  }
  int status_fail(OrtStatus* st) {
    const int rc = fail(OC_FAIL, api_->GetErrorMessage(st));
    api_->ReleaseStatus(st);
    return rc;
  }
  OrtStatus* read_input(size_t i, oc_tensor* t, int64_t* dims);

  const Kernel* k_;
  const OrtApi* api_;
  OrtKernelContext* ctx_;
  size_t node_outputs_ = 0;
  const OrtMemoryInfo* mem_ = nullptr;  // of the first device input (device scratch)
  OrtAllocator* alloc_ = nullptr;
  std::vector<OrtValue*> string_out_;  // per output: the string tensor store_string writes
  // the string inputs' bytes and elements (read_string_elements: one copy per run)
  std::vector<std::vector<char>> string_bytes_;
  std::vector<std::vector<oc_string>> string_elems_;
};


OrtStatus* OrtRun::read_input(size_t i, oc_tensor* t, int64_t* dims) {
  const OrtValue* v = nullptr;
  OrtTensorTypeAndShapeInfo* info = nullptr;
  size_t rank = 0, count = 0;
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  memset(t, 0, sizeof *t);
  t->shape = dims;
  OrtStatus* st = api_->KernelContext_GetInput(ctx_, i, &v);
  if (st || v == nullptr) return st;  // absent: an optional input the node leaves out
  auto too_many_dims = [&]() {
    const oc_io_def& d = k_->g->def->inputs[i < (size_t)k_->g->def->n_inputs ? i : k_->g->def->n_inputs - 1];
    return make_status(api_, OC_INVALID_ARGUMENT,
                       where(k_->g->def, k_->node, format("input %s has rank %zu; ortcustom kernels take at most %d dims",
                                                          d.name, rank, OC_MAX_RANK)));
  };
  if (g_api24) {  // ORT >= 1.24: type and a view of the dims, nothing allocated per input and run
    const int64_t* shape = nullptr;
    st = g_api24->GetTensorElementTypeAndShapeDataReference(v, &type, &shape, &rank);
    if (st) return st;
    if (rank > OC_MAX_RANK) return too_many_dims();
    count = 1;
    for (size_t d = 0; d < rank; ++d) {
      dims[d] = shape[d];
      count *= (size_t)shape[d];
    }
  } else {
    st = api_->GetTensorTypeAndShape(v, &info);
    if (st) return st;
    st = api_->GetDimensionsCount(info, &rank);
    if (!st && rank > OC_MAX_RANK) {
      api_->ReleaseTensorTypeAndShapeInfo(info);
      return too_many_dims();
    }
    if (!st) st = api_->GetDimensions(info, dims, rank);
    if (!st) st = api_->GetTensorElementType(info, &type);
    if (!st) st = api_->GetTensorShapeElementCount(info, &count);
    api_->ReleaseTensorTypeAndShapeInfo(info);
  }
  if (st) return st;
  t->rank = (int32_t)rank;
  t->dtype = (int32_t)type;
  t->size = (int64_t)count;
  if (type == ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING) {
    t->data = nullptr;
    if (count) {
      string_bytes_.emplace_back();
      string_elems_.emplace_back();
      st = read_string_elements(api_, v, count, &string_bytes_.back(), &string_elems_.back());
      t->data = string_elems_.back().data();
    }
  } else {
    st = api_->GetTensorMutableData(const_cast<OrtValue*>(v), const_cast<void**>(&t->data));
  }
  if (st) return st;
  t->present = 1;
  t->device = OC_CPU;
  const oc_op_def* def = k_->g->def;
  if (k_->g->cuda && !def->inputs[i < (size_t)def->n_inputs ? i : def->n_inputs - 1].cpu) {
    t->device = OC_CUDA;
    if (mem_ == nullptr) {
      OrtStatus* ms = api_->GetTensorMemoryInfo(v, &mem_);
      if (ms) {
        mem_ = nullptr;
        api_->ReleaseStatus(ms);
      }
    }
  }
  return nullptr;
}

int OrtRun::alloc_device_scratch(size_t bytes, void** data) {
  if (g_api18 == nullptr) return fail(OC_FAIL, "device scratch memory needs ONNX Runtime >= 1.18");
  if (mem_ == nullptr) return fail(OC_FAIL, "device scratch memory needs an input on the device");
  if (alloc_ == nullptr) {  // first, so that nothing is held when it fails
    OrtStatus* st = api_->KernelContext_GetAllocator(ctx_, mem_, &alloc_);
    if (st) {
      alloc_ = nullptr;
      return status_fail(st);
    }
  }
  OrtStatus* st = nullptr;
  try {  // ORT's arena throws when it is out of memory: never across the kernel's frames
    st = g_api18->KernelContext_GetScratchBuffer(ctx_, mem_, bytes, data);
  } catch (...) {
    *data = nullptr;
    return fail(OC_OUT_OF_MEMORY, "ONNX Runtime could not allocate the memory");
  }
  if (st) return status_fail(st);
  return *data ? OC_OK : fail(OC_OUT_OF_MEMORY, "ONNX Runtime returned no memory");
}

OrtStatus* OrtRun::run() {
  const oc_op_def* def = k_->g->def;
  size_t n_in = 0;
  OrtStatus* st = api_->KernelContext_GetInputCount(ctx_, &n_in);
  if (!st) st = api_->KernelContext_GetOutputCount(ctx_, &node_outputs_);
  if (st) return st;
  const size_t given = n_in;
  if (n_in < (size_t)def->n_inputs) n_in = (size_t)def->n_inputs;  // trailing omitted optional inputs
  oc_tensor stack_in[kStackInputs];
  int64_t stack_dims[kStackInputs][OC_MAX_RANK];
  std::unique_ptr<oc_tensor[]> heap_in;
  std::unique_ptr<int64_t[]> heap_dims;
  oc_tensor* ins = stack_in;
  int64_t* dims = &stack_dims[0][0];
  if (n_in > kStackInputs) {
    heap_in.reset(new (std::nothrow) oc_tensor[n_in]);
    heap_dims.reset(new (std::nothrow) int64_t[n_in * OC_MAX_RANK]);
    if (!heap_in || !heap_dims) return make_status(api_, OC_FAIL, where(def, k_->node, "out of memory"));
    ins = heap_in.get();
    dims = heap_dims.get();
  }
  for (size_t i = 0; i < n_in; ++i) {
    if (i >= given) {
      memset(&ins[i], 0, sizeof ins[i]);
      ins[i].shape = dims + i * OC_MAX_RANK;
      continue;
    }
    st = read_input(i, &ins[i], dims + i * OC_MAX_RANK);
    if (st) return st;
  }
  c.inputs = ins;
  c.n_inputs = (int32_t)n_in;
  c.n_outputs = (int32_t)(node_outputs_ > (size_t)def->n_outputs ? node_outputs_ : (size_t)def->n_outputs);
  c.attrs = k_->ka.data();
  c.n_attrs = (int32_t)k_->ka.size();
  c.state = k_->state;
  c.dtypes = k_->row;
  if (k_->g->cuda) {
    st = api_->KernelContext_GetGPUComputeStream(ctx_, &c.stream);
    if (!st && c.stream == nullptr)
      return make_status(api_, OC_FAIL, where(def, k_->node, "ONNX Runtime gave no CUDA stream to run on"));
    if (st) return st;
    int id = 0;
    if (mem_) {
      OrtStatus* ms = api_->MemoryInfoGetId(mem_, &id);
      if (ms) api_->ReleaseStatus(ms);
      else c.device_id = id;
    }
  }
  const int rc = compute();
  return rc == OC_OK ? nullptr : make_status(api_, rc, where(def, k_->node, message()));
}

OrtStatus* cb_compute(void* kernel, OrtKernelContext* ctx) {
  const Kernel* k = static_cast<const Kernel*>(kernel);
  try {
    OrtRun r(k, ctx);
    return r.run();
  } catch (const std::bad_alloc&) {
    return make_status(k->api, OC_FAIL, where(k->g->def, k->node, "out of memory"));
  }
}

// ---- shape inference ---------------------------------------------------------------------------

std::atomic<unsigned long> g_unknown_dims{0};

void copy_shape(const OrtApi* api, OrtShapeInferContext* ctx, const GlueOp* g, int32_t o) {
  const oc_op_def* def = g->def;
  const int32_t src = def->outputs[o].shape_of;
  OrtTensorTypeAndShapeInfo* in = nullptr;
  size_t rank = 0;
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  OrtStatus* st = api->ShapeInferContext_GetInputTypeShape(ctx, (size_t)src, &in);
  if (st || in == nullptr) {
    if (st) api->ReleaseStatus(st);
    return;
  }
  int64_t dims[OC_MAX_RANK];
  const char* names[OC_MAX_RANK];
  st = api->GetDimensionsCount(in, &rank);
  // ORT reports an input of unknown shape as rank 0: declare nothing rather than a wrong shape
  if (!st && (rank == 0 || rank > OC_MAX_RANK)) return;
  if (!st) st = api->GetDimensions(in, dims, rank);
  if (!st) st = api->GetSymbolicDimensions(in, names, rank);
  if (!st) st = api->GetTensorElementType(in, &type);
  if (st) {
    api->ReleaseStatus(st);
    return;
  }
  int32_t out_type = g->type_of[o] >= 0 ? -1 : g->fixed_type[o];
  if (g->type_of[o] >= 0) {
    if (g->type_of[o] == src) {
      out_type = (int32_t)type;
    } else {
      OrtTensorTypeAndShapeInfo* other = nullptr;
      ONNXTensorElementDataType t = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
      st = api->ShapeInferContext_GetInputTypeShape(ctx, (size_t)g->type_of[o], &other);
      if (!st && other) st = api->GetTensorElementType(other, &t);
      if (st) api->ReleaseStatus(st);
      out_type = st || !other ? 0 : (int32_t)t;
    }
  }
  if (out_type <= 0) return;
  // An unknown dim (no value, no name) gets a name of its own: ORT takes two dims of one name as
  // one size, so a name shared by nodes (or none: ORT then writes -1) would be wrong.
  std::string fresh[OC_MAX_RANK];
  for (size_t d = 0; d < rank; ++d) {
    if (dims[d] < 0 && (names[d] == nullptr || names[d][0] == 0)) {
      fresh[d] = format("ortcustom_unk_%lu", g_unknown_dims.fetch_add(1) + 1);
      names[d] = fresh[d].c_str();
    } else if (names[d] == nullptr) {
      names[d] = "";
    }
  }
  OrtTensorTypeAndShapeInfo* info = nullptr;
  st = api->CreateTensorTypeAndShapeInfo(&info);
  if (!st) st = api->SetTensorElementType(info, (ONNXTensorElementDataType)out_type);
  if (!st) st = api->SetDimensions(info, dims, rank);
  if (!st) st = api->SetSymbolicDimensions(info, names, rank);
  if (!st) st = api->ShapeInferContext_SetOutputTypeShape(ctx, (size_t)o, info);
  if (st) api->ReleaseStatus(st);
  if (info) api->ReleaseTensorTypeAndShapeInfo(info);
}

// The first OrtCustomOp of the sibling whose declaration takes the node's input types; nullptr: none.
const GlueOp* sibling_of(const OrtApi* api, OrtShapeInferContext* ctx, const Family* family) {
  size_t n = 0;
  OrtStatus* st = api->ShapeInferContext_GetInputCount(ctx, &n);
  if (st) {
    api->ReleaseStatus(st);
    return nullptr;
  }
  std::vector<int32_t> types(n, 0);
  for (size_t i = 0; i < n; ++i) {
    OrtTensorTypeAndShapeInfo* info = nullptr;
    ONNXTensorElementDataType t = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    st = api->ShapeInferContext_GetInputTypeShape(ctx, i, &info);
    if (!st && info) st = api->GetTensorElementType(info, &t);
    if (st) api->ReleaseStatus(st);
    else types[i] = (int32_t)t;
  }
  for (size_t k = 0; k < family->defs.size(); ++k)
    if (family->first[k] && match_binding(family->defs[k], nullptr, types)) return family->first[k];
  return nullptr;
}

OrtStatus* cb_infer(const OrtCustomOp* op, OrtShapeInferContext* ctx) {
  // ORT ignores (and leaks) a status returned from here: an output whose shape cannot be said is
  // left unknown, never declared wrong.
  const GlueOp* g = G(op);
  const OrtApi* api = g_api;
  if (api == nullptr) return nullptr;
  try {
    if (g->family) {  // ORT asks one of them for every node of the name: speak as the node's sibling
      g = sibling_of(api, ctx, g->family);
      if (g == nullptr) return nullptr;
    }
    if (g->def->host_shapes) {
      if (g_hooks.infer_shapes) g_hooks.infer_shapes(g->def, api, ctx);
      return nullptr;
    }
    for (int32_t o = 0; o < g->def->n_outputs; ++o)
      if (g->def->outputs[o].shape_of >= 0 && g->def->outputs[o].kind != OC_IO_VARIADIC) copy_shape(api, ctx, g, o);
  } catch (...) {
  }
  return nullptr;
}

// ---- building and registering ------------------------------------------------------------------

bool older_runtime(const OrtApiBase* base, int minor) {
  int major = 0, mnr = 0;
  return sscanf(base->GetVersionString(), "%d.%d", &major, &mnr) == 2 && major == 1 && mnr < minor;
}

// ORT 1.17-1.23 dereference a missing optional input's type when they set up a custom op's shape
// inference, and crash, if a later input is given (`X, "", scale`): there, such ops get none.
bool shape_fn_safe(const oc_op_def* def, const OrtApiBase* base) {
  bool inner_optional = false;
  for (int32_t i = 0; i + 1 < def->n_inputs; ++i) inner_optional |= def->inputs[i].kind == OC_IO_OPTIONAL;
  return !inner_optional || !older_runtime(base, 24);
}

GlueOp* make_op(const oc_op_def* def, const oc_kernel* kernel, const std::vector<int32_t>& row, bool cuda,
                bool shapes) {
  std::unique_ptr<int32_t[]> owned(new int32_t[row.empty() ? 1 : row.size()]());
  std::copy(row.begin(), row.end(), owned.get());
  const size_t n_out = def->n_outputs > 0 ? (size_t)def->n_outputs : 1;
  std::unique_ptr<int32_t[]> type_of(new int32_t[n_out]()), fixed_type(new int32_t[n_out]());
  GlueOp* g = new GlueOp();
  memset(&g->op, 0, sizeof g->op);
  g->def = def;
  g->kernel = kernel;
  g->cuda = cuda;
  g->row = owned.release();
  g->type_of = type_of.release();
  g->fixed_type = fixed_type.release();
  const int32_t n_in = def->n_inputs, width = def->n_inputs + def->n_outputs;
  for (int32_t o = 0; o < def->n_outputs; ++o) {
    g->type_of[o] = -1;
    g->fixed_type[o] = def->n_bindings > 0 ? def->bindings[n_in + o] : 0;
    for (int32_t b = 1; b < def->n_bindings; ++b)
      if (def->bindings[(size_t)b * width + n_in + o] != g->fixed_type[o]) g->fixed_type[o] = 0;
    for (int32_t i = 0; i < n_in && g->type_of[o] < 0 && g->fixed_type[o] == 0; ++i) {
      bool same = true;
      for (int32_t b = 0; b < def->n_bindings && same; ++b) {
        const int32_t* r = def->bindings + (size_t)b * width;
        same = r[i] == r[n_in + o];
      }
      if (same) g->type_of[o] = i;
    }
  }
  OrtCustomOp& op = g->op;
  op.version = kOpVersion;
  op.GetName = cb_name;
  op.GetExecutionProviderType = cb_provider;
  op.GetInputType = cb_in_type;
  op.GetInputTypeCount = cb_in_count;
  op.GetOutputType = cb_out_type;
  op.GetOutputTypeCount = cb_out_count;
  op.GetInputCharacteristic = cb_in_char;
  op.GetOutputCharacteristic = cb_out_char;
  op.GetInputMemoryType = cb_in_mem;
  op.GetVariadicInputMinArity = cb_in_min_arity;
  op.GetVariadicInputHomogeneity = cb_in_homogeneous;
  op.GetVariadicOutputMinArity = cb_out_min_arity;
  op.GetVariadicOutputHomogeneity = cb_out_homogeneous;
  op.CreateKernelV2 = cb_create;
  op.KernelComputeV2 = cb_compute;
  op.KernelDestroy = cb_destroy;
  if (shapes) op.InferOutputShapeFn = cb_infer;
  op.GetStartVersion = cb_since;
  op.GetEndVersion = cb_until;
  return g;
}

void free_op(GlueOp* g) {
  delete[] g->row;
  delete[] g->type_of;
  delete[] g->fixed_type;
  delete g;
}

// What ORT is told of an op, one entry per OrtCustomOp (see plan_family).
struct OpPlan {
  std::vector<int32_t> row;  // element types per input then output; 0: any
  int device;                // OC_CPU or OC_CUDA
  bool guard;
  int32_t def;               // which sibling's (index into the family's defs)
};

// The columns ORT must be told concretely for `def` alone: every output, and the inputs whose type
// is an output's (in every binding).
std::vector<bool> typing_columns(const oc_op_def* def) {
  const int32_t n_in = def->n_inputs, width = def->n_inputs + def->n_outputs;
  std::vector<bool> keep(width, true);
  for (int32_t i = 0; i < n_in; ++i) {
    if (!def->inputs[i].constrained) continue;
    bool types_an_output = false;
    for (int32_t o = 0; o < def->n_outputs && !types_an_output; ++o) {
      if (!def->outputs[o].constrained) continue;
      bool same = true;
      for (int32_t b = 0; b < def->n_bindings && same; ++b) {
        const int32_t* r = def->bindings + (size_t)b * width;
        same = r[i] == r[n_in + o];
      }
      types_an_output = same;
    }
    keep[i] = types_an_output;
  }
  return keep;
}

// An input column whose tensors ORT checks one by one against nothing (a heterogeneous variadic).
bool unchecked_column(const oc_op_def* def, int32_t j) {
  return def->inputs[j].kind == OC_IO_VARIADIC && !def->inputs[j].homogeneous;
}

// Whether one node's input types could match both rows (each column equal, or "any" in one).
bool collide(const oc_op_def* def, const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  for (int32_t j = 0; j < def->n_inputs; ++j)
    if (!unchecked_column(def, j) && a[j] != b[j] && a[j] != 0 && b[j] != 0) return false;
  return true;
}

// Per provider with a kernel (CPU, then CUDA), one OrtCustomOp per distinct combination of the
// types that ORT must see: every output's (ORT infers output types from the first op whose input
// types match the node: an output typed "any" would get a guessed type) and the inputs whose type
// is an output's; an input whose type constraint types no output is "any" (0), its type found by
// the kernel's binding search (find_binding). So the count grows with the types of the outputs,
// never with the product of independent input constraints. Siblings (several declarations of one
// name): an input column is also made concrete, for all of them, while one's op could match a node
// meant for another's (ORT runs the first that matches). Then the type guard: every constrained
// type "any", CPU (the CUDA provider leaves to CPU a node it has no kernel for), last so that ORT
// picks the others first; it fails kernel creation, naming the node's types.
std::vector<OpPlan> plan_family(const std::vector<const oc_op_def*>& defs) {
  const oc_op_def* d0 = defs[0];
  const int32_t n_in = d0->n_inputs, width = d0->n_inputs + d0->n_outputs;
  std::vector<std::vector<bool>> keep;
  for (const oc_op_def* def : defs) keep.push_back(typing_columns(def));
  std::vector<bool> extra(width, false);
  std::vector<OpPlan> out;
  for (;;) {
    out.clear();
    for (int device : {OC_CPU, OC_CUDA}) {
      for (size_t k = 0; k < defs.size(); ++k) {
        const oc_op_def* def = defs[k];
        if ((device == OC_CPU ? def->cpu : def->cuda) == nullptr) continue;
        std::set<std::vector<int32_t>> seen;
        for (int32_t b = 0; b < def->n_bindings; ++b) {
          const int32_t* r = def->bindings + (size_t)b * width;
          // string tensors live on the host: such a binding runs on the CPU provider only
          if (device == OC_CUDA && std::find(r, r + width, (int32_t)OC_STRING) != r + width) continue;
          std::vector<int32_t> row(width);
          for (int32_t j = 0; j < width; ++j) row[j] = keep[k][j] || extra[j] ? r[j] : 0;
          if (seen.insert(row).second) out.push_back({row, device, false, (int32_t)k});
        }
      }
    }
    int32_t add = -1;
    for (size_t p = 0; p < out.size() && add < 0; ++p)
      for (size_t q = p + 1; q < out.size() && add < 0; ++q) {
        if (out[p].def == out[q].def || out[p].device != out[q].device || !collide(d0, out[p].row, out[q].row)) continue;
        for (int32_t j = 0; j < n_in && add < 0; ++j)
          if (!extra[j] && !unchecked_column(d0, j) && (out[p].row[j] == 0 || out[q].row[j] == 0)) add = j;
      }
    if (add < 0) break;  // none, or rows alike (declarations that overlap: refused by Domain.add)
    extra[add] = true;
  }
  bool constrained = false;
  for (const oc_op_def* def : defs)
    for (int32_t j = 0; j < n_in; ++j) constrained |= def->inputs[j].constrained != 0;
  constrained |= defs.size() > 1;
  bool any_bindings = false;
  for (const oc_op_def* def : defs) any_bindings |= def->n_bindings > 0;
  if (constrained && any_bindings) {
    std::vector<int32_t> row(width, 0);
    for (int32_t j = 0; j < width; ++j) {
      bool first = true;
      for (const oc_op_def* def : defs) {  // a type all siblings fix alike stays; any other: any
        const oc_io_def& io = j < n_in ? def->inputs[j] : def->outputs[j - n_in];
        const int32_t t = io.constrained || def->n_bindings == 0 ? 0 : def->bindings[j];
        row[j] = first || row[j] == t ? t : 0;
        first = false;
      }
    }
    out.push_back({row, OC_CPU, true, 0});
  }
  return out;
}

// The OrtCustomOps of one family (a single def is one of its own), in plan order; `family` is
// filled in (its defs given) and pointed to when there are several.
std::vector<GlueOp*> make_ops(Family* family, const OrtApiBase* base) {
  std::vector<GlueOp*> out;
  const std::vector<const oc_op_def*>& defs = family->defs;
  const bool shapes = shape_fn_safe(defs[0], base);
  const bool several = defs.size() > 1;
  try {
    family->first.assign(defs.size(), nullptr);
    for (const OpPlan& p : plan_family(defs)) {
      const oc_op_def* def = defs[(size_t)p.def];
      out.push_back(make_op(def, p.guard ? nullptr : p.device == OC_CUDA ? def->cuda : def->cpu, p.row,
                            p.device == OC_CUDA, shapes));
      out.back()->family = several ? family : nullptr;
      if (!p.guard && family->first[(size_t)p.def] == nullptr) family->first[(size_t)p.def] = out.back();
    }
  } catch (...) {
    for (GlueOp* g : out) free_op(g);
    throw;
  }
  return out;
}

std::mutex g_mu;

// What this copy of the glue made for ORT, per domain def: made once, added to every SessionOptions
// the domain is registered into (memory bounded by the defs), freed when the glue is unloaded: ORT
// dlcloses a plain library once the options and sessions that loaded it are gone, which runs this
// destructor. At process exit a session may still hold our ops (a kernel alive): then nothing is
// freed. Releasing a domain only frees ORT's small struct (it is not looked at once sessions exist).
struct Made {
  OrtCustomOpDomain* domain = nullptr;
  std::vector<GlueOp*> ops;
  std::vector<Family*> families;  // freed with the ops (they point at them)
};
struct Registry {
  const OrtApi* api = nullptr;
  std::unordered_map<const oc_domain_def*, Made> made;
  ~Registry() {
    if (api == nullptr || g_live_kernels.load() != 0) return;
    for (auto& kv : made) {
      if (kv.second.domain) api->ReleaseCustomOpDomain(kv.second.domain);
      for (GlueOp* g : kv.second.ops) free_op(g);
      for (Family* f : kv.second.families) delete f;
    }
  }
};
Registry g_registry;

std::string span(const oc_op_def* d) {
  return d->until == INT32_MAX ? format("[%d, inf]", d->since) : format("[%d, %d]", d->since, d->until);
}

// Why ORT cannot be given `dom` as it is ("" when it can). ORT makes one schema per custom op name
// and domain, from the first op of that name, and never tells a custom op which opset of its
// domain a model imports: of several versions of one op it runs the first for every model, and an
// op's `until` is not enforced. opset: the one the models import, when the host knows it (Python:
// Domain.at(v)); 0: unknown.
std::string check_versions(const oc_domain_def* dom, int32_t opset) {
  for (int32_t i = 0; i < dom->n_ops; ++i) {
    const oc_op_def* d = dom->ops[i];
    bool first = true, versions = false;
    std::string spans;
    for (int32_t j = 0; j < dom->n_ops; ++j) {
      const oc_op_def* e = dom->ops[j];
      if (strcmp(e->name, d->name) != 0) continue;
      if (j < i) first = false;
      if (e->since != d->since || e->until != d->until) versions = true;
      if (spans.find(span(e)) == std::string::npos) spans += (spans.empty() ? "" : ", ") + span(e);
    }
    if (!first) continue;
    if (versions)
      return format("domain '%s' declares op '%s' for versions %s; ONNX Runtime takes one version of a custom "
                    "op per domain (it does not tell a custom op which opset a model imports): register one "
                    "(Python: domain.at(<the model's opset for '%s'>))",
                    dom->name, d->name, spans.c_str(), dom->name);
    for (int32_t j = i + 1; j < dom->n_ops; ++j) {  // siblings: ORT's one schema needs one interface
      const oc_op_def* e = dom->ops[j];
      if (strcmp(e->name, d->name) != 0) continue;
      bool alike = e->n_inputs == d->n_inputs && e->n_outputs == d->n_outputs;
      for (int32_t k = 0; alike && k < d->n_inputs; ++k)
        alike = e->inputs[k].kind == d->inputs[k].kind && e->inputs[k].min_arity == d->inputs[k].min_arity &&
                e->inputs[k].homogeneous == d->inputs[k].homogeneous;
      for (int32_t k = 0; alike && k < d->n_outputs; ++k)
        alike = e->outputs[k].kind == d->outputs[k].kind && e->outputs[k].min_arity == d->outputs[k].min_arity &&
                e->outputs[k].homogeneous == d->outputs[k].homogeneous;
      if (!alike)
        return format("domain '%s' declares op '%s' twice with different inputs or outputs; declarations of "
                      "one name differ in element types only (ONNX Runtime makes one schema per name)",
                      dom->name, d->name);
    }
    if (d->until != INT32_MAX && opset == 0)
      return format("domain '%s' declares op '%s' for versions %s only; ONNX Runtime does not tell a custom op "
                    "which opset a model imports and would run it for a model at any opset of '%s' from %d "
                    "on: declare it without until, or register the domain at the models' opset "
                    "(Python: domain.at(<the model's opset for '%s'>))",
                    dom->name, d->name, spans.c_str(), dom->name, d->since, dom->name);
  }
  return "";
}

// ---- one registration of a domain per SessionOptions ---------------------------------------------
// ORT fails session creation with a bare "Domain already set in registry" when two registrations
// put one domain name into one SessionOptions, and offers no way to list its domains. So each
// registration leaves a record in the options themselves, a session config entry per domain name
// naming who registered it: every copy of the glue (each plain library, the Python module) sees it,
// and it dies with the options (no stale record when an address is reused).
const char* const kRecordPrefix = "ortcustom.domain.";

// The file this copy of the glue was loaded from (dl_iterate_phdr: in libc itself, unlike dladdr on
// older glibc).
int find_self(struct dl_phdr_info* info, size_t, void* data) {
  auto* want = static_cast<std::pair<uintptr_t, std::string>*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && want->first >= start && want->first < start + ph.p_memsz) {
      want->second = info->dlpi_name ? info->dlpi_name : "";
      return 1;
    }
  }
  return 0;
}

std::string this_source() {
  if (g_hooks.infer_shapes != nullptr) return "ortcustom.register (Python)";
  std::pair<uintptr_t, std::string> self(reinterpret_cast<uintptr_t>(&find_self), "");
  dl_iterate_phdr(find_self, &self);
  return self.second.empty() ? "a plain library" : "the library " + self.second;
}

// "<who> (ops A, B) #<the def's address>": equal records mean the same registration again.
std::string record_of(const oc_domain_def* dom) {
  std::string ops;
  for (int32_t i = 0; i < dom->n_ops; ++i) ops += (i ? ", " : "") + std::string(dom->ops[i]->name);
  if (ops.size() > 600) ops = ops.substr(0, 600) + "...";  // ORT caps a value's length
  return format("%s (ops %s) #%p", this_source().c_str(), ops.c_str(), (const void*)dom);
}

std::string who_of(const std::string& record) { return record.substr(0, record.rfind(" #")); }

// The record of `name` in `options`, "" when none (or the runtime cannot say).
std::string read_record(const OrtApi* api, const OrtSessionOptions* options, const char* name) {
  const std::string key = kRecordPrefix + std::string(name);
  int has = 0;
  OrtStatus* st = api->HasSessionConfigEntry(options, key.c_str(), &has);
  if (st || !has) {
    if (st) api->ReleaseStatus(st);
    return "";
  }
  size_t n = 0;
  st = api->GetSessionConfigEntry(options, key.c_str(), nullptr, &n);
  std::string out(n, '\0');
  if (!st && n) st = api->GetSessionConfigEntry(options, key.c_str(), &out[0], &n);
  if (st) {
    api->ReleaseStatus(st);
    return "";
  }
  out.resize(n > 0 ? n - 1 : 0);
  return out;
}

std::string conflict(const char* name, const std::string& had, const std::string& now) {
  return format("ortcustom: domain '%s' is registered twice into one SessionOptions, by %s and by %s; ONNX "
                "Runtime takes one registration per domain name: put all its ops in one registration (one "
                "Domain in Python, or one library)",
                name, who_of(had).c_str(), who_of(now).c_str());
}

}  // namespace

}  // namespace oc_glue

using namespace oc_glue;

extern "C" void oc_glue_set_hooks(const oc_glue_hooks* hooks) { g_hooks = *hooks; }

extern "C" int oc_glue_check_kernel(const oc_op_def* op, const oc_kernel* kernel, char* message, size_t cap) {
  std::string why = check_kernel(op, kernel);
  if (why.empty()) return 0;
  snprintf(message, cap, "%s", why.c_str());
  return -1;
}

extern "C" int oc_glue_check_domain(const oc_domain_def* domain, int32_t opset, char* message, size_t cap) {
  std::string why = check_versions(domain, opset);
  if (why.empty()) return 0;
  snprintf(message, cap, "%s", why.c_str());
  return -1;
}

extern "C" int32_t oc_glue_plan(const oc_op_def* const* family, int32_t n_family, int32_t* rows, int32_t* devices,
                                int32_t* guards, int32_t* which, int32_t cap) {
  const std::vector<OpPlan> plan = plan_family(std::vector<const oc_op_def*>(family, family + n_family));
  const int32_t width = family[0]->n_inputs + family[0]->n_outputs;
  for (size_t p = 0; p < plan.size() && (int32_t)p < cap; ++p) {
    std::copy(plan[p].row.begin(), plan[p].row.end(), rows + p * width);
    devices[p] = plan[p].device;
    guards[p] = plan[p].guard;
    which[p] = plan[p].def;
  }
  return (int32_t)plan.size();
}

extern "C" OrtStatus* oc_glue_register(OrtSessionOptions* options, const OrtApiBase* base,
                                       const oc_domain_def* const* domains, int32_t n_domains) {
  return oc_glue_register_at(options, base, domains, nullptr, n_domains);
}

extern "C" OrtStatus* oc_glue_register_at(OrtSessionOptions* options, const OrtApiBase* base,
                                          const oc_domain_def* const* domains, const int32_t* opsets,
                                          int32_t n_domains) {
  const OrtApi* api = base->GetApi(ORTCUSTOM_ORT_API_VERSION);
  if (api == nullptr) {  // an older runtime: its first table can still make the status
    return base->GetApi(1)->CreateStatus(
        ORT_FAIL, format("ortcustom's custom ops need ONNX Runtime >= 1.%d; this one is %s",
                         ORTCUSTOM_ORT_API_VERSION, base->GetVersionString()).c_str());
  }
  try {
    std::lock_guard<std::mutex> lock(g_mu);
    g_api = api;
    if (g_api18 == nullptr && !older_runtime(base, ORTCUSTOM_ORT_API_OPTIONAL))
      g_api18 = base->GetApi(ORTCUSTOM_ORT_API_OPTIONAL);  // an older ORT would print an error
    if (g_api24 == nullptr && !older_runtime(base, ORTCUSTOM_ORT_API_SHAPE_REF))
      g_api24 = base->GetApi(ORTCUSTOM_ORT_API_SHAPE_REF);
    if (g_api25 == nullptr && !older_runtime(base, ORTCUSTOM_ORT_API_STRINGS))
      g_api25 = base->GetApi(ORTCUSTOM_ORT_API_STRINGS);
    g_ort_version = base->GetVersionString();
    if (g_registry.api == nullptr) g_registry.api = api;
    // First what may be refused, so that a refusal adds nothing.
    std::vector<std::string> records(n_domains);
    std::vector<bool> again(n_domains, false);
    for (int32_t d = 0; d < n_domains; ++d) {
      const oc_domain_def* dom = domains[d];
      std::string why = check_versions(dom, opsets ? opsets[d] : 0);
      if (!why.empty()) return api->CreateStatus(ORT_FAIL, ("ortcustom: " + why).c_str());
      for (int32_t i = 0; i < dom->n_ops; ++i) {
        const oc_op_def* def = dom->ops[i];
        for (const oc_kernel* k : {def->cpu, def->cuda}) {
          why = k ? check_kernel(def, k) : std::string();
          if (!why.empty())
            return api->CreateStatus(ORT_FAIL, format("ortcustom: %s::%s: %s", dom->name, def->name, why.c_str()).c_str());
        }
      }
      records[d] = record_of(dom);
      std::string had = read_record(api, options, dom->name);
      for (int32_t e = 0; e < d && had.empty(); ++e)
        if (strcmp(domains[e]->name, dom->name) == 0) had = records[e];
      if (!had.empty() && had != records[d]) return api->CreateStatus(ORT_FAIL, conflict(dom->name, had, records[d]).c_str());
      again[d] = !had.empty();
    }
    for (int32_t d = 0; d < n_domains; ++d) {
      if (again[d]) continue;  // the same registration again: already there
      const oc_domain_def* dom = domains[d];
      auto found = g_registry.made.find(dom);
      if (found == g_registry.made.end()) {
        Made m;
        OrtStatus* st = api->CreateCustomOpDomain(dom->name, &m.domain);
        for (int32_t i = 0; i < dom->n_ops && !st; ++i) {
          bool seen = false;  // a family is made at its first declaration
          for (int32_t j = 0; j < i && !seen; ++j) seen = strcmp(dom->ops[j]->name, dom->ops[i]->name) == 0;
          if (seen) continue;
          std::unique_ptr<Family> f(new Family());
          for (int32_t j = i; j < dom->n_ops; ++j)
            if (strcmp(dom->ops[j]->name, dom->ops[i]->name) == 0) {
              f->defs.push_back(dom->ops[j]);
              f->accepted += (f->accepted.empty() ? "" : " or ") +
                             std::string(dom->ops[j]->accepted ? dom->ops[j]->accepted : "other types");
            }
          for (GlueOp* g : make_ops(f.get(), base)) {
            m.ops.push_back(g);
            if (!st) st = api->CustomOpDomain_Add(m.domain, &g->op);
          }
          m.families.push_back(f.release());
        }
        if (st) {
          if (m.domain) api->ReleaseCustomOpDomain(m.domain);  // no options refer to it yet
          for (GlueOp* g : m.ops) free_op(g);
          for (Family* f : m.families) delete f;
          return st;
        }
        found = g_registry.made.emplace(dom, std::move(m)).first;
      }
      OrtStatus* st = api->AddCustomOpDomain(options, found->second.domain);
      if (st) return st;
      st = api->AddSessionConfigEntry(options, (kRecordPrefix + std::string(dom->name)).c_str(), records[d].c_str());
      if (st) api->ReleaseStatus(st);  // no record (a name too long for a key): ORT's own error stays
    }
    return nullptr;
  } catch (const std::bad_alloc&) {
    return api->CreateStatus(ORT_FAIL, "ortcustom: out of memory registering custom ops");
  }
}
