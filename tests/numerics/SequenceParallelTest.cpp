//===- SequenceParallelTest.cpp - causal calls on pieces match the whole --===//
//
// A causal call of 64 positions or more runs on pieces of its sequence whose lengths come from a fixed set
// (RuntimeOptions::splitSequences, runtime/lib/SequencePieces.h): two threads per slice where the threads
// allow, else one thread running each slice's pieces in order. For every causal library kernel either must
// reproduce the whole-sequence kernel (relative RMS ≤ 1e-5, as prefill + resumes do: StateVariantsTest), with
// shorter pieces after the long ones: B·H = 1 on two threads and 2 on four (1100 positions: four pieces of
// 256, then 64 and 12), B·H = 1 on one thread (16500 positions: sixteen of 1024, then 96, 16 and 4), and more
// slices than pairs of threads (1100: 1024, 64 and 12, one thread per slice). It must be used where it
// applies (CallStats) and nowhere else: not with the option off, not for a non-causal entry, not for a
// sequence shorter than 64 positions. Then lengths (issue 23 item 6): a second length made of the first's
// pieces compiles nothing, and a decoder's prefill and resume of any length run on pieces too.
//
//===----------------------------------------------------------------------===//

#include "la/runtime/Decoder.h"
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

std::vector<la::TensorRef> refsOf(std::vector<la::HostTensor> &tensors) {
  std::vector<la::TensorRef> refs;
  for (la::HostTensor &tensor : tensors)
    refs.push_back(tensor.ref());
  return refs;
}

/// Runs `entry` on `inputs`; `stats` receives how the call ran.
std::vector<la::HostTensor> run(la::Runtime &runtime, const la::Program &program, const std::string &entry,
                                std::vector<la::HostTensor> &inputs, la::CallStats &stats) {
  stats = la::CallStats();
  auto results = runtime.run(program, entry, refsOf(inputs), &stats);
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
  for (Case c : {Case{1, 1100, 2, 6, 2}, Case{2, 1100, 4, 6, 2}, Case{1, 16500, 1, 19, 1}}) {
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
    // More slices than pairs of threads: one thread per slice, on pieces of 1024, 64 and 12.
    expectPiecesMatch(makeInputs(*signature, 2 * c.threads, c.heads, 1100, kernel.seq), 3, 1,
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

TEST(SequenceLengths, ASecondLengthRunsOnTheFirstsKernels) {
  // 1000 positions are pieces of 768, 192, 32 and 8; 992 and 968 are three of those, so they compile nothing. The
  // whole-sequence kernel of each length (the option off) is the reference.
  auto whole = makeRuntime(2, /*splitSequences=*/false);
  auto pieced = makeRuntime(2);
  ASSERT_TRUE(whole && pieced);
  auto program = pieced->loadFile(std::string(LA_KERNELS_DIR) + "/retention.mlir");
  ASSERT_TRUE(bool(program)) << llvm::toString(program.takeError());
  auto signature = pieced->signature(**program, "simple_gla");
  ASSERT_TRUE(bool(signature)) << llvm::toString(signature.takeError());
  for (int64_t length : {1000, 992, 968}) {
    std::string what = "simple_gla N=" + std::to_string(length);
    std::vector<la::HostTensor> inputs = makeInputs(*signature, 1, 4, length);
    la::CallStats stats;
    std::vector<la::HostTensor> expected = run(*whole, **program, "simple_gla", inputs, stats);
    std::vector<la::HostTensor> split = run(*pieced, **program, "simple_gla", inputs, stats);
    EXPECT_EQ(stats.sequencePieces, length == 1000 ? 4 : 3) << what;
    if (length == 1000)
      EXPECT_EQ(stats.cache, la::CacheSource::Miss) << what;
    else
      EXPECT_EQ(stats.cache, la::CacheSource::Memory) << what << ": no kernel compiled for a second length";
    ASSERT_EQ(split.size(), 1u) << what;
    EXPECT_LE(relativeRms(split[0], expected[0]), 1e-5) << what;
  }
}

TEST(SequenceLengths, PrefillAndResumeOfAnyLengthRunOnPieces) {
  // A decoder's prefill of 1000 positions, then a resume of 904, both on pieces (the resume's first piece
  // reads the decoder's state), then one step: every output must match the whole-sequence kernel on all 1905
  // positions, the step's showing that the state the resume handed on is right.
  auto runtime = makeRuntime(2);
  ASSERT_TRUE(runtime);
  auto program = runtime->loadFile(std::string(LA_KERNELS_DIR) + "/linear_attention.mlir");
  ASSERT_TRUE(bool(program)) << llvm::toString(program.takeError());
  auto signature = runtime->signature(**program, "linear_attention_causal");
  ASSERT_TRUE(bool(signature)) << llvm::toString(signature.takeError());
  auto decoder = la::Decoder::create(*runtime, **program, "linear_attention_causal");
  ASSERT_TRUE(bool(decoder)) << llvm::toString(decoder.takeError());
  const int64_t first = 1000, second = 904, total = first + second + 1;
  std::vector<la::HostTensor> all = makeInputs(*signature, 1, 4, total);
  // Positions [begin, end) of every input, and an output for them.
  struct Stretch {
    int64_t begin, end;
    std::vector<la::HostTensor> inputs, outputs;
  };
  std::vector<Stretch> stretches;
  for (auto [begin, end] : {std::pair{int64_t(0), first}, {first, first + second}, {first + second, total}}) {
    Stretch &stretch = stretches.emplace_back(Stretch{begin, end, {}, {}});
    for (const la::HostTensor &tensor : all)
      stretch.inputs.push_back(la::test::positions(tensor, begin, end));
    stretch.outputs.emplace_back(stretch.inputs[0].spec());
  }
  la::CallStats stats;
  ASSERT_FALSE(bool((*decoder)->prefill(refsOf(stretches[0].inputs), refsOf(stretches[0].outputs), &stats)));
  EXPECT_EQ(stats.sequencePieces, 4); // 768, 192, 32, 8
  ASSERT_FALSE(bool((*decoder)->step(refsOf(stretches[1].inputs), refsOf(stretches[1].outputs), &stats)));
  EXPECT_EQ(stats.sequencePieces, 3); // 768, 128, 8
  ASSERT_FALSE(bool((*decoder)->step(refsOf(stretches[2].inputs), refsOf(stretches[2].outputs), &stats)));

  std::vector<la::HostTensor> expected = run(*makeRuntime(2, false), **program, "linear_attention_causal", all, stats);
  ASSERT_EQ(expected.size(), 1u);
  for (Stretch &stretch : stretches)
    EXPECT_LE(relativeRms(stretch.outputs[0], la::test::positions(expected[0], stretch.begin, stretch.end)), 1e-5)
        << "positions from " << stretch.begin;
}

} // namespace
