//===- LAPipeline.cpp - the target-neutral stages and the whole pipeline --===//

#include "Pipelines/Pipelines.h"

#include "Conversion/Passes.h"
#include "Target/TargetBackend.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::la {

TargetBackend::~TargetBackend() = default;

void addSpecialization(OpPassManager &pm, const Specialization &specialization) {
  if (specialization.entry.empty())
    return;
  LASpecializeOptions specialize;
  specialize.entry = specialization.entry;
  specialize.argTypes = llvm::to_vector(specialization.argTypes);
  pm.addPass(createLASpecialize(specialize));
}

void buildLAOptimizationPipeline(OpPassManager &pm, const PipelineConfig &config, const Specialization &specialization,
                                 PipelineTarget target) {
  // Declared prefill/resume variants get their bodies before anything picks the entry.
  pm.addPass(createLADeriveStateVariants());
  addSpecialization(pm, specialization);
  pm.addPass(createInlinerPass());
  if (specialization.slicedDims > 0) {
    LASlicePositionsOptions positions;
    positions.entry = specialization.entry;
    positions.dims = specialization.slicedDims;
    positions.sharedArguments = llvm::to_vector(specialization.sharedArguments);
    positions.pieces = specialization.slicePieces;
    pm.addPass(createLASlicePositions(positions));
  }
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createLAFactorJointSoftmax());
  LAChunkScansOptions chunking;
  chunking.chunkSize = config.chunkSize;
  chunking.factorGatedScores = target != PipelineTarget::CUDA;
  // On the CPU the pairs tensor of a row block stays in cache (la-tile-independent-dim); on a GPU it would
  // go to global memory, so the CUDA target computes it in tiles.
  chunking.pairTile = target == PipelineTarget::CUDA ? config.pairTile : 0;
  pm.addNestedPass<func::FuncOp>(createLAChunkScans(chunking));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void buildLAToLinalgPipeline(OpPassManager &pm, const PipelineConfig &config, PipelineTarget target) {
  pm.addPass(createLAToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createLARefineResultTypes());
  if (config.fuse) {
    LAFuseElementwiseOptions fusion;
    // On a GPU a map result that does not fit a block's shared memory goes to global scratch: written once
    // in f32 and read back by each consumer (4 + 4 bytes per element per consumer), where recomputing it
    // reads its f16 input again (2 bytes). A bandwidth-bound kernel there affords about 20 FLOPs per byte
    // (67 TFLOP/s of FMA over 3.35 TB/s on an H100), so a map of a few exps (cost 8 each) is still cheaper to
    // recompute: Flow-Attention's sigmoid costs 15, linear attention's elu + 1 costs 13. A result of more
    // than half the shared memory leaves room for little else there (linear attention's φ(Q) and φ(K) at
    // N=256, 64 KiB each, do not both fit 96 KiB: 3.25x the minimum traffic -> 1.50x). A smaller one is
    // likely to stay in shared memory, where reading it back costs no global traffic and recomputing it
    // would read its input from global memory again. The half is a guess that can be wrong either way:
    // aft_simple's e^K, alone in shared memory at N=256, costs 1.25x -> 1.50x recomputed (2.75x -> 1.50x
    // at N=1024, where it is global).
    if (target == PipelineTarget::CUDA)
      fusion.largeResultBytes = config.sharedMemoryBytes / 2;
    // A contraction with a map fused into its body no longer runs on tensor cores: Flow-Attention's
    // φ(K)ᵀ(V ⊙ comp) on FMA read each operand element once per 4×4 register block of the output.
    fusion.keepContractions = target == PipelineTarget::CUDA;
    pm.addNestedPass<func::FuncOp>(createLAFuseElementwise(fusion));
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
}

void buildBufferizationPipeline(OpPassManager &pm, bool loopsMayReturnAllocations) {
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion = bufferization::LayoutMapOption::IdentityLayoutMap;
  bufferize.allowReturnAllocsFromLoops = loopsMayReturnAllocations;
  pm.addNestedPass<func::FuncOp>(createLAReadOnlyArguments());
  pm.addNestedPass<func::FuncOp>(createLAExpandPaddedCopies());
  // A tensor computed only to be inserted into a larger one is computed in place in the larger one's buffer
  // (la-expand-padded-copies does it for padded copies, whose producers may write into an alloc_tensor).
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // A loop that updates its buffer in place yields it unchanged: fold the loop result into the buffer, so
  // a result written by a loop (a sweep) is still recognised as an allocation and becomes the out-param.
  pm.addPass(createCanonicalizerPass());
  // Chunk loops allocate their per-chunk tiles (scores, prefix sums, mapped operands) inside the loop
  // body; with 16-position chunks that is thousands of allocations per call. Allocations of a static
  // size that do not escape an iteration move in front of the loop.
  pm.addNestedPass<func::FuncOp>(bufferization::createBufferLoopHoistingPass());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  pm.addPass(createCanonicalizerPass());
}

void buildPipeline(OpPassManager &pm, const TargetBackend &target, const Specialization &specialization,
                   PipelineStage last) {
  const PipelineConfig &config = target.getConfig();
  buildLAOptimizationPipeline(pm, config, specialization, target.getKind());
  if (last == PipelineStage::Fused)
    return;
  buildLAToLinalgPipeline(pm, config, target.getKind());
  target.buildTensorPipeline(pm);
  if (last == PipelineStage::Linalg)
    return;
  target.buildLoweringPipeline(pm);
}

} // namespace mlir::la
