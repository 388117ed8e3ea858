// A team: one call of an oc_parallel runner (one fork/join of the host's pool) that serves many
// parallel steps of one computation, so a kernel with hundreds of short parallel phases (the
// blocked inverse: a few per 16-column leaf) pays the pool's fork/join once.
//
// Team::run(par, tasks, lead) asks the runner for `tasks` tasks. The first task to start is the
// leader: it runs lead(team), which does the serial work itself and hands out parallel steps. Every
// other task that starts while the leader runs is a helper: it claims items of the current step
// until the leader returns. Nothing waits for a task to start: a host pool may run its tasks on
// fewer threads than tasks, or one after another (ONNX Runtime's pool runs the tasks a worker has
// not begun on the calling thread once its own are done; a serial runner runs task 0 to the end
// first), so a barrier across tasks could wait for a task that runs only after it. Here a step's
// items are claimed one at a time from a counter by whoever is there, the leader included, and the
// leader waits only for items already claimed, which running threads are finishing. A task that
// starts after the leader has returned does nothing. With no runner (par.run == NULL) the leader
// runs alone on the calling thread.
//
// Team::member() tells the calling thread's place in the team it works for (0: the leader; 1, 2,
// ...: the helpers in the order they joined), so that a computation can keep each part of its data
// on one thread from step to step (the LU's blocks of columns, the inverse's rows).
//
// A step: start(fn, n, arg) publishes items fn(arg, 0..n) and returns; the leader may then do work
// of its own that no item touches (the inverse factors the next panel meanwhile), and finish()
// claims what is left and returns when every item is done. runner() makes a step an oc_parallel
// (start + finish), so code written for parallel_for runs its loops on the team. Items are
// claimed in index order: an item may wait for lower-numbered items of its step (they were claimed
// first, by running threads), never for higher ones.
#ifndef ORTCUSTOM_KERNELS_CPU_TEAM_H
#define ORTCUSTOM_KERNELS_CPU_TEAM_H

#include <stddef.h>
#include <stdint.h>

#include <atomic>
#include <thread>

#include "../kernels.h"

namespace oc {
namespace detail {

// One round of a spin-wait.
inline void spin_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

// Round `round` (from 0) of a wait for another thread: a pause, or past a few thousand rounds
// (~0.1-1 ms: longer than any step's serial work on a machine to ourselves) a yield of the core, so
// that on a busy machine the thread waited for (descheduled) can run. With nothing else runnable
// a yield returns at once, a pause in effect.
inline void spin_wait(unsigned& round) {
  if (round < (1u << 12)) {
    ++round;
    spin_pause();
  } else {
    std::this_thread::yield();
  }
}

class Team {
 public:
  // Runs lead(team) once, on the first of `tasks` tasks of par to start, the others helping.
  template <class F>
  static void run(const oc_parallel& par, size_t tasks, F&& lead) {
    Team team;
    if (par.run == nullptr || tasks <= 1) {
      team.members_.store(1, std::memory_order_relaxed);
      const As leader(0);
      lead(team);
      return;
    }
    Region<F> r = {&team, &lead};
    par.run(par.runner, &Region<F>::task, tasks, &r);
  }

  // The tasks that have joined so far, the leader included (it only grows; a hint for the
  // leader's choices, which must not change results).
  int size() const { return members_.load(std::memory_order_relaxed); }

  // The calling thread's place in the team whose lead or step it runs: 0 the leader, 1, 2, ... the
  // helpers in the order they joined; -1 outside any team.
  static int member() { return t_member_; }

  // The leader only: publishes a step of items fn(arg, i), i in [0, n), and returns.
  void start(oc_task_fn fn, size_t n, void* arg) {
    ++epoch_;
    Slot& s = slot_[epoch_ & 1];
    s.fn.store(fn, std::memory_order_relaxed);
    s.arg.store(arg, std::memory_order_relaxed);
    s.n.store(n, std::memory_order_relaxed);
    n_ = n;
    done_.store(0, std::memory_order_relaxed);
    claim_.store((uint64_t)epoch_ << 32, std::memory_order_release);  // publishes the slot
  }

  // The leader only: runs the current step's unclaimed items, returns when all are done.
  void finish() {
    const Slot& s = slot_[epoch_ & 1];
    const oc_task_fn fn = s.fn.load(std::memory_order_relaxed);
    void* const arg = s.arg.load(std::memory_order_relaxed);
    for (;;) {
      uint64_t c = claim_.load(std::memory_order_relaxed);
      if ((uint32_t)c >= n_) break;
      if (claim_.compare_exchange_weak(c, c + 1, std::memory_order_relaxed)) {
        fn(arg, (uint32_t)c);
        done_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    unsigned round = 0;
    while (done_.load(std::memory_order_acquire) < n_) spin_wait(round);  // claimed: being run
  }

  // An oc_parallel that runs each parallel_for as one step (the leader only).
  oc_parallel runner() { return oc_parallel{&Team::run_step, this}; }

 private:
  template <class F>
  struct Region {
    Team* team;
    F* lead;
    static void task(void* arg, size_t) {
      Region* r = static_cast<Region*>(arg);
      Team& t = *r->team;
      if (t.over_.load(std::memory_order_acquire)) return;
      t.members_.fetch_add(1, std::memory_order_relaxed);
      if (!t.led_.exchange(true, std::memory_order_acq_rel)) {
        const As leader(0);
        (*r->lead)(t);
        t.over_.store(true, std::memory_order_release);
      } else {
        const As helper(t.helpers_.fetch_add(1, std::memory_order_relaxed) + 1);
        t.help();
      }
    }
  };

  // member() for the scope of a lead or a help, the thread's earlier place restored after (a team
  // may run alone on a thread inside an item of another team's step).
  struct As {
    const int saved;
    explicit As(int m) : saved(t_member_) { t_member_ = m; }
    ~As() { t_member_ = saved; }
  };
  static inline thread_local int t_member_ = -1;

  struct Slot {
    std::atomic<oc_task_fn> fn{nullptr};
    std::atomic<void*> arg{nullptr};
    std::atomic<size_t> n{0};
  };

  static void run_step(void* runner, oc_task_fn fn, size_t n, void* arg) {
    Team* t = static_cast<Team*>(runner);
    t->start(fn, n, arg);
    t->finish();
  }

  // A helper: claims items of whatever step is current until the leader is over. The slot is
  // read before the claim and used only if the claim (a compare-exchange on the step's epoch and
  // next index) succeeds: the leader rewrites a slot only two steps later, after this item is done.
  void help() {
    unsigned idle = 0;
    for (;;) {
      uint64_t c = claim_.load(std::memory_order_acquire);
      const Slot& s = slot_[(c >> 32) & 1];
      const size_t n = s.n.load(std::memory_order_relaxed);
      if ((uint32_t)c < n) {
        const oc_task_fn fn = s.fn.load(std::memory_order_relaxed);
        void* const arg = s.arg.load(std::memory_order_relaxed);
        if (claim_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel,
                                         std::memory_order_relaxed)) {
          fn(arg, (uint32_t)c);
          done_.fetch_add(1, std::memory_order_release);  // the leader reads the item's writes
          idle = 0;
        }
        continue;
      }
      if (over_.load(std::memory_order_acquire)) return;
      spin_wait(idle);  // the leader is on serial work (a step follows within microseconds)
    }
  }

  Team() = default;
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;

  // claim_: (step epoch << 32) | next unclaimed item; the helpers' only entry to a step
  alignas(64) std::atomic<uint64_t> claim_{0};
  alignas(64) std::atomic<size_t> done_{0};  // items of the current step done
  alignas(64) Slot slot_[2];                 // steps alternate between two slots
  std::atomic<bool> led_{false};             // a task has become the leader
  std::atomic<bool> over_{false};            // the leader has returned
  std::atomic<int> members_{0};
  std::atomic<int> helpers_{0};  // helpers joined so far
  uint32_t epoch_ = 0;  // the leader's
  size_t n_ = 0;        // the leader's: items of the current step
};

}  // namespace detail
}  // namespace oc

#endif  // ORTCUSTOM_KERNELS_CPU_TEAM_H
