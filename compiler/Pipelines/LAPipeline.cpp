//===- LAPipeline.cpp - the target-neutral stages and the whole pipeline --===//

#include "Pipelines/Pipelines.h"

#include "Conversion/Passes.h"
#include "Target/TargetBackend.h"
#include "Transforms/Passes.h"

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

void buildLAOptimizationPipeline(OpPassManager &pm, const PipelineConfig &config,
                                 const Specialization &specialization) {
  addSpecialization(pm, specialization);
  pm.addPass(createInlinerPass());
  if (specialization.slicedDims > 0) {
    LASlicePositionsOptions positions;
    positions.entry = specialization.entry;
    positions.dims = specialization.slicedDims;
    pm.addPass(createLASlicePositions(positions));
  }
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  LAChunkScansOptions chunking;
  chunking.chunkSize = config.chunkSize;
  pm.addNestedPass<func::FuncOp>(createLAChunkScans(chunking));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void buildLAToLinalgPipeline(OpPassManager &pm, const PipelineConfig &config) {
  pm.addPass(createLAToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createLARefineResultTypes());
  if (config.fuse) {
    pm.addNestedPass<func::FuncOp>(createLAFuseElementwise());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
}

void buildPipeline(OpPassManager &pm, const TargetBackend &target, const Specialization &specialization,
                   PipelineStage last) {
  const PipelineConfig &config = target.getConfig();
  buildLAOptimizationPipeline(pm, config, specialization);
  if (last == PipelineStage::Fused)
    return;
  buildLAToLinalgPipeline(pm, config);
  target.buildTensorPipeline(pm);
  if (last == PipelineStage::Linalg)
    return;
  target.buildLoweringPipeline(pm);
}

} // namespace mlir::la
