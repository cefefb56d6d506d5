//===- LAReductionPanels.cpp - cut long reductions into cache panels ------===//
//
// Carries out the `panel_loop`/`panel_size` of each #la.register_block (ReductionPanels.h does the work).
//
//===----------------------------------------------------------------------===//

#include "Target/CPU/Transforms/BlockLoops.h"
#include "Target/CPU/Transforms/CPUPasses.h"
#include "Target/CPU/Transforms/ReductionPanels.h"
#include "Target/CPU/Transforms/RegisterBlockConfig.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "la-reduction-panels"

namespace mlir::la {
#define GEN_PASS_DEF_LAREDUCTIONPANELS
#include "Target/CPU/Transforms/CPUPasses.h.inc"

namespace {

struct LAReductionPanelsPass : impl::LAReductionPanelsBase<LAReductionPanelsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<std::pair<linalg::GenericOp, RegisterBlockAttr>> targets, shortReductions;
    func.walk([&](linalg::GenericOp op) {
      RegisterBlockAttr config = getRegisterBlock(op);
      if (!config || !config.getRowLoop())
        return;
      if (config.getPanelLoop())
        targets.emplace_back(op, config);
      else if (op.getNumReductionLoops() > 0 &&
               op.getStaticLoopRanges()[*config.getRowLoop()] > config.getTileSizes()[*config.getRowLoop()])
        shortReductions.emplace_back(op, config);
    });
    if (targets.empty() && shortReductions.empty())
      return;
    IRRewriter rewriter(&getContext());
    // A reduction one panel long (a grouped sweep's 64-row step of kᵀ(v·c)) is not cut, but its row blocks
    // would still each recompute the row-invariant prologue: compute it once instead.
    for (auto [op, config] : shortReductions) {
      rewriter.setInsertionPoint(op);
      if (linalg::GenericOp prologue = splitRowInvariantPrologue(rewriter, op, *config.getRowLoop()))
        LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << op.getLoc() << ": row-invariant prologue split off as "
                                << prologue.getLoc() << "\n");
    }
    for (auto [op, config] : targets) {
      Location loc = op.getLoc(); // the op may be replaced before a failure is known
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << loc << ": loop " << *config.getPanelLoop() << " in panels of "
                              << config.getPanelSize() << "\n");
      if (failed(tileReductionIntoPanels(rewriter, op, *config.getPanelLoop(), *config.getRowLoop(),
                                         config.getPanelSize()))) {
        emitError(loc, "la-reduction-panels: tiling the reduction into panels failed");
        return signalPassFailure();
      }
    }
    // Static shapes for the peeled last panel; and a fused prologue writes a slice of a sequence-long
    // tensor.empty: a panel-sized one of its own becomes one small buffer reused by every panel.
    if (failed(canonicalizeBlocks(func, /*foldEmptyTensors=*/true)))
      return signalPassFailure();
  }
};

} // namespace
} // namespace mlir::la
