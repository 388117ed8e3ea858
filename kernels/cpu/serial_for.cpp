// The serial runner: runs the tasks in order on the calling thread.
#include "../kernels.h"

namespace {
void oc_serial_run(void* /*runner*/, oc_task_fn fn, size_t n, void* arg) {
  for (size_t i = 0; i < n; ++i) fn(arg, i);
}
}  // namespace

extern "C" const oc_parallel oc_serial = {&oc_serial_run, nullptr};
