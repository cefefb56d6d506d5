//===- TuningSpaceTest.cpp - the tunable space and its constraints --------===//

#include "Pipelines/TuningSpace.h"

#include "gtest/gtest.h"

#include <set>

using namespace mlir::la;

namespace {

TuningSpace buildOrDie(const PipelineConfig &base, PipelineTarget target, const llvm::StringMap<int64_t> &sizes,
                       llvm::ArrayRef<std::string> pinned = {}) {
  auto space = TuningSpace::build(base, target, sizes, pinned);
  if (!space) {
    ADD_FAILURE() << llvm::toString(space.takeError());
    return cantFail(TuningSpace::build(base, target, {{"N", 1024}}, {}));
  }
  return std::move(*space);
}

bool hasPruned(const TuningSpace &space, llvm::StringRef configPrefix, llvm::StringRef reasonPart) {
  for (const PrunedConfig &pruned : space.pruned())
    if (llvm::StringRef(pruned.config).contains(configPrefix) && llvm::StringRef(pruned.reason).contains(reasonPart))
      return true;
  return false;
}

TEST(TuningSpace, TheBaseComesFirstAndEveryCandidateIsDistinctAndPassesTheConstraints) {
  PipelineConfig base;
  TuningSpace space = buildOrDie(base, PipelineTarget::CPU, {{"N", 4096}});
  ASSERT_FALSE(space.candidates().empty());
  EXPECT_EQ(space.candidates().front(), base);
  std::set<std::string> texts;
  for (const PipelineConfig &config : space.candidates()) {
    EXPECT_TRUE(texts.insert(config.str()).second) << config.str();
    EXPECT_FALSE(checkTuningConstraints(config, base, PipelineTarget::CPU)) << config.str();
  }
  // Every configuration of the product is either a candidate or pruned with a reason.
  size_t prunedConfigs = 0;
  for (const PrunedConfig &pruned : space.pruned()) {
    EXPECT_FALSE(pruned.reason.empty());
    prunedConfigs += llvm::StringRef(pruned.config).contains(',');
  }
  EXPECT_EQ(space.candidates().size() + prunedConfigs, space.unprunedSize());
}

TEST(TuningSpace, CoordinatesFindTheirCandidate) {
  TuningSpace space = buildOrDie(PipelineConfig(), PipelineTarget::CPU, {{"N", 256}});
  for (auto [index, point] : llvm::enumerate(space.coordinates()))
    EXPECT_EQ(space.find(point), std::optional<size_t>(index));
  for (auto [t, option] : llvm::enumerate(space.tunables()))
    for (auto [index, config] : llvm::enumerate(space.candidates()))
      if (index > 0) {
        EXPECT_EQ(config.get(option->name), space.values()[t][space.coordinates()[index][t]]);
      }
}

TEST(TuningSpace, TheSequenceLengthBoundsTheChunkAndThePrunedValuesSayWhy) {
  TuningSpace space = buildOrDie(PipelineConfig(), PipelineTarget::CPU, {{"N", 32}});
  for (const PipelineConfig &config : space.candidates())
    EXPECT_LE(config.chunkSize, 32);
  EXPECT_TRUE(hasPruned(space, "chunk-size=64", "longer than N=32"));
  EXPECT_TRUE(hasPruned(space, "chunk-size=128", "longer than N=32"));
}

TEST(TuningSpace, RowsBeyondTheRegisterBudgetArePrunedAsDuplicates) {
  TuningSpace space = buildOrDie(PipelineConfig(), PipelineTarget::CPU, {{"N", 1024}});
  // vector-tile=64 takes 4 registers a row, so 24 registers allow 6 rows: max-rows=16 is max-rows=8.
  for (const PipelineConfig &config : space.candidates())
    EXPECT_FALSE(config.vectorTile == 64 && config.maxRows == 16) << config.str();
  EXPECT_TRUE(hasPruned(space, "vector-tile=64,max-rows=16", "gives the register blocks of max-rows=8"));
  // vector-tile=16 takes one register a row: every max-rows stays.
  bool sixteenRowsOfOneRegister = llvm::any_of(
      space.candidates(), [](const PipelineConfig &config) { return config.vectorTile == 16 && config.maxRows == 16; });
  EXPECT_TRUE(sixteenRowsOfOneRegister);
}

TEST(TuningSpace, SweepTileVariesOnlyWithGroupedSweeps) {
  PipelineConfig base;
  TuningSpace space = buildOrDie(base, PipelineTarget::CPU, {{"N", 1024}});
  for (const PipelineConfig &config : space.candidates())
    if (!config.groupSweeps) {
      EXPECT_EQ(config.sweepTile, base.sweepTile) << config.str();
    }
  EXPECT_TRUE(hasPruned(space, "group-sweeps=false,sweep-tile=128", "no effect without group-sweeps"));
}

TEST(TuningSpace, PinnedOptionsKeepTheBaseValue) {
  PipelineConfig base;
  base.chunkSize = 32;
  TuningSpace space = buildOrDie(base, PipelineTarget::CPU, {{"N", 1024}}, {"chunk-size", "group-sweeps"});
  for (const OptionInfo *option : space.tunables()) {
    EXPECT_NE(option->name, "chunk-size");
    EXPECT_NE(option->name, "group-sweeps");
  }
  for (const PipelineConfig &config : space.candidates())
    EXPECT_EQ(config.chunkSize, 32);
}

TEST(TuningSpace, CudaBlocksMustFitAnSM) {
  PipelineConfig base;
  TuningSpace space = buildOrDie(base, PipelineTarget::CUDA, {{"N", 1024}});
  for (const PipelineConfig &config : space.candidates())
    EXPECT_GE(65536 / (config.warpsPerBlock * 32 * config.minBlocksPerSM), 64) << config.str(PipelineTarget::CUDA);
  EXPECT_TRUE(hasPruned(space, "warps-per-block=16,min-blocks-per-sm=3", "leave 42 registers a thread"));
  EXPECT_FALSE(hasPruned(space, "warps-per-block=8,min-blocks-per-sm=4", ""));
}

TEST(TuningSpace, ADomainThatNeedsAMissingSizeIsAnError) {
  auto space = TuningSpace::build(PipelineConfig(), PipelineTarget::CPU, {});
  ASSERT_FALSE(space);
  EXPECT_NE(llvm::toString(space.takeError()).find("'N'"), std::string::npos);
}

TEST(TuningSpace, ACallersValuesMakeASpaceThatTheConstraintsStillPrune) {
  PipelineConfig base;
  // Values in the caller's order and spelling; 16 rows of 64 lanes exceed the register budget.
  auto space =
      TuningSpace::fromValues(base, PipelineTarget::CPU, {{"max-rows", {"16", "4", "8"}}, {"chunk-size", {"32", "16"}}},
                              [](const PipelineConfig &config) -> std::optional<std::string> {
                                if (config.chunkSize == 32 && config.maxRows == 4)
                                  return std::string("the caller rules it out");
                                return std::nullopt;
                              });
  ASSERT_TRUE(bool(space)) << llvm::toString(space.takeError());
  ASSERT_EQ(space->tunables().size(), 2u);
  EXPECT_EQ(space->tunables()[0]->name, "max-rows");
  EXPECT_EQ(space->values()[0], (std::vector<std::string>{"16", "4", "8"}));
  EXPECT_EQ(space->candidates().front(), base);
  EXPECT_TRUE(hasPruned(*space, "max-rows=16", "gives the register blocks of max-rows=8"));
  EXPECT_TRUE(hasPruned(*space, "chunk-size=32,", "the caller rules it out"));
  // 3 × 2 = 6: the base (max-rows=8, chunk-size=16), two with max-rows=16 pruned by the target, one by the
  // caller; left: the base, max-rows=4 chunk-size=16 and max-rows=8 chunk-size=32.
  EXPECT_EQ(space->candidates().size(), 3u);
  EXPECT_EQ(space->unprunedSize(), 6u);
}

TEST(TuningSpace, ACallersValuesAreChecked) {
  PipelineConfig base;
  auto unknown = TuningSpace::fromValues(base, PipelineTarget::CPU, {{"warps-per-block", {"4"}}});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(llvm::toString(unknown.takeError()), "the cpu target has no option 'warps-per-block'");
  auto twice = TuningSpace::fromValues(base, PipelineTarget::CPU, {{"max-rows", {"4"}}, {"max-rows", {"8"}}});
  ASSERT_FALSE(twice);
  EXPECT_EQ(llvm::toString(twice.takeError()), "option 'max-rows' is listed twice");
  auto empty = TuningSpace::fromValues(base, PipelineTarget::CPU, {{"max-rows", {}}});
  ASSERT_FALSE(empty);
  EXPECT_EQ(llvm::toString(empty.takeError()), "option 'max-rows' has no values");
  auto bad = TuningSpace::fromValues(base, PipelineTarget::CPU, {{"max-rows", {"four"}}});
  ASSERT_FALSE(bad);
  EXPECT_NE(llvm::toString(bad.takeError()).find("max-rows"), std::string::npos);
}

} // namespace
