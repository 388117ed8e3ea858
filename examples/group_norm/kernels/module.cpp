// custom_group_norm._kernels: the kernel library as an importable module, for
// Op(native="custom_group_norm._kernels:group_norm").
#include "ortcustom/module.h"

OC_PYTHON_MODULE(_kernels)
