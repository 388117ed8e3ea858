// The CPU Inverse and its Team (kernels/cpu/team.h) under runners that hosts may be: built with
// kernels/cpu/inverse.cpp into a test library (test_inverse_runners.py), called through ctypes.
// A runner here is how a host's parallel_for may run its tasks: all on the calling thread, in
// order or backwards; one at a time, each on a thread of its own; on a few threads at once that
// claim tasks as they come (a pool), one of them late. The kernel must give the same bits under
// each, and never wait for a task that only runs after the one waiting.
#include <stdint.h>
#include <string.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "../../kernels/cpu/team.h"
#include "../../kernels/kernels.h"

namespace {

struct Pool {
  int threads;     // threads claiming tasks at once (0: backwards on the caller; 1: one at a time)
  int late_ms;     // the second thread starts this late
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
  auto work = [&](int t) {
    if (t == 1 && p->late_ms) std::this_thread::sleep_for(std::chrono::milliseconds(p->late_ms));
    for (size_t i; (i = next.fetch_add(1)) < n;) fn(arg, i);
  };
  std::vector<std::thread> others;
  for (int t = 1; t < p->threads; ++t) others.emplace_back(work, t);
  work(0);
  for (auto& th : others) th.join();
}

const Pool kPools[] = {{2, 0}, {3, 0}, {2, 20}};

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

extern "C" {

__attribute__((visibility("default"))) int runner_kinds() {
  return 4 + (int)(sizeof kPools / sizeof kPools[0]);
}

__attribute__((visibility("default"))) int inverse_f32_with(int kind, const float* in, float* out,
                                                            int64_t batch, int64_t n) {
  return oc_inverse_f32(in, out, batch, n, runner(kind));
}

__attribute__((visibility("default"))) int inverse_f64_with(int kind, const double* in,
                                                            double* out, int64_t batch, int64_t n) {
  return oc_inverse_f64(in, out, batch, n, runner(kind));
}

// A team of `tasks` tasks: `steps` steps of step + 1 items each, every item waiting for the
// lower-numbered ones of its step (as the inverse's GEMM items wait for its pack items), then
// one step started and finished around work of the leader's own. Returns 0 when every item ran
// exactly once and after those below it, the leader ran once, and a task that started after the
// leader returned did nothing; else a code naming the failure.
__attribute__((visibility("default"))) int team_check(int kind, int tasks, int steps) {
  using oc::detail::Team;
  struct Step {
    std::vector<std::atomic<int>> runs;
    std::atomic<int> order_bad{0};
    explicit Step(size_t n) : runs(n) {}
    static void item(void* arg, size_t i) {
      Step* s = static_cast<Step*>(arg);
      for (size_t j = 0; j < i; ++j)
        while (s->runs[j].load(std::memory_order_acquire) == 0) oc::detail::spin_pause();
      s->runs[i].fetch_add(1, std::memory_order_release);
    }
    int check() const {
      for (const auto& r : runs)
        if (r.load() != 1) return 1;
      return 0;
    }
  };
  int leaders = 0, bad = 0;
  Team::run(runner(kind), (size_t)tasks, [&](Team& team) {
    ++leaders;
    for (int s = 0; s < steps; ++s) {
      Step st((size_t)s + 1);
      team.start(&Step::item, st.runs.size(), &st);
      if (s % 2) std::this_thread::yield();  // the leader's own work while the step runs
      team.finish();
      bad |= st.check() ? 2 : 0;
    }
    Step empty(0);  // a step of no items
    team.start(&Step::item, 0, &empty);
    team.finish();
  });
  if (leaders != 1) return 4;
  return bad;
}

}  // extern "C"
