//===- PipelineConfigTest.cpp - the option registry and its text forms ----===//

#include "Pipelines/PipelineConfig.h"

#include "gtest/gtest.h"

using namespace mlir::la;

namespace {

/// The message of a failed Expected, or "" when it succeeded (its value is dropped).
template <typename T> std::string failure(llvm::Expected<T> value) {
  return value ? std::string() : llvm::toString(value.takeError());
}
std::string failure(llvm::Error err) { return err ? llvm::toString(std::move(err)) : std::string(); }

TEST(PipelineConfig, DefaultsOfTheRegistryAreTheFieldDefaults) {
  PipelineConfig defaults;
  ASSERT_FALSE(getOptionRegistry().empty());
  for (const OptionInfo &option : getOptionRegistry()) {
    EXPECT_EQ(defaults.get(option.name), option.defaultValue) << option.name.str();
    PipelineConfig config;
    EXPECT_EQ(failure(config.set(option.name, option.defaultValue)), "") << option.name.str();
    EXPECT_EQ(config, defaults);
  }
}

TEST(PipelineConfig, CanonicalTextListsEveryOptionInRegistryOrder) {
  PipelineConfig config;
  std::string expected;
  for (const OptionInfo *option : getOptionsOf(PipelineTarget::CPU))
    expected += (expected.empty() ? "" : ",") + option->name.str() + "=" + option->defaultValue;
  EXPECT_EQ(config.str(PipelineTarget::CPU), expected);
  EXPECT_EQ(llvm::StringRef(expected).substr(0, 14), "chunk-size=16,");
}

TEST(PipelineConfig, TextRoundTripsWithQuotedValues) {
  PipelineConfig config;
  config.chunkSize = 32;
  config.groupSweeps = true;
  config.targetCPU = "x86-64-v3";
  config.targetFeatures = "+avx2,-avx512f,\"odd\\ one\"";
  std::string text = config.str();
  EXPECT_NE(text.find("target-features=\"+avx2,-avx512f,\\\"odd\\\\ one\\\"\""), std::string::npos) << text;
  llvm::Expected<PipelineConfig> parsed = PipelineConfig::parse(text);
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_EQ(parsed->targetFeatures, config.targetFeatures);
  EXPECT_EQ(parsed->chunkSize, 32);
  EXPECT_TRUE(parsed->groupSweeps);
  EXPECT_EQ(*parsed, config);
}

TEST(PipelineConfig, ParseAppliesASubsetOverTheDefaults) {
  llvm::Expected<PipelineConfig> parsed = PipelineConfig::parse("fuse=0, chunk-size=64");
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_FALSE(parsed->fuse);
  EXPECT_EQ(parsed->chunkSize, 64);
  EXPECT_TRUE(parsed->registerTile);
  EXPECT_EQ(failure(PipelineConfig::parse("")), "");
}

TEST(PipelineConfig, ErrorsNameTheOptionAndTheValue) {
  EXPECT_EQ(failure(PipelineConfig::parse("chunk-size=big")), "option 'chunk-size': 'big' is not an integer");
  EXPECT_EQ(failure(PipelineConfig::parse("fuse=maybe")),
            "option 'fuse': 'maybe' is not a boolean (true, false, 1, 0)");
  std::string message = failure(PipelineConfig::parse("chunk=16"));
  EXPECT_NE(message.find("unknown option 'chunk'"), std::string::npos) << message;
  EXPECT_NE(message.find("chunk-size"), std::string::npos) << message;
  EXPECT_EQ(failure(PipelineConfig::parse("chunk-size")), "'chunk-size' is not name=value");
  EXPECT_EQ(failure(PipelineConfig::parse("target-cpu=\"x86")), "option 'target-cpu': unterminated quoted value");
}

TEST(PipelineConfig, TunableDomainsRespectTheirBound) {
  const OptionInfo *chunk = lookupOption("chunk-size");
  ASSERT_NE(chunk, nullptr);
  ASSERT_TRUE(chunk->domain.isTunable());
  EXPECT_EQ(chunk->domain.bound, "N");
  llvm::Expected<llvm::SmallVector<std::string>> values = enumerateDomain(*chunk, {{"N", 40}});
  ASSERT_TRUE(bool(values)) << llvm::toString(values.takeError());
  EXPECT_EQ(*values, (llvm::SmallVector<std::string>{"8", "16", "32"}));
  EXPECT_EQ(failure(enumerateDomain(*chunk, {})), "option 'chunk-size': its domain depends on the problem size 'N', "
                                                  "which was not given");

  const OptionInfo *sweeps = lookupOption("group-sweeps");
  ASSERT_NE(sweeps, nullptr);
  values = enumerateDomain(*sweeps, {});
  ASSERT_TRUE(bool(values)) << llvm::toString(values.takeError());
  EXPECT_EQ(*values, (llvm::SmallVector<std::string>{"false", "true"}));

  values = enumerateDomain(*lookupOption("fuse"), {});
  ASSERT_TRUE(bool(values)) << llvm::toString(values.takeError());
  EXPECT_TRUE(values->empty());
}

TEST(PipelineConfig, EveryTunableOptionSaysWhyATunerWouldMoveIt) {
  for (const OptionInfo &option : getOptionRegistry())
    if (option.domain.isTunable()) {
      EXPECT_FALSE(option.domain.reason.empty()) << option.name.str();
    }
}

} // namespace
