//===- LAVectorizeRegisterBlocks.cpp - register blocks become vector code --===//
//
// `linalg::vectorize` on every op that is one register block (RegisterBlockConfig.h), then the rewrites
// that give the vectorised blocks the form of a register tile (RegisterBlockPatterns.h). The configs are
// spent here: every `la.register_block` is removed.
//
//===----------------------------------------------------------------------===//

#include "Target/CPU/Transforms/BlockLoops.h"
#include "Target/CPU/Transforms/CPUPasses.h"
#include "Target/CPU/Transforms/RegisterBlockConfig.h"
#include "Target/CPU/Transforms/RegisterBlockPatterns.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/InterleavedRange.h"

#define DEBUG_TYPE "la-vectorize-register-blocks"

namespace mlir::la {
#define GEN_PASS_DEF_LAVECTORIZEREGISTERBLOCKS
#include "Target/CPU/Transforms/CPUPasses.h.inc"

namespace {

/// Vectorises every block that has a static shape; a block left dynamic (its loop could not be peeled)
/// stays a generic and becomes scalar loops.
void vectorizeBlocks(RewriterBase &rewriter, ArrayRef<linalg::LinalgOp> blocks) {
  for (linalg::LinalgOp block : blocks) {
    bool fits = isOneRegisterBlock(block);
    block->removeAttr(RegisterBlockAttr::kName);
    if (!fits) {
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << block.getLoc() << ": not one static block, left scalar\n");
      continue;
    }
    // Tiling offsets index computations (`linalg.index` + the block origin) with affine.apply, which the
    // vectoriser does not take: spell them in arith.
    SmallVector<affine::AffineApplyOp> applies(block.getBlock()->getOps<affine::AffineApplyOp>());
    for (affine::AffineApplyOp apply : applies) {
      rewriter.setInsertionPoint(apply);
      std::optional<SmallVector<Value, 8>> expanded =
          affine::expandAffineMap(rewriter, apply.getLoc(), apply.getAffineMap(), apply.getOperands());
      if (expanded)
        rewriter.replaceOp(apply, (*expanded)[0]);
    }
    if (auto generic = dyn_cast<linalg::GenericOp>(block.getOperation()))
      dropWindowOffsets(generic);
    rewriter.setInsertionPoint(block);
    FailureOr<linalg::VectorizationResult> vectorized = linalg::vectorize(rewriter, block);
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << block.getLoc() << ": " << block->getName() << " ["
                            << llvm::interleaved(block.getStaticLoopRanges()) << "] "
                            << (succeeded(vectorized) ? "vectorised" : "not vectorisable") << "\n");
    if (succeeded(vectorized))
      rewriter.replaceOp(block, vectorized->replacements);
  }
}

struct LAVectorizeRegisterBlocksPass : impl::LAVectorizeRegisterBlocksBase<LAVectorizeRegisterBlocksPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<linalg::LinalgOp> blocks;
    func.walk([&](linalg::LinalgOp op) {
      if (getRegisterBlock(op))
        blocks.push_back(op);
    });
    if (blocks.empty())
      return;
    IRRewriter rewriter(&getContext());
    vectorizeBlocks(rewriter, blocks);

    // Broadcasting reads become read + vector.broadcast, and elementwise ops move above the broadcasts,
    // so a fused `exp(x[m])` runs once per block row instead of once per lane.
    RewritePatternSet vectorCleanup(&getContext());
    vector::populateVectorTransferPermutationMapLoweringPatterns(vectorCleanup);
    vector::populateSinkVectorOpsPatterns(vectorCleanup);
    vector::populateCastAwayVectorLeadingOneDimPatterns(vectorCleanup);
    populateRegisterBlockCleanupPatterns(vectorCleanup);
    populateCanonicalizationPatterns(&getContext(), vectorCleanup);
    if (failed(applyPatternsGreedily(func, std::move(vectorCleanup))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace mlir::la
