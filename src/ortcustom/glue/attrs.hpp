// A node's attributes, read once at kernel creation and handed to the kernel as oc_attr; the
// kernel checked against its op's declaration; the kernel's create run with them.
#ifndef ORTCUSTOM_GLUE_ATTRS_HPP
#define ORTCUSTOM_GLUE_ATTRS_HPP

#include <string>
#include <vector>

#include "ort_abi.h"
#include "run.hpp"

namespace oc_glue {

// Attribute values in the declaration's order; the oc_attrs point into the storage beside them.
struct Attrs {
  std::vector<oc_attr> values;
  std::vector<std::string> strings;
  std::vector<std::vector<int64_t>> ints;
  std::vector<std::vector<float>> floats;
  std::vector<std::vector<std::string>> strs;  // a strings attribute's elements, their pointers, lengths
  std::vector<std::vector<const char*>> str_ptrs;
  std::vector<std::vector<int64_t>> str_lens;
  std::vector<oc_tensor> tensors;  // a tensor attribute: the tensor, its dims, bytes, string elements
  std::vector<std::vector<int64_t>> tensor_dims;
  std::vector<std::vector<char>> tensor_bytes;
  std::vector<std::vector<oc_string>> tensor_elems;
  void reserve(size_t n);  // every vector: the oc_attrs point into them
};

// A copy of `src` (host memory: numbers, or oc_string elements) into out's storage, a->tensor
// pointing at it (a->count its element count).
void keep_tensor(Attrs* out, const oc_tensor& src, oc_attr* a);

// A string tensor's n elements as oc_string, into bytes and elems (NUL-terminated).
OrtStatus* read_string_elements(const OrtApi* api, const OrtValue* v, size_t n, std::vector<char>* bytes,
                                 std::vector<oc_string>* elems);
// A value's element type, dims (at most OC_MAX_RANK: else *rank says how many) and element count.
OrtStatus* describe(const OrtApi* api, const OrtValue* v, ONNXTensorElementDataType* type, int64_t* dims,
                    size_t* rank, size_t* count);

// Reads the node's attributes as `op` declares them (kinds, defaults, required); false with *err
// saying what is wrong ("attribute 'epsilon' must be of type float, but the node gives an int").
// `api25`: the runtime's API-25 table (NULL before ORT 1.25: a strings attribute is then refused,
// naming `ort_version`).
bool read_attrs(const OrtApi* api, const OrtKernelInfo* info, const oc_op_def* op, Attrs* out, std::string* err,
                const OrtApi* api25, const char* ort_version);

// The attributes in the order the kernel reads them (checked by check_kernel: the same set).
std::vector<oc_attr> kernel_order(const oc_kernel* kernel, const oc_op_def* op, const Attrs& attrs);

// Why `kernel` does not implement `op` ("" when it does): ABI version, device entry, names,
// attribute kinds, every type binding among the kernel's signatures, in-place indices.
std::string check_kernel(const oc_op_def* op, const oc_kernel* kernel);

// The kernel's destroy of `state` (none: nothing), an exception out of it swallowed.
void destroy_state(const oc_kernel* kernel, void* state);

// The kernel's create: once per node (or per direct-call state), with the attributes and the
// binding's element types; no outputs, no scratch.
class CreateRun : public Run {
 public:
  // consts: NULL, or per declared input a tensor whose data and shape create gets where the input is
  // declared constant (valid during create)
  CreateRun(const oc_op_def* op, const oc_kernel* kernel, int32_t device, const int32_t* dtypes,
            const std::vector<oc_attr>& attrs, const oc_tensor* consts = nullptr, const Config* config = nullptr);
  int create(void** state);

 protected:
  int alloc_output(int32_t, const int64_t*, int32_t, void**) override;
  int alloc_device_scratch(size_t, void**) override;
  void free_device_scratch(void*) override {}
  void run_tasks(size_t n, oc_task_fn fn, void* arg) override;
  int store_string(int32_t, int64_t, const char*, int64_t) override { return OC_FAIL; }  // no outputs in create

 private:
  std::vector<oc_tensor> inputs_;
};

}  // namespace oc_glue

#endif  // ORTCUSTOM_GLUE_ATTRS_HPP
