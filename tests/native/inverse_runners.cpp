// The CPU Inverse and its Team (kernels/cpu/team.h) under the runners of runners.h: built with
// kernels/cpu/inverse.cpp into a test library (test_inverse_runners.py), called through ctypes.
#include "../../kernels/cpu/team.h"
#include "../../kernels/kernels.h"
#include "runners.h"

#include <map>
#include <mutex>

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
// leader returned did nothing; and when Team::member() said 0 on the leader's thread only, one
// number below `tasks` per thread, another for each, 0 in a team of one run inside an item and the
// item's own number again after it, -1 outside the team; else a code naming the failure.
__attribute__((visibility("default"))) int team_check(int kind, int tasks, int steps) {
  using oc::detail::Team;
  static std::mutex seen_lock;
  static std::map<std::thread::id, int> seen;  // each thread's member() in items
  static std::atomic<int> member_bad;
  static std::thread::id leader;
  seen.clear();
  member_bad = 0;
  leader = std::thread::id();
  struct Step {
    std::vector<std::atomic<int>> runs;
    std::atomic<int> order_bad{0};
    explicit Step(size_t n) : runs(n) {}
    static void item(void* arg, size_t i) {
      Step* s = static_cast<Step*>(arg);
      const int m = Team::member();
      int inner = -1;
      Team::run(oc_parallel{nullptr, nullptr}, 1, [&](Team&) { inner = Team::member(); });
      if (m < 0 || (m == 0) != (std::this_thread::get_id() == leader) || inner != 0 || Team::member() != m)
        member_bad = 1;
      {
        const std::lock_guard<std::mutex> hold(seen_lock);
        if (seen.emplace(std::this_thread::get_id(), m).first->second != m) member_bad = 1;
      }
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
  if (Team::member() != -1) return 8;
  Team::run(runner(kind), (size_t)tasks, [&](Team& team) {
    ++leaders;
    leader = std::this_thread::get_id();
    if (Team::member() != 0) member_bad = 1;
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
  std::vector<bool> taken((size_t)tasks);
  for (const auto& t : seen) {
    if (t.second < 0 || t.second >= tasks || taken[(size_t)t.second]) {
      member_bad = 1;
      continue;
    }
    taken[(size_t)t.second] = true;
  }
  if (member_bad || Team::member() != -1) bad |= 8;
  return bad;
}

}  // extern "C"
