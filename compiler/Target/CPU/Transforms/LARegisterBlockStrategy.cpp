//===- LARegisterBlockStrategy.cpp - plan the register blocks -------------===//
//
// Attaches a #la.register_block to each contraction that RegisterBlockConfig.h plans, and keeps the configs
// true when run again after a step that reshaped the contractions: every generic that is not one register
// block is planned afresh (a stale config, copied onto a panel or a fused product by tiling, is replaced or
// dropped). The blocks themselves (tiles that already fit their config) keep theirs.
//
//===----------------------------------------------------------------------===//

#include "Target/CPU/Transforms/CPUPasses.h"
#include "Target/CPU/Transforms/RegisterBlockConfig.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "la-register-block-strategy"

namespace mlir::la {
#define GEN_PASS_DEF_LAREGISTERBLOCKSTRATEGY
#include "Target/CPU/Transforms/CPUPasses.h.inc"

namespace {

struct LARegisterBlockStrategyPass : impl::LARegisterBlockStrategyBase<LARegisterBlockStrategyPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    RegisterBlockLimits limits{vectorTile, vectorWidth, registerBudget, maxRows, reductionPanel};
    if (limits.vectorTile < 1 || limits.vectorWidth < 1 || limits.registerBudget < 1 || limits.maxRows < 1 ||
        limits.reductionPanel < 0) {
      func.emitError("la-register-block-strategy: every option must be positive (reduction-panel: or 0)");
      return signalPassFailure();
    }
    func.walk([&](linalg::GenericOp op) {
      if (isOneRegisterBlock(op))
        return;
      std::optional<RegisterBlockAttr> plan = planRegisterBlock(op, limits);
      LLVM_DEBUG({
        llvm::dbgs() << "[" DEBUG_TYPE "] " << op.getLoc() << " ranges [";
        llvm::interleaveComma(op.getStaticLoopRanges(), llvm::dbgs());
        llvm::dbgs() << "]: ";
        if (plan)
          llvm::dbgs() << *plan << "\n";
        else
          llvm::dbgs() << "not blocked\n";
      });
      if (plan)
        op->setAttr(RegisterBlockAttr::kName, *plan);
      else
        op->removeAttr(RegisterBlockAttr::kName);
    });
  }
};

} // namespace
} // namespace mlir::la
