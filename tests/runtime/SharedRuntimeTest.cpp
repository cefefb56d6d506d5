//===- SharedRuntimeTest.cpp - many threads calling one la::Runtime -------===//
//
// A Runtime is documented as thread-safe and as compiling each memory-cache slot at most once however many
// threads ask for it together. These tests start the threads on one barrier so they do ask together, then
// check the cache statistics (one miss per key, memory hits for the rest) and that every result is
// bit-identical to the same call made alone by a fresh single-threaded runtime.
//
//===----------------------------------------------------------------------===//

#include "Helpers.h"

#include <gtest/gtest.h>

#include <thread>

namespace {

using namespace la;
using namespace la::test;

constexpr unsigned kThreads = 8;

std::unique_ptr<Runtime> makeRuntime(unsigned threads) {
  RuntimeOptions options;
  options.cacheDir = "none";
  options.numThreads = threads;
  auto runtime = Runtime::create(options);
  if (!runtime) {
    ADD_FAILURE() << llvm::toString(runtime.takeError());
    return nullptr;
  }
  return std::move(*runtime);
}

/// One kernel call the threads may make: a file, an entry and a shape.
struct Call {
  const char *file;
  const char *entry;
  int64_t n;
};

/// The result of `call` computed alone, by a runtime of its own with no pool.
HostTensor reference(const Call &call, const AttentionInputs &inputs) {
  auto runtime = makeRuntime(1);
  auto program = runtime->loadFile(kernelPath(call.file));
  if (!program) {
    ADD_FAILURE() << llvm::toString(program.takeError());
    return {};
  }
  auto results = runtime->run(**program, call.entry, inputs.refs);
  if (!results) {
    ADD_FAILURE() << llvm::toString(results.takeError());
    return {};
  }
  return std::move((*results)[0]);
}

TEST(RuntimeConcurrency, SameKeyCompilesOnce) {
  Call call{"linear_attention.mlir", "linear_attention", 33};
  AttentionInputs inputs(1, 2, call.n, 8, /*seed=*/1);
  HostTensor expected = reference(call, inputs);

  // Two pool threads, so slices of the 2 heads also run concurrently inside each call.
  auto runtime = makeRuntime(2);
  auto program = runtime->loadFile(kernelPath(call.file));
  ASSERT_TRUE(static_cast<bool>(program)) << llvm::toString(program.takeError());

  constexpr unsigned kRounds = 3;
  StartLine start(kThreads);
  std::vector<CallStats> firstCalls(kThreads);
  std::vector<std::vector<HostTensor>> results(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      start.arriveAndWait();
      for (unsigned round = 0; round < kRounds; ++round) {
        CallStats stats;
        auto out = runtime->run(**program, call.entry, inputs.refs, &stats);
        if (!out) {
          errors[t] = llvm::toString(out.takeError());
          return;
        }
        if (round == 0)
          firstCalls[t] = stats;
        else if (stats.cache != CacheSource::Memory)
          errors[t] = "a repeated call was a " + cacheSourceName(stats.cache).str();
        results[t].push_back(std::move((*out)[0]));
      }
    });
  for (std::thread &thread : threads)
    thread.join();

  unsigned misses = 0, memoryHits = 0;
  for (unsigned t = 0; t < kThreads; ++t) {
    EXPECT_EQ(errors[t], "") << "thread " << t;
    misses += firstCalls[t].cache == CacheSource::Miss;
    memoryHits += firstCalls[t].cache == CacheSource::Memory;
    for (const HostTensor &result : results[t])
      EXPECT_TRUE(sameBits(result, expected)) << "thread " << t;
  }
  EXPECT_EQ(misses, 1u);
  EXPECT_EQ(memoryHits, kThreads - 1);
}

TEST(RuntimeConcurrency, DifferentKeysAtOnce) {
  // Four keys (two programs, two entries, two sequence lengths), two threads on each.
  const Call calls[] = {{"linear_attention.mlir", "linear_attention", 33},
                        {"linear_attention.mlir", "linear_attention_causal", 33},
                        {"flow_attention.mlir", "flow_attention", 33},
                        {"flow_attention.mlir", "flow_attention", 17}};
  constexpr unsigned kKeys = std::size(calls);
  std::vector<std::unique_ptr<AttentionInputs>> inputs;
  std::vector<HostTensor> expected;
  for (unsigned k = 0; k < kKeys; ++k) {
    inputs.push_back(std::make_unique<AttentionInputs>(1, 2, calls[k].n, 8, /*seed=*/10 + k));
    expected.push_back(reference(calls[k], *inputs.back()));
  }

  auto runtime = makeRuntime(2);
  std::shared_ptr<Program> programs[kKeys];
  for (unsigned k = 0; k < kKeys; ++k) {
    auto program = runtime->loadFile(kernelPath(calls[k].file));
    ASSERT_TRUE(static_cast<bool>(program)) << llvm::toString(program.takeError());
    programs[k] = *program;
  }

  StartLine start(kThreads);
  std::vector<CallStats> stats(kThreads);
  std::vector<HostTensor> results(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      unsigned k = t % kKeys;
      start.arriveAndWait();
      auto out = runtime->run(*programs[k], calls[k].entry, inputs[k]->refs, &stats[t]);
      if (!out)
        errors[t] = llvm::toString(out.takeError());
      else
        results[t] = std::move((*out)[0]);
    });
  for (std::thread &thread : threads)
    thread.join();

  unsigned misses[kKeys] = {};
  for (unsigned t = 0; t < kThreads; ++t) {
    unsigned k = t % kKeys;
    ASSERT_EQ(errors[t], "") << "thread " << t;
    EXPECT_TRUE(sameBits(results[t], expected[k])) << "thread " << t << ": " << calls[k].entry;
    misses[k] += stats[t].cache == CacheSource::Miss;
  }
  for (unsigned k = 0; k < kKeys; ++k)
    EXPECT_EQ(misses[k], 1u) << calls[k].entry << " N=" << calls[k].n;
}

} // namespace
