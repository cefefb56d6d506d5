//===- CudaDriverTest.cpp - the runtime's cuda target against a stub driver -===//
//
// No machine here has a GPU: the stub (tests/gpu/Inputs/stub_libcuda.c) keeps "device" memory on the host and
// runs nothing. What these tests check is the host side of `Runtime::callOnDevice` (device pointers and a
// stream, validated like host tensors) and how a device is chosen. tests/gpu/cuda-driver.test covers
// `call` on host tensors and the errors without a driver or a device.
//
//===----------------------------------------------------------------------===//

#include "la/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

namespace {

constexpr const char *kProgram = R"mlir(
func.func @scale(%x: tensor<?x?x8xf32>, %y: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %s = la.contract "bnd,bnd->bnd" %x, %y : tensor<?x?x8xf32>, tensor<?x?x8xf32> -> tensor<?x?x8xf32>
  return %s : tensor<?x?x8xf32>
}
)mlir";

/// A runtime of the cuda target on the stub's device `ordinal`.
llvm::Expected<std::unique_ptr<la::Runtime>> createOnStub(int ordinal) {
  setenv("LA_CUDA_DRIVER", LA_STUB_LIBCUDA, /*overwrite=*/1);
  la::RuntimeOptions options;
  options.target = la::RuntimeTarget::CUDA;
  options.cudaDevice = ordinal;
  options.cacheDir = "none";
  return la::Runtime::create(options);
}

la::TensorRef ref(std::vector<float> &data, std::initializer_list<int64_t> shape) {
  return la::TensorRef{data.data(), la::TensorSpec{la::DType::F32, llvm::SmallVector<int64_t, 4>(shape)}};
}

TEST(CudaDriver, CallOnDeviceTakesDevicePointersAndAStream) {
  auto runtime = createOnStub(0);
  ASSERT_TRUE(bool(runtime)) << llvm::toString(runtime.takeError());
  auto program = (*runtime)->loadSource(kProgram, "scale.mlir");
  ASSERT_TRUE(bool(program)) << llvm::toString(program.takeError());
  // The stub's device addresses are host addresses: any distinct buffers stand in for device memory.
  std::vector<float> x(2 * 4 * 8), y(x.size()), out(x.size());
  void *stream = reinterpret_cast<void *>(0x5eed);
  llvm::Error err = (*runtime)->callOnDevice(**program, "scale", {ref(x, {2, 4, 8}), ref(y, {2, 4, 8})},
                                             {ref(out, {2, 4, 8})}, stream);
  EXPECT_FALSE(bool(err)) << llvm::toString(std::move(err));
}

TEST(CudaDriver, CallOnDeviceChecksTheTensorsLikeCall) {
  auto runtime = createOnStub(0);
  ASSERT_TRUE(bool(runtime)) << llvm::toString(runtime.takeError());
  auto program = (*runtime)->loadSource(kProgram, "scale.mlir");
  ASSERT_TRUE(bool(program)) << llvm::toString(program.takeError());
  std::vector<float> x(2 * 4 * 8), y(x.size()), out(x.size());
  llvm::Error err = (*runtime)->callOnDevice(**program, "scale", {ref(x, {2, 4, 8}), ref(y, {2, 4, 8})},
                                             {ref(out, {2, 5, 8})}, nullptr);
  ASSERT_TRUE(bool(err));
  EXPECT_EQ(llvm::toString(std::move(err)),
            "scale.mlir: entry 'scale': output #0 is f32[2x5x8] but the kernel produces f32[2x4x8]");
}

TEST(CudaDriver, ADeviceTheDriverDoesNotHaveIsAnError) {
  auto runtime = createOnStub(1);
  ASSERT_FALSE(bool(runtime));
  EXPECT_EQ(llvm::toString(runtime.takeError()), "CUDA device 1 does not exist: the driver sees 1 device(s)");
}

TEST(CudaDriver, CallOnDeviceNeedsTheCudaTarget) {
  la::RuntimeOptions options;
  options.cacheDir = "none";
  auto runtime = la::Runtime::create(options);
  ASSERT_TRUE(bool(runtime)) << llvm::toString(runtime.takeError());
  auto program = (*runtime)->loadSource(kProgram, "scale.mlir");
  ASSERT_TRUE(bool(program)) << llvm::toString(program.takeError());
  std::vector<float> x(8), y(8), out(8);
  llvm::Error err = (*runtime)->callOnDevice(**program, "scale", {ref(x, {1, 1, 8}), ref(y, {1, 1, 8})},
                                             {ref(out, {1, 1, 8})}, nullptr);
  ASSERT_TRUE(bool(err));
  EXPECT_EQ(llvm::toString(std::move(err)),
            "scale.mlir: entry 'scale': callOnDevice takes device pointers, which only the cuda runtime target has");
}

} // namespace
