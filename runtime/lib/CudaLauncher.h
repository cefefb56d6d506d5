//===- CudaLauncher.h - a GPU call's plan as an ahead-of-time C launcher -*- C++ -*-===//
//
// Runtime::emitCudaLauncher's parts: a plan kernel compiled to what a launcher embeds (its launch facts and
// cubin), and a plan (GpuPiecesPlan.h) turned into the launcher's description (CUDAAot.h), every size per
// batch×head slice so that the launcher takes B and H at run time.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_LIB_CUDALAUNCHER_H
#define LA_RUNTIME_LIB_CUDALAUNCHER_H

#include "GpuPiecesPlan.h"

#include "Target/CUDA/CUDAAot.h"

namespace la {

/// A kernel as a device runs it: its launch facts, read off its `gpu` stage, and its cubin.
struct DeviceImage {
  mlir::la::AotKernel launch;
  /// Empty unless assembled.
  std::string cubin;
};

/// Parses `kernel`'s `gpu` stage (CompiledKernel::object of the CUDA target) and reads its launch facts;
/// with `assemble`, also lowers it to a cubin (ptxas).
llvm::Expected<DeviceImage> buildDeviceImage(const CompiledKernel &kernel, const CompileOptions &options,
                                             bool assemble);

/// One plan kernel compiled: its image and the slicing it was compiled with.
struct LauncherKernel {
  DeviceImage image;
  SliceLayout slicing;
};

/// `plan` of a call of `entry` with whole-call `inputs` and `outputs`, sliced as `slicing` says, as the
/// launcher's description; `kernels` holds plan.kernels compiled. An error where a size does not divide
/// into the call's slices (a kernel sliced otherwise than the call).
llvm::Expected<mlir::la::AotLauncher> describeLauncher(llvm::StringRef entry, const SliceLayout &slicing,
                                                       llvm::ArrayRef<TensorSpec> inputs,
                                                       llvm::ArrayRef<TensorSpec> outputs, const GpuPiecesPlan &plan,
                                                       llvm::ArrayRef<LauncherKernel> kernels);

} // namespace la

#endif // LA_RUNTIME_LIB_CUDALAUNCHER_H
