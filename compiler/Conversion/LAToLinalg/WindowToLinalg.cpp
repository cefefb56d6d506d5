//===- WindowToLinalg.cpp - la.window to a padded copy and a shifted read -===//
//
// `la.window` becomes a zero-padded copy of the windowed dimensions, p = (size − 1) / 2 on each side, and an
// all-parallel `linalg.generic` over the result that reads the padded input at i + u (the padding makes the
// centred offset i + u − p land on padded index i + u; u is the loop right after i's). The generic is a
// plain copy with a shifted indexing map, so elementwise fusion moves that read into the consumer (a
// convolution's contraction) and the window itself, sizes[0]·… times the input, is never materialised; the
// padded copy is the input's size.
//
//===----------------------------------------------------------------------===//

#include "Conversion/LAToLinalg/LoweringUtils.h"
#include "Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::la {
namespace {

/// The zero-padded copy of `input`, p = `padding[d]` on each side of dimension d: `input` inserted into the
/// interior of a fresh tensor, then the border slabs filled. Empty-tensor elimination (before
/// bufferization) lets the producer of `input` write straight into the interior, so each element is stored
/// once. (A `tensor.pad` became a memset of the whole buffer and a copy of the materialised input into it:
/// two extra passes over aft_conv's e^K and e^K ⊙ V.)
Value createPadded(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> padding) {
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t rank = inputType.getRank();
  AffineExpr s0 = getAffineSymbolExpr(0, b.getContext());
  SmallVector<OpFoldResult> sizes, paddedSizes, interiorOffsets;
  for (int64_t d = 0; d < rank; ++d) {
    OpFoldResult size = tensor::getMixedSize(b, loc, input, d);
    sizes.push_back(size);
    paddedSizes.push_back(affine::makeComposedFoldedAffineApply(b, loc, s0 + 2 * padding[d], {size}));
    interiorOffsets.push_back(b.getIndexAttr(padding[d]));
  }
  Type elementType = inputType.getElementType();
  SmallVector<OpFoldResult> unitStrides(rank, b.getIndexAttr(1));
  // An alloc_tensor, not a tensor.empty: CSE would merge two pads' empty tensors of one shape into one, and
  // bufferization would then copy one pad's buffer.
  SmallVector<Value> dynamicSizes;
  SmallVector<int64_t> staticSizes;
  dispatchIndexOpFoldResults(paddedSizes, dynamicSizes, staticSizes);
  // With a static shape it goes to the top of the function, where it dominates the input's producer, as
  // empty-tensor elimination needs in order to let that producer write into it.
  OpBuilder::InsertPoint here = b.saveInsertionPoint();
  Operation *scope = b.getInsertionBlock()->getParentOp();
  auto function = dyn_cast<FunctionOpInterface>(scope);
  if (!function)
    function = scope->getParentOfType<FunctionOpInterface>();
  if (dynamicSizes.empty() && function)
    b.setInsertionPointToStart(&function.getFunctionBody().front());
  Value buffer =
      bufferization::AllocTensorOp::create(b, loc, RankedTensorType::get(staticSizes, elementType), dynamicSizes);
  b.restoreInsertionPoint(here);
  Value padded = tensor::InsertSliceOp::create(b, loc, input, buffer, interiorOffsets, sizes, unitStrides);
  Value zero = createFloat(b, loc, elementType, 0.0);
  for (int64_t d = 0; d < rank; ++d) {
    if (padding[d] == 0)
      continue;
    // The low and the high border slab of dimension d, whole along every other dimension.
    OpFoldResult high = affine::makeComposedFoldedAffineApply(b, loc, s0 + padding[d], {sizes[d]});
    for (OpFoldResult start : {OpFoldResult(b.getIndexAttr(0)), high}) {
      SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), slabSizes(paddedSizes);
      offsets[d] = start;
      slabSizes[d] = b.getIndexAttr(padding[d]);
      Value slab = tensor::ExtractSliceOp::create(b, loc, padded, offsets, slabSizes, unitStrides);
      Value filled = linalg::FillOp::create(b, loc, zero, slab).getResult(0);
      padded = tensor::InsertSliceOp::create(b, loc, filled, padded, offsets, slabSizes, unitStrides);
    }
  }
  return padded;
}

struct WindowToGeneric : OpConversionPattern<WindowOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(WindowOp op, OpAdaptor adaptor, ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    int64_t rank = inputType.getRank();
    ArrayRef<int64_t> dims = op.getDims(), sizes = op.getSizes();

    SmallVector<int64_t> padding(rank, 0);
    for (auto [dim, size] : llvm::zip(dims, sizes))
      padding[dim] = (size - 1) / 2;
    Value padded = createPadded(rewriter, loc, input, padding);

    // Loops: the result's dimensions, each windowed input dimension followed by its offset; the padded
    // input is read at (position + offset) there.
    MLIRContext *context = rewriter.getContext();
    SmallVector<AffineExpr> reads;
    SmallVector<OpFoldResult> resultSizes;
    int64_t loop = 0;
    for (int64_t d = 0; d < rank; ++d) {
      AffineExpr read = getAffineDimExpr(loop++, context);
      resultSizes.push_back(tensor::getMixedSize(rewriter, loc, input, d));
      if (const int64_t *windowed = llvm::find(dims, d); windowed != dims.end()) {
        read = read + getAffineDimExpr(loop++, context);
        resultSizes.push_back(rewriter.getIndexAttr(sizes[windowed - dims.begin()]));
      }
      reads.push_back(read);
    }
    AffineMap readMap = AffineMap::get(loop, 0, reads, context);
    AffineMap writeMap = rewriter.getMultiDimIdentityMap(loop);
    Value init = createEmpty(rewriter, loc, resultSizes, inputType.getElementType());
    SmallVector<utils::IteratorType> parallel(loop, utils::IteratorType::parallel);
    Value window = linalg::GenericOp::create(rewriter, loc, init.getType(), ValueRange{padded}, ValueRange{init},
                                             ArrayRef<AffineMap>{readMap, writeMap}, parallel,
                                             [](OpBuilder &b, Location nested, ValueRange args) {
                                               linalg::YieldOp::create(b, nested, args[0]);
                                             })
                       .getResult(0);
    rewriter.replaceOp(op, castToType(rewriter, loc, window, op.getResult().getType()));
    return success();
  }
};

} // namespace

void populateLAWindowToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<WindowToGeneric>(patterns.getContext());
}

} // namespace mlir::la
