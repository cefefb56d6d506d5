//===- FusedTiles.cpp - clean-up after tile-and-fuse -----------------------===//

#include "Target/CPU/Transforms/FusedTiles.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::la {

LogicalResult giveFusedTilesOwnDestinations(RewriterBase &rewriter, func::FuncOp func) {
  RewritePatternSet tileDestinations(func.getContext());
  tensor::populateFoldTensorEmptyPatterns(tileDestinations);
  linalg::populateSwapExtractSliceWithFillPatterns(tileDestinations);
  // A tiled tensor.pad guards against tiles that lie wholly in the padding; on static shapes the guard is a
  // constant scf.if, inlined here so the producers fused into it can be merged below.
  scf::IfOp::getCanonicalizationPatterns(tileDestinations, func.getContext());
  if (failed(applyPatternsGreedily(func, std::move(tileDestinations))))
    return failure();
  // Merge the copies while their destinations are still identical `tensor.empty`s.
  DominanceInfo dominance(func);
  eliminateCommonSubExpressions(rewriter, dominance, func);
  SmallVector<tensor::EmptyOp> tileEmpties;
  func.walk([&](tensor::EmptyOp empty) {
    if (empty->getParentOfType<scf::ForOp>())
      tileEmpties.push_back(empty);
  });
  for (tensor::EmptyOp empty : tileEmpties) {
    rewriter.setInsertionPoint(empty);
    rewriter.replaceOpWithNewOp<bufferization::AllocTensorOp>(empty, empty.getType(), empty.getDynamicSizes());
  }
  return success();
}

} // namespace mlir::la
