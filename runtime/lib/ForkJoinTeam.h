//===- ForkJoinTeam.h - worker threads that spin between calls --*- C++ -*-===//
//
// The threads that run a call's batch×head slices. A call forks its slices over the team and joins them
// before it returns, so the workers sit idle between calls. A worker that sleeps on a condition variable
// pays a kernel wake-up on the next call: tens of microseconds on these machines, which is the whole of a
// decode step (gla at B=1, H=32, K=V=128 ran in 68 µs on one thread and 98 µs on two through
// llvm::StdThreadPool). So a worker first spins for a while after each job, watching for the next one, and
// only then sleeps: calls that come back to back (a decode loop) find it awake. This is what OpenMP
// runtimes (KMP_BLOCKTIME) and ggml's thread pool do; llvm::ThreadPool always sleeps.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_FORKJOINTEAM_H
#define LA_RUNTIME_FORKJOINTEAM_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace la {

class ForkJoinTeam {
public:
  /// Starts `workers` threads, which spin for `spin` after each job (and at start) before they sleep.
  ForkJoinTeam(unsigned workers, std::chrono::microseconds spin);
  /// Stops and joins the workers.
  ~ForkJoinTeam();
  ForkJoinTeam(const ForkJoinTeam &) = delete;
  ForkJoinTeam &operator=(const ForkJoinTeam &) = delete;

  /// Runs `part(p)` for every p in [0, parts), on the team and the calling thread together (the caller takes
  /// part 0), and returns when all have run. Returns false without running anything when another call holds
  /// the team (two host threads calling the runtime at once): that caller then runs its work itself.
  bool tryRun(unsigned parts, llvm::function_ref<void(unsigned part)> part);

  /// The worker threads (the caller is one more).
  unsigned size() const { return threads.size(); }

private:
  void work(unsigned index);

  std::chrono::microseconds spin;
  std::vector<std::thread> threads;
  /// Held by the call that owns the team.
  std::mutex owner;
  /// The current job; written by the owner before `generation` is bumped (release), read after (acquire).
  llvm::function_ref<void(unsigned)> job;
  unsigned jobParts = 0;
  std::atomic<uint64_t> generation{0};
  /// Workers done with the current generation.
  std::atomic<unsigned> finished{0};
  /// Workers asleep (or about to be) on `wake`; the owner notifies only when there are some.
  std::atomic<unsigned> sleepers{0};
  std::atomic<bool> stopping{false};
  std::mutex sleepMutex;
  std::condition_variable wake;
};

} // namespace la

#endif // LA_RUNTIME_FORKJOINTEAM_H
