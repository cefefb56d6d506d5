//===- SequenceParallelTest.cpp - causal calls on pieces match the whole --===//
//
// A causal call of 64 positions or more runs on pieces of its sequence whose lengths are powers of two
// (RuntimeOptions::splitSequences, runtime/lib/SequencePieces.h): two threads per slice where the threads
// allow, else one thread running each slice's pieces in order. For every causal library kernel either must
// reproduce the whole-sequence kernel (relative RMS ≤ 1e-5, as prefill + resumes do: StateVariantsTest), with
// shorter pieces after the long ones: B·H = 1 on two threads and 2 on four (1100 positions: four pieces of
// 256, then 64, 8 and 4), B·H = 1 on one thread (16500 positions: sixteen of 1024, then 64, 32, 16 and 4), and
// more slices than pairs of threads (1100: 1024, 64, 8, 4, one thread per slice). It must be used where it
// applies (CallStats) and nowhere else: not with the option off, not for a non-causal entry, not for a
// sequence shorter than 64 positions.
//
//===----------------------------------------------------------------------===//

#include "la/runtime/Runtime.h"

#include "SequencePositions.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace {

struct Kernel {
  const char *file;
  const char *entry;
  /// The sequence dimension: [B, H, T, ...] kernels, or AFT's [B, T, d].
  size_t seq = 2;
};

std::unique_ptr<la::Runtime> makeRuntime(unsigned threads, bool splitSequences = true) {
  la::RuntimeOptions options;
  options.cacheDir = "none";
  options.numThreads = threads;
  options.splitSequences = splitSequences;
  auto runtime = la::Runtime::create(options);
  EXPECT_TRUE(bool(runtime)) << llvm::toString(runtime.takeError());
  return runtime ? std::move(*runtime) : nullptr;
}

/// Inputs of `entry`'s declared ranks at [batch, heads, length, 16, ..] (or [batch·heads, length, 16] where the
/// sequence is dimension 1), inside their domains.
std::vector<la::HostTensor> makeInputs(const la::EntrySignature &signature, int64_t batch, int64_t heads,
                                       int64_t length, size_t seq = 2) {
  std::mt19937_64 generator(11);
  std::vector<la::HostTensor> inputs;
  for (auto [i, declared] : llvm::enumerate(signature.arguments)) {
    la::TensorSpec spec = declared;
    spec.shape = la::test::sequenceShape(spec.shape.size(), seq, batch, heads, length, 16);
    auto [low, high] = la::samplingInterval(signature.argumentDomains[i]);
    std::uniform_real_distribution<double> uniform(low, high);
    la::HostTensor &tensor = inputs.emplace_back(spec);
    for (int64_t e = 0; e < tensor.numElements(); ++e)
      tensor.set(e, uniform(generator));
  }
  return inputs;
}

/// Runs `entry` on `inputs`; `stats` receives how the call ran.
std::vector<la::HostTensor> run(la::Runtime &runtime, const la::Program &program, const std::string &entry,
                                std::vector<la::HostTensor> &inputs, la::CallStats &stats) {
  std::vector<la::TensorRef> refs;
  for (la::HostTensor &tensor : inputs)
    refs.push_back(tensor.ref());
  stats = la::CallStats();
  auto results = runtime.run(program, entry, refs, &stats);
  EXPECT_TRUE(bool(results)) << entry << ": " << llvm::toString(results.takeError());
  return results ? std::vector<la::HostTensor>(results->begin(), results->end()) : std::vector<la::HostTensor>();
}

double relativeRms(const la::HostTensor &x, const la::HostTensor &y) {
  double error = 0, norm = 0;
  for (int64_t i = 0; i < y.numElements(); ++i) {
    error += (x.get(i) - y.get(i)) * (x.get(i) - y.get(i));
    norm += y.get(i) * y.get(i);
  }
  return std::sqrt(error / norm);
}

class SequenceParallel : public testing::TestWithParam<Kernel> {};

TEST_P(SequenceParallel, PiecesMatchTheWholeSequence) {
  const Kernel &kernel = GetParam();
  auto whole = makeRuntime(1, /*splitSequences=*/false);
  ASSERT_TRUE(whole);
  auto program = whole->loadFile(std::string(LA_KERNELS_DIR) + "/" + kernel.file);
  ASSERT_TRUE(bool(program)) << llvm::toString(program.takeError());
  auto signature = whole->signature(**program, kernel.entry);
  ASSERT_TRUE(bool(signature)) << llvm::toString(signature.takeError());

  struct Case {
    int64_t heads, length;
    unsigned threads;
    int64_t pieces;
    int threadsPerSlice;
  };
  for (Case c : {Case{1, 1100, 2, 7, 2}, Case{2, 1100, 4, 7, 2}, Case{1, 16500, 1, 20, 1}}) {
    std::string what = std::string(kernel.entry) + " B·H=" + std::to_string(c.heads) +
                       " N=" + std::to_string(c.length) + " on " + std::to_string(c.threads) + " threads";
    auto pieced = makeRuntime(c.threads);
    ASSERT_TRUE(pieced);
    auto expectPiecesMatch = [&](std::vector<la::HostTensor> inputs, int64_t pieces, int threadsPerSlice,
                                 const std::string &how) {
      la::CallStats stats;
      std::vector<la::HostTensor> expected = run(*whole, **program, kernel.entry, inputs, stats);
      EXPECT_EQ(stats.sequencePieces, 0) << how << ": off";
      std::vector<la::HostTensor> split = run(*pieced, **program, kernel.entry, inputs, stats);
      EXPECT_EQ(stats.sequencePieces, pieces) << how;
      EXPECT_EQ(stats.sequenceThreadsPerSlice, threadsPerSlice) << how;
      ASSERT_EQ(split.size(), expected.size()) << how;
      for (size_t r = 0; r < split.size(); ++r)
        EXPECT_LE(relativeRms(split[r], expected[r]), 1e-5) << how << ": result #" << r;
    };
    expectPiecesMatch(makeInputs(*signature, 1, c.heads, c.length, kernel.seq), c.pieces, c.threadsPerSlice, what);
    // More slices than pairs of threads: one thread per slice, on pieces of 1024, 64, 8 and 4.
    expectPiecesMatch(makeInputs(*signature, 2 * c.threads, c.heads, 1100, kernel.seq), 4, 1,
                      what + ": B = " + std::to_string(2 * c.threads));
    // Shorter than 64 positions: the sequence whole.
    std::vector<la::HostTensor> short_ = makeInputs(*signature, 1, c.heads, 63, kernel.seq);
    la::CallStats stats;
    run(*pieced, **program, kernel.entry, short_, stats);
    EXPECT_EQ(stats.sequencePieces, 0) << what << ": N = 63";
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, SequenceParallel,
                         testing::Values(Kernel{"linear_attention.mlir", "linear_attention_causal"},
                                         Kernel{"flow_attention.mlir", "flow_attention_causal"},
                                         Kernel{"retention.mlir", "retention"}, Kernel{"retention.mlir", "simple_gla"},
                                         Kernel{"retention.mlir", "gla"}, Kernel{"aft.mlir", "aft_causal", 1}),
                         [](const testing::TestParamInfo<Kernel> &info) { return std::string(info.param.entry); });

TEST(SequenceParallelNotCausal, RunsTheSequenceWhole) {
  auto runtime = makeRuntime(2);
  ASSERT_TRUE(runtime);
  auto program = runtime->loadFile(std::string(LA_KERNELS_DIR) + "/linear_attention.mlir");
  ASSERT_TRUE(bool(program)) << llvm::toString(program.takeError());
  auto signature = runtime->signature(**program, "linear_attention");
  ASSERT_TRUE(bool(signature)) << llvm::toString(signature.takeError());
  std::vector<la::HostTensor> inputs = makeInputs(*signature, 1, 1, 2048);
  la::CallStats stats;
  run(*runtime, **program, "linear_attention", inputs, stats);
  EXPECT_EQ(stats.sequencePieces, 0);
}

} // namespace
