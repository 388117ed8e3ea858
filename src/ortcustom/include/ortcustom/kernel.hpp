// ortcustom/kernel.hpp: a thin, header-only C++ layer over ortcustom/kernel.h.
//
//   static int my_add(oc::Context& ctx) {
//     const oc_tensor& x = ctx.input(0);
//     return oc::dispatch<float, double>(ctx, x.dtype, [&](auto tag) {
//       using T = decltype(tag);
//       T* y;
//       if (int rc = ctx.output(0, x, &y)) return rc;
//       ...
//       return OC_OK;
//     });
//   }
//   OC_KERNEL(my_add, cpu, kMyAddSpec, my_add)
//
// Typed views, element-type dispatch that fails clearly on a type it was not written for, printf
// style errors, a parallel-for taking lambdas, and OC_KERNEL, which exports the kernel (and, for
// CUDA, makes the inputs' device current and catches C++ exceptions at the ABI boundary).
//
// A package's build generates each kernel's interface from its Python declaration
// (`python -m ortcustom library-source --header`, ortcustom/kernel_header.py): a struct with the
// kMyAddSpec above (`spec`), input/output indices, typed attribute accessors and each type
// constraint's element types for dispatch<>: `oc::dispatch<Spec::types::T>(ctx, dtype, f)`.
#ifndef ORTCUSTOM_KERNEL_HPP
#define ORTCUSTOM_KERNEL_HPP

#include <stdarg.h>
#include <stdio.h>

#include <exception>
#include <new>
#include <type_traits>

#include "ortcustom/kernel.h"

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#endif

namespace oc {

// float16 and bfloat16 storage: the bits (ortcustom/half.h converts float16).
struct half {
  uint16_t bits;
};
struct bfloat16 {
  uint16_t bits;
};
// The 8-bit floats (ONNX's float8 types): the bits.
struct float8e4m3fn {
  uint8_t bits;
};
struct float8e4m3fnuz {
  uint8_t bits;
};
struct float8e5m2 {
  uint8_t bits;
};
struct float8e5m2fnuz {
  uint8_t bits;
};
// The 4-bit integers: a byte holding two elements (element 2k in byte k's low nibble); a tensor of
// n elements is (n + 1) / 2 of these. Read and write elements with get4 and set4.
struct int4x2 {
  uint8_t bits;
};
struct uint4x2 {
  uint8_t bits;
};

// The C++ type of each element type a kernel takes: (type, oc_dtype, name).
#define OC_ELEMENT_TYPES(X)                                                                         \
  X(float, OC_FLOAT, "float") X(double, OC_DOUBLE, "double") X(half, OC_FLOAT16, "float16")        \
  X(bfloat16, OC_BFLOAT16, "bfloat16") X(int8_t, OC_INT8, "int8") X(uint8_t, OC_UINT8, "uint8")    \
  X(int16_t, OC_INT16, "int16") X(uint16_t, OC_UINT16, "uint16") X(int32_t, OC_INT32, "int32")     \
  X(uint32_t, OC_UINT32, "uint32") X(int64_t, OC_INT64, "int64") X(uint64_t, OC_UINT64, "uint64")  \
  X(bool, OC_BOOL, "bool") X(oc_string, OC_STRING, "string")                                      \
  X(float8e4m3fn, OC_FLOAT8E4M3FN, "float8e4m3fn") X(float8e4m3fnuz, OC_FLOAT8E4M3FNUZ, "float8e4m3fnuz") \
  X(float8e5m2, OC_FLOAT8E5M2, "float8e5m2") X(float8e5m2fnuz, OC_FLOAT8E5M2FNUZ, "float8e5m2fnuz")      \
  X(uint4x2, OC_UINT4, "uint4") X(int4x2, OC_INT4, "int4")

// dtype_of<T>::value: T's oc_dtype; type_of<D>::type: the C++ type of oc_dtype D.
template <class T>
struct dtype_of;
template <int32_t D>
struct type_of;
#define OC_ELEMENT_TYPE_TRAITS(T, D, NAME)                                                          \
  template <> struct dtype_of<T> { static constexpr int32_t value = D; };                          \
  template <> struct type_of<D> { using type = T; };
OC_ELEMENT_TYPES(OC_ELEMENT_TYPE_TRAITS)
#undef OC_ELEMENT_TYPE_TRAITS

// Bytes per element of oc_dtype t in a kernel's buffer (0: none such; the 4-bit types: 1, the byte
// that holds two: see tensor_bytes).
inline size_t dtype_size(int32_t t) {
#define OC_ELEMENT_TYPE_SIZE(T, D, NAME) \
  if (t == D) return sizeof(T);
  OC_ELEMENT_TYPES(OC_ELEMENT_TYPE_SIZE)
#undef OC_ELEMENT_TYPE_SIZE
  return 0;
}

// Bytes of a tensor of n elements of oc_dtype t (the 4-bit types: two per byte).
inline size_t tensor_bytes(int32_t t, int64_t n) {
  return t == OC_INT4 || t == OC_UINT4 ? (size_t)(n + 1) / 2 : (size_t)n * dtype_size(t);
}

// Element i of a 4-bit tensor (sign-extended for int4), and setting it (a read-modify-write of the
// byte it shares with its neighbour: two tasks must not set the two elements of one byte at once).
inline int get4(const int4x2* p, int64_t i) {
  const int v = (i & 1) ? p[i >> 1].bits >> 4 : p[i >> 1].bits & 15;
  return v >= 8 ? v - 16 : v;
}
inline int get4(const uint4x2* p, int64_t i) { return (i & 1) ? p[i >> 1].bits >> 4 : p[i >> 1].bits & 15; }
template <class T>
inline void set4(T* p, int64_t i, int v) {
  static_assert(std::is_same<T, int4x2>::value || std::is_same<T, uint4x2>::value, "a 4-bit type");
  uint8_t& b = p[i >> 1].bits;
  b = (i & 1) ? (uint8_t)((b & 0x0F) | ((v & 15) << 4)) : (uint8_t)((b & 0xF0) | (v & 15));
}

inline const char* dtype_name(int32_t t) {
#define OC_ELEMENT_TYPE_NAME(T, D, NAME) \
  if (t == D) return NAME;
  OC_ELEMENT_TYPES(OC_ELEMENT_TYPE_NAME)
#undef OC_ELEMENT_TYPE_NAME
  return "undefined";
}

// A list of element types, for dispatch: oc::dispatch<types<float, double>>(ctx, dtype, f).
// A generated spec (python -m ortcustom library-source --header) gives each type constraint's
// list: oc::dispatch<Spec::types::T>(...).
template <class... Ts>
struct types {};
template <int32_t... Ds>
using types_of = types<typename type_of<Ds>::type...>;

// false for every T: `else static_assert(oc::unhandled<T>, "...")` ends an if-constexpr chain over
// a dispatched type, so that a type added to the declaration is a compile error, not a silent
// fall into another type's branch.
template <class T>
inline constexpr bool unhandled = false;

// An ints or floats attribute's values.
template <class T>
struct array_view {
  const T* data;
  int64_t size;
  const T* begin() const { return data; }
  const T* end() const { return data + size; }
  const T& operator[](int64_t i) const { return data[i]; }
};

// attr_value<kind>(a): an attribute's value as the C++ type of its oc_attr_kind.
template <int32_t Kind>
inline auto attr_value(const oc_attr& a) {
  if constexpr (Kind == OC_ATTR_INT) return static_cast<int64_t>(a.i);
  else if constexpr (Kind == OC_ATTR_FLOAT) return static_cast<double>(a.f);  // float32-rounded
  else if constexpr (Kind == OC_ATTR_STRING) return static_cast<const char*>(a.s);  // count bytes, NUL-terminated
  else if constexpr (Kind == OC_ATTR_INTS) return array_view<int64_t>{a.ints, a.count};
  else if constexpr (Kind == OC_ATTR_FLOATS) return array_view<float>{a.floats, a.count};
  else if constexpr (Kind == OC_ATTR_STRINGS) return array_view<const char*>{a.strings, a.count};  // + a.lengths
  else if constexpr (Kind == OC_ATTR_TENSOR) return static_cast<const oc_tensor&>(*a.tensor);
  else static_assert(Kind < 0, "not an oc_attr_kind");
}

// "(2, 3)" into buf, as Python prints a shape ("(4,)" for one dim).
inline const char* shape_str(const oc_tensor& t, char* buf, size_t cap) {
  size_t used = 0;
  int w = snprintf(buf, cap, "(");
  used = w > 0 ? (size_t)w : 0;
  for (int32_t i = 0; i < t.rank && used < cap; ++i) {
    w = snprintf(buf + used, cap - used, "%s%lld", i ? ", " : "", (long long)t.shape[i]);
    if (w > 0) used += (size_t)w;
  }
  if (used < cap) snprintf(buf + used, cap - used, t.rank == 1 ? ",)" : ")");
  return buf;
}

// Cuts a NUL-terminated UTF-8 string that filled `len` bytes back to a whole character.
inline void utf8_trim(char* s, size_t len) {
  size_t n = len;
  while (n > 0 && (static_cast<unsigned char>(s[n - 1]) & 0xC0) == 0x80) --n;  // continuation bytes
  if (n > 0 && (static_cast<unsigned char>(s[n - 1]) & 0x80)) {
    const unsigned char lead = static_cast<unsigned char>(s[n - 1]);
    const size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
    if (len - (n - 1) < need) s[n - 1] = 0;  // the last character was cut
  }
}

class Context {
 public:
  explicit Context(oc_context* c) : c_(c) {}
  oc_context* raw() const { return c_; }

  int32_t n_inputs() const { return c_->n_inputs; }
  const oc_tensor& input(int32_t i) const { return c_->inputs[i]; }
  template <class T>
  const T* data(int32_t i) const { return static_cast<const T*>(c_->inputs[i].data); }
  // dim d of input i; d < 0 counts from the end.
  int64_t dim(int32_t i, int32_t d) const {
    const oc_tensor& t = c_->inputs[i];
    return t.shape[d < 0 ? t.rank + d : d];
  }

  int32_t n_outputs() const { return c_->n_outputs; }
  // Output i's element type (a heterogeneous variadic output's tensors: each the node's own).
  int32_t output_dtype(int32_t i) const { return c_->output_dtypes[i]; }

  // Output i with the given shape; *data is nullptr when the node does not use it (or it is empty).
  template <class T>
  int output(int32_t i, const int64_t* shape, int32_t rank, T** data) {
    void* p = nullptr;
    int rc = c_->host->output(c_, i, shape, rank, &p);
    *data = static_cast<T*>(p);
    return rc;
  }
  // Output i shaped like tensor `like`.
  template <class T>
  int output(int32_t i, const oc_tensor& like, T** data) {
    return output(i, like.shape, like.rank, data);
  }

  const oc_attr& attr(int32_t k) const { return c_->attrs[k]; }
  int64_t attr_int(int32_t k) const { return c_->attrs[k].i; }
  double attr_float(int32_t k) const { return c_->attrs[k].f; }
  const char* attr_string(int32_t k) const { return c_->attrs[k].s; }

  int device_id() const { return c_->device_id; }
  void* stream() const { return c_->stream; }
  template <class S>
  S* state() const { return static_cast<S*>(c_->state); }

  // f(i) for i in [0, n) on the host's pool.
  template <class F>
  void parallel_for(size_t n, F&& f) {
    using Fn = typename std::remove_reference<F>::type;
    c_->host->parallel_for(c_, n, &call<Fn>, const_cast<void*>(static_cast<const void*>(&f)));
  }

  int scratch(size_t bytes, void** data) { return c_->host->scratch(c_, bytes, data); }

  // The session's configuration entry `key` (*value nullptr when unset): kernel.h's oc_config.
  int config(const char* key, const char** value) { return c_->host->config(c_, key, value); }

  // Element `index` of string output i: `size` bytes copied from `bytes` (thread-safe per element).
  int set_string(int32_t i, int64_t index, const char* bytes, int64_t size) {
    return c_->host->set_string(c_, i, index, bytes, size);
  }

  // printf-style; returns `code` (OC_INVALID_ARGUMENT for bad input, OC_OUT_OF_MEMORY, OC_FAIL).
  int fail(int code, const char* fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof msg) utf8_trim(msg, sizeof msg - 1);  // never half a character
    return c_->host->fail(c_, code, msg);
  }
  // "input X has shape (2, 3); <what>"
  int bad_shape(int32_t i, const char* name, const char* what) {
    char s[256];
    return fail(OC_INVALID_ARGUMENT, "input %s has shape %s; %s", name,
                shape_str(c_->inputs[i], s, sizeof s), what);
  }

 private:
  template <class F>
  static void call(void* f, size_t i) { (*static_cast<F*>(f))(i); }
  oc_context* c_;
};

namespace detail {
template <class T>
struct is_types : std::false_type {};
template <class... Ts>
struct is_types<types<Ts...>> : std::true_type {};

template <class... Ts, class F>
int dispatch_over(types<Ts...>, Context& ctx, int32_t dtype, F& f) {
  int rc = -1;
  bool hit = ((dtype == dtype_of<Ts>::value ? (rc = f(Ts{}), true) : false) || ...);
  if (!hit) {
    return ctx.fail(OC_INVALID_ARGUMENT, "no kernel for element type %s", dtype_name(dtype));
  }
  return rc;
}
}  // namespace detail

// Calls f(T{}) for the T among Ts whose element type is `dtype`; anything else is an error that
// names the type (never a silent fall-through to another type's code).
template <class... Ts, class F, std::enable_if_t<!(detail::is_types<Ts>::value || ...), int> = 0>
int dispatch(Context& ctx, int32_t dtype, F&& f) {
  return detail::dispatch_over(types<Ts...>{}, ctx, dtype, f);
}
// The same over a list: dispatch<types<float, double>>(...), dispatch<Spec::types::T>(...).
template <class List, class F, std::enable_if_t<detail::is_types<List>::value, int> = 0>
int dispatch(Context& ctx, int32_t dtype, F&& f) {
  return detail::dispatch_over(List{}, ctx, dtype, f);
}

// What a kernel declares about itself: checked against the op's declaration when attached.
// signatures: n_signatures rows of (inputs + outputs) element types, one row per type binding.
struct Spec {
  const char* const* inputs;
  const char* const* outputs;
  const oc_attr_spec* attrs;
  const int32_t* signatures;
  int32_t n_signatures;
  const int32_t* inplace;
};

// The rows of a Spec's signatures: OC_SIGNATURES(kRows) with `constexpr int32_t kRows[][W]`.
#define OC_SIGNATURES(rows) &(rows)[0][0], (int32_t)(sizeof(rows) / sizeof((rows)[0]))

namespace detail {

template <int (*Fn)(Context&), int32_t Device>
int entry(oc_context* c) {
  Context ctx(c);
  try {
#if defined(__CUDACC__)
    if (Device == OC_CUDA) {
      int prev = 0;
      cudaError_t e = cudaGetDevice(&prev);
      if (e == cudaSuccess && prev != c->device_id) e = cudaSetDevice(c->device_id);
      if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return ctx.fail(OC_FAIL, "cannot use CUDA device %d: %s", c->device_id,
                        cudaGetErrorString(e));
      }
      int rc = Fn(ctx);
      if (prev != c->device_id) (void)cudaSetDevice(prev);  // the caller's thread as it was
      return rc;
    }
#endif
    return Fn(ctx);
  } catch (const std::bad_alloc&) {
    return ctx.fail(OC_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return ctx.fail(OC_FAIL, "%s", e.what());
  } catch (...) {
    return ctx.fail(OC_FAIL, "unknown C++ exception");
  }
}

// create and destroy, with C++ exceptions caught at the ABI boundary.
template <int (*Fn)(Context&, void**)>
int create_entry(oc_context* c, void** state) {
  Context ctx(c);
  try {
    return Fn(ctx, state);
  } catch (const std::bad_alloc&) {
    return ctx.fail(OC_OUT_OF_MEMORY, "out of memory in create");
  } catch (const std::exception& e) {
    return ctx.fail(OC_FAIL, "create: %s", e.what());
  } catch (...) {
    return ctx.fail(OC_FAIL, "create: unknown C++ exception");
  }
}

template <void (*Fn)(void*)>
void destroy_entry(void* state) {
  try {
    Fn(state);
  } catch (...) {  // destroy cannot fail: what it could not release is lost, never a crash
  }
}

}  // namespace detail
}  // namespace oc

#define OC_DEVICE_cpu OC_CPU
#define OC_DEVICE_cuda OC_CUDA

// Exports `const oc_kernel* ortcustom_kernel_<name>_<device>(void)` (device: cpu or cuda) whose
// compute calls `int fn(oc::Context&)`.
#define OC_KERNEL(name, device, spec, fn)                                                          \
  extern "C" OC_EXPORT const oc_kernel* ortcustom_kernel_##name##_##device(void) {                 \
    static const oc_kernel k = {OC_ABI_VERSION, OC_DEVICE_##device, #name, (spec).inputs,           \
                                (spec).outputs, (spec).attrs, (spec).signatures,                    \
                                (spec).n_signatures, (spec).inplace, nullptr, nullptr,              \
                                &oc::detail::entry<fn, OC_DEVICE_##device>};                        \
    return &k;                                                                                      \
  }

// The same with per-node state: `int create(oc::Context&, void** state)` runs once per node (the
// attributes and element types are known; check attributes there, precompute), `void
// destroy(void* state)` when the node goes; compute reads ctx.state<S>(). Exceptions are caught.
#define OC_KERNEL_STATEFUL(name, device, spec, create, destroy, fn)                                \
  extern "C" OC_EXPORT const oc_kernel* ortcustom_kernel_##name##_##device(void) {                 \
    static const oc_kernel k = {OC_ABI_VERSION, OC_DEVICE_##device, #name, (spec).inputs,           \
                                (spec).outputs, (spec).attrs, (spec).signatures,                    \
                                (spec).n_signatures, (spec).inplace,                                \
                                &oc::detail::create_entry<create>, &oc::detail::destroy_entry<destroy>, \
                                &oc::detail::entry<fn, OC_DEVICE_##device>};                        \
    return &k;                                                                                      \
  }

#endif  // ORTCUSTOM_KERNEL_HPP
