// How long a value written by one thread takes to reach another, for the benchmark runner's
// machine report (ortcustom_info_handoff, library_info.cpp): two threads pass a counter back and
// forth on one cache line. Every parallel step of a kernel pays such handoffs (the step published,
// its items claimed, their end seen), and so does every cache line one thread writes and the other
// then reads. On this project's 2-vCPU VMs it moved between ~50 ns and ~220 ns for seconds at a
// time (the host placing the two vCPUs on near or far cores), the LU's 2-thread time with it
// (solve 1x512 float: 0.49 or 0.88 ms); the runner prints it so that such a phase shows as one.
#include <stdint.h>

#include <atomic>
#include <chrono>
#include <thread>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

#include "../kernels.h"
#include "team.h"  // spin_wait

namespace {

// The calling thread's CPUs, given back when this goes (the caller is pinned for the measure).
struct CallerCpus {
#if defined(__linux__)
  cpu_set_t was;
  bool have = pthread_getaffinity_np(pthread_self(), sizeof was, &was) == 0;
  ~CallerCpus() {
    if (have) pthread_setaffinity_np(pthread_self(), sizeof was, &was);
  }
#endif
};

// The calling thread on CPU `cpu` alone (cpu < 0: left as it is).
void pin(int cpu) {
#if defined(__linux__)
  if (cpu < 0) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  pthread_setaffinity_np(pthread_self(), sizeof one, &one);
#else
  (void)cpu;
#endif
}

}  // namespace

extern "C" int64_t oc_handoff(int64_t rounds, double* ns_one_way) {
  // The two threads on the first two CPUs the caller may run on: a new thread starts on its parent's
  // CPU, and after the process slept the VM's other vCPU took it over only milliseconds later (every
  // handoff was then a switch between the two threads on one CPU: 1.5-4.5 us).
  CallerCpus caller;
  (void)caller;
  int cpus[2] = {-1, -1};
#if defined(__linux__)
  for (int c = 0, k = 0; caller.have && c < CPU_SETSIZE && k < 2; ++c)
    if (CPU_ISSET(c, &caller.was)) cpus[k++] = c;
  if (cpus[1] < 0) cpus[0] = -1;  // one CPU: the threads take turns on it
#endif
  struct alignas(64) Line {
    std::atomic<int64_t> v{0};
  } line;
  int64_t seen = 0;  // values the other thread found in order (each exactly the one it waited for)
  auto wait_for = [&line](int64_t want) {
    unsigned round = 0;  // (yields past a few thousand pauses: a machine with one core still ends)
    int64_t got;
    while ((got = line.v.load(std::memory_order_acquire)) < want) ::oc::detail::spin_wait(round);
    return got == want;
  };
  try {
    std::thread other([&] {
      pin(cpus[1]);
      for (int64_t i = 0; i < rounds; ++i) {
        seen += wait_for(2 * i + 1) ? 1 : 0;
        line.v.store(2 * i + 2, std::memory_order_release);
      }
    });
    pin(cpus[0]);
    const auto t0 = std::chrono::steady_clock::now();
    int64_t back = 0;
    for (int64_t i = 0; i < rounds; ++i) {
      line.v.store(2 * i + 1, std::memory_order_release);
      back += wait_for(2 * i + 2) ? 1 : 0;
    }
    const auto t1 = std::chrono::steady_clock::now();
    other.join();
    *ns_one_way = rounds > 0 ? std::chrono::duration<double, std::nano>(t1 - t0).count() / (2.0 * rounds) : 0.0;
    return seen + back;
  } catch (...) {  // no thread could be started
    *ns_one_way = 0.0;
    return -1;
  }
}
