// myops._kernels: the package's kernels as a Python extension module, so that
// Op(native="myops._kernels:<name>") finds them by import. ortcustom reads the exported
// ortcustom_kernel_<name>_<cpu|cuda> entries (OC_KERNEL in each kernel's source).
#include "ortcustom/module.h"

OC_PYTHON_MODULE(_kernels)
