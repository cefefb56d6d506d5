//===- DecoderTest.cpp - la::Decoder serves a sequence token by token -----===//
//
// A Decoder prefills a prompt, then steps one position at a time (and once several), carrying the state in its
// own buffers; the outputs reproduce the whole-sequence entry at every position (f32: relative RMS ≤ 1e-5), and
// its state equals what prefill of the whole sequence ends with. Also the errors a caller can make.
//
//===----------------------------------------------------------------------===//

#include "la/runtime/Decoder.h"

#include "SequencePositions.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace {

struct DecoderCase {
  const char *file;
  const char *entry;
  /// The sequence dimension: [B, H, T, ...] kernels, or AFT's [B, T, d].
  size_t seq = 2;
};

class DecoderTest : public testing::TestWithParam<DecoderCase> {
protected:
  void SetUp() override {
    la::RuntimeOptions options;
    options.cacheDir = "none";
    options.numThreads = 2;
    auto created = la::Runtime::create(options);
    ASSERT_TRUE(bool(created)) << llvm::toString(created.takeError());
    runtime = std::move(*created);
    auto loaded = runtime->loadFile(std::string(LA_KERNELS_DIR) + "/" + GetParam().file);
    ASSERT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
    program = std::move(*loaded);
  }

  /// The entry's arguments at [B, H, T, D] or [B·H, T, D] (lower ranks take the leading sizes), inside their
  /// domains, stored as `dtype`.
  std::vector<la::HostTensor> makeInputs(int64_t batch, int64_t heads, int64_t length, int64_t width,
                                         la::DType dtype = la::DType::F32) {
    auto signature = runtime->signature(*program, GetParam().entry);
    EXPECT_TRUE(bool(signature)) << llvm::toString(signature.takeError());
    std::vector<la::HostTensor> inputs;
    if (!signature)
      return inputs;
    std::mt19937_64 generator(11);
    for (auto [i, declared] : llvm::enumerate(signature->arguments)) {
      la::TensorSpec spec = declared;
      spec.dtype = dtype;
      spec.shape = la::test::sequenceShape(spec.shape.size(), GetParam().seq, batch, heads, length, width);
      auto [low, high] = la::samplingInterval(signature->argumentDomains[i]);
      std::uniform_real_distribution<double> uniform(low, high);
      la::HostTensor &tensor = inputs.emplace_back(spec);
      for (int64_t e = 0; e < tensor.numElements(); ++e)
        tensor.set(e, uniform(generator));
    }
    return inputs;
  }

  /// Prefill, a piece of three positions, then single steps reproduce the whole-sequence entry (outputs to
  /// `outputTolerance`), and the decoder's states end as prefill of the whole sequence ends (f32: ≤ 1e-5).
  void checkSteps(la::DType dtype, double outputTolerance);

  std::unique_ptr<la::Runtime> runtime;
  std::shared_ptr<la::Program> program;
};

using la::test::positions;

std::vector<la::TensorRef> refs(std::vector<la::HostTensor> &tensors) {
  std::vector<la::TensorRef> result;
  for (la::HostTensor &tensor : tensors)
    result.push_back(tensor.ref());
  return result;
}

double relativeRms(const std::vector<double> &x, const std::vector<double> &y) {
  double error = 0, norm = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    error += (x[i] - y[i]) * (x[i] - y[i]);
    norm += y[i] * y[i];
  }
  return std::sqrt(error / norm);
}

void DecoderTest::checkSteps(la::DType dtype, double outputTolerance) {
  const char *entry = GetParam().entry;
  auto decoder = la::Decoder::create(*runtime, *program, entry);
  ASSERT_TRUE(bool(decoder)) << llvm::toString(decoder.takeError());
  EXPECT_FALSE((*decoder)->started());
  EXPECT_FALSE((*decoder)->stateNames().empty());

  const int64_t batch = 2, heads = 4, length = 24, prompt = 17, width = 8;
  std::vector<la::HostTensor> inputs = makeInputs(batch, heads, length, width, dtype);
  auto whole = runtime->run(*program, entry, refs(inputs));
  ASSERT_TRUE(bool(whole)) << llvm::toString(whole.takeError());
  auto wholeStates = runtime->run((*decoder)->program(), (*decoder)->prefillEntry(), refs(inputs));
  ASSERT_TRUE(bool(wholeStates)) << llvm::toString(wholeStates.takeError());

  // The prompt, one piece of three positions, then single steps.
  std::vector<std::pair<int64_t, int64_t>> pieces{{0, prompt}, {prompt, prompt + 3}};
  for (int64_t t = prompt + 3; t < length; ++t)
    pieces.push_back({t, t + 1});
  std::vector<std::vector<la::HostTensor>> outputs;
  for (auto [i, range] : llvm::enumerate(pieces)) {
    std::vector<la::HostTensor> piece;
    for (const la::HostTensor &input : inputs)
      piece.push_back(positions(input, range.first, range.second, GetParam().seq));
    la::TensorSpec outSpec = (*whole)[0].spec();
    outSpec.shape[GetParam().seq] = range.second - range.first;
    std::vector<la::HostTensor> out{la::HostTensor(outSpec)};
    llvm::Error err = i == 0 ? (*decoder)->prefill(refs(piece), refs(out)) : (*decoder)->step(refs(piece), refs(out));
    ASSERT_FALSE(bool(err)) << "piece " << i << ": " << llvm::toString(std::move(err));
    EXPECT_EQ((*decoder)->positions(), range.second);
    outputs.push_back(std::move(out));
  }

  // Reassemble along T, slice by slice, and compare.
  const la::HostTensor &expected = (*whole)[0];
  int64_t outer = batch * heads, inner = expected.numElements() / (outer * length);
  std::vector<double> joined, reference;
  for (int64_t o = 0; o < outer; ++o)
    for (auto [i, range] : llvm::enumerate(pieces)) {
      int64_t count = range.second - range.first;
      for (int64_t e = 0; e < count * inner; ++e)
        joined.push_back(outputs[i][0].get(o * count * inner + e));
    }
  for (int64_t e = 0; e < expected.numElements(); ++e)
    reference.push_back(expected.get(e));
  EXPECT_LE(relativeRms(joined, reference), outputTolerance) << entry << ": outputs";

  ASSERT_EQ((*decoder)->state().size(), wholeStates->size() - 1);
  for (auto [s, state] : llvm::enumerate((*decoder)->state())) {
    EXPECT_EQ(state.spec().dtype, la::DType::F32) << entry << ": state " << (*decoder)->stateNames()[s];
    std::vector<double> got, want;
    for (int64_t e = 0; e < state.numElements(); ++e) {
      got.push_back(state.get(e));
      want.push_back((*wholeStates)[s + 1].get(e));
    }
    EXPECT_LE(relativeRms(got, want), 1e-5) << entry << ": state " << (*decoder)->stateNames()[s];
  }
}

TEST_P(DecoderTest, StepsReproduceTheWholeSequence) { checkSteps(la::DType::F32, 1e-5); }

// bf16 inputs: outputs come back in bf16 (SPEC's half bound, 5e-3), the states the decoder carries stay f32.
TEST_P(DecoderTest, HalfInputsKeepF32States) { checkSteps(la::DType::BF16, 5e-3); }

TEST_P(DecoderTest, MisuseIsAnErrorThatSaysWhat) {
  const char *entry = GetParam().entry;
  auto decoder = la::Decoder::create(*runtime, *program, entry);
  ASSERT_TRUE(bool(decoder)) << llvm::toString(decoder.takeError());
  std::vector<la::HostTensor> inputs = makeInputs(1, 2, 1, 8);
  auto whole = runtime->run(*program, entry, refs(inputs));
  ASSERT_TRUE(bool(whole)) << llvm::toString(whole.takeError());
  std::vector<la::TensorRef> outputs{(*whole)[0].ref()};

  std::string before = llvm::toString((*decoder)->step(refs(inputs), outputs));
  EXPECT_NE(before.find("step before prefill"), std::string::npos) << before;

  ASSERT_FALSE(bool((*decoder)->prefill(refs(inputs), outputs)));
  std::vector<la::TensorRef> fewer = refs(inputs);
  fewer.pop_back();
  std::string arity = llvm::toString((*decoder)->step(fewer, outputs));
  EXPECT_NE(arity.find("without the state"), std::string::npos) << arity;

  // A step whose key dimension differs from the prefill's meets a state of another shape: the error names the
  // state argument (its index among the resume variant's arguments, and its scan, `%name = la.scan`).
  std::vector<la::HostTensor> wider = makeInputs(1, 2, 1, 16);
  auto wideWhole = runtime->run(*program, entry, refs(wider));
  ASSERT_TRUE(bool(wideWhole)) << llvm::toString(wideWhole.takeError());
  std::vector<la::TensorRef> wideOutputs{(*wideWhole)[0].ref()};
  std::string shape = llvm::toString((*decoder)->step(refs(wider), wideOutputs));
  EXPECT_NE(shape.find("the function's argument #"), std::string::npos) << shape;
  EXPECT_TRUE(llvm::any_of((*decoder)->stateNames(), [&](const std::string &name) {
    return shape.find("%" + name + " = la.scan") != std::string::npos;
  })) << shape;
}

INSTANTIATE_TEST_SUITE_P(Kernels, DecoderTest,
                         testing::Values(DecoderCase{"linear_attention.mlir", "linear_attention_causal"},
                                         DecoderCase{"flow_attention.mlir", "flow_attention_causal"},
                                         DecoderCase{"retention.mlir", "gla"},
                                         DecoderCase{"aft.mlir", "aft_causal", 1}),
                         [](const testing::TestParamInfo<DecoderCase> &info) { return std::string(info.param.entry); });

} // namespace
