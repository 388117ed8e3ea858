// Runners that hosts may be, for the kernels' Team (kernels/cpu/team.h), shared by the runner
// tests' libraries (inverse_runners.cpp, lu_runners.cpp): how a host's parallel_for may run its
// tasks: all on the calling thread, in order or backwards; one at a time, each on a thread of its
// own; on a few threads at once that claim tasks as they come (a pool), one of them late, or both
// started before the first claim (a pool whose threads were waiting). A kernel must give the same
// bits under each, and never wait for a task that only runs after the one waiting.
#ifndef ORTCUSTOM_TESTS_NATIVE_RUNNERS_H
#define ORTCUSTOM_TESTS_NATIVE_RUNNERS_H

#include <stdint.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "../../kernels/kernels.h"

namespace {

struct Pool {
  int threads;     // threads claiming tasks at once (0: backwards on the caller; 1: one at a time)
  int late_ms;     // the second thread starts this late
  bool together;   // the threads claim their first task only once all have started (a warm pool)
};

void run_backwards(void*, oc_task_fn fn, size_t n, void* arg) {
  for (size_t i = n; i-- > 0;) fn(arg, i);
}

void run_one_thread_each(void*, oc_task_fn fn, size_t n, void* arg) {
  for (size_t i = 0; i < n; ++i) std::thread([&] { fn(arg, i); }).join();
}

void run_pool(void* runner, oc_task_fn fn, size_t n, void* arg) {
  const Pool* p = static_cast<const Pool*>(runner);
  std::atomic<size_t> next{0};
  std::atomic<int> started{0};
  auto work = [&](int t) {
    if (t == 1 && p->late_ms) std::this_thread::sleep_for(std::chrono::milliseconds(p->late_ms));
    started.fetch_add(1);
    while (p->together && started.load() < p->threads) std::this_thread::yield();
    for (size_t i; (i = next.fetch_add(1)) < n;) fn(arg, i);
  };
  std::vector<std::thread> others;
  for (int t = 1; t < p->threads; ++t) others.emplace_back(work, t);
  work(0);
  for (auto& th : others) th.join();
}

const Pool kPools[] = {{2, 0, false}, {3, 0, false}, {2, 20, false}, {2, 0, true}};

// Runner `kind`: 0 none (NULL), 1 oc_serial, 2 backwards, 3 one thread each, 4.. the pools.
oc_parallel runner(int kind) {
  switch (kind) {
    case 0: return oc_parallel{nullptr, nullptr};
    case 1: return oc_serial;
    case 2: return oc_parallel{&run_backwards, nullptr};
    case 3: return oc_parallel{&run_one_thread_each, nullptr};
    default: return oc_parallel{&run_pool, const_cast<Pool*>(&kPools[kind - 4])};
  }
}

}  // namespace

// How many runner kinds runner() knows (0 .. runner_kinds() - 1).
extern "C" __attribute__((visibility("default"))) int runner_kinds() {
  return 4 + (int)(sizeof kPools / sizeof kPools[0]);
}

#endif  // ORTCUSTOM_TESTS_NATIVE_RUNNERS_H
