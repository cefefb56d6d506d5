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

struct LAFuseElementwisePass : impl::LAFuseElementwiseBase<LAFuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    unsigned maxOps = maxRecomputeOps;
    linalg::ControlFusionFn control = [maxOps](OpOperand *fused) {
      auto producer = fused->get().getDefiningOp<linalg::GenericOp>();
      if (!producer)
        return false;
      if (producer->hasOneUse())
        return true;
      return producer.getBody()->getOperations().size() <= maxOps;
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
