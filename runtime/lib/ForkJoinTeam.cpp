//===- ForkJoinTeam.cpp - worker threads that spin between calls ----------===//

#include "ForkJoinTeam.h"

namespace la {
namespace {

/// Tells the core that this thread is spinning (x86 `pause`), so a sibling hyperthread gets the pipeline.
void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

} // namespace

ForkJoinTeam::ForkJoinTeam(unsigned workers, std::chrono::microseconds spin) : spin(spin) {
  threads.reserve(workers);
  for (unsigned i = 0; i < workers; ++i)
    threads.emplace_back([this, i] { work(i + 1); });
}

ForkJoinTeam::~ForkJoinTeam() {
  {
    std::lock_guard<std::mutex> lock(sleepMutex);
    stopping.store(true);
  }
  wake.notify_all();
  for (std::thread &thread : threads)
    thread.join();
}

bool ForkJoinTeam::tryRun(unsigned parts, llvm::function_ref<void(unsigned)> part) {
  std::unique_lock<std::mutex> own(owner, std::try_to_lock);
  if (!own.owns_lock())
    return false;
  job = part;
  jobParts = parts;
  finished.store(0, std::memory_order_relaxed);
  // Sequentially consistent with the sleepers' count: a worker either sees this generation before it
  // sleeps, or is counted here and woken.
  generation.fetch_add(1);
  if (sleepers.load() > 0) {
    std::lock_guard<std::mutex> lock(sleepMutex);
    wake.notify_all();
  }
  if (parts > 0)
    part(0);
  // Workers finish at about the time the caller does: spin rather than sleep.
  while (finished.load(std::memory_order_acquire) < threads.size())
    relax();
  return true;
}

void ForkJoinTeam::work(unsigned index) {
  uint64_t seen = 0;
  while (true) {
    // Spin for the next generation, then sleep until it comes.
    auto deadline = std::chrono::steady_clock::now() + spin;
    uint64_t current = generation.load(std::memory_order_acquire);
    for (unsigned i = 0; current == seen && !stopping.load(std::memory_order_relaxed); ++i) {
      relax();
      if (i % 64 == 63 && std::chrono::steady_clock::now() >= deadline)
        break;
      current = generation.load(std::memory_order_acquire);
    }
    if (current == seen) {
      std::unique_lock<std::mutex> lock(sleepMutex);
      sleepers.fetch_add(1);
      wake.wait(lock, [&] { return stopping.load() || generation.load() != seen; });
      sleepers.fetch_sub(1);
      current = generation.load(std::memory_order_acquire);
    }
    if (stopping.load())
      return;
    seen = current;
    if (index < jobParts)
      job(index);
    finished.fetch_add(1, std::memory_order_release);
  }
}

} // namespace la
