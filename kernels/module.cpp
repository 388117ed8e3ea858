// ortcustom._kernels: the built-in kernels as a Python extension module. ortcustom finds their
// ortcustom_kernel_* symbols the way it finds a user's (Op(native=...)); the few functions
// below only report how the kernels were built and what they see.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "kernels.h"
#if ORTCUSTOM_CUDA
#include "kernels_cuda.h"
#endif

namespace {

PyObject* cpu_isa(PyObject*, PyObject*) { return PyUnicode_FromString(oc_cpu_isa()); }

PyObject* cuda_built(PyObject*, PyObject*) { return PyBool_FromLong(ORTCUSTOM_CUDA); }

PyObject* cuda_device_count(PyObject*, PyObject*) {
#if ORTCUSTOM_CUDA
  return PyLong_FromLong(oc_cuda_device_count());
#else
  return PyLong_FromLong(0);
#endif
}

PyMethodDef methods[] = {
    {"cpu_isa", cpu_isa, METH_NOARGS,
     "The instruction set the CPU kernels run with: \"avx2+fma\" or \"baseline\"."},
    {"cuda_built", cuda_built, METH_NOARGS, "Whether the CUDA kernels were compiled in."},
    {"cuda_device_count", cuda_device_count, METH_NOARGS,
     "CUDA devices usable now (0 without a driver or a GPU, or when built without CUDA)."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_kernels",
                          "ortcustom's built-in kernels (ortcustom/kernel.h)", 0, methods,
                          nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__kernels(void) { return PyModuleDef_Init(&module_def); }
