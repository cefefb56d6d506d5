//===- NVVMLowering.cpp - gpu/nvgpu kernels down to NVVM, and onto the emulator ===//

#include "Target/NVVM/NVVMLowering.h"

#include "Conversion/Passes.h"
#include "Target/CUDA/Transforms/CUDAPasses.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::la {

void buildNVVMLoweringTail(OpPassManager &pm) {
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createLANVGPUBF16MmaToNVVM());
  pm.addPass(createConvertNVGPUToNVVMPass());
  ConvertGpuOpsToNVVMOpsOptions gpuToNVVM;
  gpuToNVVM.useBarePtrCallConv = true;
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps(gpuToNVVM));
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createLAGPUOffsetSliceArguments());
}

void buildEmulatorPipeline(OpPassManager &pm) {
  buildNVVMLoweringTail(pm);
  pm.addPass(createLANVVMToEmulator());
}

void registerNVVMPipelines() {
  PassPipelineRegistration<>("la-gpu-to-nvvm",
                             "gpu.module kernels (gpu, nvgpu, vector, memref, affine, ...) => LLVM dialect + NVVM",
                             buildNVVMLoweringTail);
  PassPipelineRegistration<>("la-gpu-to-emulator",
                             "gpu.module kernels => host functions that run on the GPU emulator "
                             "(la-gpu-to-nvvm, then la-nvvm-to-emulator)",
                             buildEmulatorPipeline);
}

} // namespace mlir::la
