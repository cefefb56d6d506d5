//===- StateVariantsTest.cpp - prefill + resumes reproduce the whole sequence -===//
//
// SPEC §8's contract for the derived variants (la-derive-state-variants, la::declareStateVariant): prefill of
// the first n positions, then a resume of several positions, then resumes of one position each, reproduces
// the whole-sequence kernel at every position (f32: relative RMS ≤ 1e-5; f16 and bf16 inputs: ≤ 5e-3), and the
// last state equals the state prefill of the whole sequence ends with; the state variant on each resumed piece
// hands on resume's state. Split points n ∈ {1, 17, N − 1}, B·H = 1
// and 64. With half inputs the states stay f32 (`la.state`), so they match to f32 accuracy however many
// resumes carry them.
//
//===----------------------------------------------------------------------===//

#include "la/runtime/Compiler.h"
#include "la/runtime/Runtime.h"

#include "SequencePositions.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace {

struct VariantCase {
  const char *file;
  const char *entry;
  /// The sequence dimension: [B, H, T, ...] kernels, or AFT's [B, T, d].
  size_t seq = 2;
};

std::string readKernelFile(const char *file) {
  auto buffer = llvm::MemoryBuffer::getFile(std::string(LA_KERNELS_DIR) + "/" + file);
  EXPECT_TRUE(bool(buffer)) << file;
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

using la::test::positions;

/// ‖x − y‖₂ / ‖y‖₂ over all elements.
double relativeRms(const std::vector<double> &x, const la::HostTensor &y) {
  double error = 0, norm = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    error += (x[i] - y.get(i)) * (x[i] - y.get(i));
    norm += y.get(i) * y.get(i);
  }
  return std::sqrt(error / norm);
}

/// What the state variant of `entry` returns after its states for each decay scan: the sum of the scan's
/// log-gates over the piece `arguments` hold (`length` positions along dimension 2). Simple GLA's and GLA's
/// are their argument #3, [B, H, T] or [B, H, T, K]; retention's log(1 − 2^{−5−h}) at every position.
std::vector<double> expectedGateTotal(llvm::StringRef entry, const std::vector<la::HostTensor> &arguments,
                                      int64_t length) {
  const la::TensorSpec &q = arguments[0].spec();
  int64_t batch = q.shape[0], heads = q.shape[1];
  std::vector<double> totals;
  if (entry == "retention") {
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h)
        totals.push_back(static_cast<double>(length) * std::log1p(-std::exp2(-5.0 - static_cast<double>(h))));
    return totals;
  }
  const la::HostTensor &gates = arguments[3];
  int64_t keys = gates.spec().shape.size() > 3 ? gates.spec().shape[3] : 1;
  for (int64_t slice = 0; slice < batch * heads; ++slice)
    for (int64_t k = 0; k < keys; ++k) {
      double sum = 0;
      for (int64_t t = 0; t < length; ++t)
        sum += gates.get((slice * length + t) * keys + k);
      totals.push_back(sum);
    }
  return totals;
}

class StateVariants : public testing::TestWithParam<std::tuple<VariantCase, la::DType>> {};

TEST_P(StateVariants, PrefillThenResumesReproduceTheWholeSequence) {
  const VariantCase &c = std::get<0>(GetParam());
  const la::DType dtype = std::get<1>(GetParam());
  const double outputTolerance = dtype == la::DType::F32 ? 1e-5 : 5e-3;
  auto declared = la::withStateVariants(readKernelFile(c.file), c.file, c.entry);
  ASSERT_TRUE(bool(declared)) << llvm::toString(declared.takeError());
  std::string source = std::move(*declared);
  // The variants run slice by slice like their source: the states keep batch and head leading.
  auto infos = la::inspectProgram(source, c.file);
  ASSERT_TRUE(bool(infos)) << llvm::toString(infos.takeError());
  for (const la::EntryInfo &info : *infos) {
    if (llvm::StringRef(info.name).starts_with(std::string(c.entry) + ".")) {
      EXPECT_EQ(info.slicing.dims, static_cast<int>(c.seq)) << info.name;
    }
  }

  la::RuntimeOptions options;
  options.cacheDir = "none";
  options.numThreads = 2;
  auto runtime = la::Runtime::create(options);
  ASSERT_TRUE(bool(runtime)) << llvm::toString(runtime.takeError());
  auto program = (*runtime)->loadSource(source, c.file);
  ASSERT_TRUE(bool(program)) << llvm::toString(program.takeError());
  std::string entry = c.entry, prefill = entry + ".prefill", resume = entry + ".resume", stateOnly = entry + ".state";
  auto signature = (*runtime)->signature(**program, entry);
  ASSERT_TRUE(bool(signature)) << llvm::toString(signature.takeError());
  auto sequenceStates = la::getSequenceStates(source, c.file, c.entry);
  ASSERT_TRUE(bool(sequenceStates)) << llvm::toString(sequenceStates.takeError());
  const size_t decays = static_cast<size_t>(llvm::count(sequenceStates->combines, la::StateCombine::Decay));

  const int64_t length = 40, width = 8;
  for (auto [batch, heads] : {std::pair<int64_t, int64_t>{1, 1}, {8, 8}}) {
    // Inputs inside their declared domains (log-gates ≤ 0); every argument is [B, H, T, ...] or [B·H, T, ...].
    std::mt19937_64 generator(7);
    std::vector<la::HostTensor> inputs;
    for (auto [i, declared] : llvm::enumerate(signature->arguments)) {
      la::TensorSpec spec = declared;
      spec.dtype = dtype;
      spec.shape = la::test::sequenceShape(spec.shape.size(), c.seq, batch, heads, length, width);
      auto [low, high] = la::samplingInterval(signature->argumentDomains[i]);
      std::uniform_real_distribution<double> uniform(low, high);
      la::HostTensor &tensor = inputs.emplace_back(spec);
      for (int64_t e = 0; e < tensor.numElements(); ++e)
        tensor.set(e, uniform(generator));
    }
    auto call = [&](const std::string &name, std::vector<la::HostTensor> arguments) {
      const std::vector<la::HostTensor> before = arguments;
      std::vector<la::TensorRef> refs;
      for (la::HostTensor &tensor : arguments)
        refs.push_back(tensor.ref());
      auto results = (*runtime)->run(**program, name, refs);
      EXPECT_TRUE(bool(results)) << name << ": " << llvm::toString(results.takeError());
      // A call reads its inputs and nothing else: resume's states, the initial values of its scans, must not
      // be updated in the caller's buffers (one-position scans did so before la-read-only-arguments).
      for (auto [i, original] : llvm::enumerate(before))
        for (int64_t e = 0; e < original.numElements(); ++e)
          if (original.get(e) != arguments[i].get(e)) {
            ADD_FAILURE() << name << " wrote its argument #" << i << " at element " << e;
            break;
          }
      return results ? std::vector<la::HostTensor>(results->begin(), results->end()) : std::vector<la::HostTensor>();
    };
    auto piece = [&](int64_t begin, int64_t end) {
      std::vector<la::HostTensor> cut;
      for (const la::HostTensor &input : inputs)
        cut.push_back(positions(input, begin, end, c.seq));
      return cut;
    };
    std::vector<la::HostTensor> whole = call(entry, inputs);
    std::vector<la::HostTensor> wholePrefill = call(prefill, inputs);
    ASSERT_EQ(whole.size(), 1u);
    ASSERT_GT(wholePrefill.size(), 1u);

    for (int64_t split : {int64_t(1), int64_t(17), length - 1}) {
      std::string what = entry + " " + la::dtypeName(dtype).str() + " B·H=" + std::to_string(batch * heads) +
                         " split at " + std::to_string(split);
      // Pieces: prefill [0, split), one resume of several positions up to length − 2, then single steps.
      std::vector<std::pair<int64_t, int64_t>> pieces{{0, split}};
      if (split < length - 2)
        pieces.push_back({split, length - 2});
      for (int64_t t = std::max(split, length - 2); t < length; ++t)
        pieces.push_back({t, t + 1});
      std::vector<std::vector<la::HostTensor>> outputs;
      std::vector<la::HostTensor> states;
      for (auto [i, range] : llvm::enumerate(pieces)) {
        std::vector<la::HostTensor> arguments = piece(range.first, range.second);
        if (i > 0)
          arguments.insert(arguments.end(), states.begin(), states.end());
        // The state variant hands on what resume does, without the outputs (its add and decay scans summed),
        // then each decay's log-gate total over the piece.
        std::vector<la::HostTensor> handedOn;
        std::vector<double> gateTotal;
        if (i > 0) {
          handedOn = call(stateOnly, arguments);
          if (decays > 0)
            gateTotal = expectedGateTotal(c.entry, arguments, range.second - range.first);
        }
        std::vector<la::HostTensor> results = call(i == 0 ? prefill : resume, std::move(arguments));
        ASSERT_EQ(results.size(), wholePrefill.size()) << what;
        if (i > 0) {
          ASSERT_EQ(handedOn.size(), results.size() - 1 + decays) << what;
          for (size_t d = 0; d < decays; ++d) {
            const la::HostTensor &total = handedOn[results.size() - 1 + d];
            ASSERT_EQ(static_cast<size_t>(total.numElements()), gateTotal.size()) << what;
            EXPECT_LE(relativeRms(gateTotal, total), 1e-5) << what << ": state variant's gate total on piece " << i;
          }
          handedOn.resize(results.size() - 1);
          for (size_t s = 0; s < handedOn.size(); ++s) {
            std::vector<double> state;
            for (int64_t e = 0; e < handedOn[s].numElements(); ++e)
              state.push_back(handedOn[s].get(e));
            EXPECT_LE(relativeRms(state, results[s + 1]), 1e-5)
                << what << ": state variant's state #" << s << " on piece " << i;
          }
        }
        states.assign(results.begin() + 1, results.end());
        outputs.push_back(std::move(results));
      }
      // Reassemble the output along T, slice by slice.
      const la::TensorSpec &outSpec = whole[0].spec();
      int64_t outer = 1;
      for (size_t d = 0; d < c.seq; ++d)
        outer *= outSpec.shape[d];
      int64_t inner = outSpec.numElements() / (outer * length);
      std::vector<double> joined;
      for (int64_t o = 0; o < outer; ++o)
        for (auto [i, range] : llvm::enumerate(pieces)) {
          int64_t count = range.second - range.first;
          for (int64_t e = 0; e < count * inner; ++e)
            joined.push_back(outputs[i][0].get(o * count * inner + e));
        }
      EXPECT_LE(relativeRms(joined, whole[0]), outputTolerance) << what << ": outputs";
      for (size_t s = 0; s < states.size(); ++s) {
        EXPECT_EQ(states[s].spec().dtype, la::DType::F32) << what << ": state #" << s;
        std::vector<double> state;
        for (int64_t e = 0; e < states[s].numElements(); ++e)
          state.push_back(states[s].get(e));
        EXPECT_LE(relativeRms(state, wholePrefill[s + 1]), 1e-5) << what << ": state #" << s;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, StateVariants,
    testing::Combine(testing::Values(VariantCase{"linear_attention.mlir", "linear_attention_causal"},
                                     VariantCase{"flow_attention.mlir", "flow_attention_causal"},
                                     VariantCase{"retention.mlir", "retention"},
                                     VariantCase{"retention.mlir", "simple_gla"}, VariantCase{"retention.mlir", "gla"},
                                     VariantCase{"aft.mlir", "aft_causal", 1}),
                     testing::Values(la::DType::F32, la::DType::F16, la::DType::BF16)),
    [](const testing::TestParamInfo<std::tuple<VariantCase, la::DType>> &info) {
      return std::string(std::get<0>(info.param).entry) + "_" + la::dtypeName(std::get<1>(info.param)).str();
    });

/// FLASH's causal form in stretches that start on block boundaries (`la.aligned_to`, SequenceStates::alignment,
/// what its GPU pieces run): a prefill of one block, then resumes of one block and of two, reproduce the whole
/// sequence and its final state, and the state variant hands on what resume does.
TEST(StateVariantsAligned, FlashInWholeBlocksReproducesTheWholeSequence) {
  const char *file = "flash.mlir", *name = "flash_causal";
  const std::string kernel = readKernelFile(file);
  // Anywhere-starting stretches are refused (a decode step would need the partial block as state).
  auto anywhere = la::getSequenceStates(kernel, file, name);
  EXPECT_FALSE(bool(anywhere)) << "flash_causal without an alignment";
  if (!anywhere)
    llvm::consumeError(anywhere.takeError());
  auto sequenceStates = la::getSequenceStates(kernel, file, name, la::kAnyBlockAlignment);
  ASSERT_TRUE(bool(sequenceStates)) << llvm::toString(sequenceStates.takeError());
  EXPECT_EQ(sequenceStates->alignment, 256);
  EXPECT_EQ(sequenceStates->dimension, 1);
  // prior_block's Σ k ⊗ v, then the count of positions its division reads: both add.
  EXPECT_TRUE(sequenceStates->additive);
  EXPECT_EQ(sequenceStates->combines.size(), 2u);
  auto declared = la::withStateVariants(kernel, file, name, sequenceStates->alignment);
  ASSERT_TRUE(bool(declared)) << llvm::toString(declared.takeError());

  la::RuntimeOptions options;
  options.cacheDir = "none";
  options.numThreads = 2;
  auto runtime = la::Runtime::create(options);
  ASSERT_TRUE(bool(runtime)) << llvm::toString(runtime.takeError());
  auto program = (*runtime)->loadSource(*declared, file);
  ASSERT_TRUE(bool(program)) << llvm::toString(program.takeError());
  std::string entry = name;
  auto call = [&](const std::string &function, std::vector<la::HostTensor> arguments) {
    std::vector<la::TensorRef> refs;
    for (la::HostTensor &tensor : arguments)
      refs.push_back(tensor.ref());
    auto results = (*runtime)->run(**program, function, refs);
    EXPECT_TRUE(bool(results)) << function << ": " << llvm::toString(results.takeError());
    return results ? std::vector<la::HostTensor>(results->begin(), results->end()) : std::vector<la::HostTensor>();
  };

  const int64_t length = 1024, width = 8, batch = 3;
  std::mt19937_64 generator(11);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<la::HostTensor> inputs;
  for (int i = 0; i < 6; ++i) {
    la::HostTensor &tensor = inputs.emplace_back(la::TensorSpec{la::DType::F32, {batch, length, width}});
    for (int64_t e = 0; e < tensor.numElements(); ++e)
      tensor.set(e, uniform(generator));
  }
  std::vector<la::HostTensor> whole = call(entry, inputs);
  std::vector<la::HostTensor> wholePrefill = call(entry + ".prefill", inputs);
  ASSERT_EQ(whole.size(), 1u);
  ASSERT_EQ(wholePrefill.size(), 3u);

  const std::pair<int64_t, int64_t> pieces[] = {{0, 256}, {256, 512}, {512, 1024}};
  std::vector<la::HostTensor> states;
  std::vector<double> joined(static_cast<size_t>(whole[0].numElements()));
  for (auto [i, range] : llvm::enumerate(pieces)) {
    std::vector<la::HostTensor> arguments;
    for (const la::HostTensor &input : inputs)
      arguments.push_back(positions(input, range.first, range.second, 1));
    arguments.insert(arguments.end(), states.begin(), states.end());
    std::vector<la::HostTensor> handedOn;
    if (i > 0)
      handedOn = call(entry + ".state", arguments);
    std::vector<la::HostTensor> results = call(i == 0 ? entry + ".prefill" : entry + ".resume", arguments);
    ASSERT_EQ(results.size(), 3u) << "piece " << i;
    for (size_t s = 0; i > 0 && s < 2; ++s) {
      ASSERT_EQ(handedOn.size(), 2u) << "piece " << i;
      std::vector<double> state;
      for (int64_t e = 0; e < handedOn[s].numElements(); ++e)
        state.push_back(handedOn[s].get(e));
      EXPECT_LE(relativeRms(state, results[s + 1]), 1e-6) << "state variant's state #" << s << " on piece " << i;
    }
    int64_t count = range.second - range.first;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t e = 0; e < count * width; ++e)
        joined[static_cast<size_t>((b * length + range.first) * width + e)] = results[0].get(b * count * width + e);
    states.assign(results.begin() + 1, results.end());
  }
  EXPECT_LE(relativeRms(joined, whole[0]), 1e-5) << "outputs";
  for (size_t s = 0; s < states.size(); ++s) {
    std::vector<double> state;
    for (int64_t e = 0; e < states[s].numElements(); ++e)
      state.push_back(states[s].get(e));
    EXPECT_LE(relativeRms(state, wholePrefill[s + 1]), 1e-5) << "state #" << s;
  }
}

/// An entry that reads later positions has no variant, and the error names the op.
TEST(StateVariantsErrors, NonCausalEntriesNameTheOp) {
  std::string source = readKernelFile("aft.mlir");
  auto declaration = la::declareStateVariant(source, "aft.mlir", "aft_simple", "resume");
  ASSERT_FALSE(bool(declaration));
  std::string message = llvm::toString(declaration.takeError());
  EXPECT_NE(message.find("has no scan along a sequence"), std::string::npos) << message;

  source = readKernelFile("flash.mlir");
  declaration = la::declareStateVariant(source, "flash.mlir", "flash_causal", "prefill");
  ASSERT_FALSE(bool(declaration));
  message = llvm::toString(declaration.takeError());
  EXPECT_NE(message.find("flash.mlir:"), std::string::npos) << message;

  declaration = la::declareStateVariant(source, "flash.mlir", "flash_causal", "decode");
  ASSERT_FALSE(bool(declaration));
  EXPECT_NE(llvm::toString(declaration.takeError()).find("expected prefill, resume or state"), std::string::npos);
}

} // namespace
