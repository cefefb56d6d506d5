//===- ScanToLinalg.cpp - la.scan to an scf.for carrying the scan state ---===//
//
// A scan along dimension `k` becomes one `scf.for` over `k` whose iteration state is the running
// combination (the input without `k`, in the accumulation type) and the result tensor; each step combines
// one slice elementwise with a `linalg.generic`. This is the sequential form: the chunked form of causal
// scans of outer products is produced before this lowering (`la-chunk-scans`), and loops over the other
// dimensions vectorise inside each step.
//
//===----------------------------------------------------------------------===//

#include "Conversion/LAToLinalg/LoweringUtils.h"
#include "Conversion/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::la {
namespace {

/// `state ⊕ slice` elementwise, written into `state`'s buffer.
Value buildCombineStep(OpBuilder &b, Location loc, Combiner combiner, Value state, Value slice) {
  auto stateType = cast<RankedTensorType>(state.getType());
  int64_t rank = stateType.getRank();
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  Type accType = stateType.getElementType();
  return linalg::GenericOp::create(b, loc, stateType, slice, state, maps, iterators,
                                   [&](OpBuilder &nb, Location nested, ValueRange args) {
                                     Value x = convertFloat(nb, nested, args[0], accType);
                                     linalg::YieldOp::create(
                                         nb, nested, buildCombine(nb, nested, combiner, args[1], x));
                                   })
      .getResult(0);
}

/// la.scan with a named single-state combiner ⇒ scf.for over the scanned dimension.
struct ScanToLoop : OpConversionPattern<ScanOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(ScanOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    std::optional<Combiner> combiner = op.getCombiner();
    if (!combiner || !getCombinerIdentity(*combiner) || adaptor.getInputs().size() != 1)
      return op.emitOpError("with this combiner is not supported by the CPU lowering yet; supported: add, "
                            "max, min, logaddexp");
    if (op.getWindow())
      return op.emitOpError("with a window is not supported by the CPU lowering yet");

    Location loc = op.getLoc();
    Value input = adaptor.getInputs().front();
    auto inputType = cast<RankedTensorType>(input.getType());
    auto resultType = cast<RankedTensorType>(op.getResult(0).getType());
    Type elementType = resultType.getElementType();
    Type accType = getAccumulationType(op.getAcc(), elementType);
    int64_t rank = inputType.getRank();
    int64_t dim = op.getDimAttr().getInt();
    bool exclusive = op.getKind() == ScanKind::exclusive;
    bool reverse = op.getReverse();

    SmallVector<OpFoldResult> sizes = getSizes(rewriter, loc, input);
    SmallVector<OpFoldResult> stateSizes = sizes;
    stateSizes.erase(stateSizes.begin() + dim);
    SmallVector<int64_t> stateShape = llvm::to_vector(inputType.getShape());
    stateShape.erase(stateShape.begin() + dim);

    Value state;
    if (!adaptor.getInit().empty())
      state = convertElementType(rewriter, loc, adaptor.getInit().front(), accType);
    else
      state = createFilled(rewriter, loc, stateSizes, accType, *getCombinerIdentity(*combiner));
    Value result = createEmpty(rewriter, loc, sizes, elementType);

    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value length = getValueOrCreateConstantIndexOp(rewriter, loc, sizes[dim]);
    SmallVector<OpFoldResult> sliceSizes = sizes;
    sliceSizes[dim] = rewriter.getIndexAttr(1);
    SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
    auto sliceType = RankedTensorType::get(stateShape, inputType.getElementType());
    auto outSliceType = RankedTensorType::get(stateShape, elementType);

    auto loop = scf::ForOp::create(
        rewriter, loc, zero, length, one, ValueRange{state, result},
        [&](OpBuilder &b, Location nested, Value i, ValueRange carried) {
          Value position = i;
          if (reverse) {
            Value last = arith::SubIOp::create(b, nested, length, one);
            position = arith::SubIOp::create(b, nested, last, i);
          }
          SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
          offsets[dim] = position;
          Value slice = tensor::ExtractSliceOp::create(b, nested, sliceType, input, offsets, sliceSizes, strides);
          Value current = carried[0];
          Value next = buildCombineStep(b, nested, *combiner, current, slice);
          Value out = convertElementType(b, nested, exclusive ? current : next, elementType);
          out = castToType(b, nested, out, outSliceType);
          Value updated =
              tensor::InsertSliceOp::create(b, nested, out, carried[1], offsets, sliceSizes, strides);
          scf::YieldOp::create(b, nested, ValueRange{next, updated});
        });
    rewriter.replaceOp(op, castToType(rewriter, loc, loop.getResult(1), resultType));
    return success();
  }
};

} // namespace

void populateLAScanToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ScanToLoop>(patterns.getContext());
}

} // namespace mlir::la
