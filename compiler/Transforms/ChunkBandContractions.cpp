//===- ChunkBandContractions.cpp - banded contractions in row blocks ------===//
//
// AFT-local's correction term Σ_{|t−s|<w} (e^{w_ts} − 1) e^{K_s} V_s is `contract "ts,bsd->btd" mask
// band(t, s, w)`. Lowered as written it visits all T×T pairs and drops all but ~2w of each row. This rewrite
// evaluates it per block of R result rows [r, r + R): the band reaches columns [r − (w−1), r + R + (w−1)),
// so every operand is sliced to a column window of span = R + 2(w−1) positions, clamped into [0, M) so that
// its size stays static, and the block's contraction keeps the band mask shifted by the window's offset
// (`band(t, s, w, offset = r − start)`). Producers of the operands (e^w − 1 over the [T, T] bias) are
// recomputed on the slices (ProducerSlicer), so nothing of size T×T is computed either.
//
// Blocks whose window needs no clamping all have offset w−1 and run in one `scf.for`; the few blocks at
// either end (their window clamps to the sequence's start or end, and the partial last block) are emitted
// with their own static offsets.
//
//===----------------------------------------------------------------------===//

#include "Transforms/ChunkBandContractions.h"
#include "Transforms/ChunkLoops.h"
#include "Transforms/MaskedRowBlocks.h"
#include "Transforms/ProducerSlicer.h"

#include "LA/IR/LAOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::la {
namespace {

/// Blocks at the ends are emitted one by one; past this many (a band as wide as the sequence) the
/// rewrite saves little and would bloat the code, so the contraction is left as it is.
constexpr int64_t kMaxEdgeBlocks = 16;

struct ChunkBandContraction : OpRewritePattern<ContractOp> {
  ChunkBandContraction(MLIRContext *context, int64_t rowBlock) : OpRewritePattern(context), rowBlock(rowBlock) {}

  LogicalResult matchAndRewrite(ContractOp op, PatternRewriter &rewriter) const override {
    FailureOr<MaskedRows> masked = matchMaskedRows(op, MaskKind::band, rewriter);
    if (failed(masked))
      return failure();
    MaskAttr mask = masked->mask;
    int64_t rows = masked->rows, cols = masked->cols, rowDim = masked->rowDim;
    auto resultType = op.getResult().getType();
    int64_t reach = mask.getSize() - 1;
    int64_t span = rowBlock + 2 * reach;
    if (span >= cols)
      return rewriter.notifyMatchFailure(op, "a row block's band already reaches every column");

    // Interior blocks: the window [r − reach, r − reach + span) lies inside [0, cols) and the block is full.
    int64_t numBlocks = llvm::divideCeil(rows, rowBlock);
    int64_t firstInterior = std::min(numBlocks, static_cast<int64_t>(llvm::divideCeil(reach, rowBlock)));
    int64_t lastInteriorStart = std::min(cols - span + reach, rows - rowBlock);
    int64_t endInterior = lastInteriorStart >= 0 ? lastInteriorStart / rowBlock + 1 : 0;
    endInterior = std::max(firstInterior, std::min(endInterior, numBlocks));
    if (firstInterior + (numBlocks - endInterior) > kMaxEdgeBlocks)
      return rewriter.notifyMatchFailure(op, "too many edge blocks for the band's width");

    Location loc = op.getLoc();
    auto emitBlock = [&](OpBuilder &b, OpFoldResult rowStart, int64_t size, OpFoldResult colStart, int64_t offset,
                         Value dest) -> Value {
      SmallVector<Value> inputs = sliceMaskedInputs(b, loc, op, *masked, {rowStart, size}, {colStart, span});
      DimWindow rowWindow{rowDim, {rowStart, size}};
      MaskAttr shifted =
          MaskAttr::get(getContext(), MaskKind::band, mask.getRow(), mask.getCol(), mask.getSize(), offset);
      Value part = ContractOp::create(b, loc, ProducerSlicer::slicedType(op.getResult(), rowWindow), op.getSubscripts(),
                                      inputs, shifted, op.getAccAttr());
      return insertChunk(b, loc, part, dest, rowDim, rowStart);
    };
    auto emitEdgeBlock = [&](int64_t block, Value dest) {
      int64_t start = block * rowBlock;
      int64_t colStart = std::clamp(start - reach, int64_t{0}, cols - span);
      return emitBlock(rewriter, rewriter.getIndexAttr(start), std::min(rowBlock, rows - start),
                       rewriter.getIndexAttr(colStart), start - colStart, dest);
    };

    Value result = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(), resultType.getElementType());
    for (int64_t block = 0; block < firstInterior; ++block)
      result = emitEdgeBlock(block, result);
    if (endInterior > firstInterior) {
      Value lower = arith::ConstantIndexOp::create(rewriter, loc, firstInterior * rowBlock);
      Value upper = arith::ConstantIndexOp::create(rewriter, loc, endInterior * rowBlock);
      Value step = arith::ConstantIndexOp::create(rewriter, loc, rowBlock);
      Value reachValue = arith::ConstantIndexOp::create(rewriter, loc, reach);
      auto loop =
          scf::ForOp::create(rewriter, loc, lower, upper, step, ValueRange{result},
                             [&](OpBuilder &b, Location, Value start, ValueRange carried) {
                               Value colStart = arith::SubIOp::create(b, loc, start, reachValue);
                               scf::YieldOp::create(b, loc, emitBlock(b, start, rowBlock, colStart, reach, carried[0]));
                             });
      result = loop.getResult(0);
    }
    for (int64_t block = endInterior; block < numBlocks; ++block)
      result = emitEdgeBlock(block, result);
    rewriter.replaceOp(op, result);
    return success();
  }

  int64_t rowBlock;
};

} // namespace

void populateChunkBandContractionPatterns(RewritePatternSet &patterns, int64_t rowBlock) {
  patterns.add<ChunkBandContraction>(patterns.getContext(), rowBlock);
}

} // namespace mlir::la
