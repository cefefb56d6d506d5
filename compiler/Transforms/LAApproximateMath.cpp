//===- LAApproximateMath.cpp - vectorisable polynomial math ---------------===//

#include "Transforms/Passes.h"

#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::la {
#define GEN_PASS_DEF_LAAPPROXIMATEMATH
#include "Transforms/Passes.h.inc"

namespace {

struct LAApproximateMathPass : impl::LAApproximateMathBase<LAApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::la
