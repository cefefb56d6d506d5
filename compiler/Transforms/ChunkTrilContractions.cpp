//===- ChunkTrilContractions.cpp - causal contractions over the triangle --===//
//
// Causal AFT-full's two products, `contract "ts,bsd->btd" mask tril(t, s)`, keep only the pairs s ≤ t.
// Lowered as written they visit all T×T pairs, half of them to drop. This rewrite evaluates them one block of
// R result rows [r, r + R) at a time: the columns before the block, [0, r), are all kept, in an inner
// `scf.for` of dense R×R blocks (no mask: plain register-tiled products, accumulated); the diagonal block
// [r, r + R) keeps the mask (its operand is masked once, then the product is plain too). That is T(T + R)/2
// pairs instead of T². Every block has a static shape whatever r is, so the code does not grow with T; the
// last, partial row block (when R does not divide T) is emitted with its own static size. Producers of the
// operands are recomputed on the blocks where that avoids building them whole (ProducerSlicer).
//
//===----------------------------------------------------------------------===//

#include "Transforms/ChunkTrilContractions.h"
#include "Transforms/ChunkLoops.h"
#include "Transforms/MaskedRowBlocks.h"
#include "Transforms/ProducerSlicer.h"

#include "LA/IR/LAOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::la {
namespace {

struct ChunkTrilContraction : OpRewritePattern<ContractOp> {
  ChunkTrilContraction(MLIRContext *context, int64_t block) : OpRewritePattern(context), block(block) {}

  LogicalResult matchAndRewrite(ContractOp op, PatternRewriter &rewriter) const override {
    FailureOr<MaskedRows> masked = matchMaskedRows(op, MaskKind::tril, rewriter);
    if (failed(masked))
      return failure();
    int64_t rows = masked->rows, rowDim = masked->rowDim;
    if (masked->cols != rows || rows < 2 * block)
      return rewriter.notifyMatchFailure(op, "not a square triangle of two row blocks or more");

    Location loc = op.getLoc();
    auto resultType = op.getResult().getType();
    SubscriptsAttr s = op.getSubscripts();
    auto sliceInputs = [&](OpBuilder &b, OpFoldResult rowStart, int64_t rowSize, OpFoldResult colStart,
                           int64_t colSize) {
      return sliceMaskedInputs(b, loc, op, *masked, {rowStart, rowSize}, {colStart, colSize});
    };

    Value whole = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(), resultType.getElementType());
    SmallVector<Value> result = buildChunkLoop(
        rewriter, loc, rows, block, ValueRange{whole},
        [&](OpBuilder &b, Value start, int64_t size, ValueRange carried) -> SmallVector<Value> {
          auto partType = ProducerSlicer::slicedType(op.getResult(), {{rowDim, {start, size}}});
          Value zero = arith::ConstantOp::create(
              b, loc, DenseElementsAttr::get(partType, b.getFloatAttr(partType.getElementType(), 0.0)));
          // The columns before the block: all kept, in dense blocks (`start` is a multiple of `block`).
          Value first = arith::ConstantIndexOp::create(b, loc, 0);
          Value step = arith::ConstantIndexOp::create(b, loc, block);
          auto before = scf::ForOp::create(
              b, loc, first, start, step, ValueRange{zero}, [&](OpBuilder &nb, Location, Value col, ValueRange acc) {
                Value part = ContractOp::create(nb, loc, partType, s, sliceInputs(nb, start, size, col, block),
                                                MaskAttr(), op.getAccAttr());
                scf::YieldOp::create(
                    nb, loc, MapOp::create(nb, loc, partType, MapFn::add, ValueRange{acc[0], part}).getResult());
              });
          // The diagonal block: rows and columns start together, so the mask is the block's own tril.
          Value diagonal = ContractOp::create(b, loc, partType, s, sliceInputs(b, start, size, start, size),
                                              masked->mask, op.getAccAttr());
          Value rowsOfBlock =
              MapOp::create(b, loc, partType, MapFn::add, ValueRange{before.getResult(0), diagonal}).getResult();
          return {insertChunk(b, loc, rowsOfBlock, carried[0], rowDim, start)};
        });
    rewriter.replaceOp(op, result[0]);
    return success();
  }

  int64_t block;
};

} // namespace

void populateChunkTrilContractionPatterns(RewritePatternSet &patterns, int64_t block) {
  patterns.add<ChunkTrilContraction>(patterns.getContext(), block);
}

} // namespace mlir::la
