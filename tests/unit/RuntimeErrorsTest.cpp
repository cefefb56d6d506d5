//===- RuntimeErrorsTest.cpp - bad input to the runtime API is an error value -===//
//
// docs/robustness.md lists each class of bad input; these are the ones a host program can make through
// la/runtime/Runtime.h. Every one must come back as an `llvm::Error` naming what is wrong (file:line:col,
// entry, argument index, dimension), never as a crash or an abort.
//
//===----------------------------------------------------------------------===//

#include "la/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <limits>

namespace {

/// A small 3-argument entry with sliceable leading batch dimensions and a static last dimension.
constexpr const char *kProgram = R"mlir(
func.func @scale(%x: tensor<?x?x8xf32>, %y: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %s = la.contract "bnd,bnd->bnd" %x, %y : tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  return %s : tensor<?x?x8xf32>
}
)mlir";

class RuntimeErrors : public testing::Test {
protected:
  void SetUp() override {
    la::RuntimeOptions options;
    options.cacheDir = "none";
    options.numThreads = 1;
    auto created = la::Runtime::create(options);
    ASSERT_TRUE(bool(created)) << llvm::toString(created.takeError());
    runtime = std::move(*created);
    auto loaded = runtime->loadSource(kProgram, "scale.mlir");
    ASSERT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
    program = std::move(*loaded);
  }

  /// The message of the error `call` returns for these tensors ("" if it succeeds).
  std::string callError(llvm::ArrayRef<la::TensorRef> inputs, llvm::ArrayRef<la::TensorRef> outputs,
                        llvm::StringRef entry = "scale") {
    llvm::Error err = runtime->call(*program, entry, inputs, outputs);
    return err ? llvm::toString(std::move(err)) : std::string();
  }

  static la::TensorSpec spec(la::DType dtype, std::initializer_list<int64_t> shape) {
    return la::TensorSpec{dtype, llvm::SmallVector<int64_t, 4>(shape)};
  }

  std::unique_ptr<la::Runtime> runtime;
  std::shared_ptr<la::Program> program;
};

#define EXPECT_MESSAGE(message, text) EXPECT_NE((message).find(text), std::string::npos) << (message)

TEST_F(RuntimeErrors, MalformedSourceNamesFileLineAndColumn) {
  auto bad = runtime->loadSource("func.func @f(%x: tensor<4xf32>) {\n  %y = la.softplus %x\n}\n", "bad.mlir");
  ASSERT_FALSE(bool(bad));
  std::string message = llvm::toString(bad.takeError());
  EXPECT_MESSAGE(message, "bad.mlir:2:8: error: custom op 'la.softplus' is unknown");

  auto missing = runtime->loadFile("/nonexistent/kernel.mlir");
  ASSERT_FALSE(bool(missing));
  EXPECT_MESSAGE(llvm::toString(missing.takeError()), "/nonexistent/kernel.mlir: cannot read the file");

  auto nonTensor = runtime->loadSource("func.func @f(%x: i32) -> i32 {\n  return %x : i32\n}\n", "int.mlir");
  ASSERT_FALSE(bool(nonTensor));
  EXPECT_MESSAGE(llvm::toString(nonTensor.takeError()),
                 "int.mlir: entry 'f' has an argument or result that is not a f16/bf16/f32/f64 tensor");
}

TEST_F(RuntimeErrors, UnknownEntryListsTheEntries) {
  EXPECT_MESSAGE(callError({}, {}, "scal"), "scale.mlir: no entry named 'scal' (entries: scale)");
  auto signature = runtime->signature(*program, "scal");
  ASSERT_FALSE(bool(signature));
  EXPECT_MESSAGE(llvm::toString(signature.takeError()), "no entry named 'scal'");
}

TEST_F(RuntimeErrors, ArgumentsAgainstTheSignature) {
  std::vector<float> data(2 * 3 * 8);
  la::TensorRef good{data.data(), spec(la::DType::F32, {2, 3, 8})};
  EXPECT_MESSAGE(callError({good}, {}), "scale.mlir: entry 'scale' takes 2 arguments but 1 were given");

  la::TensorRef f64{data.data(), spec(la::DType::F64, {1, 3, 8})};
  EXPECT_MESSAGE(callError({good, f64}, {}), "argument #1 has dtype f64 but the signature declares f32");

  la::TensorRef rank2{data.data(), spec(la::DType::F32, {6, 8})};
  EXPECT_MESSAGE(callError({good, rank2}, {}),
                 "argument #1 has rank 2 (f32[6x8]) but the signature declares rank 3 (f32[?x?x8])");

  la::TensorRef wrongStatic{data.data(), spec(la::DType::F32, {2, 3, 6})};
  EXPECT_MESSAGE(callError({good, wrongStatic}, {}), "argument #1 dimension 2 is 6 but the signature declares 8");

  la::TensorRef otherBatch{data.data(), spec(la::DType::F32, {3, 2, 8})};
  EXPECT_MESSAGE(callError({good, otherBatch}, {}),
                 "argument #1 dimension 0 is 3 but argument #0 has 2 (batch dimensions must agree)");

  la::TensorRef negative{data.data(), spec(la::DType::F32, {2, -3, 8})};
  EXPECT_MESSAGE(callError({good, negative}, {}), "argument #1 dimension 1 has negative size -3");
}

TEST_F(RuntimeErrors, EnormousDimensionsAreRejectedBeforeCompiling) {
  float dummy = 0;
  int64_t huge = std::numeric_limits<int64_t>::max() / 4;
  la::TensorRef enormous{&dummy, spec(la::DType::F32, {1, huge, 8})};
  EXPECT_MESSAGE(callError({enormous, enormous}, {}),
                 "argument #0 f32[1x2305843009213693951x8] has more bytes than a 64-bit offset can address");
}

TEST_F(RuntimeErrors, ZeroSizeDimensionsRunAndGiveEmptyResults) {
  for (auto shape : {std::initializer_list<int64_t>{0, 3, 8}, {2, 0, 8}}) {
    la::TensorRef empty{nullptr, spec(la::DType::F32, shape)};
    auto results = runtime->run(*program, "scale", {empty, empty});
    ASSERT_TRUE(bool(results)) << llvm::toString(results.takeError());
    ASSERT_EQ(results->size(), 1u);
    EXPECT_EQ((*results)[0].spec(), empty.spec);
  }
}

TEST_F(RuntimeErrors, OutputsAgainstTheResults) {
  std::vector<float> x(2 * 3 * 8, 1.0f), y(2 * 3 * 8, 2.0f), out(2 * 3 * 8), small(8);
  la::TensorRef in0{x.data(), spec(la::DType::F32, {2, 3, 8})};
  la::TensorRef in1{y.data(), spec(la::DType::F32, {2, 3, 8})};
  la::TensorRef result{out.data(), spec(la::DType::F32, {2, 3, 8})};
  EXPECT_EQ(callError({in0, in1}, {result}), "");
  EXPECT_EQ(out[5], 2.0f);

  EXPECT_MESSAGE(callError({in0, in1}, {}), "entry 'scale' has 1 results but 0 outputs were given");
  la::TensorRef wrongShape{small.data(), spec(la::DType::F32, {1, 1, 8})};
  EXPECT_MESSAGE(callError({in0, in1}, {wrongShape}), "output #0 is f32[1x1x8] but the kernel produces f32[2x3x8]");
  la::TensorRef aliasing{x.data(), spec(la::DType::F32, {2, 3, 8})};
  EXPECT_MESSAGE(callError({in0, in1}, {aliasing}), "output #0 overlaps another argument");
  la::TensorRef null{nullptr, spec(la::DType::F32, {2, 3, 8})};
  EXPECT_MESSAGE(callError({in0, null}, {result}), "a tensor has no data pointer");
}

} // namespace
