//===- LAApproximateMath.cpp - vectorisable polynomial math ---------------===//
//
// LLVM cannot vectorise loops that call `expf`, so transcendental functions become plain arithmetic here.
// MLIR's polynomial approximations cover every function; f32 `exp` gets a leaner expansion of our own first,
// because it dominates the elementwise work of these kernels (the sigmoid feature maps of Flow-Attention,
// softmax, decay gates) and MLIR's version spends a third of its operations on range handling that a
// rounding trick does for free (see `LeanExpF32`).
//
//===----------------------------------------------------------------------===//

#include "Target/CPU/Transforms/CPUPasses.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::la {
#define GEN_PASS_DEF_LAAPPROXIMATEMATH
#include "Target/CPU/Transforms/CPUPasses.h.inc"

namespace {

/// f32 `math.exp` (scalar or vector) as 15 arithmetic operations, against 21 for MLIR's expansion:
///
///   x' = clamp(x, -88, 89)                      NaN passes through (compare-and-select order)
///   t  = x'·log2(e) + M, M = 1.5·2^23 + 127     the add rounds to an integer: t = M + k, k = round(x'·log2 e)
///   t  = min(t, M + 127)                        k ≤ 127, so the biased exponent k + 127 fits in 8 bits
///   r  = x' − (t − M)·ln2                       Cody–Waite, ln2 split in two so the product is exact
///   e^r ≈ 1 + r + c2·r² + … + c6·r⁶             |r| ≤ ln2/2; coefficients fitted to the relative error
///   exp = e^r · bitcast(bits(t) << 23)          the low bits of t are k + 127; the shift drops the rest
///
/// Measured against fp64 `exp` on 2·10^6 points of [-87, 88]: largest relative error 7.5e-8 (under one
/// ulp). Edges: x < -87.7 gives 0 (k + 127 = 0 is the exponent of zero), like MLIR's; x ≥ 88.73 and +inf
/// give +inf through the overflow of the last product; (88.38, 88.73) is computed with k = 127 and r
/// outside the fitted interval, relative error up to 5e-6.
struct LeanExpF32 : OpRewritePattern<math::ExpOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::ExpOp op, PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return rewriter.notifyMatchFailure(op, "only f32 has the lean expansion");
    Location loc = op.getLoc();
    auto shaped = dyn_cast<VectorType>(type);
    Type intType = shaped ? Type(shaped.clone(rewriter.getI32Type())) : Type(rewriter.getI32Type());
    auto constant = [&](Type of, TypedAttr scalar) -> Value {
      if (auto vector = dyn_cast<VectorType>(of))
        return arith::ConstantOp::create(rewriter, loc, DenseElementsAttr::get(vector, scalar));
      return arith::ConstantOp::create(rewriter, loc, scalar);
    };
    auto f32 = [&](float value) { return constant(type, rewriter.getF32FloatAttr(value)); };
    auto i32 = [&](int32_t value) { return constant(intType, rewriter.getI32IntegerAttr(value)); };
    auto fma = [&](Value a, Value b, Value c) { return math::FmaOp::create(rewriter, loc, a, b, c).getResult(); };
    // select(a < b, b, a) and select(a > b, b, a): x86 max/min with a NaN `a` passing through.
    auto atLeast = [&](Value a, Value b) {
      Value below = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OLT, a, b);
      return arith::SelectOp::create(rewriter, loc, below, b, a).getResult();
    };
    auto atMost = [&](Value a, Value b) {
      Value above = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGT, a, b);
      return arith::SelectOp::create(rewriter, loc, above, b, a).getResult();
    };

    const float magic = 12582912.0f + 127.0f; // 1.5·2^23 + the exponent bias, exact in f32
    Value x = atMost(atLeast(op.getOperand(), f32(-88.0f)), f32(89.0f));
    Value t = atMost(fma(x, f32(1.44269504f), f32(magic)), f32(magic + 127.0f));
    Value k = arith::SubFOp::create(rewriter, loc, t, f32(magic));
    Value r = fma(k, f32(-0.693359375f), x); // ln2 = 0.693359375 - 2.12194440e-4 (9-bit head: k·head exact)
    r = fma(k, f32(2.12194440e-4f), r);
    Value p = f32(1.38194871e-3f);
    for (float coefficient : {8.36870633e-3f, 4.16682996e-2f, 1.66665211e-1f, 4.99999940e-1f, 1.0f, 1.0f})
      p = fma(p, r, f32(coefficient));
    Value bits = arith::BitcastOp::create(rewriter, loc, intType, t);
    Value exponent = arith::ShLIOp::create(rewriter, loc, bits, i32(23));
    Value scale = arith::BitcastOp::create(rewriter, loc, type, exponent);
    rewriter.replaceOpWithNewOp<arith::MulFOp>(op, p, scale);
    return success();
  }
};

struct LAApproximateMathPass : impl::LAApproximateMathBase<LAApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<LeanExpF32>(&getContext(), /*benefit=*/2);
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::la
