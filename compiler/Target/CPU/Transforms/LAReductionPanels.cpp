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

/// Whether `op`, blocked without panels, runs several row blocks over one reduction loop whose row-invariant
/// operand tile (reduction × vector loop, the shape a split-off `v·c` takes) is at most 64 KiB: small enough
/// to stay in L2 while the blocks read it. A longer reduction (panels turned off) would materialise `v·c`
/// for the whole sequence.
bool hasSmallRowInvariantTile(linalg::GenericOp op, RegisterBlockAttr config) {
  if (op.getNumReductionLoops() != 1 || !op.hasPureTensorSemantics())
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<unsigned> reductions;
  op.getReductionDims(reductions);
  int64_t rows = *config.getRowLoop(), reduction = reductions.front(), lanes = config.getVectorLoop();
  if (ShapedType::isDynamic(ranges[rows]) || ranges[rows] <= config.getTileSizes()[rows] ||
      ShapedType::isDynamic(ranges[reduction]) || ShapedType::isDynamic(ranges[lanes]))
    return false;
  int64_t elementBytes = getElementTypeOrSelf(op.getDpsInits().front().getType()).getIntOrFloatBitWidth() / 8;
  return ranges[reduction] * ranges[lanes] * elementBytes <= 64 * 1024;
}

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
      else if (hasSmallRowInvariantTile(op, config))
        shortReductions.emplace_back(op, config);
    });
    if (targets.empty() && shortReductions.empty())
      return;
    IRRewriter rewriter(&getContext());
    // A reduction one panel long (a grouped sweep's 64-row step of kᵀ(v·c)) is not cut, but its row blocks
    // would still each recompute the row-invariant prologue: compute it once instead.
    for (auto [op, config] : shortReductions) {
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
