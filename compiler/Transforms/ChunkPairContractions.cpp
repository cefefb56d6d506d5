//===- ChunkPairContractions.cpp - contractions over a pairs tensor in tiles -===//
//
// GAU's attention `contract "bnm,bme->bne" (relu(q kᵀ)² / (N·s), v)` reduces a [B, N, N] tensor of scores that
// it computes first. On a GPU that tensor lives in global memory: at N = 4096 it is 64 MiB per slice,
// written once and read back by the second contraction (193x the minimum traffic). This rewrite evaluates
// the contraction as flash attention does, one tile of R rows and C columns of the pairs tensor at a time:
//
//   for each row tile g:                       (rows of the result are independent)
//     acc = 0
//     for each column tile h:                  (the reduction over m, split)
//       acc += contract(pairs[g, h], v[h])     (pairs[g, h] recomputed from q[g] and k[h])
//     out[g] = acc
//
// The producers of the pairs tensor (elementwise maps, and the contraction that built it) are recomputed on
// the tile by ProducerSlicer; whatever is not recomputable is read as a slice. Only the [.., R, C] tile and
// the [.., R, E] accumulator exist at once. The reduction order over m changes (tile sums added in order),
// as in any tiled matrix product.
//
//===----------------------------------------------------------------------===//

#include "Transforms/ChunkPairContractions.h"
#include "Transforms/ChunkLoops.h"
#include "Transforms/ProducerSlicer.h"

#include "LA/IR/LAOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "la-chunk-scans"

namespace mlir::la {
namespace {

/// Where a contraction's rows and reduced pairs sit: the operand that holds both (`pairs`), its row letter
/// `n` (kept in the result, absent from the other operand) and column letter `m` (contracted with the other
/// operand).
struct PairsLayout {
  unsigned pairs;
  char n, m;
};

/// The single letter of `term` that satisfies `pred`, or 0 when none or several do.
template <typename Pred> char singleLetter(StringRef term, Pred pred) {
  char found = 0;
  for (char c : term) {
    if (!pred(c))
      continue;
    if (found)
      return 0;
    found = c;
  }
  return found;
}

std::optional<PairsLayout> matchPairsContraction(ContractOp op) {
  if (op.getMaskAttr() || op.getGate() || op.getInputs().size() != 2)
    return std::nullopt;
  SubscriptsAttr s = op.getSubscripts();
  StringRef result = s.getResult();
  for (unsigned pairs = 0; pairs < 2; ++pairs) {
    StringRef term = s.getInput(pairs), other = s.getInput(1 - pairs);
    char n = singleLetter(term, [&](char c) { return result.contains(c) && !other.contains(c); });
    char m = singleLetter(term, [&](char c) { return !result.contains(c) && other.contains(c); });
    if (n && m)
      return PairsLayout{pairs, n, m};
  }
  return std::nullopt;
}

/// contract(pairs, x) reducing pairs[.., n, m] over m, with pairs computed (not an argument), square and
/// longer than a tile ⇒ row tiles × column tiles with the pairs tensor recomputed per tile.
struct ChunkPairContraction : OpRewritePattern<ContractOp> {
  ChunkPairContraction(MLIRContext *context, int64_t tile) : OpRewritePattern(context), tile(tile) {}

  LogicalResult matchAndRewrite(ContractOp op, PatternRewriter &rewriter) const override {
    std::optional<PairsLayout> layout = matchPairsContraction(op);
    if (!layout)
      return failure();
    Value pairs = op.getInputs()[layout->pairs], other = op.getInputs()[1 - layout->pairs];
    if (!isa_and_nonnull<ContractOp, MapOp>(pairs.getDefiningOp()))
      return rewriter.notifyMatchFailure(op, "the pairs operand is not computed here");
    auto resultType = op.getResult().getType();
    auto pairsType = cast<RankedTensorType>(pairs.getType());
    auto otherType = cast<RankedTensorType>(other.getType());
    if (!resultType.hasStaticShape() || !pairsType.hasStaticShape() || !otherType.hasStaticShape())
      return failure();
    SubscriptsAttr s = op.getSubscripts();
    StringRef pairsTerm = s.getInput(layout->pairs), otherTerm = s.getInput(1 - layout->pairs);
    int64_t nPairs = pairsTerm.find(layout->n), mPairs = pairsTerm.find(layout->m);
    int64_t mOther = otherTerm.find(layout->m), nResult = s.getResult().find(layout->n);
    int64_t rows = pairsType.getDimSize(nPairs), cols = pairsType.getDimSize(mPairs);
    if (rows <= tile && cols <= tile)
      return rewriter.notifyMatchFailure(op, "the pairs tensor is one tile");
    // Pairs of positions of one sequence: a square pairs tensor, larger than the other operand and the
    // result (GAU's N×N scores against v's N×e). A state's φ(K)ᵀV, [D, M] against V's [M, Dv], or a
    // normaliser's φ(Q)·Σφ(K), [N, D] against [D], reduce an operand that is not over pairs, and stay whole.
    if (rows != cols || pairsType.getNumElements() <= otherType.getNumElements() ||
        pairsType.getNumElements() <= resultType.getNumElements())
      return rewriter.notifyMatchFailure(op, "the operand is not a square pairs tensor larger than the others");
    LLVM_DEBUG(llvm::dbgs() << "la-chunk-scans: pairs contraction " << s << " in " << tile << "x" << tile
                            << " tiles of its " << rows << "x" << cols << " pairs\n");
    Location loc = op.getLoc();
    Type elementType = resultType.getElementType();

    auto emitRowTile = [&](OpBuilder &b, Value rowStart, int64_t rowSize, ValueRange carried) -> SmallVector<Value> {
      DimWindow resultRows{nResult, {rowStart, rowSize}};
      RankedTensorType tileType = ProducerSlicer::slicedType(op.getResult(), resultRows);
      Value zero =
          arith::ConstantOp::create(b, loc, tileType, DenseElementsAttr::get(tileType, b.getZeroAttr(elementType)));
      auto emitColumnTile = [&](OpBuilder &cb, Value colStart, int64_t colSize, ValueRange acc) -> SmallVector<Value> {
        ProducerSlicer slicer(cb, loc);
        slicer.recomputeContractions();
        Window columns{colStart, colSize};
        SmallVector<Value> inputs(2);
        inputs[layout->pairs] = slicer.slice(pairs, {{nPairs, {rowStart, rowSize}}, {mPairs, columns}});
        inputs[1 - layout->pairs] = slicer.slice(other, {{mOther, columns}});
        Value part = ContractOp::create(cb, loc, tileType, s, inputs, MaskAttr(), op.getAccAttr());
        return {MapOp::create(cb, loc, tileType, MapFn::add, ValueRange{acc[0], part}).getResult()};
      };
      Value sum = buildChunkLoop(b, loc, cols, tile, {zero}, emitColumnTile)[0];
      return {insertChunk(b, loc, sum, carried[0], nResult, rowStart)};
    };

    Value empty = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(), elementType);
    rewriter.replaceOp(op, buildChunkLoop(rewriter, loc, rows, tile, {empty}, emitRowTile)[0]);
    return success();
  }

  int64_t tile;
};

} // namespace

void populateChunkPairContractionPatterns(RewritePatternSet &patterns, int64_t tile) {
  patterns.add<ChunkPairContraction>(patterns.getContext(), tile);
}

} // namespace mlir::la
