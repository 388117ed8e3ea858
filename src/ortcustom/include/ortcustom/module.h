/* ortcustom/module.h: makes a kernel library importable as a Python extension module.
 *
 * A meson-python package builds its kernels with `py.extension_module('_kernels', ...)`; one
 * source file adds `OC_PYTHON_MODULE(_kernels)`, and `Op(..., native="mypkg._kernels:my_op")`
 * then finds the module by import, like any other module of the package (editable installs
 * included). The module has no Python functions: ortcustom reads the kernels' exported
 * ortcustom_kernel_* symbols. */
#ifndef ORTCUSTOM_MODULE_H
#define ORTCUSTOM_MODULE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define OC_PYTHON_MODULE(name)                                                               \
  static struct PyModuleDef oc_module_def_##name = {                                         \
      PyModuleDef_HEAD_INIT, #name, "ortcustom kernels (see ortcustom/kernel.h)", 0,         \
      NULL, NULL, NULL, NULL, NULL};                                                         \
  PyMODINIT_FUNC PyInit_##name(void) { return PyModuleDef_Init(&oc_module_def_##name); }

#endif /* ORTCUSTOM_MODULE_H */
