//===- NumericsGuardTest.cpp - the fp64 numerics guard of the runtime -----===//
//
// la/runtime/NumericsCheck.h: the comparison itself on hand-made tensors, and the runtime paths
// (`Runtime::checkNumerics`, `RuntimeOptions::checkNumerics`) on real kernels, including a kernel output
// that is deliberately wrong and a program whose f32 arithmetic overflows where f64 does not.
//
//===----------------------------------------------------------------------===//

#include "la/runtime/NumericsCheck.h"
#include "la/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace {

la::HostTensor tensorOf(la::DType dtype, llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<double> values) {
  la::TensorSpec spec{dtype, llvm::SmallVector<int64_t, 4>(shape.begin(), shape.end())};
  la::HostTensor tensor(spec);
  for (auto [i, value] : llvm::enumerate(values))
    tensor.set(i, value);
  return tensor;
}

TEST(CompareWithReference, ErrorsAreSpecMeasures) {
  la::HostTensor reference = tensorOf(la::DType::F64, {2, 2}, {3, 0, 0, 4});
  la::HostTensor output = tensorOf(la::DType::F32, {2, 2}, {3, 0.5, 0, 4});
  la::OutputCheck check = la::compareWithReference(1, output.ref(), reference.ref());
  EXPECT_EQ(check.result, 1u);
  EXPECT_DOUBLE_EQ(check.maxAbsError, 0.5);
  EXPECT_DOUBLE_EQ(check.relRmsError, 0.5 / 5.0); // ‖(0, .5, 0, 0)‖ / ‖(3, 0, 0, 4)‖
  EXPECT_DOUBLE_EQ(check.tolerance, 1e-4);
  EXPECT_FALSE(check.passed());
  EXPECT_NE(check.str().find("FAILED"), std::string::npos);
}

TEST(CompareWithReference, ToleranceFollowsTheOutputDType) {
  la::HostTensor reference = tensorOf(la::DType::F64, {3}, {1, 2, 3});
  la::HostTensor half = tensorOf(la::DType::BF16, {3}, {1, 2, 3.01}); // bf16 rounds 3.01 to 3
  la::OutputCheck check = la::compareWithReference(0, half.ref(), reference.ref());
  EXPECT_DOUBLE_EQ(check.tolerance, 5e-3);
  EXPECT_TRUE(check.passed()) << check.str();
  la::HostTensor off = tensorOf(la::DType::F16, {3}, {1, 2, 3.1});
  EXPECT_FALSE(la::compareWithReference(0, off.ref(), reference.ref()).passed());
}

// An f32 output computed from half inputs (a variant's state, kept in f32) is held to the inputs' bound: the
// GPU kernels round tensor-core operands to the inputs' type (linear_attention_causal.prefill on cuda-emu
// with f16 inputs: its f32 state at rel RMS 1.7e-4, over the f32 bound of 1e-4).
TEST(CompareWithReference, ToleranceFollowsTheLeastPreciseInput) {
  la::HostTensor reference = tensorOf(la::DType::F64, {2}, {1, 1});
  la::HostTensor output = tensorOf(la::DType::F32, {2}, {1, 1.001});
  EXPECT_FALSE(la::compareWithReference(0, output.ref(), reference.ref()).passed());
  la::HostTensor halfInput = tensorOf(la::DType::F16, {1}, {0}), floatInput = tensorOf(la::DType::F32, {1}, {0});
  std::optional<la::DType> least = la::leastPreciseDType({floatInput.ref(), halfInput.ref()});
  ASSERT_TRUE(least.has_value());
  EXPECT_EQ(*least, la::DType::F16);
  la::OutputCheck check = la::compareWithReference(0, output.ref(), reference.ref(), least);
  EXPECT_DOUBLE_EQ(check.tolerance, 5e-3);
  EXPECT_TRUE(check.passed()) << check.str();
  // Inputs more precise than the output do not tighten its bound.
  la::HostTensor half = tensorOf(la::DType::BF16, {2}, {1, 1});
  EXPECT_DOUBLE_EQ(la::compareWithReference(0, half.ref(), reference.ref(), la::DType::F64).tolerance, 5e-3);
  EXPECT_FALSE(la::leastPreciseDType({}).has_value());
}

TEST(CompareWithReference, ZeroReferenceUsesAbsoluteError) {
  la::HostTensor reference = tensorOf(la::DType::F64, {2}, {0, 0});
  la::HostTensor output = tensorOf(la::DType::F32, {2}, {0, 3e-5});
  la::OutputCheck check = la::compareWithReference(0, output.ref(), reference.ref());
  EXPECT_NEAR(check.relRmsError, 3e-5, 1e-9);
  EXPECT_TRUE(check.passed());
}

TEST(CompareWithReference, FirstNonFiniteByMultiIndex) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  double inf = std::numeric_limits<double>::infinity();
  la::HostTensor reference = tensorOf(la::DType::F64, {2, 3}, {1, 1, 1, 1, 1, 1});
  la::HostTensor output = tensorOf(la::DType::F32, {2, 3}, {1, 1, 1, 1, -inf, nan});
  la::OutputCheck check = la::compareWithReference(0, output.ref(), reference.ref());
  EXPECT_EQ(check.nonFinite, 2);
  EXPECT_EQ(check.nonFiniteWhereReferenceFinite, 2);
  ASSERT_TRUE(check.firstNonFinite);
  EXPECT_EQ(*check.firstNonFinite, (llvm::SmallVector<int64_t, 4>{1, 1}));
  EXPECT_EQ(check.relRmsError, 0); // the finite positions agree
  EXPECT_FALSE(check.passed());
  EXPECT_NE(check.str().find("2 NaN/Inf, the first -Inf at [1, 1]"), std::string::npos) << check.str();
}

TEST(CompareWithReference, NaNTheReferenceSharesIsTheInputs) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  la::HostTensor reference = tensorOf(la::DType::F64, {3}, {nan, 2, 3});
  la::HostTensor output = tensorOf(la::DType::F32, {3}, {nan, 2, 3});
  la::OutputCheck check = la::compareWithReference(0, output.ref(), reference.ref());
  EXPECT_EQ(check.nonFinite, 1);
  EXPECT_EQ(check.referenceNonFinite, 1);
  EXPECT_EQ(check.nonFiniteWhereReferenceFinite, 0);
  EXPECT_TRUE(check.passed()) << check.str();
}

/// Seeded inputs in (-1, 1) for every argument of `entry`, with the sizes of `shape` for `?` dimensions.
std::vector<la::HostTensor> inputsFor(la::Runtime &runtime, const la::Program &program, llvm::StringRef entry,
                                      llvm::ArrayRef<int64_t> shape) {
  auto signature = runtime.signature(program, entry);
  EXPECT_TRUE(bool(signature)) << llvm::toString(signature.takeError());
  std::vector<la::HostTensor> inputs;
  uint32_t state = 12345;
  for (auto [a, declared] : llvm::enumerate(signature->arguments)) {
    la::TensorSpec spec = declared;
    for (auto [d, size] : llvm::enumerate(spec.shape))
      size = size >= 0 ? size : shape[d];
    // Uniform inside the argument's declared domain (gla's log-gates ≤ 0).
    auto [low, high] = la::samplingInterval(signature->argumentDomains[a]);
    la::HostTensor tensor(spec);
    for (int64_t i = 0; i < tensor.numElements(); ++i) {
      state = state * 1664525u + 1013904223u;
      tensor.set(i, low + (state >> 8) * ((high - low) / 16777216.0));
    }
    inputs.push_back(std::move(tensor));
  }
  return inputs;
}

std::vector<la::TensorRef> refsOf(std::vector<la::HostTensor> &tensors) {
  std::vector<la::TensorRef> refs;
  for (la::HostTensor &tensor : tensors)
    refs.push_back(tensor.ref());
  return refs;
}

std::unique_ptr<la::Runtime> makeRuntime(bool checkNumerics) {
  la::RuntimeOptions options;
  options.cacheDir = "none";
  options.numThreads = 2;
  options.checkNumerics = checkNumerics;
  auto runtime = la::Runtime::create(options);
  EXPECT_TRUE(bool(runtime)) << llvm::toString(runtime.takeError());
  return std::move(*runtime);
}

TEST(RuntimeCheckNumerics, KernelMatchesItsReferenceAndAWrongOutputIsCaught) {
  auto runtime = makeRuntime(false);
  auto program = runtime->loadFile(LA_KERNELS_DIR "/flow_attention.mlir");
  ASSERT_TRUE(bool(program)) << llvm::toString(program.takeError());
  std::vector<la::HostTensor> inputs = inputsFor(*runtime, **program, "flow_attention_causal", {1, 2, 45, 12});
  auto outputs = runtime->run(**program, "flow_attention_causal", refsOf(inputs));
  ASSERT_TRUE(bool(outputs)) << llvm::toString(outputs.takeError());
  std::vector<la::HostTensor> results(outputs->begin(), outputs->end());

  auto report = runtime->checkNumerics(**program, "flow_attention_causal", refsOf(inputs), refsOf(results));
  ASSERT_TRUE(bool(report)) << llvm::toString(report.takeError());
  ASSERT_EQ(report->outputs.size(), 1u);
  EXPECT_TRUE(report->passed()) << report->str();
  EXPECT_LT(report->outputs[0].relRmsError, 1e-5); // SPEC §7, T ≤ 256

  // One element off by 1% of the output's scale must fail the check: the guard can fail.
  double scale = 0;
  for (int64_t i = 0; i < results[0].numElements(); ++i)
    scale = std::max(scale, std::abs(results[0].get(i)));
  results[0].set(300, results[0].get(300) + 0.01 * scale);
  auto wrong = runtime->checkNumerics(**program, "flow_attention_causal", refsOf(inputs), refsOf(results));
  ASSERT_TRUE(bool(wrong)) << llvm::toString(wrong.takeError());
  EXPECT_FALSE(wrong->passed()) << wrong->str();
  EXPECT_NEAR(wrong->outputs[0].maxAbsError, 0.01 * scale, 1e-6 * scale);
}

TEST(RuntimeCheckNumerics, OptionReportsEveryCallAndFailsOnOverflow) {
  auto runtime = makeRuntime(true);
  auto program = runtime->loadFile(LA_KERNELS_DIR "/retention.mlir");
  ASSERT_TRUE(bool(program)) << llvm::toString(program.takeError());
  std::vector<la::HostTensor> inputs = inputsFor(*runtime, **program, "gla_with_state", {1, 2, 33, 8});
  inputs.back() = tensorOf(la::DType::F32, {1, 2, 8, 8}, std::vector<double>(128, 0.25)); // h0: [B, H, K, V]
  la::CallStats stats;
  auto outputs = runtime->run(**program, "gla_with_state", refsOf(inputs), &stats);
  ASSERT_TRUE(bool(outputs)) << llvm::toString(outputs.takeError());
  ASSERT_TRUE(stats.numerics);
  EXPECT_EQ(stats.numerics->outputs.size(), 2u);
  EXPECT_TRUE(stats.numerics->passed()) << stats.numerics->str();

  // exp(100·x) overflows f32 where x > 0.887, never f64: the call itself fails and names the first index.
  auto overflow = runtime->loadSource(R"mlir(
    func.func @overflow(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
      %e = la.map %x : tensor<?x?xf32> -> tensor<?x?xf32> {
      ^bb0(%z: f32):
        %c = arith.constant 100.0 : f32
        %s = arith.mulf %z, %c : f32
        %y = math.exp %s : f32
        la.yield %y : f32
      }
      return %e : tensor<?x?xf32>
    })mlir",
                                      "overflow.mlir");
  ASSERT_TRUE(bool(overflow)) << llvm::toString(overflow.takeError());
  la::HostTensor x = tensorOf(la::DType::F32, {2, 3}, {0.1, 0.2, 0.3, 0.4, 0.95, 0.5});
  la::HostTensor y(x.spec());
  std::vector<la::TensorRef> in{x.ref()}, out{y.ref()};
  llvm::Error err = runtime->call(**overflow, "overflow", in, out, &stats);
  std::string message = llvm::toString(std::move(err));
  EXPECT_NE(message.find("overflow.mlir: entry 'overflow': numerics check failed"), std::string::npos) << message;
  EXPECT_NE(message.find("1 NaN/Inf, the first +Inf at [1, 1]"), std::string::npos) << message;
  ASSERT_TRUE(stats.numerics);
  EXPECT_FALSE(stats.numerics->passed());
}

TEST(RuntimeCheckNumerics, ErrorsAreValues) {
  auto runtime = makeRuntime(false);
  auto program = runtime->loadFile(LA_KERNELS_DIR "/linear_attention.mlir");
  ASSERT_TRUE(bool(program)) << llvm::toString(program.takeError());
  std::vector<la::HostTensor> inputs = inputsFor(*runtime, **program, "linear_attention", {1, 1, 5, 4});
  auto report = runtime->checkNumerics(**program, "nope", refsOf(inputs), {});
  ASSERT_FALSE(bool(report));
  EXPECT_NE(llvm::toString(report.takeError()).find("no entry named 'nope'"), std::string::npos);
  report = runtime->checkNumerics(**program, "linear_attention", refsOf(inputs), {});
  ASSERT_FALSE(bool(report));
  EXPECT_NE(llvm::toString(report.takeError()).find("has 1 results but 0 outputs were given to check"),
            std::string::npos);
}

} // namespace
