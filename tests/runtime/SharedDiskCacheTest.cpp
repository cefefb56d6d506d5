//===- SharedDiskCacheTest.cpp - several Runtimes on one cache directory --===//
//
// Runtimes in one process share nothing but the disk cache, like separate processes do. Started together on
// the same keys, they all compile and publish the same entries at once; DiskCache writes each to a unique
// temporary file and renames it into place, so afterwards the directory must hold exactly one complete
// entry per key and no temporary file, and a fresh Runtime must load every key from disk.
//
//===----------------------------------------------------------------------===//

#include "Helpers.h"

#include <gtest/gtest.h>

#include <thread>

namespace {

using namespace la;
using namespace la::test;

constexpr unsigned kRuntimes = 6;

std::unique_ptr<Runtime> makeRuntime(llvm::StringRef cacheDir) {
  RuntimeOptions options;
  options.cacheDir = cacheDir.str();
  options.numThreads = 1;
  auto runtime = Runtime::create(options);
  if (!runtime) {
    ADD_FAILURE() << llvm::toString(runtime.takeError());
    return nullptr;
  }
  return std::move(*runtime);
}

/// Runs `entry` of `file` on `inputs` in a runtime on `cacheDir`; `error` gets the message of a failure.
HostTensor runOnce(llvm::StringRef cacheDir, llvm::StringRef file, llvm::StringRef entry, const AttentionInputs &inputs,
                   CallStats &stats, std::string &error) {
  auto runtime = makeRuntime(cacheDir);
  if (!runtime)
    return {};
  auto program = runtime->loadFile(kernelPath(file));
  if (!program) {
    error = llvm::toString(program.takeError());
    return {};
  }
  auto results = runtime->run(**program, entry, inputs.refs, &stats);
  if (!results) {
    error = llvm::toString(results.takeError());
    return {};
  }
  return std::move((*results)[0]);
}

class RuntimeConcurrencyDisk : public testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> path;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("la-runtime-disk", path));
    directory = std::string(path);
  }
  void TearDown() override { removeTree(directory); }

  std::string directory;
};

TEST_F(RuntimeConcurrencyDisk, RuntimesPublishTheSameKeysAtOnce) {
  // Two keys, so entries for different keys are published next to each other as well.
  const char *entries[] = {"linear_attention", "linear_attention_causal"};
  AttentionInputs inputs(1, 2, 33, 8, /*seed=*/3);
  HostTensor expected[2];
  for (unsigned e = 0; e < 2; ++e) {
    CallStats stats;
    std::string error;
    expected[e] = runOnce("none", "linear_attention.mlir", entries[e], inputs, stats, error);
    ASSERT_EQ(error, "");
  }

  for (unsigned round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    removeTree(directory);
    StartLine start(kRuntimes);
    std::vector<HostTensor> results(kRuntimes);
    std::vector<CallStats> stats(kRuntimes);
    std::vector<std::string> errors(kRuntimes);
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < kRuntimes; ++t)
      threads.emplace_back([&, t] {
        start.arriveAndWait();
        results[t] = runOnce(directory, "linear_attention.mlir", entries[t % 2], inputs, stats[t], errors[t]);
      });
    for (std::thread &thread : threads)
      thread.join();

    for (unsigned t = 0; t < kRuntimes; ++t) {
      ASSERT_EQ(errors[t], "") << "runtime " << t;
      EXPECT_TRUE(sameBits(results[t], expected[t % 2])) << "runtime " << t;
      // Each runtime either compiled the key itself or found another's published entry.
      EXPECT_NE(stats[t].cache, CacheSource::Memory) << "runtime " << t;
    }

    std::vector<std::string> files = listFiles(directory);
    EXPECT_EQ(files.size(), 2u);
    for (const std::string &name : files) {
      EXPECT_TRUE(llvm::StringRef(name).ends_with(".lak")) << name;
      EXPECT_EQ(name.find(".tmp-"), std::string::npos) << name;
    }

    // Every published entry is whole: a fresh runtime loads both keys from disk (a damaged entry would be a
    // miss) and gets the same bits.
    for (unsigned e = 0; e < 2; ++e) {
      CallStats fresh;
      std::string error;
      HostTensor again = runOnce(directory, "linear_attention.mlir", entries[e], inputs, fresh, error);
      ASSERT_EQ(error, "");
      EXPECT_EQ(fresh.cache, CacheSource::Disk) << entries[e];
      EXPECT_TRUE(sameBits(again, expected[e])) << entries[e];
    }
  }
}

} // namespace
