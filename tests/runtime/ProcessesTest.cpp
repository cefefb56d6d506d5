//===- ProcessesTest.cpp - several lac processes on one disk cache --------===//
//
// The disk cache's promise across processes: however many compile the same key at once, each gets a correct
// kernel and the directory ends with one whole entry per key and no temporary file. Several `lac run`
// processes on the same kernel, shapes, seed and cache directory are started together; all must exit 0
// with byte-identical outputs. The cache is emptied between rounds so every round races on a cold key.
//
//===----------------------------------------------------------------------===//

#include "Helpers.h"

#include "la/runtime/Npy.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <gtest/gtest.h>

namespace {

using namespace la;
using namespace la::test;

constexpr unsigned kProcesses = 5;
constexpr unsigned kRounds = 3;

std::string readText(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

class RuntimeConcurrencyProcesses : public testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> path;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("la-runtime-processes", path));
    directory = std::string(path);
  }
  void TearDown() override { removeTree(directory); }

  std::string file(llvm::StringRef name) const {
    llvm::SmallString<128> path(directory);
    llvm::sys::path::append(path, name);
    return std::string(path);
  }

  std::string directory;
};

TEST_F(RuntimeConcurrencyProcesses, LacRunsShareOneCache) {
  std::string cacheDir = file("cache");
  std::string kernel = kernelPath("flow_attention.mlir");
  std::optional<HostTensor> first;
  for (unsigned round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    removeTree(cacheDir);

    std::vector<llvm::sys::ProcessInfo> processes;
    std::vector<std::string> outputs, logs;
    for (unsigned p = 0; p < kProcesses; ++p) {
      outputs.push_back(file("out" + std::to_string(p) + ".npy"));
      logs.push_back(file("log" + std::to_string(p) + ".txt"));
      llvm::SmallVector<llvm::StringRef> args = {LA_LAC_PATH, "run",         kernel,   "--entry",  "flow_attention",
                                                 "--random",  "1,2,33,8",    "--seed", "7",        "--threads",
                                                 "1",         "--cache-dir", cacheDir, "--output", outputs.back()};
      std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(logs.back()),
                                                    llvm::StringRef(logs.back())};
      std::string error;
      bool failed = false;
      processes.push_back(llvm::sys::ExecuteNoWait(LA_LAC_PATH, args, std::nullopt, redirects, 0, &error, &failed));
      ASSERT_FALSE(failed) << error;
    }
    std::vector<int> codes;
    for (llvm::sys::ProcessInfo &process : processes) {
      std::string error;
      codes.push_back(llvm::sys::Wait(process, /*SecondsToWait=*/std::nullopt, &error).ReturnCode);
    }

    for (unsigned p = 0; p < kProcesses; ++p) {
      ASSERT_EQ(codes[p], 0) << "lac #" << p << " said:\n" << readText(logs[p]);
      auto output = readNpy(outputs[p]);
      ASSERT_TRUE(static_cast<bool>(output)) << llvm::toString(output.takeError());
      // Every process in every round computes the same bits as the first one did.
      if (!first)
        first = std::move(*output);
      else
        EXPECT_TRUE(sameBits(*output, *first)) << "lac #" << p;
    }

    // One key (flow_attention sliced to one head, f32[1x1x33x8] x 3): exactly one entry, no temporary file.
    std::vector<std::string> files = listFiles(cacheDir);
    ASSERT_EQ(files.size(), 1u);
    EXPECT_TRUE(llvm::StringRef(files[0]).ends_with(".lak")) << files[0];
  }
}

} // namespace
