//===- LAFuseElementwise.cpp - fuse lowered maps into their consumers -----===//
//
// Upstream's elementwise fusion patterns do the rewriting; this pass only decides what to fuse. A producer
// with one use always fuses. A producer with several uses fuses into each consumer (and then dies) when its
// body is small: recomputing `sigmoid(q)` in three sweeps over Q costs a few FLOPs per element, while
// materialising it costs an N×D temporary and its memory traffic.
//
//===----------------------------------------------------------------------===//

#include "Transforms/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::la {
#define GEN_PASS_DEF_LAFUSEELEMENTWISE
#include "Transforms/Passes.h.inc"

namespace {

/// Largest producer body (ops incl. the yield) recomputed on a value broadcast along the innermost loop:
/// an add or multiply by a constant, not an exp.
constexpr size_t kBroadcastRecomputeOps = 3;

struct LAFuseElementwisePass : impl::LAFuseElementwiseBase<LAFuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    unsigned maxOps = maxRecomputeOps;
    linalg::ControlFusionFn control = [maxOps](OpOperand *fused) {
      auto producer = fused->get().getDefiningOp<linalg::GenericOp>();
      if (!producer)
        return false;
      size_t producerOps = producer.getBody()->getOperations().size();
      // A producer that does not vary along the consumer's innermost loop would be evaluated once per
      // vector lane on a broadcast value there (16x the work with AVX-512); only tiny ones are worth it.
      auto consumer = cast<linalg::LinalgOp>(fused->getOwner());
      AffineMap map = consumer.getMatchingIndexingMap(fused);
      unsigned innermost = consumer.getNumLoops() - 1;
      bool variesInnermost = consumer.getNumLoops() == 0 || map.isFunctionOfDim(innermost);
      if (!variesInnermost && producerOps > kBroadcastRecomputeOps)
        return false;
      if (producer->hasOneUse())
        return true;
      return producerOps <= maxOps;
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
