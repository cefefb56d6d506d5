//===- ContractToLinalg.cpp - la.contract to a linalg.generic -------------===//
//
// A contraction becomes one `linalg.generic` over every subscript letter, contracted letters as reduction
// iterators, accumulating in the `acc` type. Position masks become `linalg.index` comparisons that keep or
// drop each product, so a masked contraction is still one loop nest (the chunked form bounds its size).
//
//===----------------------------------------------------------------------===//

#include "Conversion/LAToLinalg/LoweringUtils.h"
#include "Conversion/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::la {
namespace {

/// Whether the product at positions (`row`, `col`) of the mask letters is kept.
Value buildMaskCondition(OpBuilder &b, Location loc, MaskAttr mask, Value row, Value col) {
  auto cmp = [&](arith::CmpIPredicate predicate, Value lhs, Value rhs) {
    return arith::CmpIOp::create(b, loc, predicate, lhs, rhs).getResult();
  };
  Value size = mask.getSize() > 0 ? arith::ConstantIndexOp::create(b, loc, mask.getSize()).getResult() : Value();
  auto chunkOf = [&](Value position) { return arith::DivUIOp::create(b, loc, position, size).getResult(); };
  switch (mask.getKind()) {
  case MaskKind::tril:
    return cmp(arith::CmpIPredicate::uge, row, col);
  case MaskKind::band: {
    // |row - col| < w  ⇔  row < col + w  and  col < row + w.
    Value upper = cmp(arith::CmpIPredicate::ult, row, arith::AddIOp::create(b, loc, col, size));
    Value lower = cmp(arith::CmpIPredicate::ult, col, arith::AddIOp::create(b, loc, row, size));
    return arith::AndIOp::create(b, loc, upper, lower);
  }
  case MaskKind::causal_band: {
    Value causal = cmp(arith::CmpIPredicate::uge, row, col);
    Value near = cmp(arith::CmpIPredicate::ult, row, arith::AddIOp::create(b, loc, col, size));
    return arith::AndIOp::create(b, loc, causal, near);
  }
  case MaskKind::block:
    return cmp(arith::CmpIPredicate::eq, chunkOf(row), chunkOf(col));
  case MaskKind::causal_block: {
    Value same = cmp(arith::CmpIPredicate::eq, chunkOf(row), chunkOf(col));
    return arith::AndIOp::create(b, loc, same, cmp(arith::CmpIPredicate::uge, row, col));
  }
  case MaskKind::prior_block:
    return cmp(arith::CmpIPredicate::ult, chunkOf(col), chunkOf(row));
  case MaskKind::decay:
    break;
  }
  llvm_unreachable("decay masks are rejected before building conditions");
}

/// la.contract ⇒ linalg.generic with reduction iterators for the contracted letters.
struct ContractToGeneric : OpConversionPattern<ContractOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(ContractOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    std::optional<MaskAttr> mask;
    if (auto attr = op.getMaskAttr())
      mask = attr;
    if (mask && mask->getKind() == MaskKind::decay)
      return op.emitOpError("with a decay mask is not supported by the CPU lowering yet");

    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    Subscripts subscripts = op.getParsedSubscripts();
    auto resultType = op.getResult().getType();
    Type elementType = resultType.getElementType();
    Type accType = getAccumulationType(op.getAcc(), elementType);
    ValueRange inputs = adaptor.getInputs();

    llvm::StringMap<int64_t> letterSizes;
    llvm::StringMap<std::pair<Value, int64_t>> letterSource;
    for (auto [input, term] : llvm::zip(inputs, subscripts.inputs)) {
      auto type = cast<RankedTensorType>(input.getType());
      for (auto [d, c] : llvm::enumerate(term)) {
        StringRef letter(&c, 1);
        int64_t size = type.getDimSize(d);
        if (!letterSizes.count(letter) || ShapedType::isDynamic(letterSizes[letter]))
          letterSizes[letter] = size;
        if (!letterSource.count(letter))
          letterSource[letter] = {input, static_cast<int64_t>(d)};
      }
    }
    std::string loopOrder = chooseLoopOrder(subscripts.inputs, subscripts.result, letterSizes);

    SmallVector<OpFoldResult> sizes;
    for (char c : subscripts.result) {
      StringRef letter(&c, 1);
      int64_t size = letterSizes[letter];
      if (!ShapedType::isDynamic(size)) {
        sizes.push_back(rewriter.getIndexAttr(size));
        continue;
      }
      auto [source, d] = letterSource[letter];
      sizes.push_back(tensor::DimOp::create(rewriter, loc, source, d).getResult());
    }
    Value init = createFilled(rewriter, loc, sizes, accType, 0.0);

    SmallVector<AffineMap> maps;
    for (const std::string &term : subscripts.inputs)
      maps.push_back(getLetterMap(context, loopOrder, term));
    maps.push_back(getLetterMap(context, loopOrder, subscripts.result));
    SmallVector<utils::IteratorType> iterators;
    for (char c : loopOrder)
      iterators.push_back(subscripts.result.find(c) == std::string::npos ? utils::IteratorType::reduction
                                                                          : utils::IteratorType::parallel);

    auto flags = getReassocFlags(context);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, init.getType(), inputs, init, maps, iterators,
        [&](OpBuilder &b, Location nested, ValueRange args) {
          Value product = convertFloat(b, nested, args[0], accType);
          for (Value factor : args.slice(1, args.size() - 2))
            product = arith::MulFOp::create(b, nested, product, convertFloat(b, nested, factor, accType), flags);
          Value sum = arith::AddFOp::create(b, nested, args.back(), product, flags);
          if (mask) {
            Value row = linalg::IndexOp::create(b, nested, loopOrder.find(mask->getRow()));
            Value col = linalg::IndexOp::create(b, nested, loopOrder.find(mask->getCol()));
            Value keep = buildMaskCondition(b, nested, *mask, row, col);
            sum = arith::SelectOp::create(b, nested, keep, sum, args.back());
          }
          linalg::YieldOp::create(b, nested, sum);
        });

    Value result = convertElementType(rewriter, loc, generic.getResult(0), elementType);
    rewriter.replaceOp(op, castToType(rewriter, loc, result, resultType));
    return success();
  }
};

} // namespace

void populateLAContractToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ContractToGeneric>(patterns.getContext());
}

} // namespace mlir::la
