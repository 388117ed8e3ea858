// The built-in CPU kernels' oc_parallel runner over an ortcustom kernel context's parallel-for.
#ifndef ORTCUSTOM_KERNELS_CPU_RUNNER_H
#define ORTCUSTOM_KERNELS_CPU_RUNNER_H

#include "../kernels.h"
#include "ortcustom/kernel.hpp"

namespace oc_cpu {

inline void run_on_host(void* runner, oc_task_fn fn, size_t n, void* arg) {
  oc_parallel_for(static_cast<oc_context*>(runner), n, fn, arg);
}

inline oc_parallel pool(oc::Context& ctx) { return oc_parallel{&run_on_host, ctx.raw()}; }

}  // namespace oc_cpu

#endif  // ORTCUSTOM_KERNELS_CPU_RUNNER_H
