// The CPU Inverse and its Team (kernels/cpu/team.h) under the runners of runners.h: built with
// kernels/cpu/inverse.cpp into a test library (test_inverse_runners.py), called through ctypes.
#include "../../kernels/cpu/team.h"
#include "../../kernels/kernels.h"
#include "runners.h"

extern "C" {

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
