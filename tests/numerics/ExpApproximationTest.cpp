//===- ExpApproximationTest.cpp - compiled f32 exp against libm ---------===//
//
// la-approximate-math replaces f32 `math.exp` with its own 15-operation expansion, and `math.expm1` with
// 2^k·(e^r − 1) + (2^k − 1) on the same reduction (LAApproximateMath.cpp).
// The kernel tests see it only through whole attention outputs; this checks the function itself, compiled
// by the runtime from `la.map exp` and `la.map sigmoid`: every point of a dense sweep of the finite range,
// and the edges the expansion handles by construction (underflow to 0, overflow to inf, NaN, ±inf).
//
//===----------------------------------------------------------------------===//

#include "la/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace {

constexpr const char *kSource = R"mlir(
!x = tensor<?x?x?x?xf32>
func.func @exp(%x: !x) -> !x {
  %y = la.map exp %x : !x -> !x
  return %y : !x
}
func.func @expm1(%x: !x) -> !x {
  %y = la.map "bhnd->bhnd" %x : !x -> !x {
  ^bb0(%v: f32):
    %e = math.expm1 %v : f32
    la.yield %e : f32
  }
  return %y : !x
}
func.func @sigmoid(%x: !x) -> !x {
  %y = la.map sigmoid %x : !x -> !x
  return %y : !x
}
)mlir";

/// Runs `entry` of kSource on `values` (one 1×1×1×n tensor) and returns the outputs as doubles.
std::vector<double> runOn(llvm::StringRef entry, const std::vector<float> &values) {
  la::RuntimeOptions options;
  options.cacheDir = "none";
  auto runtime = la::Runtime::create(options);
  EXPECT_TRUE(bool(runtime)) << llvm::toString(runtime.takeError());
  auto program = (*runtime)->loadSource(kSource, "exp-test.mlir");
  EXPECT_TRUE(bool(program)) << llvm::toString(program.takeError());
  la::HostTensor input(la::TensorSpec{la::DType::F32, {1, 1, 1, static_cast<int64_t>(values.size())}});
  for (auto [i, value] : llvm::enumerate(values))
    input.set(i, value);
  auto outputs = (*runtime)->run(**program, entry, {input.ref()});
  EXPECT_TRUE(bool(outputs)) << llvm::toString(outputs.takeError());
  std::vector<double> results;
  for (int64_t i = 0; i < (*outputs)[0].numElements(); ++i)
    results.push_back((*outputs)[0].get(i));
  return results;
}

/// 2^20 evenly spaced points of [from, to].
std::vector<float> sweep(float from, float to) {
  std::vector<float> xs;
  for (int i = 0; i < (1 << 20); ++i)
    xs.push_back(from + (to - from) * static_cast<float>(i) / (1 << 20));
  return xs;
}

/// The largest relative error of `entry` against fp64 `reference` over `xs`, and where it occurs.
std::pair<double, float> worstRelativeError(llvm::StringRef entry, const std::vector<float> &xs,
                                            double (*reference)(double)) {
  std::vector<double> ys = runOn(entry, xs);
  EXPECT_EQ(ys.size(), xs.size());
  std::pair<double, float> worst{0, 0};
  for (size_t i = 0; i < std::min(xs.size(), ys.size()); ++i)
    if (double error = std::abs(ys[i] / reference(xs[i]) - 1); error > worst.first)
      worst = {error, xs[i]};
  return worst;
}

TEST(ExpApproximation, WithinOneUlpOverTheNormalRange) {
  // [-87, 88], where exp is a normal f32 and the expansion's r stays in [-ln2/2, ln2/2].
  auto [worst, at] = worstRelativeError("exp", sweep(-87.0f, 88.0f), [](double x) { return std::exp(x); });
  // Measured 7.5e-8 (numpy emulation and this test); one f32 ulp is 6e-8 to 1.2e-7 relative.
  EXPECT_LT(worst, 1.2e-7) << "worst at x = " << at;
}

TEST(ExpApproximation, EdgesUnderflowOverflowAndNaN) {
  float inf = std::numeric_limits<float>::infinity();
  std::vector<float> xs = {-inf,  -1000.0f, -88.5f,  0.0f, 1.0f,
                           88.5f, 88.8f,    1000.0f, inf,  std::numeric_limits<float>::quiet_NaN()};
  std::vector<double> ys = runOn("exp", xs);
  ASSERT_EQ(ys.size(), xs.size());
  EXPECT_EQ(ys[0], 0.0);
  EXPECT_EQ(ys[1], 0.0);
  EXPECT_LT(ys[2], 1e-38); // true value 3.7e-39 (subnormal): flushed to 0 or kept, never larger
  EXPECT_EQ(ys[3], 1.0);
  EXPECT_NEAR(ys[4], std::exp(1.0), 3e-7);
  // (88.38, 88.73) runs with r outside the fitted interval: 5e-6 relative, documented in the pass.
  EXPECT_NEAR(ys[5] / std::exp(88.5), 1.0, 1e-5);
  EXPECT_TRUE(std::isinf(ys[6]) && ys[6] > 0); // e^88.8 > FLT_MAX
  EXPECT_TRUE(std::isinf(ys[7]) && ys[7] > 0);
  EXPECT_TRUE(std::isinf(ys[8]) && ys[8] > 0);
  EXPECT_TRUE(std::isnan(ys[9]));
}

TEST(ExpApproximation, Expm1WithinTwoUlpOverTheRange) {
  // [-20, 20], and tiny |x| (where e^x − 1 would lose every digit): k = 0 (the polynomial times r), k = ±1
  // (two terms of comparable size) and beyond.
  std::vector<float> xs = sweep(-20.0f, 20.0f);
  for (float tiny : {1e-30f, -1e-30f, 1e-7f, -1e-7f, 1e-3f, -1e-3f, 0.999999f, -0.999999f, 1.0f, -1.0f})
    xs.push_back(tiny);
  auto [worst, at] = worstRelativeError("expm1", xs, [](double x) { return std::expm1(x); });
  // Measured 1.31e-7 (at x = 0.41, k = 1). Two f32 ulps are 1.2e-7 to 2.4e-7 relative.
  EXPECT_LT(worst, 2.4e-7) << "worst at x = " << at;
}

TEST(ExpApproximation, Expm1Edges) {
  float inf = std::numeric_limits<float>::infinity();
  std::vector<float> xs = {-inf, -200.0f, 0.0f, 100.0f, inf, std::numeric_limits<float>::quiet_NaN()};
  std::vector<double> ys = runOn("expm1", xs);
  ASSERT_EQ(ys.size(), xs.size());
  EXPECT_EQ(ys[0], -1.0);
  EXPECT_EQ(ys[1], -1.0);
  EXPECT_EQ(ys[2], 0.0);
  EXPECT_TRUE(std::isinf(ys[3]) && ys[3] > 0);
  EXPECT_TRUE(std::isinf(ys[4]) && ys[4] > 0);
  EXPECT_TRUE(std::isnan(ys[5]));
}

TEST(ExpApproximation, SigmoidSaturatesCleanly) {
  float inf = std::numeric_limits<float>::infinity();
  std::vector<float> xs = {-inf, -200.0f, -20.0f, 0.0f, 20.0f, 200.0f, inf};
  std::vector<double> ys = runOn("sigmoid", xs);
  ASSERT_EQ(ys.size(), xs.size());
  EXPECT_EQ(ys[0], 0.0);
  EXPECT_EQ(ys[1], 0.0);
  EXPECT_NEAR(ys[2], 1 / (1 + std::exp(20.0)), 1e-15);
  EXPECT_EQ(ys[3], 0.5);
  EXPECT_NEAR(ys[4], 1.0, 1e-7);
  EXPECT_EQ(ys[5], 1.0);
  EXPECT_EQ(ys[6], 1.0);
}

} // namespace
