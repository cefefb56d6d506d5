//===- LAApproximateMath.cpp - vectorisable polynomial math ---------------===//
//
// LLVM cannot vectorise loops that call `expf`, so transcendental functions become plain arithmetic here.
// MLIR's polynomial approximations cover every function; f32 `exp` gets a leaner expansion of our own first,
// because it dominates the elementwise work of these kernels (the sigmoid feature maps of Flow-Attention,
// softmax, decay gates) and MLIR's version spends a third of its operations on range handling that a
// rounding trick does for free (see `expandExp`). f32 `expm1` (AFT-local's e^w − 1 band) gets one too, from
// the same reduction: MLIR's computes a logarithm and a division on top of the exponential.
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

/// Builds scalar or vector f32 arithmetic of `type` (f32 or a vector of f32) at `loc`: splat constants, FMAs
/// and the NaN-preserving clamps the expansions below share.
struct F32Arith {
  PatternRewriter &rewriter;
  Location loc;
  Type type;

  Type intType() const {
    auto shaped = dyn_cast<VectorType>(type);
    return shaped ? Type(shaped.clone(rewriter.getI32Type())) : Type(rewriter.getI32Type());
  }
  Value constant(Type of, TypedAttr scalar) const {
    if (auto vector = dyn_cast<VectorType>(of))
      return arith::ConstantOp::create(rewriter, loc, DenseElementsAttr::get(vector, scalar));
    return arith::ConstantOp::create(rewriter, loc, scalar);
  }
  Value f32(float value) const { return constant(type, rewriter.getF32FloatAttr(value)); }
  Value i32(int32_t value) const { return constant(intType(), rewriter.getI32IntegerAttr(value)); }
  Value fma(Value a, Value b, Value c) const { return math::FmaOp::create(rewriter, loc, a, b, c); }
  /// select(a < b, b, a): x86's max with a NaN `a` passing through.
  Value atLeast(Value a, Value b) const {
    Value below = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OLT, a, b);
    return arith::SelectOp::create(rewriter, loc, below, b, a);
  }
  /// select(a > b, b, a): x86's min with a NaN `a` passing through.
  Value atMost(Value a, Value b) const {
    Value above = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGT, a, b);
    return arith::SelectOp::create(rewriter, loc, above, b, a);
  }
};

/// e^x = 2^k · e^r split for f32 (the first steps of `expandExp`): |r| ≤ ln2/2, and the low bits of `t` are
/// k + 127 (`powerOfTwo` makes 2^k of them).
struct ReducedExponent {
  Value r, t;
};

ReducedExponent reduceExponent(const F32Arith &a, Value input) {
  const float magic = 12582912.0f + 127.0f; // 1.5·2^23 + the exponent bias, exact in f32
  Value x = a.atMost(a.atLeast(input, a.f32(-88.0f)), a.f32(89.0f));
  Value t = a.atMost(a.fma(x, a.f32(1.44269504f), a.f32(magic)), a.f32(magic + 127.0f));
  Value k = arith::SubFOp::create(a.rewriter, a.loc, t, a.f32(magic));
  Value r = a.fma(k, a.f32(-0.693359375f), x); // ln2 = 0.693359375 - 2.12194440e-4 (9-bit head: k·head exact)
  r = a.fma(k, a.f32(2.12194440e-4f), r);
  return {r, t};
}

/// 2^k from the reduction's t: its low bits are the biased exponent k + 127; the shift drops the rest.
Value powerOfTwo(const F32Arith &a, const ReducedExponent &e) {
  Value bits = arith::BitcastOp::create(a.rewriter, a.loc, a.intType(), e.t);
  Value exponent = arith::ShLIOp::create(a.rewriter, a.loc, bits, a.i32(23));
  return arith::BitcastOp::create(a.rewriter, a.loc, a.type, exponent);
}

/// (e^r − 1)/r ≈ 1 + c2·r + … + c6·r⁵ on |r| ≤ ln2/2: exp's polynomial without its constant term.
Value expMinusOneOverR(const F32Arith &a, Value r) {
  Value p = a.f32(1.38194871e-3f);
  for (float coefficient : {8.36870633e-3f, 4.16682996e-2f, 1.66665211e-1f, 4.99999940e-1f, 1.0f})
    p = a.fma(p, r, a.f32(coefficient));
  return p;
}

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
Value expandExp(const F32Arith &a, const ReducedExponent &e) {
  Value p = a.fma(expMinusOneOverR(a, e.r), e.r, a.f32(1.0f));
  return arith::MulFOp::create(a.rewriter, a.loc, p, powerOfTwo(a, e));
}

/// f32 `math.expm1` (scalar or vector) as 2^k·(e^r − 1) + (2^k − 1), with exp's reduction and
/// e^r − 1 = r·(1 + c2·r + …) from its polynomial, where MLIR's expansion computes u = e^x, then
/// (u − 1)·x / log(u) (a logarithm and a division more per element). No step cancels: for k = 0 the result
/// is the polynomial times r (relative accuracy down to the smallest x); for k = ±1 the two terms have
/// the result's sign or are at most 0.5 against a result of at least 0.29; beyond, 2^k − 1 dominates.
/// Largest relative error 1.31e-7 over [-20, 20] (ExpApproximationTest). NaN, +inf and −inf give NaN, +inf
/// and −1 (the reduction's clamps, as for exp). −0 gives +0.
Value expandExpm1(const F32Arith &a, const ReducedExponent &e) {
  Value reducedMinusOne = arith::MulFOp::create(a.rewriter, a.loc, expMinusOneOverR(a, e.r), e.r);
  Value scale = powerOfTwo(a, e);
  Value scaleMinusOne = arith::SubFOp::create(a.rewriter, a.loc, scale, a.f32(1.0f));
  return a.fma(scale, reducedMinusOne, scaleMinusOne);
}

/// f32 `OpTy` (scalar or vector) replaced by `expand` of its operand's reduction.
template <typename OpTy, Value (*expand)(const F32Arith &, const ReducedExponent &)>
struct LeanF32Expansion : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return rewriter.notifyMatchFailure(op, "only f32 has the lean expansion");
    F32Arith a{rewriter, op.getLoc(), type};
    rewriter.replaceOp(op, expand(a, reduceExponent(a, op.getOperand())));
    return success();
  }
};

struct LAApproximateMathPass : impl::LAApproximateMathBase<LAApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<LeanF32Expansion<math::ExpOp, expandExp>, LeanF32Expansion<math::ExpM1Op, expandExpm1>>(&getContext(),
                                                                                                         /*benefit=*/2);
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::la
