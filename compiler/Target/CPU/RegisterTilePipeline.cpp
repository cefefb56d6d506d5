//===- RegisterTilePipeline.cpp - register tiling, step by step -----------===//

#include "Target/CPU/RegisterTilePipeline.h"

#include "Target/CPU/Transforms/CPUPasses.h"

#include "mlir/Pass/PassRegistry.h"

namespace mlir::la {

RegisterTileOptions::RegisterTileOptions() {
  // The strategy pass owns the defaults (Passes.td); the pipeline only forwards them.
  LARegisterBlockStrategyOptions strategy;
  vectorTile = strategy.vectorTile;
  vectorWidth = strategy.vectorWidth;
  registerBudget = strategy.registerBudget;
  maxRows = strategy.maxRows;
  reductionPanel = strategy.reductionPanel;
}

void buildRegisterTilePipeline(OpPassManager &pm, const RegisterTileOptions &options) {
  LARegisterBlockStrategyOptions strategy;
  strategy.vectorTile = options.vectorTile;
  strategy.vectorWidth = options.vectorWidth;
  strategy.registerBudget = options.registerBudget;
  strategy.maxRows = options.maxRows;
  strategy.reductionPanel = options.reductionPanel;
  LATransposeBlockInputsOptions transposes;
  transposes.vectorWidth = options.vectorWidth;

  OpPassManager &func = pm.nest<func::FuncOp>();
  func.addPass(createLARegisterBlockStrategy(strategy));
  func.addPass(createLAReductionPanels());
  // The panel contractions are new ops (a split-off prologue is one more operand, the reduction one panel
  // long), cloned with the old plan: plan them again.
  func.addPass(createLARegisterBlockStrategy(strategy));
  // Transposed copies for the whole products, before epilogue fusion cuts them into block-sized ones: a
  // block-sized product reads too little of `k[m, d]` to pay for a copy, so after fusion GAU's q·kᵀ (under
  // relu²) read k with a stride in every block: GAU and FLASH 1.6-1.8x slower at D = 64 (docs/BENCHMARKS.md,
  // session 31).
  func.addPass(createLATransposeBlockInputs(transposes));
  if (options.fuseEpilogues) {
    func.addPass(createLAFuseBlockEpilogues());
    // The products fused into the epilogues' blocks are new, block-sized contractions: plan them.
    func.addPass(createLARegisterBlockStrategy(strategy));
  }
  func.addPass(createLATransposeBlockInputs(transposes));
  // Before the other blocks are tiled: it tiles the blocks it fuses into itself.
  func.addPass(createLAFuseBlockPrologues());
  func.addPass(createLATileRegisterBlocks());
  func.addPass(createLAVectorizeRegisterBlocks());
  func.addPass(createLAHoistBlockAccumulators());
}

void registerRegisterTilePipeline() {
  PassPipelineRegistration<RegisterTileOptions>(
      "la-register-tile-contractions",
      "Tiles contraction-like linalg.generics into register blocks and vectorises each block, as its steps: "
      "la-register-block-strategy, la-reduction-panels, la-fuse-block-epilogues, la-transpose-block-inputs, "
      "la-fuse-block-prologues, la-tile-register-blocks, la-vectorize-register-blocks, la-hoist-block-accumulators",
      buildRegisterTilePipeline);
}

} // namespace mlir::la
