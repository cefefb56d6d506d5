//===- ForkJoinPool.cpp - The unfused references' intra-op parallelism ----===//
#include "ForkJoinPool.h"

#include <algorithm>

using namespace la::bench;

// hardware_concurrency(0) would mean one thread per hardware thread: ask for at least one, which a
// single-threaded pool never starts.
ForkJoinPool::ForkJoinPool(unsigned threads)
    : numThreads(std::max(1u, threads)), workers(llvm::hardware_concurrency(std::max(1u, numThreads - 1))) {}

void ForkJoinPool::parallelFor(int64_t n, llvm::function_ref<void(int64_t, int64_t)> body) {
  if (numThreads == 1 || n <= 1) {
    body(0, n);
    return;
  }
  llvm::ThreadPoolTaskGroup blocks(workers);
  for (unsigned i = 1; i < numThreads; ++i) {
    int64_t begin = n * i / numThreads, end = n * (i + 1) / numThreads;
    if (begin < end)
      blocks.async([=] { body(begin, end); });
  }
  body(0, n / numThreads);
  blocks.wait();
}
