//===- LATileRegisterBlocks.cpp - tile contractions into register blocks --===//
//
// Carries out the `tile` and `order` of each #la.register_block with `scf::tileUsingSCF`, and peels ragged
// block loops with `scf::peelForLoopAndSimplifyBounds` so that every block has a static shape.
//
//===----------------------------------------------------------------------===//

#include "Target/CPU/Transforms/BlockLoops.h"
#include "Target/CPU/Transforms/CPUPasses.h"
#include "Target/CPU/Transforms/RegisterBlockConfig.h"

#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "la-tile-register-blocks"

namespace mlir::la {
#define GEN_PASS_DEF_LATILEREGISTERBLOCKS
#include "Target/CPU/Transforms/CPUPasses.h.inc"

namespace {

/// Tiles `op` into the register blocks of `config` and peels ragged block loops; the blocks keep `config`
/// (they are clones of `op`), which marks them for vectorisation.
LogicalResult tileIntoBlocks(RewriterBase &rewriter, linalg::GenericOp op, RegisterBlockAttr config) {
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(op.getContext(), config.getTileSizes()));
  options.setInterchange(config.getLoopOrder());
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileUsingSCF(rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled))
    return failure();
  rewriter.replaceOp(op, tiled->replacements);
  peelOuterToInner(rewriter, tiled->loops);
  return success();
}

struct LATileRegisterBlocksPass : impl::LATileRegisterBlocksBase<LATileRegisterBlocksPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<std::pair<linalg::GenericOp, RegisterBlockAttr>> targets;
    // Fused epilogues and transposed copies are blocks already: they need the clean-up below all the same.
    bool hasBlocks = false;
    func.walk([&](linalg::LinalgOp op) {
      RegisterBlockAttr config = getRegisterBlock(op);
      if (!config)
        return;
      hasBlocks = true;
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (generic && !config.fitsInOneBlock(op.getStaticLoopRanges()))
        targets.emplace_back(generic, config);
    });
    if (!hasBlocks)
      return;
    IRRewriter rewriter(&getContext());
    for (auto [op, config] : targets) {
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << op.getLoc() << ": " << config << "\n");
      if (failed(tileIntoBlocks(rewriter, op, config))) {
        op.emitError("la-tile-register-blocks: tiling failed");
        return signalPassFailure();
      }
    }
    // Fold the peeled bounds into static block shapes before vectorising.
    if (failed(canonicalizeBlocks(func)))
      return signalPassFailure();
  }
};

} // namespace
} // namespace mlir::la
