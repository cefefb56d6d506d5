//===- RegisterTilePipeline.h - register tiling, step by step -*- C++ -*-===//
//
// The register-tiling steps in order (Passes.td): a strategy pass plans each contraction and records the
// plan as a #la.register_block, and single-purpose passes carry it out. IREE's LLVMCPU pipeline is the
// model (a lowering_config attribute set by a strategy, then one pass per transformation): each step can
// be run, tested and logged on its own, and none plans again.
//
//===----------------------------------------------------------------------===//

#ifndef LA_TARGET_CPU_REGISTERTILEPIPELINE_H
#define LA_TARGET_CPU_REGISTERTILEPIPELINE_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::la {

/// The options of `-la-register-tile-contractions`: the strategy's limits, and whether epilogues are fused.
struct RegisterTileOptions : PassPipelineOptions<RegisterTileOptions> {
  RegisterTileOptions();

  Option<int64_t> vectorTile{*this, "vector-tile", llvm::cl::desc("Largest tile of the vector loop (lanes)")};
  Option<int64_t> vectorWidth{*this, "vector-width", llvm::cl::desc("Lanes of one hardware vector register")};
  Option<int64_t> registerBudget{
      *this, "register-budget",
      llvm::cl::desc("Vector registers for the accumulator tile (rows × ⌈vector-tile / vector-width⌉)")};
  Option<int64_t> maxRows{*this, "max-rows", llvm::cl::desc("Largest tile of the row loop")};
  Option<int64_t> reductionPanel{
      *this, "reduction-panel",
      llvm::cl::desc("Reduction iterations per cache panel of a long contraction (0: no panels)")};
  Option<bool> fuseEpilogues{
      *this, "fuse-epilogues",
      llvm::cl::desc("Apply a matrix product's elementwise consumer to each register block before it is stored"),
      llvm::cl::init(true)};
};

/// Adds the register-tiling steps, on each func.func of the module `pm` runs on.
void buildRegisterTilePipeline(OpPassManager &pm, const RegisterTileOptions &options);

/// Registers `-la-register-tile-contractions`, the steps as one pipeline, with RegisterTileOptions.
void registerRegisterTilePipeline();

} // namespace mlir::la

#endif // LA_TARGET_CPU_REGISTERTILEPIPELINE_H
