//===- TunerTest.cpp - the search: checks, equal code, ties ---------------===//
//
// What the tuner does with candidates beyond timing them: a candidate whose outputs disagree with the
// default's is rejected (TF32 contractions, about 1e-3 relative error, against the f32 tolerance of 1e-4), a
// candidate that compiles to the default's code is not timed again, the caller's tensors are never written,
// and the winner among configurations within noise is the same whatever order they were timed in.
//
//===----------------------------------------------------------------------===//

#include "la/runtime/Tuner.h"

#include "llvm/Support/MemoryBuffer.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace la;

namespace {

TimingStats timing(double medianMs, double relativeSpread = 0.002) {
  TimingStats stats;
  stats.medianMs = medianMs;
  stats.relativeSpread = relativeSpread;
  stats.minMs = medianMs;
  stats.runs = 10;
  return stats;
}

TEST(PickWinner, TheFastestBeyondNoiseWins) {
  EXPECT_EQ(pickWinner({timing(1.0), timing(0.9), timing(0.95)}, {"default", "b", "a"}), 1u);
}

TEST(PickWinner, WithinNoiseTheDefaultWins) {
  // 0.5% faster, under the least noise of 1%.
  EXPECT_EQ(pickWinner({timing(1.0), timing(0.995)}, {"default", "a"}), 0u);
  // 5% faster, but each timing spreads by 6%.
  EXPECT_EQ(pickWinner({timing(1.0, 0.06), timing(0.95, 0.06)}, {"default", "a"}), 0u);
}

TEST(PickWinner, WithinNoiseOfEachOtherTheLeastTextWinsInAnyOrder) {
  std::vector<TimingStats> timings{timing(1.0), timing(0.800), timing(0.805)};
  EXPECT_EQ(pickWinner(timings, {"default", "chunk-size=8", "chunk-size=32"}), 2u);
  std::vector<TimingStats> swapped{timing(1.0), timing(0.805), timing(0.800)};
  EXPECT_EQ(pickWinner(swapped, {"default", "chunk-size=32", "chunk-size=8"}), 1u);
}

/// Records what the observer is told.
struct Recorder : TuningObserver {
  void candidateDone(const CandidateResult &result, size_t evaluated, size_t planned, double,
                     const CandidateResult &) override {
    seen.push_back(result);
    EXPECT_LE(evaluated, planned);
  }
  void done(const TuningResult &) override { finished = true; }
  std::vector<CandidateResult> seen;
  bool finished = false;
};

TEST(Tuner, RejectsCandidatesThatDisagreeAndTimesEqualCodeOnce) {
  auto source = llvm::MemoryBuffer::getFile(LA_KERNELS_DIR "/linear_attention.mlir");
  ASSERT_TRUE(bool(source));
  RuntimeOptions options;
  options.target = RuntimeTarget::CUDAEmulator;
  options.compile.target = mlir::la::PipelineTarget::CUDA;
  options.cacheDir = "none";
  options.numThreads = 1;
  // Only tensor-cores varies: auto (f32 contractions on FMA), tf32 and off (FMA: the code of auto).
  auto space = mlir::la::TuningSpace::build(options.compile, mlir::la::PipelineTarget::CUDA, {{"N", 32}},
                                            {"chunk-size", "warps-per-block", "min-blocks-per-sm"});
  ASSERT_TRUE(bool(space)) << llvm::toString(space.takeError());
  ASSERT_EQ(space->candidates().size(), 3u);

  HostTensor q(TensorSpec{DType::F32, {1, 2, 32, 16}}), k(q.spec()), v(q.spec());
  for (HostTensor *tensor : {&q, &k, &v})
    for (int64_t i = 0; i < tensor->numElements(); ++i)
      tensor->set(i, std::sin(0.37 * double(i) + double(tensor == &k) + 2.0 * double(tensor == &v)));
  HostTensor before(q.spec());
  std::memcpy(before.data(), q.data(), q.numBytes());

  TunerOptions tuning;
  tuning.strategy = SearchStrategy::Exhaustive;
  tuning.measureMs = 1;
  tuning.minRuns = 2;
  Recorder recorder;
  auto result = tune(options, (*source)->getBuffer(), "linear_attention.mlir", "linear_attention_causal",
                     {q.ref(), k.ref(), v.ref()}, *space, tuning, &recorder);
  ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
  EXPECT_TRUE(recorder.finished);
  ASSERT_EQ(result->candidates.size(), 3u);
  ASSERT_EQ(recorder.seen.size(), 3u);

  const CandidateResult &byDefault = result->candidates[0];
  EXPECT_EQ(byDefault.status, CandidateResult::Status::Measured);
  EXPECT_NE(byDefault.config.find("tensor-cores=auto"), std::string::npos);
  for (const CandidateResult &candidate : llvm::drop_begin(result->candidates)) {
    if (candidate.config.find("tensor-cores=tf32") != std::string::npos) {
      EXPECT_EQ(candidate.status, CandidateResult::Status::Mismatch) << candidate.message;
      EXPECT_NE(candidate.message.find("rel RMS"), std::string::npos) << candidate.message;
    } else {
      EXPECT_NE(candidate.config.find("tensor-cores=off"), std::string::npos);
      EXPECT_EQ(candidate.status, CandidateResult::Status::SameCode);
      EXPECT_EQ(candidate.sameAs, std::optional<size_t>(0));
    }
  }
  // The rejected candidate cannot win; the default and `off` are the same code, so the default wins.
  EXPECT_EQ(result->bestConfig, byDefault.config);
  EXPECT_EQ(std::memcmp(before.data(), q.data(), q.numBytes()), 0);
}

} // namespace
