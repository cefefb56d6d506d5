//===- ForkJoinPool.h - The unfused references' intra-op parallelism -*- C++ -*-===//
//
// How the unfused references spread one tensor op over threads, the way an eager framework's intra-op pool
// does: [0, n) is split into one contiguous block per thread, the calling thread runs the first block, and
// the op returns when every block is done. The other threads are an llvm::StdThreadPool's, started once and
// kept for the whole run, so an op pays a wake-up rather than a thread start.
//
//===----------------------------------------------------------------------===//
#ifndef LA_BENCH_FORKJOINPOOL_H
#define LA_BENCH_FORKJOINPOOL_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/ThreadPool.h"

#include <cstdint>

namespace la::bench {

class ForkJoinPool {
public:
  /// `threads` threads in all, the caller's included (at least one).
  explicit ForkJoinPool(unsigned threads);

  /// Runs body(begin, end) over [0, n) split into one contiguous block per thread; returns when all blocks
  /// are done.
  void parallelFor(int64_t n, llvm::function_ref<void(int64_t begin, int64_t end)> body);

private:
  unsigned numThreads;
  /// The numThreads - 1 threads besides the caller's, started on the first parallelFor that needs them.
  llvm::StdThreadPool workers;
};

} // namespace la::bench

#endif // LA_BENCH_FORKJOINPOOL_H
