//===- SequenceParallelTest.cpp - two threads per slice match one ---------===//
//
// A sequence-parallel call (RuntimeOptions::splitSequences, runtime/lib/SequencePieces.h) runs each slice
// of a causal entry on two threads over pieces of the sequence. For every causal library kernel it must
// reproduce the same call on one thread (relative RMS ≤ 1e-5, as prefill + resumes do: StateVariantsTest),
// at B·H = 1 on two threads and B·H = 2 on four, with a sequence whose last piece is shorter (1100
// positions: four pieces of 256 and one of 76). It must be used where it applies (CallStats::sequencePieces)
// and nowhere else: not with the option off, not for a non-causal entry, not with more slices than pairs of
// threads.
//
//===----------------------------------------------------------------------===//

#include "la/runtime/Runtime.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace {

struct Kernel {
  const char *file;
  const char *entry;
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

/// Inputs of `entry`'s declared ranks at [batch, heads, length, 16, ..], inside their domains.
std::vector<la::HostTensor> makeInputs(const la::EntrySignature &signature, int64_t batch, int64_t heads,
                                       int64_t length) {
  std::mt19937_64 generator(11);
  std::vector<la::HostTensor> inputs;
  for (auto [i, declared] : llvm::enumerate(signature.arguments)) {
    la::TensorSpec spec = declared;
    spec.shape[0] = batch;
    spec.shape[1] = heads;
    spec.shape[2] = length;
    for (size_t d = 3; d < spec.shape.size(); ++d)
      spec.shape[d] = 16;
    auto [low, high] = la::samplingInterval(signature.argumentDomains[i]);
    std::uniform_real_distribution<double> uniform(low, high);
    la::HostTensor &tensor = inputs.emplace_back(spec);
    for (int64_t e = 0; e < tensor.numElements(); ++e)
      tensor.set(e, uniform(generator));
  }
  return inputs;
}

/// Runs `entry` on `inputs`; `pieces` receives CallStats::sequencePieces.
std::vector<la::HostTensor> run(la::Runtime &runtime, const la::Program &program, const std::string &entry,
                                std::vector<la::HostTensor> &inputs, int64_t &pieces) {
  std::vector<la::TensorRef> refs;
  for (la::HostTensor &tensor : inputs)
    refs.push_back(tensor.ref());
  la::CallStats stats;
  auto results = runtime.run(program, entry, refs, &stats);
  EXPECT_TRUE(bool(results)) << entry << ": " << llvm::toString(results.takeError());
  pieces = stats.sequencePieces;
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

TEST_P(SequenceParallel, TwoThreadsPerSliceMatchOne) {
  const Kernel &kernel = GetParam();
  auto one = makeRuntime(1);
  ASSERT_TRUE(one);
  auto program = one->loadFile(std::string(LA_KERNELS_DIR) + "/" + kernel.file);
  ASSERT_TRUE(bool(program)) << llvm::toString(program.takeError());
  auto signature = one->signature(**program, kernel.entry);
  ASSERT_TRUE(bool(signature)) << llvm::toString(signature.takeError());

  const int64_t length = 1100;
  for (auto [heads, threads] : {std::pair<int64_t, unsigned>{1, 2}, {2, 4}}) {
    std::string what =
        std::string(kernel.entry) + " B·H=" + std::to_string(heads) + " on " + std::to_string(threads) + " threads";
    std::vector<la::HostTensor> inputs = makeInputs(*signature, 1, heads, length);
    int64_t pieces = -1;
    std::vector<la::HostTensor> expected = run(*one, **program, kernel.entry, inputs, pieces);
    EXPECT_EQ(pieces, 0) << what << ": one thread";

    auto parallel = makeRuntime(threads);
    ASSERT_TRUE(parallel);
    std::vector<la::HostTensor> split = run(*parallel, **program, kernel.entry, inputs, pieces);
    EXPECT_EQ(pieces, 5) << what;
    ASSERT_EQ(split.size(), expected.size()) << what;
    for (size_t r = 0; r < split.size(); ++r)
      EXPECT_LE(relativeRms(split[r], expected[r]), 1e-5) << what << ": result #" << r;

    // Off, or more slices than pairs of threads: one thread per slice.
    auto off = makeRuntime(threads, /*splitSequences=*/false);
    ASSERT_TRUE(off);
    run(*off, **program, kernel.entry, inputs, pieces);
    EXPECT_EQ(pieces, 0) << what << ": splitSequences off";
    std::vector<la::HostTensor> wider = makeInputs(*signature, 2, heads, length);
    run(*parallel, **program, kernel.entry, wider, pieces);
    EXPECT_EQ(pieces, 0) << what << ": B = 2";
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, SequenceParallel,
                         testing::Values(Kernel{"linear_attention.mlir", "linear_attention_causal"},
                                         Kernel{"flow_attention.mlir", "flow_attention_causal"},
                                         Kernel{"retention.mlir", "retention"}, Kernel{"retention.mlir", "simple_gla"},
                                         Kernel{"retention.mlir", "gla"}),
                         [](const testing::TestParamInfo<Kernel> &info) { return std::string(info.param.entry); });

TEST(SequenceParallelNotCausal, RunsOneThreadPerSlice) {
  auto runtime = makeRuntime(2);
  ASSERT_TRUE(runtime);
  auto program = runtime->loadFile(std::string(LA_KERNELS_DIR) + "/linear_attention.mlir");
  ASSERT_TRUE(bool(program)) << llvm::toString(program.takeError());
  auto signature = runtime->signature(**program, "linear_attention");
  ASSERT_TRUE(bool(signature)) << llvm::toString(signature.takeError());
  std::vector<la::HostTensor> inputs = makeInputs(*signature, 1, 1, 2048);
  int64_t pieces = -1;
  run(*runtime, **program, "linear_attention", inputs, pieces);
  EXPECT_EQ(pieces, 0);
}

} // namespace
