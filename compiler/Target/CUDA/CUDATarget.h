//===- CUDATarget.h - the CUDA target: slice kernels, NVVM, PTX, cubin -*- C++ -*-===//
//
// Maps each bufferised batch×head slice of an entry onto one thread block (la-gpu-outline-slice-kernel,
// la-gpu-distribute-to-threads), lowers it through the NVVM tail the GPU emulator shares
// (Target/NVVM/NVVMLowering.h), and emits the NVVM dialect, PTX (the NVPTX backend) or a cubin (ptxas).
//
// What `buildLoweringPipeline` produces, the `gpu` stage, is also what the emulator runs: a module whose
// `gpu.module @la_kernels` holds one kernel per entry. Launch it on a grid of (heads, batches) blocks of
// 32·warps-per-block threads; arguments are the one-slice buffers of the entry's inputs and results (bare
// pointers to the whole tensors) and, when the kernel has temporaries, a scratch buffer of
// `la.slice_bytes.back()` bytes per block.
//
//===----------------------------------------------------------------------===//
#ifndef LA_TARGET_CUDA_CUDATARGET_H
#define LA_TARGET_CUDA_CUDATARGET_H

#include "Pipelines/Pipelines.h"
#include "Target/TargetBackend.h"

#include <memory>

namespace mlir::la {

/// The CUDA backend for one configuration.
class CUDATarget : public TargetBackend {
public:
  /// Checks `arch` (sm_80 or sm_90) and `warps-per-block` (1 to 32); the error names the value.
  static llvm::Expected<std::unique_ptr<CUDATarget>> create(const PipelineConfig &config);

  PipelineTarget getKind() const override { return PipelineTarget::CUDA; }
  const PipelineConfig &getConfig() const override { return config; }
  /// Nothing yet: the fused linalg is bufferised as it is.
  void buildTensorPipeline(OpPassManager &pm) const override;
  /// Bufferises, turns linalg into parallel loops and maps each entry onto a thread block (the `gpu` stage).
  void buildLoweringPipeline(OpPassManager &pm) const override;
  /// "nvvm" (the LLVM dialect with NVVM ops, as text), "ptx" and "cubin". The AOT launcher, which may run
  /// several kernels, is the runtime's (Runtime::emitCudaLauncher).
  llvm::ArrayRef<llvm::StringRef> getArtifactKinds() const override;
  llvm::Expected<std::string> emitArtifact(ModuleOp module, llvm::StringRef kind) const override;

private:
  explicit CUDATarget(PipelineConfig config) : config(std::move(config)) {}
  PipelineConfig config;
};

/// The ptxas the CUDA target assembles with: `$LA_PTXAS`, else `ptxas` on PATH, else
/// /usr/local/cuda/bin/ptxas. The error says where it looked. Its toolkit (the directory above bin/) also
/// provides libdevice for PTX generation.
llvm::Expected<std::string> findPtxas();

/// Assembles `ptx` for `arch` with `ptxas -v`: the cubin bytes and ptxas's report (registers, spills,
/// shared memory per kernel). The error carries ptxas's own messages.
struct AssembledKernel {
  std::string cubin;
  std::string report;
};
llvm::Expected<AssembledKernel> assemblePTX(llvm::StringRef ptx, llvm::StringRef arch);

} // namespace mlir::la

#endif // LA_TARGET_CUDA_CUDATARGET_H
