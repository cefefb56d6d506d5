//===- ContractToLinalg.cpp - la.contract to a linalg.generic -------------===//
//
// A contraction becomes one `linalg.generic` over every subscript letter, contracted letters as reduction
// iterators, accumulating in the `acc` type. Position masks become `linalg.index` comparisons that keep or
// drop a product, applied where they cost least: on the result (`tril(q kᵀ)`), on the one input carrying
// both mask letters (`tril(S) v`), or else on each accumulation step. A decay mask also weighs each kept
// product by e^{G_row - G_col} (G the cumsum of its log-gate).
//
//===----------------------------------------------------------------------===//

#include "Analysis/ContractionDims.h"
#include "Conversion/LAToLinalg/LoweringUtils.h"
#include "Conversion/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::la {
namespace {

/// Whether the product at positions (`row`, `col`) of the mask letters is kept. The positions are `index`
/// values or integers of one width (both the same type).
Value buildMaskCondition(OpBuilder &b, Location loc, MaskAttr mask, Value row, Value col) {
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(row.getType(), value));
  };
  // A nonzero offset (a window of a larger band or causal mask) may make the shifted row negative, so the
  // comparisons are signed then; positions are far below the type's range either way.
  bool shifted = mask.getOffset() != 0;
  if (shifted)
    row = arith::AddIOp::create(b, loc, row, constant(mask.getOffset()));
  auto cmp = [&](arith::CmpIPredicate predicate, Value lhs, Value rhs) {
    if (shifted && predicate == arith::CmpIPredicate::uge)
      predicate = arith::CmpIPredicate::sge;
    else if (shifted && predicate == arith::CmpIPredicate::ult)
      predicate = arith::CmpIPredicate::slt;
    return arith::CmpIOp::create(b, loc, predicate, lhs, rhs).getResult();
  };
  Value size = mask.getSize() > 0 ? constant(mask.getSize()) : Value();
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
    // Kept where row >= col; the weight e^{G_row - G_col} is applied by the caller.
    return cmp(arith::CmpIPredicate::uge, row, col);
  }
  llvm_unreachable("unknown mask kind");
}

/// la.contract ⇒ linalg.generic with reduction iterators for the contracted letters.
struct ContractToGeneric : OpConversionPattern<ContractOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(ContractOp op, OpAdaptor adaptor, ConversionPatternRewriter &rewriter) const override {
    std::optional<MaskAttr> mask;
    if (auto attr = op.getMaskAttr())
      mask = attr;
    bool decay = mask && mask->getKind() == MaskKind::decay;

    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    SubscriptsAttr subscripts = op.getSubscripts();
    auto resultType = op.getResult().getType();
    Type elementType = resultType.getElementType();
    Type accType = getAccumulationType(op.getAcc(), elementType);
    SmallVector<Value> inputs(adaptor.getInputs());
    size_t numFactors = inputs.size();

    llvm::StringMap<int64_t> letterSizes;
    llvm::StringMap<std::pair<Value, int64_t>> letterSource;
    for (auto [input, term] : llvm::zip(inputs, subscripts.getInputs())) {
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
    ContractionDims dims = inferContractionDims(subscripts);
    std::string loopOrder = chooseLoopOrder(subscripts.getInputs(), subscripts.getResult(), dims.batch, letterSizes);

    SmallVector<OpFoldResult> sizes;
    for (char c : subscripts.getResult()) {
      StringRef letter(&c, 1);
      int64_t size = letterSizes[letter];
      if (!ShapedType::isDynamic(size)) {
        sizes.push_back(rewriter.getIndexAttr(size));
        continue;
      }
      auto [source, d] = letterSource[letter];
      sizes.push_back(tensor::DimOp::create(rewriter, loc, source, d).getResult());
    }
    SmallVector<AffineMap> maps = subscripts.getIndexingMaps(loopOrder);
    SmallVector<utils::IteratorType> iterators;
    for (char c : loopOrder)
      iterators.push_back(dims.isReduction(c) ? utils::IteratorType::reduction : utils::IteratorType::parallel);
    // Without a contracted letter (an outer product, k ⊗ v) each result element is one product: written, not
    // accumulated into a zero-filled tensor, so elementwise fusion merges it into its consumer without
    // keeping the filled tensor as a second result that is still written.
    bool pointwise = !llvm::is_contained(iterators, utils::IteratorType::reduction);
    Value init =
        pointwise ? createEmpty(rewriter, loc, sizes, accType) : createFilled(rewriter, loc, sizes, accType, 0.0);

    // Where the mask is applied decides whether the loop nest stays a plain multiply-accumulate (which
    // register blocks and vectorisers handle): on the result when both mask letters are result letters, on
    // the one input that carries both letters, and only otherwise on each accumulation step.
    auto hasLetter = [](StringRef term, char letter) { return term.find(letter) != StringRef::npos; };
    std::string gateRowLetters, gateColLetters;
    if (decay) {
      gateRowLetters = op.getDecayGateLetters();
      gateColLetters = gateRowLetters;
      gateColLetters[gateRowLetters.find(mask->getRow())] = mask->getCol();
    }
    bool maskResult = mask && hasLetter(subscripts.getResult(), mask->getRow()) &&
                      hasLetter(subscripts.getResult(), mask->getCol()) &&
                      llvm::all_of(gateRowLetters, [&](char c) { return hasLetter(subscripts.getResult(), c); });
    std::optional<size_t> maskedInput;
    if (mask && !maskResult && !decay)
      for (auto [index, term] : llvm::enumerate(subscripts.getInputs()))
        if (!maskedInput && hasLetter(term, mask->getRow()) && hasLetter(term, mask->getCol()))
          maskedInput = index;
    // Positions are compared as 32-bit integers when every value they take fits: LLVM vectorises a loop by
    // its widest lane type, so 64-bit compares would halve the f32 lanes of a masked loop (AFT-local's
    // e^w − 1 band slice ran on 8 lanes instead of 16).
    auto fitsInI32 = [&](char letter) {
      int64_t size = letterSizes.lookup(StringRef(&letter, 1));
      return !ShapedType::isDynamic(size) && size + std::abs(mask->getOffset()) + mask->getSize() < (int64_t{1} << 31);
    };
    bool narrowPositions = mask && fitsInI32(mask->getRow()) && fitsInI32(mask->getCol());
    auto buildKeep = [&](OpBuilder &b, Location nested, StringRef letters) {
      Value row = linalg::IndexOp::create(b, nested, letters.find(mask->getRow()));
      Value col = linalg::IndexOp::create(b, nested, letters.find(mask->getCol()));
      if (narrowPositions) {
        row = arith::IndexCastUIOp::create(b, nested, b.getI32Type(), row);
        col = arith::IndexCastUIOp::create(b, nested, b.getI32Type(), col);
      }
      return buildMaskCondition(b, nested, *mask, row, col);
    };
    // A decay mask weighs a kept summand by e^{G_row - G_col}, G the inclusive cumsum of the log-gate along
    // the position; the exponent is masked before the exp so dropped pairs (where it is positive) cannot
    // overflow. G is read twice, at the row and at the column position.
    Value cumulative;
    if (decay) {
      Value gate = convertElementType(rewriter, loc, adaptor.getGate(), accType);
      int64_t rowDim = gateRowLetters.find(mask->getRow());
      cumulative = ScanOp::create(rewriter, loc, gate.getType(), Combiner::add, gate, rowDim).getResult(0);
    }
    auto buildDecayWeight = [&](OpBuilder &b, Location nested, StringRef letters, Value atRow, Value atCol) {
      Value exponent = arith::SubFOp::create(b, nested, atRow, atCol);
      Value dropped = createFloat(b, nested, accType, -std::numeric_limits<double>::infinity());
      exponent = arith::SelectOp::create(b, nested, buildKeep(b, nested, letters), exponent, dropped);
      return math::ExpOp::create(b, nested, exponent).getResult();
    };

    if (decay && !maskResult) {
      inputs.append({cumulative, cumulative});
      maps.insert(maps.end() - 1, SubscriptsAttr::getLetterMap(context, loopOrder, gateRowLetters));
      maps.insert(maps.end() - 1, SubscriptsAttr::getLetterMap(context, loopOrder, gateColLetters));
    }
    // An input reused across other loops (AFT-local's [rows, cols] bias slice, read once per batch and
    // channel) is masked once, by its own elementwise generic, so the contraction stays a plain
    // multiply-accumulate that register blocks handle instead of selecting on every step.
    if (maskedInput && subscripts.getInput(*maskedInput).size() < loopOrder.size()) {
      StringRef term = subscripts.getInput(*maskedInput);
      Value source = inputs[*maskedInput];
      auto sourceType = cast<RankedTensorType>(source.getType());
      SmallVector<OpFoldResult> sourceSizes = tensor::getMixedSizes(rewriter, loc, source);
      auto identity = rewriter.getMultiDimIdentityMap(term.size());
      SmallVector<utils::IteratorType> parallel(term.size(), utils::IteratorType::parallel);
      inputs[*maskedInput] =
          linalg::GenericOp::create(rewriter, loc, sourceType, ValueRange{source},
                                    ValueRange{createEmpty(rewriter, loc, sourceSizes, sourceType.getElementType())},
                                    ArrayRef<AffineMap>{identity, identity}, parallel,
                                    [&](OpBuilder &b, Location nested, ValueRange args) {
                                      Value zero = createFloat(b, nested, sourceType.getElementType(), 0.0);
                                      Value kept =
                                          arith::SelectOp::create(b, nested, buildKeep(b, nested, term), args[0], zero);
                                      linalg::YieldOp::create(b, nested, kept);
                                    })
              .getResult(0);
      maskedInput.reset();
      mask.reset();
    }
    auto flags = getReassocFlags(context);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, init.getType(), inputs, init, maps, iterators,
        [&](OpBuilder &b, Location nested, ValueRange args) {
          Value zero = mask ? createFloat(b, nested, accType, 0.0) : Value();
          auto factor = [&](size_t index) {
            Value value = convertFloat(b, nested, args[index], accType);
            if (maskedInput == index)
              value = arith::SelectOp::create(b, nested, buildKeep(b, nested, loopOrder), value, zero);
            return value;
          };
          Value product = factor(0);
          for (size_t index = 1; index < numFactors; ++index)
            product = arith::MulFOp::create(b, nested, product, factor(index), flags);
          if (decay && !maskResult)
            product = arith::MulFOp::create(
                b, nested, product, buildDecayWeight(b, nested, loopOrder, args[numFactors], args[numFactors + 1]),
                flags);
          Value sum = pointwise ? product : arith::AddFOp::create(b, nested, args.back(), product, flags).getResult();
          if (mask && !maskResult && !maskedInput && !decay)
            sum = arith::SelectOp::create(b, nested, buildKeep(b, nested, loopOrder), sum,
                                          pointwise ? zero : args.back());
          linalg::YieldOp::create(b, nested, sum);
        });
    Value contracted = generic.getResult(0);
    if (maskResult) {
      auto resultMap = rewriter.getMultiDimIdentityMap(subscripts.getResult().size());
      SmallVector<Value> maskInputs = {contracted};
      SmallVector<AffineMap> maskMaps = {resultMap};
      if (decay) {
        maskInputs.append({cumulative, cumulative});
        maskMaps.push_back(SubscriptsAttr::getLetterMap(context, subscripts.getResult(), gateRowLetters));
        maskMaps.push_back(SubscriptsAttr::getLetterMap(context, subscripts.getResult(), gateColLetters));
      }
      maskMaps.push_back(resultMap);
      SmallVector<utils::IteratorType> parallel(subscripts.getResult().size(), utils::IteratorType::parallel);
      contracted = linalg::GenericOp::create(rewriter, loc, contracted.getType(), maskInputs,
                                             createEmpty(rewriter, loc, sizes, accType), maskMaps, parallel,
                                             [&](OpBuilder &b, Location nested, ValueRange args) {
                                               Value masked;
                                               if (decay) {
                                                 Value weight = buildDecayWeight(b, nested, subscripts.getResult(),
                                                                                 args[1], args[2]);
                                                 masked = arith::MulFOp::create(b, nested, args[0], weight);
                                               } else {
                                                 Value zero = createFloat(b, nested, accType, 0.0);
                                                 Value keep = buildKeep(b, nested, subscripts.getResult());
                                                 masked = arith::SelectOp::create(b, nested, keep, args[0], zero);
                                               }
                                               linalg::YieldOp::create(b, nested, masked);
                                             })
                       .getResult(0);
    }

    Value result = convertElementType(rewriter, loc, contracted, elementType);
    rewriter.replaceOp(op, castToType(rewriter, loc, result, resultType));
    return success();
  }
};

} // namespace

void populateLAContractToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ContractToGeneric>(patterns.getContext());
}

} // namespace mlir::la
