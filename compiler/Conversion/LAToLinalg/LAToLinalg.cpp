//===- LAToLinalg.cpp - the la-to-linalg conversion pass ------------------===//

#include "Conversion/Passes.h"
#include "LA/IR/LAOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::la {
#define GEN_PASS_DEF_LATOLINALG
#include "Conversion/Passes.h.inc"

namespace {

struct LAToLinalgPass : impl::LAToLinalgBase<LAToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    if (registerStateElements < 0) {
      getOperation().emitError("la-to-linalg: register-state-elements must be at least 0");
      return signalPassFailure();
    }
    ConversionTarget target(*context);
    target.addIllegalDialect<LADialect>();
    target.addLegalDialect<linalg::LinalgDialect, tensor::TensorDialect, scf::SCFDialect, arith::ArithDialect,
                           math::MathDialect, func::FuncDialect, vector::VectorDialect, affine::AffineDialect,
                           bufferization::BufferizationDialect>();

    RewritePatternSet patterns(context);
    populateLAMapToLinalgPatterns(patterns);
    populateLAReductionToLinalgPatterns(patterns);
    populateLAScanToLinalgPatterns(patterns, registerStateElements);
    populateLAContractToLinalgPatterns(patterns);
    populateLAWindowToLinalgPatterns(patterns);

    if (failed(applyPartialConversion(getOperation(), target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::la
