//===- LAPrefetchNextTile.cpp - prefetch the next tile of a streamed argument ===//
//
// A panel or chunk loop touches each tile of a kernel argument first in a prologue (v·c for a cache panel,
// the chunk's v·c for a causal chunk) that is bound by DRAM, then spends far longer computing on it from
// cache, with DRAM idle. Prefetching iteration i+1's tile at the start of iteration i overlaps the two.
//
//===----------------------------------------------------------------------===//

#include "Target/CPU/Transforms/CPUPasses.h"
#include "Target/CPU/Transforms/PrefetchAnalysis.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"

namespace mlir::la {
#define GEN_PASS_DEF_LAPREFETCHNEXTTILE
#include "Target/CPU/Transforms/CPUPasses.h.inc"

namespace {

/// The tile of a function argument that one iteration of `loop` reads: a unit-stride subview whose offset
/// along `dim` is the induction variable and whose size along it is the loop's (constant) step, at least 2;
/// every other offset and size is static and only `dim` and the innermost dimension may be longer than one.
struct StreamedTile {
  memref::SubViewOp subview;
  unsigned dim;
};

std::optional<StreamedTile> matchStreamedTile(scf::ForOp loop, memref::SubViewOp subview, Block &entry,
                                              int64_t maxTileBytes) {
  auto argument = dyn_cast<BlockArgument>(subview.getSource());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  auto type = cast<MemRefType>(subview.getSource().getType());
  // A loop that reads one row per iteration is a plain stream, which hardware prefetchers already follow.
  if (!argument || argument.getOwner() != &entry || !step || *step < 2 || !type.getLayout().isIdentity() ||
      isWritten(argument))
    return std::nullopt;
  if (!llvm::all_of(subview.getMixedStrides(), [](OpFoldResult s) { return isConstantIntValue(s, 1); }))
    return std::nullopt;
  std::optional<unsigned> dim;
  SmallVector<OpFoldResult> offsets = subview.getMixedOffsets(), sizes = subview.getMixedSizes();
  unsigned innermost = offsets.size() - 1;
  for (unsigned d = 0; d < offsets.size(); ++d) {
    std::optional<int64_t> size = getConstantIntValue(sizes[d]);
    if (!size)
      return std::nullopt;
    if (auto offset = dyn_cast<Value>(offsets[d]); offset && offset == loop.getInductionVar() && *size == *step) {
      if (dim || d == innermost)
        return std::nullopt;
      dim = d;
      continue;
    }
    if (!getConstantIntValue(offsets[d]) || (*size > 1 && d != innermost))
      return std::nullopt;
  }
  if (!dim)
    return std::nullopt;
  int64_t bytes = cast<MemRefType>(subview.getType()).getNumElements() * type.getElementTypeBitWidth() / 8;
  if (bytes > maxTileBytes)
    return std::nullopt;
  return StreamedTile{subview, *dim};
}

/// Whether `region` holds a use of `view` or of a view of it.
bool readsInside(Value view, Operation *region) {
  return anyUseThroughViews(view, [&](OpOperand &use) { return region->isAncestor(use.getOwner()); });
}

/// The loop directly in `loop`'s body with the most iterations (at least 2, static), preferring one that
/// does not read the tile: the row blocks of a panel or chunk, which compute from cache, rather than a
/// prologue that is itself waiting on the tile. Null if there is none.
scf::ForOp pickSpreadLoop(scf::ForOp loop, memref::SubViewOp tile, int64_t &trips) {
  scf::ForOp best;
  bool bestReads = true;
  trips = 1;
  for (auto inner : loop.getBody()->getOps<scf::ForOp>()) {
    std::optional<int64_t> lb = getConstantIntValue(inner.getLowerBound());
    std::optional<int64_t> ub = getConstantIntValue(inner.getUpperBound());
    std::optional<int64_t> step = getConstantIntValue(inner.getStep());
    if (!lb || !ub || !step || *step < 1)
      continue;
    int64_t count = llvm::divideCeil(*ub - *lb, *step);
    bool reads = readsInside(tile.getResult(), inner);
    if (count < 2 || (reads && !bestReads) || (reads == bestReads && count <= trips))
      continue;
    best = inner;
    bestReads = reads;
    trips = count;
  }
  return best;
}

/// Prefetches the next tile (rows [iv + step, min(iv + 2·step, ub))), one prefetch per `lineElements`
/// elements of each row. Issued all at once, a tile's prefetches hold the L1 miss buffers that the loop's
/// own first reads need; so when the body has a loop of row blocks that does not read the tile, block j
/// prefetches rows [first + j·R, first + (j+1)·R) with R = ⌈step / blocks⌉. Otherwise the whole tile is
/// prefetched at the start of the body.
void prefetchNextTile(scf::ForOp loop, StreamedTile tile, int64_t lineElements, int64_t locality) {
  OpBuilder b = OpBuilder::atBlockBegin(loop.getBody());
  Location loc = tile.subview.getLoc();
  SmallVector<OpFoldResult> offsets = tile.subview.getMixedOffsets(), sizes = tile.subview.getMixedSizes();
  unsigned innermost = offsets.size() - 1;
  Value iv = loop.getInductionVar(), step = loop.getStep();
  Value first = arith::AddIOp::create(b, loc, iv, step);
  Value last = arith::MinSIOp::create(b, loc, arith::AddIOp::create(b, loc, first, step), loop.getUpperBound());
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  int64_t columns = *getConstantIntValue(sizes[innermost]);
  int64_t firstColumn = *getConstantIntValue(offsets[innermost]);
  int64_t blocks = 1;
  if (scf::ForOp spread = pickSpreadLoop(loop, tile.subview, blocks)) {
    int64_t rowsPerBlock = llvm::divideCeil(*getConstantIntValue(step), blocks);
    b.setInsertionPointToStart(spread.getBody());
    Value block = arith::DivUIOp::create(
        b, loc, arith::SubIOp::create(b, loc, spread.getInductionVar(), spread.getLowerBound()), spread.getStep());
    Value perBlock = arith::ConstantIndexOp::create(b, loc, rowsPerBlock);
    first = arith::AddIOp::create(b, loc, first, arith::MulIOp::create(b, loc, block, perBlock));
    last = arith::MinSIOp::create(b, loc, arith::AddIOp::create(b, loc, first, perBlock), last);
  }
  scf::ForOp rows = scf::ForOp::create(b, loc, first, last, one);
  b.setInsertionPointToStart(rows.getBody());
  // The tile's own offsets, with the row loop's index along `dim`; the column is set per cache line.
  SmallVector<Value> indices;
  for (unsigned d = 0; d < offsets.size(); ++d)
    indices.push_back(d == tile.dim ? rows.getInductionVar()
                                    : arith::ConstantIndexOp::create(b, loc, *getConstantIntValue(offsets[d])));
  for (int64_t column = 0; column < columns; column += lineElements) {
    indices[innermost] = arith::ConstantIndexOp::create(b, loc, firstColumn + column);
    memref::PrefetchOp::create(b, loc, tile.subview.getSource(), indices, /*isWrite=*/false, locality,
                               /*isDataCache=*/true);
  }
}

struct LAPrefetchNextTilePass : impl::LAPrefetchNextTileBase<LAPrefetchNextTilePass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (lineBytes < 1 || maxTileBytes < 1 || locality < 0 || locality > 3) {
      func.emitError("la-prefetch-next-tile: line-bytes and max-tile-bytes must be positive, locality in [0, 3]");
      return signalPassFailure();
    }
    if (func.isExternal())
      return;
    Block &entry = func.getBody().front();
    SmallVector<std::pair<scf::ForOp, StreamedTile>> streams;
    func.walk([&](scf::ForOp loop) {
      // Only a body that computes from cache (register blocks) runs long enough to hide the next tile's
      // reads. A body that only maps and sums its tile (a grouped sweep's feature map) is a plain stream,
      // which hardware prefetchers follow; there the prefetches only wait on the same DRAM as the loop's
      // own reads (10% of Flow-Attention's time with la-group-sweeps at N = 4096).
      if (!holdsRegisterBlocks(loop))
        return;
      llvm::SmallPtrSet<Value, 4> seen; // one prefetch stream per argument and loop
      for (auto subview : loop.getBody()->getOps<memref::SubViewOp>())
        if (std::optional<StreamedTile> tile = matchStreamedTile(loop, subview, entry, maxTileBytes))
          if (seen.insert(subview.getSource()).second)
            streams.emplace_back(loop, *tile);
    });
    for (auto &[loop, tile] : streams) {
      int64_t elementBytes = cast<MemRefType>(tile.subview.getSource().getType()).getElementTypeBitWidth() / 8;
      prefetchNextTile(loop, tile, std::max<int64_t>(1, lineBytes / std::max<int64_t>(1, elementBytes)), locality);
    }
  }
};

} // namespace
} // namespace mlir::la
