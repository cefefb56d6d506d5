//===- CPUPipeline.cpp - the CPU compilation pipeline ---------------------===//

#include "Pipelines/Pipelines.h"

#include "Conversion/Passes.h"
#include "Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::la {

void buildLAOptimizationPipeline(OpPassManager &pm, const CPUPipelineOptions &options) {
  pm.addPass(createInlinerPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  LAChunkScansOptions chunking;
  chunking.chunkSize = options.chunkSize;
  pm.addNestedPass<func::FuncOp>(createLAChunkScans(chunking));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void buildLAToLinalgPipeline(OpPassManager &pm, const CPUPipelineOptions &options) {
  pm.addPass(createLAToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createLARefineResultTypes());
  if (options.fuse) {
    pm.addNestedPass<func::FuncOp>(createLAFuseElementwise());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
  if (options.fuse && options.groupSweeps) {
    pm.addNestedPass<func::FuncOp>(createLAGroupSweeps());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
  if (options.registerTile) {
    pm.addNestedPass<func::FuncOp>(createLARegisterTileContractions());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
}

void buildLinalgToLLVMPipeline(OpPassManager &pm, const CPUPipelineOptions &options) {
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion = bufferization::LayoutMapOption::IdentityLayoutMap;
  // Chunk loops carry their state in a fresh buffer per iteration (D×Dv, small next to the chunk work).
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // A loop that updates its buffer in place yields it unchanged: fold the loop result into the buffer, so
  // a result written by a loop (a sweep) is still recognised as an allocation and becomes the out-param.
  pm.addPass(createCanonicalizerPass());
  // Chunk loops allocate their per-chunk tiles (scores, prefix sums, mapped operands) inside the loop
  // body; with 16-position chunks that is thousands of allocations per call. Allocations of a static
  // size that do not escape an iteration move in front of the loop (before deallocation is placed).
  pm.addNestedPass<func::FuncOp>(bufferization::createBufferLoopHoistingPass());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  pm.addPass(createCanonicalizerPass());
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  pm.addNestedPass<func::FuncOp>(createLAExpandStridedCopies());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createLAPrefetchNextTile());
  if (options.approximateMath)
    pm.addNestedPass<func::FuncOp>(createLAApproximateMath());
  // Register blocks: n-D transfers become 1-D loads and stores, then vector ops become LLVM vectors.
  VectorTransferToSCFOptions transfers;
  transfers.enableFullUnroll();
  pm.addNestedPass<func::FuncOp>(createConvertVectorToSCFPass(transfers));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createLAEmitCInterface());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // Temporaries go through _mlir_memref_to_llvm_{alloc,aligned_alloc,free}, which the runtime serves from
  // a per-thread cache of freed blocks (la/runtime/KernelMemory.h).
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  // The aligned form returns the data pointer itself, which keeps its provenance from the (noalias) call.
  memrefToLLVM.useAlignedAlloc = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  // Transposed copies of register-block operands are 16×16 vector.transposes: lower them as the 16×16
  // shuffle network rather than 256 element extracts and inserts.
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.vectorTransposeLowering = vector::VectorTransposeLowering::Shuffle16x16;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void buildCPUPipeline(OpPassManager &pm, const CPUPipelineOptions &options) {
  buildLAOptimizationPipeline(pm, options);
  buildLAToLinalgPipeline(pm, options);
  buildLinalgToLLVMPipeline(pm, options);
}

void registerCPUPipelines() {
  PassPipelineRegistration<CPUPipelineOptions>("la-cpu-pipeline",
                                               "Compile la kernels to the LLVM dialect for the CPU",
                                               buildCPUPipeline);
  PassPipelineRegistration<CPUPipelineOptions>("la-cpu-optimize", "Stage 1: la => optimised la",
                                               buildLAOptimizationPipeline);
  PassPipelineRegistration<CPUPipelineOptions>("la-cpu-to-linalg", "Stage 2: la => fused linalg on tensors",
                                               buildLAToLinalgPipeline);
  PassPipelineRegistration<CPUPipelineOptions>("la-cpu-to-llvm", "Stage 3: linalg => LLVM dialect",
                                               buildLinalgToLLVMPipeline);
}

} // namespace mlir::la
