//===- ChunkTrilContractions.cpp - causal contractions over the triangle --===//
//
// Causal AFT-full's two products, `contract "ts,bsd->btd" mask tril(t, s)`, keep only the pairs s ≤ t.
// Lowered as written they visit all T×T pairs, half of them to drop. This rewrite evaluates them one block of
// R result rows [r, r + R) at a time: the columns before the block, [0, r), are all kept, in an inner
// `scf.for` of dense R×R blocks (no mask: plain register-tiled products, accumulated); the diagonal block
// [r, r + R) keeps the mask (its operand is masked once, then the product is plain too). That is T(T + R)/2
// pairs instead of T². Every block has a static shape whatever r is, so the code does not grow with T; the
// last, partial row block (when R does not divide T) is emitted with its own static size. Producers of the
// operands are recomputed on the blocks where that avoids building them whole (ProducerSlicer); contractions
// that share their masked operand run in one loop, so its blocks are computed once.
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

/// The tril contractions that one row loop computes together with `op`: those of its block with the same
/// masked operand, subscripts, mask and result type (causal AFT-full's numerator and denominator both read
/// e^{w−max}), so that operand's blocks are recomputed once per block rather than once per contraction. The
/// loop goes where the last of them is, so none of their results may be read before that; `op` alone
/// otherwise. In program order.
SmallVector<ContractOp> findRowLoopSiblings(ContractOp op) {
  SmallVector<ContractOp> group;
  for (Operation *user : op.getInputs()[0].getUsers()) {
    auto sibling = dyn_cast<ContractOp>(user);
    if (sibling && sibling->getBlock() == op->getBlock() && sibling.getInputs()[0] == op.getInputs()[0] &&
        sibling.getSubscripts() == op.getSubscripts() && sibling.getMaskAttr() == op.getMaskAttr() &&
        sibling.getAccAttr() == op.getAccAttr() && sibling.getResult().getType() == op.getResult().getType() &&
        !sibling.getGate())
      group.push_back(sibling);
  }
  llvm::sort(group, [](ContractOp a, ContractOp b) { return a->isBeforeInBlock(b); });
  group.erase(std::unique(group.begin(), group.end()), group.end());
  Operation *last = group.back();
  for (ContractOp member : group)
    for (Operation *user : member->getUsers()) {
      Operation *reader = op->getBlock()->findAncestorOpInBlock(*user);
      if (!reader || !last->isBeforeInBlock(reader))
        return {op};
    }
  return group;
}

struct ChunkTrilContraction : OpRewritePattern<ContractOp> {
  ChunkTrilContraction(MLIRContext *context, int64_t block, bool recomputeTriangles)
      : OpRewritePattern(context), block(block), recomputeTriangles(recomputeTriangles) {}

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
    SmallVector<ContractOp> group = findRowLoopSiblings(op);
    size_t count = group.size();
    // Each contraction of the group on a block of rows and columns.
    using TrilWindows = ProducerSlicer::TrilWindows;
    auto contractBlocks = [&](OpBuilder &b, OpFoldResult rowStart, int64_t rowSize, OpFoldResult colStart,
                              int64_t colSize, RankedTensorType partType, MaskAttr mask) {
      TrilWindows triangles = !recomputeTriangles ? TrilWindows::Unknown
                              : mask              ? TrilWindows::Diagonal
                                                  : TrilWindows::Below;
      SmallVector<Value> parts;
      for (ContractOp member : group)
        parts.push_back(ContractOp::create(
            b, loc, partType, s,
            sliceMaskedInputs(b, loc, member, *masked, {rowStart, rowSize}, {colStart, colSize}, triangles), mask,
            op.getAccAttr()));
      return parts;
    };
    auto addEach = [&](OpBuilder &b, RankedTensorType partType, ValueRange lhs, ValueRange rhs) {
      SmallVector<Value> sums;
      for (auto [l, r] : llvm::zip(lhs, rhs))
        sums.push_back(MapOp::create(b, loc, partType, MapFn::add, ValueRange{l, r}).getResult());
      return sums;
    };

    rewriter.setInsertionPoint(group.back());
    Value whole = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(), resultType.getElementType());
    SmallVector<Value> result = buildChunkLoop(
        rewriter, loc, rows, block, SmallVector<Value>(count, whole),
        [&](OpBuilder &b, Value start, int64_t size, ValueRange carried) -> SmallVector<Value> {
          auto partType = ProducerSlicer::slicedType(op.getResult(), {{rowDim, {start, size}}});
          Value zero = arith::ConstantOp::create(
              b, loc, DenseElementsAttr::get(partType, b.getFloatAttr(partType.getElementType(), 0.0)));
          // The columns before the block: all kept, in dense blocks (`start` is a multiple of `block`).
          Value first = arith::ConstantIndexOp::create(b, loc, 0);
          Value step = arith::ConstantIndexOp::create(b, loc, block);
          auto before = scf::ForOp::create(b, loc, first, start, step, SmallVector<Value>(count, zero),
                                           [&](OpBuilder &nb, Location, Value col, ValueRange acc) {
                                             SmallVector<Value> parts =
                                                 contractBlocks(nb, start, size, col, block, partType, MaskAttr());
                                             scf::YieldOp::create(nb, loc, addEach(nb, partType, acc, parts));
                                           });
          // The diagonal block: rows and columns start together, so the mask is the block's own tril.
          SmallVector<Value> diagonal = contractBlocks(b, start, size, start, size, partType, masked->mask);
          SmallVector<Value> inserted;
          for (auto [rowsOfBlock, dest] : llvm::zip(addEach(b, partType, before.getResults(), diagonal), carried))
            inserted.push_back(insertChunk(b, loc, rowsOfBlock, dest, rowDim, start));
          return inserted;
        });
    for (auto [member, value] : llvm::zip(group, result))
      rewriter.replaceOp(member, value);
    return success();
  }

  int64_t block;
  bool recomputeTriangles;
};

} // namespace

void populateChunkTrilContractionPatterns(RewritePatternSet &patterns, int64_t block, bool recomputeTriangles) {
  patterns.add<ChunkTrilContraction>(patterns.getContext(), block, recomputeTriangles);
}

} // namespace mlir::la
