//===- ReductionToLinalg.cpp - la.reduce and la.normalize to linalg -------===//
//
// Reductions become `linalg.generic`s with reduction iterators over an identity-filled accumulator in the
// accumulation type; normalisations are one or two reductions plus an elementwise division.
//
//===----------------------------------------------------------------------===//

#include "Conversion/LAToLinalg/LoweringUtils.h"
#include "Conversion/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::la {
namespace {

/// Reduces `input` over `dims` with a named combiner; the result is in `accType`.
Value buildReduction(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> dims, Combiner combiner, Type accType) {
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t rank = inputType.getRank();
  SmallVector<OpFoldResult> sizes;
  SmallVector<AffineExpr> kept;
  SmallVector<utils::IteratorType> iterators;
  SmallVector<OpFoldResult> inputSizes = getSizes(b, loc, input);
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = llvm::is_contained(dims, d);
    iterators.push_back(reduced ? utils::IteratorType::reduction : utils::IteratorType::parallel);
    if (!reduced) {
      sizes.push_back(inputSizes[d]);
      kept.push_back(b.getAffineDimExpr(d));
    }
  }
  Value init = createFilled(b, loc, sizes, accType, *getCombinerIdentity(combiner));
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank), AffineMap::get(rank, 0, kept, b.getContext())};
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), input, init, maps, iterators, [&](OpBuilder &nb, Location nested, ValueRange args) {
        Value x = convertFloat(nb, nested, args[0], accType);
        linalg::YieldOp::create(nb, nested, buildCombine(nb, nested, combiner, args[1], x));
      });
  return generic.getResult(0);
}

/// Elementwise over `type`'s dims: `body(x, other)` where `other` broadcasts along `dim`.
Value buildBroadcastMap(OpBuilder &b, Location loc, Value input, Value other, int64_t dim, Type elementType,
                        function_ref<Value(OpBuilder &, Location, Value, Value)> body) {
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t rank = inputType.getRank();
  Value init = createEmpty(b, loc, getSizes(b, loc, input), elementType);
  SmallVector<AffineExpr> kept;
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim)
      kept.push_back(b.getAffineDimExpr(d));
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank), AffineMap::get(rank, 0, kept, b.getContext()),
                              b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(b, loc, init.getType(), ValueRange{input, other}, init, maps, iterators,
                                           [&](OpBuilder &nb, Location nested, ValueRange args) {
                                             linalg::YieldOp::create(nb, nested, body(nb, nested, args[0], args[1]));
                                           });
  return generic.getResult(0);
}

/// la.reduce with a named combiner ⇒ linalg.generic with reduction iterators.
struct ReduceToGeneric : OpConversionPattern<ReduceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(ReduceOp op, OpAdaptor adaptor, ConversionPatternRewriter &rewriter) const override {
    std::optional<Combiner> combiner = op.getCombiner();
    if (!combiner || !getCombinerIdentity(*combiner) || adaptor.getInputs().size() != 1)
      return op.emitOpError("with a region combiner is not supported by the CPU lowering yet; use a named "
                            "combiner (add, max, min, logaddexp)");
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getResult(0).getType());
    Type accType = getAccumulationType(op.getAcc(), resultType.getElementType());
    Value reduced = buildReduction(rewriter, loc, adaptor.getInputs().front(), op.getDims(), *combiner, accType);
    reduced = convertElementType(rewriter, loc, reduced, resultType.getElementType());
    rewriter.replaceOp(op, castToType(rewriter, loc, reduced, resultType));
    return success();
  }
};

/// la.normalize ⇒ (reduction) + elementwise division; softmax subtracts the running max first.
struct NormalizeToGeneric : OpConversionPattern<NormalizeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(NormalizeOp op, OpAdaptor adaptor, ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = op.getResult().getType();
    Type elementType = resultType.getElementType();
    Type accType = getAccumulationType(op.getAcc(), elementType);
    Value input = adaptor.getInput();
    int64_t dim = op.getDimAttr().getInt();
    double eps = op.getEpsOrDefault();

    auto divideBy = [&](Value denominator) {
      return buildBroadcastMap(rewriter, loc, input, denominator, dim, elementType,
                               [&](OpBuilder &b, Location nested, Value x, Value d) {
                                 Value xa = convertFloat(b, nested, x, accType);
                                 Value da = convertFloat(b, nested, d, accType);
                                 if (eps != 0)
                                   da = arith::AddFOp::create(b, nested, da, createFloat(b, nested, accType, eps));
                                 Value q = arith::DivFOp::create(b, nested, xa, da);
                                 return convertFloat(b, nested, q, elementType);
                               });
    };

    Value result;
    if (op.getKind() == NormalizeKind::sum) {
      Value denominator = adaptor.getDenominator();
      if (!denominator)
        denominator = buildReduction(rewriter, loc, input, {dim}, Combiner::add, accType);
      result = divideBy(denominator);
    } else {
      // softmax: m = max x; s = Σ exp(x - m); y = exp(x - m) / s. Every exponent is ≤ 0.
      Value max = buildReduction(rewriter, loc, input, {dim}, Combiner::max, accType);
      Value shifted = buildBroadcastMap(
          rewriter, loc, input, max, dim, accType, [&](OpBuilder &b, Location nested, Value x, Value m) {
            Value xa = convertFloat(b, nested, x, accType);
            return math::ExpOp::create(b, nested, arith::SubFOp::create(b, nested, xa, m)).getResult();
          });
      Value sum = buildReduction(rewriter, loc, shifted, {dim}, Combiner::add, accType);
      input = shifted;
      result = divideBy(sum);
    }
    rewriter.replaceOp(op, castToType(rewriter, loc, result, resultType));
    return success();
  }
};

} // namespace

void populateLAReductionToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ReduceToGeneric, NormalizeToGeneric>(patterns.getContext());
}

} // namespace mlir::la
