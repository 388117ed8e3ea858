// Attributes at kernel creation, the kernel-vs-declaration check and the kernel's create.
#include "attrs.hpp"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <exception>
#include <set>

namespace oc_glue {

// A string tensor's n elements as oc_string, into bytes and elems: ORT packs the bytes (element k
// from offsets[k]); each is moved up by k bytes, last first, to make room for its NUL. (ORT's C API
// lends no view of a string tensor's elements: one copy.)
OrtStatus* read_string_elements(const OrtApi* api, const OrtValue* v, size_t n, std::vector<char>* bytes,
                                std::vector<oc_string>* elems) {
  size_t total = 0;
  OrtStatus* st = api->GetStringTensorDataLength(v, &total);
  if (st) return st;
  bytes->resize(total + n);
  elems->resize(n);
  std::vector<size_t> offsets(n);
  st = api->GetStringTensorContent(v, bytes->data(), total, offsets.data(), n);
  if (st) return st;
  char* b = bytes->data();
  for (size_t k = n; k-- > 0;) {
    const size_t len = (k + 1 < n ? offsets[k + 1] : total) - offsets[k];
    memmove(b + offsets[k] + k, b + offsets[k], len);
    b[offsets[k] + k + len] = 0;
    (*elems)[k] = {b + offsets[k] + k, (int64_t)len};
  }
  return nullptr;
}

// A value's element type, dims (at most OC_MAX_RANK: else *rank says how many) and element count.
OrtStatus* describe(const OrtApi* api, const OrtValue* v, ONNXTensorElementDataType* type, int64_t* dims,
                    size_t* rank, size_t* count) {
  OrtTensorTypeAndShapeInfo* info = nullptr;
  OrtStatus* st = api->GetTensorTypeAndShape(v, &info);
  if (st) return st;
  st = api->GetDimensionsCount(info, rank);
  if (!st && *rank <= OC_MAX_RANK) st = api->GetDimensions(info, dims, *rank);
  if (!st) st = api->GetTensorElementType(info, type);
  if (!st) st = api->GetTensorShapeElementCount(info, count);
  api->ReleaseTensorTypeAndShapeInfo(info);
  return st;
}

void Attrs::reserve(size_t n) {
  strings.reserve(n);
  ints.reserve(n);
  floats.reserve(n);
  strs.reserve(n);
  str_ptrs.reserve(n);
  str_lens.reserve(n);
  tensors.reserve(n);
  tensor_dims.reserve(n);
  tensor_bytes.reserve(n);
  tensor_elems.reserve(n);
}

void keep_tensor(Attrs* out, const oc_tensor& src, oc_attr* a) {
  out->tensors.push_back(src);
  oc_tensor& t = out->tensors.back();
  out->tensor_dims.emplace_back(src.shape, src.shape + src.rank);
  t.shape = out->tensor_dims.back().data();
  out->tensor_bytes.emplace_back();
  out->tensor_elems.emplace_back();
  std::vector<char>& bytes = out->tensor_bytes.back();
  if (src.dtype == OC_STRING) {
    const oc_string* e = static_cast<const oc_string*>(src.data);
    size_t total = 0;
    for (int64_t j = 0; j < src.size; ++j) total += (size_t)e[j].size + 1;
    bytes.resize(total);
    std::vector<oc_string>& elems = out->tensor_elems.back();
    elems.resize((size_t)src.size);
    char* p = bytes.data();
    for (int64_t j = 0; j < src.size; ++j) {
      if (e[j].size) memcpy(p, e[j].data, (size_t)e[j].size);
      p[e[j].size] = 0;
      elems[(size_t)j] = {p, e[j].size};
      p += e[j].size + 1;
    }
    t.data = src.size ? elems.data() : nullptr;
  } else {
    const size_t n = oc::tensor_bytes(src.dtype, src.size);  // the 4-bit types: two per byte
    bytes.assign(static_cast<const char*>(src.data), static_cast<const char*>(src.data) + (src.data ? n : 0));
    t.data = n ? bytes.data() : nullptr;
  }
  t.device = OC_CPU;
  t.present = 1;
  a->tensor = &t;
  a->count = src.size;
}

namespace {

const char* kind_text(int32_t kind) {
  switch (kind) {
    case OC_ATTR_INT: return "int";
    case OC_ATTR_FLOAT: return "float";
    case OC_ATTR_STRING: return "string";
    case OC_ATTR_INTS: return "ints";
    case OC_ATTR_FLOATS: return "floats";
    case OC_ATTR_STRINGS: return "strings";
    case OC_ATTR_TENSOR: return "tensor";
    default: return "unknown";
  }
}

bool ok(const OrtApi* api, OrtStatus* st) {
  if (st == nullptr) return true;
  api->ReleaseStatus(st);
  return false;
}

// A tensor attribute, copied out of ORT's value (released at once).
bool read_tensor(const OrtApi* api, const OrtKernelInfo* info, const char* name, Attrs* out, oc_attr* a) {
  OrtAllocator* alloc = nullptr;
  OrtValue* v = nullptr;
  if (!ok(api, api->GetAllocatorWithDefaultOptions(&alloc)) ||
      !ok(api, api->KernelInfoGetAttribute_tensor(info, name, alloc, &v)) || v == nullptr)
    return false;
  oc_tensor t;
  memset(&t, 0, sizeof t);
  int64_t dims[OC_MAX_RANK];
  size_t rank = 0, count = 0;
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  std::vector<char> bytes;
  std::vector<oc_string> elems;
  bool got = ok(api, describe(api, v, &type, dims, &rank, &count)) && rank <= OC_MAX_RANK;
  if (got && type == ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING) {
    got = count == 0 || ok(api, read_string_elements(api, v, count, &bytes, &elems));
    t.data = elems.data();
  } else if (got) {
    got = ok(api, api->GetTensorMutableData(v, const_cast<void**>(&t.data)));
  }
  if (got) {
    t.shape = dims;
    t.rank = (int32_t)rank;
    t.size = (int64_t)count;
    t.dtype = (int32_t)type;
    keep_tensor(out, t, a);
  }
  api->ReleaseValue(v);
  return got;
}

// Reads attribute `name` as `kind` into `a` (its storage in `out`); false when the node has no
// attribute of that kind by that name. ORT reads an array of the other array kind as empty, not as
// an error: `*empty_array` says so, and the caller decides.
bool read_one(const OrtApi* api, const OrtKernelInfo* info, const char* name, int32_t kind, Attrs* out,
              oc_attr* a, bool* empty_array, const OrtApi* api25) {
  *empty_array = false;
  size_t n = 0;
  switch (kind) {
    case OC_ATTR_TENSOR:
      return read_tensor(api, info, name, out, a);
    case OC_ATTR_INT:
      return ok(api, api->KernelInfoGetAttribute_int64(info, name, &a->i));
    case OC_ATTR_FLOAT: {
      float f = 0;
      if (!ok(api, api->KernelInfoGetAttribute_float(info, name, &f))) return false;
      a->f = f;
      return true;
    }
    case OC_ATTR_STRING: {
      if (!ok(api, api->KernelInfoGetAttribute_string(info, name, nullptr, &n))) return false;
      std::string s(n, '\0');
      if (n && !ok(api, api->KernelInfoGetAttribute_string(info, name, &s[0], &n))) return false;
      s.resize(n > 0 ? n - 1 : 0);
      out->strings.push_back(std::move(s));
      a->count = (int64_t)out->strings.back().size();
      return true;
    }
    case OC_ATTR_INTS: {
      if (!ok(api, api->KernelInfoGetAttributeArray_int64(info, name, nullptr, &n))) return false;
      std::vector<int64_t> v(n);
      if (n && !ok(api, api->KernelInfoGetAttributeArray_int64(info, name, v.data(), &n))) return false;
      *empty_array = n == 0;
      out->ints.push_back(std::move(v));
      a->count = (int64_t)n;
      return true;
    }
    case OC_ATTR_FLOATS: {
      if (!ok(api, api->KernelInfoGetAttributeArray_float(info, name, nullptr, &n))) return false;
      std::vector<float> v(n);
      if (n && !ok(api, api->KernelInfoGetAttributeArray_float(info, name, v.data(), &n))) return false;
      *empty_array = n == 0;
      out->floats.push_back(std::move(v));
      a->count = (int64_t)n;
      return true;
    }
    case OC_ATTR_STRINGS: {  // one copy out of ORT's allocator into ours, freed at once
      OrtAllocator* alloc = nullptr;
      char** got = nullptr;
      if (api25 == nullptr || !ok(api, api->GetAllocatorWithDefaultOptions(&alloc))) return false;
      if (!ok(api, api25->KernelInfoGetAttributeArray_string(info, name, alloc, &got, &n))) return false;
      std::vector<std::string> v;
      v.reserve(n);
      for (size_t j = 0; j < n; ++j) {
        v.emplace_back(got[j] ? got[j] : "");
        if (got[j]) alloc->Free(alloc, got[j]);
      }
      if (got) alloc->Free(alloc, got);
      *empty_array = n == 0;
      std::vector<const char*> ptrs;
      std::vector<int64_t> lens;
      for (const std::string& s : v) lens.push_back((int64_t)s.size());
      out->strs.push_back(std::move(v));  // (moved: the strings' buffers stay where they are)
      for (const std::string& s : out->strs.back()) ptrs.push_back(s.c_str());
      out->str_ptrs.push_back(std::move(ptrs));
      out->str_lens.push_back(std::move(lens));
      a->count = (int64_t)n;
      return true;
    }
  }
  return false;
}

// The node has `name` as some other kind (a non-empty one, for arrays)?
int32_t other_kind(const OrtApi* api, const OrtKernelInfo* info, const char* name, int32_t kind, const OrtApi* api25) {
  for (int32_t k = OC_ATTR_INT; k <= OC_ATTR_STRINGS; ++k) {
    if (k == kind) continue;
    Attrs scratch;
    oc_attr a;
    memset(&a, 0, sizeof a);
    bool empty = false;
    if (read_one(api, info, name, k, &scratch, &a, &empty, api25) && !empty) return k;
  }
  return 0;
}

// What the node gives as `name` when it is of a kind no oc_attr holds (nullptr: nothing by that
// name): a tensor, or (unless `tensor_only`) a graph, a sparse tensor, a type (or strings, before ORT 1.25). ORT words a
// name the node lacks "No attribute with name..." and one of another kind "... type don't match";
// the latter alone counts as present (any other wording: taken as absent, as before).
const char* foreign_kind(const OrtApi* api, const OrtKernelInfo* info, const char* name, bool tensor_only) {
  OrtAllocator* alloc = nullptr;
  OrtValue* v = nullptr;
  if (ok(api, api->GetAllocatorWithDefaultOptions(&alloc)) &&
      ok(api, api->KernelInfoGetAttribute_tensor(info, name, alloc, &v))) {
    if (v) api->ReleaseValue(v);
    return "a tensor";
  }
  if (tensor_only) return nullptr;
  int64_t i = 0;
  OrtStatus* st = api->KernelInfoGetAttribute_int64(info, name, &i);
  if (st == nullptr) return nullptr;  // never here: read_one read it as an int already
  const bool present = strstr(api->GetErrorMessage(st), "type don't match") != nullptr;
  api->ReleaseStatus(st);
  return present ? "another kind (a graph, a sparse tensor, a type, or strings where ONNX Runtime is older "
                   "than 1.25: no int, float, string, ints, floats or strings)" : nullptr;
}

// How every message prints a float attribute's value (types.py AttrKind.text words it the same):
// "%.9g" (a float32 round-trips), ".0" added to an integral one.
std::string float_text(double v) {
  std::string s = format("%.9g", v);
  if (s.find_first_of(".eni") == std::string::npos) s += ".0";
  return s;
}

// Why an int or float value breaks the declaration's bounds or choices ("" when it does not).
std::string out_of_bounds(const oc_attr_def& d, const oc_attr& a) {
  if (d.kind != OC_ATTR_INT && d.kind != OC_ATTR_FLOAT) return "";
  if (d.n_choices > 0) {
    bool found = false;
    std::string list;
    for (int32_t c = 0; c < d.n_choices; ++c) {
      found |= d.choices[c] == a.i;
      list += format("%s%lld", c ? ", " : "", (long long)d.choices[c]);
    }
    if (!found) return "must be one of " + list;
  }
  if (d.kind == OC_ATTR_INT) {  // exactly: a double holds int64 values only up to 2**53
    if (d.has_min && a.i < d.int_min) return format("must be >= %lld", (long long)d.int_min);
    if (d.has_max && a.i > d.int_max) return format("must be <= %lld", (long long)d.int_max);
    return "";
  }
  if (d.has_min && !(a.f >= d.min)) return format("must be >= %g", d.min);
  if (d.has_max && !(a.f <= d.max)) return format("must be <= %g", d.max);
  return "";
}

}  // namespace

bool read_attrs(const OrtApi* api, const OrtKernelInfo* info, const oc_op_def* op, Attrs* out, std::string* err,
                const OrtApi* api25, const char* ort_version) {
  const size_t n = (size_t)op->n_attrs;
  out->values.assign(n, oc_attr());
  out->reserve(n);  // the oc_attrs point into these: no reallocation
  for (size_t j = 0; j < n; ++j) {
    const oc_attr_def& d = op->attrs[j];
    oc_attr& a = out->values[j];
    a = d.value;
    a.name = d.name;
    a.kind = d.kind;
    a.count = d.kind >= OC_ATTR_STRING ? d.value.count : 1;
    a.tensor = nullptr;
    if (d.kind == OC_ATTR_STRINGS && api25 == nullptr) {  // ORT's C API reads strings from 1.25 on
      *err = format("attribute '%s' (strings) needs ONNX Runtime 1.25 or newer to be read; this one is %s", d.name,
                    ort_version);
      return false;
    }
    bool empty = false;
    bool got = read_one(api, info, d.name, d.kind, out, &a, &empty, api25);
    if (!got || empty) {
      const int32_t other = other_kind(api, info, d.name, d.kind, api25);
      if (other) {
        *err = format("attribute '%s' must be of type %s, but the node gives %s%s", d.name, kind_text(d.kind),
                      other == OC_ATTR_STRINGS ? "" : kind_text(other)[0] == 'i' ? "an " : "a ", kind_text(other));
        return false;
      }
      // never the default (nor an empty array: ORT reads any other array kind so)
      if (const char* foreign = foreign_kind(api, info, d.name, got)) {
        *err = format("attribute '%s' must be of type %s, but the node gives %s", d.name, kind_text(d.kind), foreign);
        return false;
      }
    }
    if (!got) {
      if (d.required) {
        *err = format("required attribute '%s' (%s) is missing", d.name, kind_text(d.kind));
        return false;
      }
      a = d.value;  // the default
      a.name = d.name;
      a.kind = d.kind;
      continue;
    }
    if (d.kind == OC_ATTR_STRING) a.s = out->strings.back().c_str();
    if (d.kind == OC_ATTR_INTS) a.ints = out->ints.back().data();
    if (d.kind == OC_ATTR_FLOATS) a.floats = out->floats.back().data();
    if (d.kind == OC_ATTR_STRINGS) {
      a.strings = out->str_ptrs.back().data();
      a.lengths = out->str_lens.back().data();
    }
    const std::string why = out_of_bounds(d, a);
    if (!why.empty()) {
      const std::string value = d.kind == OC_ATTR_INT ? format("%lld", (long long)a.i) : float_text(a.f);
      *err = format("attribute %s=%s is invalid: %s", d.name, value.c_str(), why.c_str());
      return false;
    }
  }
  return true;
}

std::vector<oc_attr> kernel_order(const oc_kernel* kernel, const oc_op_def* op, const Attrs& attrs) {
  std::vector<oc_attr> out;
  for (const oc_attr_spec* s = kernel->attrs; s && s->name; ++s)
    for (int32_t j = 0; j < op->n_attrs; ++j)
      if (strcmp(op->attrs[j].name, s->name) == 0) out.push_back(attrs.values[(size_t)j]);
  return out;
}

std::string check_kernel(const oc_op_def* op, const oc_kernel* k) {
  std::string who = format("native kernel '%s'", k->name ? k->name : "?");
  if (k->abi_version != OC_ABI_VERSION)
    return format("%s was built against ortcustom kernel ABI version %u, %s one than this ortcustom's (%d): rebuild it",
                  who.c_str(), k->abi_version, k->abi_version < OC_ABI_VERSION ? "an older" : "a newer",
                  OC_ABI_VERSION);
  if (k->compute == nullptr) return who + " has no compute function";
  int32_t n = 0;
  for (const char* const* p = k->inputs; p && *p; ++p, ++n)
    if (n >= op->n_inputs || strcmp(*p, op->inputs[n].name) != 0) break;
  auto names = [](const char* const* p) {
    std::string s = "[";
    for (int i = 0; p && p[i]; ++i) s += format(i ? ", '%s'" : "'%s'", p[i]);
    return s + "]";
  };
  auto decl = [](const oc_io_def* d, int32_t count) {
    std::string s = "[";
    for (int32_t i = 0; i < count; ++i) s += format(i ? ", '%s'" : "'%s'", d[i].name);
    return s + "]";
  };
  int32_t ki = 0, ko = 0;
  while (k->inputs && k->inputs[ki]) ++ki;
  while (k->outputs && k->outputs[ko]) ++ko;
  bool same = ki == op->n_inputs;
  for (int32_t i = 0; same && i < ki; ++i) same = strcmp(k->inputs[i], op->inputs[i].name) == 0;
  if (!same) return format("%s takes inputs %s; the op declares %s", who.c_str(), names(k->inputs).c_str(),
                           decl(op->inputs, op->n_inputs).c_str());
  same = ko == op->n_outputs;
  for (int32_t i = 0; same && i < ko; ++i) same = strcmp(k->outputs[i], op->outputs[i].name) == 0;
  if (!same) return format("%s has outputs %s; the op declares %s", who.c_str(), names(k->outputs).c_str(),
                           decl(op->outputs, op->n_outputs).c_str());
  int32_t ka = 0;
  for (const oc_attr_spec* s = k->attrs; s && s->name; ++s, ++ka) {
    const oc_attr_def* d = nullptr;
    for (int32_t j = 0; j < op->n_attrs && !d; ++j)
      if (strcmp(op->attrs[j].name, s->name) == 0) d = &op->attrs[j];
    if (d == nullptr)
      return format("%s reads attribute '%s' (%s), which the op does not declare", who.c_str(), s->name,
                    kind_text(s->kind));
    if (d->kind != s->kind)
      return format("%s reads attribute '%s' as %s; the op declares it %s", who.c_str(), s->name,
                    kind_text(s->kind), kind_text(d->kind));
    for (const oc_attr_spec* t = k->attrs; t != s; ++t)
      if (strcmp(t->name, s->name) == 0) return format("%s names attribute '%s' twice", who.c_str(), s->name);
  }
  if (ka != op->n_attrs) {
    std::string missing;
    for (int32_t j = 0; j < op->n_attrs; ++j) {
      bool found = false;
      for (const oc_attr_spec* s = k->attrs; s && s->name && !found; ++s) found = strcmp(s->name, op->attrs[j].name) == 0;
      if (!found) missing += format("%s'%s'", missing.empty() ? "" : ", ", op->attrs[j].name);
    }
    return format("%s does not read the declared attributes [%s]: declare in the kernel every attribute the op has",
                  who.c_str(), missing.c_str());
  }
  const int32_t width = op->n_inputs + op->n_outputs;
  if (k->signatures == nullptr || k->n_signatures <= 0)
    return who + " states no signatures (the element types of its inputs and outputs per type binding)";
  // exact rows looked up, rows with an "any" scanned: linear in bindings x signatures otherwise
  std::set<std::vector<int32_t>> exact;
  std::vector<const int32_t*> wild;
  for (int32_t s = 0; s < k->n_signatures; ++s) {
    const int32_t* have = k->signatures + (size_t)s * width;
    if (std::find(have, have + width, (int32_t)OC_UNDEFINED) != have + width) wild.push_back(have);
    else exact.emplace(have, have + width);
  }
  for (int32_t b = 0; b < op->n_bindings; ++b) {
    const int32_t* want = op->bindings + (size_t)b * width;
    bool found = exact.count(std::vector<int32_t>(want, want + width)) > 0;
    for (size_t s = 0; s < wild.size() && !found; ++s) {
      found = true;
      for (int32_t j = 0; j < width && found; ++j) found = wild[s][j] == OC_UNDEFINED || wild[s][j] == want[j];
    }
    if (!found) {
      std::string sig;
      for (int32_t j = 0; j < width; ++j)
        sig += format("%s%s: %s", j ? ", " : "", j < op->n_inputs ? op->inputs[j].name : op->outputs[j - op->n_inputs].name,
                      dtype_text(want[j]));
      return format("%s has no signature for the declared type binding (%s)", who.c_str(), sig.c_str());
    }
  }
  for (int32_t o = 0; k->inplace && o < ko; ++o)
    if (k->inplace[o] < -1 || k->inplace[o] >= ki)
      return format("%s lets output %s be written over input %d; the op has %d inputs", who.c_str(),
                    op->outputs[o].name, k->inplace[o], ki);
  return "";
}

void destroy_state(const oc_kernel* kernel, void* state) {
  if (state == nullptr || kernel->destroy == nullptr) return;
  try {
    kernel->destroy(state);
  } catch (...) {  // destroy cannot fail: what it could not release is lost, never the process
  }
}

CreateRun::CreateRun(const oc_op_def* op, const oc_kernel* kernel, int32_t device, const int32_t* dtypes,
                     const std::vector<oc_attr>& attrs, const oc_tensor* consts, const Config* config)
    : Run(op, kernel, device), inputs_((size_t)op->n_inputs) {
  creating_ = true;
  config_ = config;
  for (int32_t i = 0; i < op->n_inputs; ++i) {
    oc_tensor& t = inputs_[(size_t)i];
    if (consts != nullptr && op->inputs[i].constant) {
      t = consts[i];
      continue;
    }
    memset(&t, 0, sizeof t);
    t.dtype = dtypes[i];
    t.present = 1;
    t.device = device == OC_CUDA && !op->inputs[i].cpu ? OC_CUDA : OC_CPU;
  }
  c.inputs = inputs_.data();
  c.n_inputs = op->n_inputs;
  c.attrs = attrs.data();
  c.n_attrs = (int32_t)attrs.size();
  c.dtypes = dtypes;
}

int CreateRun::create(void** state) {
  *state = nullptr;
  void* s = nullptr;
  int rc = check_string_inputs();  // constant string inputs
  if (rc != OC_OK) return rc;
  try {
    rc = kernel_->create(&c, &s);
  } catch (const std::exception& e) {
    rc = fail(OC_FAIL, format("the kernel's create threw a C++ exception: %s", e.what()));
  } catch (...) {
    rc = fail(OC_FAIL, "the kernel's create threw a C++ exception");
  }
  if (rc != OC_OK && code() == OC_OK) fail(rc, format("the kernel's create failed (status %d) without saying why", rc));
  if (code() != OC_OK) {
    destroy_state(kernel_, s);
    return code();
  }
  *state = s;
  return OC_OK;
}

int CreateRun::alloc_output(int32_t, const int64_t*, int32_t, void**) {
  return fail(OC_FAIL, "create cannot allocate outputs");
}

int CreateRun::alloc_device_scratch(size_t, void**) { return OC_FAIL; }  // never reached: creating_

void CreateRun::run_tasks(size_t n, oc_task_fn fn, void* arg) {
  for (size_t i = 0; i < n; ++i) fn(arg, i);
}

}  // namespace oc_glue
