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
// with their own static offsets. Band contractions with the same mask, rows and columns that do not read one
// another share those loops (AFT-local's numerator and denominator): their operands are sliced to the same
// windows, so CSE leaves one slice of a shared producer per block.
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

/// A band contraction and where its rows and columns are.
struct BandContraction {
  ContractOp op;
  MaskedRows masked;
};

/// The first operation of `block` that uses `value` (directly or inside its regions); null when none does.
Operation *firstUserInBlock(Value value, Block *block) {
  Operation *first = nullptr;
  for (Operation *user : value.getUsers())
    if (Operation *ancestor = block->findAncestorOpInBlock(*user))
      if (!first || ancestor->isBeforeInBlock(first))
        first = ancestor;
  return first;
}

/// `op` as a band contraction that the loop over `like`'s row blocks also serves (the same mask, rows and
/// columns); nullopt otherwise.
std::optional<BandContraction> asSibling(Operation *op, const MaskedRows &like, PatternRewriter &rewriter) {
  auto contract = dyn_cast<ContractOp>(op);
  if (!contract)
    return std::nullopt;
  FailureOr<MaskedRows> masked = matchMaskedRows(contract, MaskKind::band, rewriter);
  if (failed(masked) || masked->mask != like.mask || masked->rows != like.rows || masked->cols != like.cols)
    return std::nullopt;
  return BandContraction{contract, *masked};
}

/// `first` and the band contractions after it in its block that one loop over row blocks can also evaluate:
/// the same mask, rows and columns, and read before anything reads `first` or another of them (so none
/// depends on another, and all of them can be computed where the last one is). AFT-local's numerator and
/// denominator are two such contractions of the same e^w − 1 band: in one loop, each row block's slice of
/// it is computed once (CSE merges the two slicings) instead of once per contraction.
SmallVector<BandContraction> collectBandSiblings(BandContraction first, PatternRewriter &rewriter) {
  SmallVector<BandContraction> group{first};
  Block *block = first.op->getBlock();
  Operation *barrier = firstUserInBlock(first.op.getResult(), block);
  for (Operation *next = first.op->getNextNode(); next && next != barrier; next = next->getNextNode()) {
    std::optional<BandContraction> sibling = asSibling(next, first.masked, rewriter);
    if (!sibling)
      continue;
    group.push_back(*sibling);
    if (Operation *user = firstUserInBlock(sibling->op.getResult(), block);
        user && (!barrier || user->isBeforeInBlock(barrier)))
      barrier = user;
  }
  return group;
}

/// Whether a band contraction before `member` in its block takes `member` into its group (the greedy driver
/// may visit the later one first; the group is rewritten from its first member).
bool groupedWithEarlier(BandContraction member, PatternRewriter &rewriter) {
  for (Operation *prev = member.op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    std::optional<BandContraction> earlier = asSibling(prev, member.masked, rewriter);
    if (earlier && llvm::any_of(collectBandSiblings(*earlier, rewriter),
                                [&](const BandContraction &sibling) { return sibling.op == member.op; }))
      return true;
  }
  return false;
}

struct ChunkBandContraction : OpRewritePattern<ContractOp> {
  ChunkBandContraction(MLIRContext *context, int64_t rowBlock) : OpRewritePattern(context), rowBlock(rowBlock) {}

  LogicalResult matchAndRewrite(ContractOp op, PatternRewriter &rewriter) const override {
    FailureOr<MaskedRows> masked = matchMaskedRows(op, MaskKind::band, rewriter);
    if (failed(masked))
      return failure();
    MaskAttr mask = masked->mask;
    int64_t rows = masked->rows, cols = masked->cols;
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

    if (groupedWithEarlier({op, *masked}, rewriter))
      return rewriter.notifyMatchFailure(op, "an earlier band contraction's loop evaluates it");
    SmallVector<BandContraction> group = collectBandSiblings({op, *masked}, rewriter);
    Location loc = op.getLoc();
    // One block of rows of every contraction in the group, inserted into `dests`.
    auto emitBlock = [&](OpBuilder &b, OpFoldResult rowStart, int64_t size, OpFoldResult colStart, int64_t offset,
                         ValueRange dests) {
      MaskAttr shifted =
          MaskAttr::get(getContext(), MaskKind::band, mask.getRow(), mask.getCol(), mask.getSize(), offset);
      SmallVector<Value> results;
      for (auto [member, dest] : llvm::zip(group, dests)) {
        SmallVector<Value> inputs =
            sliceMaskedInputs(b, loc, member.op, member.masked, {rowStart, size}, {colStart, span});
        DimWindow rowWindow{member.masked.rowDim, {rowStart, size}};
        Value part = ContractOp::create(b, loc, ProducerSlicer::slicedType(member.op.getResult(), rowWindow),
                                        member.op.getSubscripts(), inputs, shifted, member.op.getAccAttr());
        results.push_back(insertChunk(b, loc, part, dest, member.masked.rowDim, rowStart));
      }
      return results;
    };
    auto emitEdgeBlock = [&](int64_t block, ValueRange dests) {
      int64_t start = block * rowBlock;
      int64_t colStart = std::clamp(start - reach, int64_t{0}, cols - span);
      return emitBlock(rewriter, rewriter.getIndexAttr(start), std::min(rowBlock, rows - start),
                       rewriter.getIndexAttr(colStart), start - colStart, dests);
    };

    // Every member's operands are defined before the last member, and no member's result is read before it.
    rewriter.setInsertionPoint(group.back().op);
    SmallVector<Value> results;
    for (BandContraction &member : group) {
      auto type = member.op.getResult().getType();
      results.push_back(tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType()));
    }
    for (int64_t block = 0; block < firstInterior; ++block)
      results = emitEdgeBlock(block, results);
    if (endInterior > firstInterior) {
      Value lower = arith::ConstantIndexOp::create(rewriter, loc, firstInterior * rowBlock);
      Value upper = arith::ConstantIndexOp::create(rewriter, loc, endInterior * rowBlock);
      Value step = arith::ConstantIndexOp::create(rewriter, loc, rowBlock);
      Value reachValue = arith::ConstantIndexOp::create(rewriter, loc, reach);
      auto loop = scf::ForOp::create(
          rewriter, loc, lower, upper, step, results, [&](OpBuilder &b, Location, Value start, ValueRange carried) {
            Value colStart = arith::SubIOp::create(b, loc, start, reachValue);
            scf::YieldOp::create(b, loc, emitBlock(b, start, rowBlock, colStart, reach, carried));
          });
      results = SmallVector<Value>(loop.getResults());
    }
    for (int64_t block = endInterior; block < numBlocks; ++block)
      results = emitEdgeBlock(block, results);
    for (auto [member, result] : llvm::zip(group, results))
      rewriter.replaceOp(member.op, result);
    return success();
  }

  int64_t rowBlock;
};

} // namespace

void populateChunkBandContractionPatterns(RewritePatternSet &patterns, int64_t rowBlock) {
  patterns.add<ChunkBandContraction>(patterns.getContext(), rowBlock);
}

} // namespace mlir::la
