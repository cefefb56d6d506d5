//===- LAFuseElementwise.cpp - fuse lowered maps into their consumers -----===//
//
// Upstream's elementwise fusion patterns do the rewriting; this pass only decides what to fuse. A producer
// with one use always fuses. A producer with several uses fuses into each consumer (and then dies) when its
// body is cheap (`q + eps`); a costly one (`sigmoid(q)`: an exp and a division per element) is cheaper to
// materialise once and read back than to recompute in every sweep.
//
//===----------------------------------------------------------------------===//

#include "Transforms/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::la {
#define GEN_PASS_DEF_LAFUSEELEMENTWISE
#include "Transforms/Passes.h.inc"

namespace {

/// Largest producer cost recomputed on a value broadcast along the consumer's innermost loop: an add or
/// multiply, not an exp and not a division.
constexpr int64_t kBroadcastRecomputeCost = 2;

/// Weighted op count of a generic's body: what recomputing one element costs, in simple-op units.
int64_t estimateRecomputeCost(linalg::GenericOp op) {
  int64_t cost = 0;
  for (Operation &inner : op.getBody()->without_terminator()) {
    if (isa<math::ExpOp, math::Exp2Op, math::ExpM1Op, math::LogOp, math::Log1pOp, math::Log2Op, math::TanhOp,
            math::ErfOp, math::PowFOp, math::SinOp, math::CosOp, math::AtanOp, math::Atan2Op>(inner))
      cost += 8;
    else if (isa<arith::DivFOp, arith::RemFOp, math::SqrtOp, math::RsqrtOp>(inner))
      cost += 4;
    else
      cost += 1;
  }
  return cost;
}

struct LAFuseElementwisePass : impl::LAFuseElementwiseBase<LAFuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t maxCost = maxRecomputeCost;
    linalg::ControlFusionFn control = [maxCost](OpOperand *fused) {
      auto producer = fused->get().getDefiningOp<linalg::GenericOp>();
      if (!producer)
        return false;
      int64_t cost = estimateRecomputeCost(producer);
      // A producer that does not vary along the consumer's innermost loop is evaluated once per vector
      // lane there (16x the work with AVX-512), or once per block in a register-tiled contraction.
      auto consumer = cast<linalg::LinalgOp>(fused->getOwner());
      AffineMap map = consumer.getMatchingIndexingMap(fused);
      unsigned innermost = consumer.getNumLoops() - 1;
      bool variesInnermost = consumer.getNumLoops() == 0 || map.isFunctionOfDim(innermost);
      if (!variesInnermost && cost > kBroadcastRecomputeCost)
        return false;
      if (producer->hasOneUse())
        return true;
      return cost <= maxCost;
    };
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::la
