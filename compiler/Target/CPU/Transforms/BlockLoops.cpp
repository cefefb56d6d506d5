//===- BlockLoops.cpp - helpers shared by the register-tiling steps -------===//

#include "Target/CPU/Transforms/BlockLoops.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::la {

void peelOuterToInner(RewriterBase &rewriter, ArrayRef<LoopLikeOpInterface> loops) {
  SmallVector<scf::ForOp> worklist;
  for (LoopLikeOpInterface loop : llvm::reverse(loops))
    if (auto forOp = dyn_cast<scf::ForOp>(loop.getOperation()))
      worklist.push_back(forOp);
  while (!worklist.empty()) {
    scf::ForOp loop = worklist.pop_back_val();
    scf::ForOp remainder;
    if (failed(scf::peelForLoopAndSimplifyBounds(rewriter, loop, remainder)))
      continue;
    SmallVector<scf::ForOp> nested;
    remainder.getBody()->walk<WalkOrder::PreOrder>([&](scf::ForOp inner) { nested.push_back(inner); });
    worklist.append(nested.rbegin(), nested.rend());
  }
}

void populateCanonicalizationPatterns(MLIRContext *context, RewritePatternSet &patterns) {
  for (Dialect *dialect : context->getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName op : context->getRegisteredOperations())
    op.getCanonicalizationPatterns(patterns, context);
}

LogicalResult canonicalizeBlocks(Operation *op, bool foldEmptyTensors) {
  RewritePatternSet patterns(op->getContext());
  populateCanonicalizationPatterns(op->getContext(), patterns);
  if (foldEmptyTensors)
    tensor::populateFoldTensorEmptyPatterns(patterns);
  return applyPatternsGreedily(op, std::move(patterns));
}

} // namespace mlir::la
