//===- WindowToLinalg.cpp - la.window to a padded copy and a shifted read -===//
//
// `la.window` becomes a zero-padded copy (`tensor.pad`) of the windowed dimensions, p = (size − 1) / 2 on
// each side, and an all-parallel `linalg.generic` over the result that reads the padded input at i + u (the
// padding makes the centred offset i + u − p land on padded index i + u; u is the loop right after i's). The
// generic is a plain copy with a shifted indexing map, so elementwise fusion moves that read into the
// consumer (a convolution's contraction) and the window itself, sizes[0]·… times the input, is never
// materialised; the padded copy is the input's size.
//
//===----------------------------------------------------------------------===//

#include "Conversion/LAToLinalg/LoweringUtils.h"
#include "Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::la {
namespace {

/// The zero-padded copy of `input`, p = `padding[d]` on each side of dimension d. A `tensor.pad`: tiling
/// slices it (la-tile-independent-dim), and la-expand-padded-copies later makes its source's producer write
/// into the interior.
Value createPadded(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> padding) {
  auto inputType = cast<RankedTensorType>(input.getType());
  SmallVector<OpFoldResult> pads = getAsIndexOpFoldResult(b.getContext(), padding);
  SmallVector<int64_t> paddedShape;
  for (auto [size, pad] : llvm::zip(inputType.getShape(), padding))
    paddedShape.push_back(ShapedType::isDynamic(size) ? size : size + 2 * pad);
  auto paddedType = RankedTensorType::get(paddedShape, inputType.getElementType());
  Value zero = createFloat(b, loc, inputType.getElementType(), 0.0);
  return tensor::PadOp::create(b, loc, paddedType, input, pads, pads, zero);
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
