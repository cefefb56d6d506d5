//===- LAFuseBlockPrologues.cpp - a returned state is written where a block reads it ===//
//
// A decode step updates its state elementwise and reads the new state in a contraction: linear attention's
// S' = S + k⊗v, then q·S'. Unfused, the update writes S' whole and the product's register blocks read it
// back, so the state, by far the largest thing a step touches, crosses the caches three times (read S,
// write S', read S') where twice would do. Here the update runs on the tiles of the blocks that read it:
// every reduction step of a block computes its row of S' from S, stores it as the function's result and
// feeds it to the FMAs from registers (a B = 1, H = 32, K = V = 64 step of hand-written AVX-512: 4.4 µs per
// thread unfused, 2.4 fused, 2.0 for a plain copy of the state; docs/BENCHMARKS.md, session 34).
//
// Upstream `scf::tileConsumerAndFuseProducersUsingSCF` does the fusing, with `yieldProducerReplacement`
// so that the loop also returns the tiles it computed. What is ours: which producers qualify (below), and
// giving each reading block a producer of its own, restricted to the region it reads, so that the regions'
// tiles, inserted into one tensor, replace the producer's result everywhere else.
//
//===----------------------------------------------------------------------===//

#include "Target/CPU/Transforms/BlockLoops.h"
#include "Target/CPU/Transforms/CPUPasses.h"
#include "Target/CPU/Transforms/RegisterBlockConfig.h"
#include "Transforms/RecomputeCost.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/InterleavedRange.h"

#include <numeric>

#define DEBUG_TYPE "la-fuse-block-prologues"

namespace mlir::la {
#define GEN_PASS_DEF_LAFUSEBLOCKPROLOGUES
#include "Target/CPU/Transforms/CPUPasses.h.inc"

namespace {

/// One register block reading a region of the producer's result.
struct RegionRead {
  linalg::GenericOp block;
  unsigned operand;
  /// The region, in the producer's result dimensions.
  SmallVector<int64_t> offsets, sizes;
  /// The results of the operand's indexing map that index the producer's dimensions; the others index unit
  /// dimensions a `tensor.expand_shape` added, which the block reads at 0 only.
  SmallVector<unsigned> keptResults;
};

/// An elementwise generic that can be restricted to any region and vectorised: all loops parallel, static,
/// one output written at its own position, inputs read at projections of it.
bool isElementwiseProducer(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 || op.getNumLoops() != op.getNumParallelLoops() ||
      getRegisterBlock(op))
    return false;
  if (!op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity() ||
      !llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) { return map.isProjectedPermutation(); }))
    return false;
  return llvm::none_of(op.getStaticLoopRanges(), ShapedType::isDynamic) &&
         succeeded(linalg::vectorizeOpPrecondition(op));
}

/// The region of `producer`'s result that `block` reads through `use` (the producer's result, a static
/// slice of it, or a static slice of an expansion that adds unit dimensions only), or nothing. The block
/// must be tiled into several blocks, and each of its tile loops must index the region, so that every
/// element of the region is read at exactly one tile: fused there, it is computed once.
std::optional<RegionRead> readByBlock(OpOperand &use, Value produced) {
  Value read = use.get();
  auto block = dyn_cast<linalg::GenericOp>(use.getOwner());
  RegisterBlockAttr config = block ? getRegisterBlock(block) : nullptr;
  if (!config || !block.isDpsInput(&use) || block->getBlock() != produced.getParentBlock() ||
      config.fitsInOneBlock(block.getStaticLoopRanges()))
    return std::nullopt;
  AffineMap map = block.getMatchingIndexingMap(&use);
  if (!map.isProjectedPermutation())
    return std::nullopt;
  for (auto [loop, tile, range] : llvm::enumerate(config.getTileSizes(), block.getStaticLoopRanges()))
    if (tile < range && !map.isFunctionOfDim(loop))
      return std::nullopt;

  auto readType = cast<RankedTensorType>(read.getType());
  SmallVector<int64_t> offsets(readType.getRank(), 0), sizes(readType.getShape());
  if (auto slice = read.getDefiningOp<tensor::ExtractSliceOp>()) {
    if (slice.getSourceType().getRank() != readType.getRank() || !slice.hasUnitStride() ||
        ShapedType::isDynamicShape(slice.getStaticOffsets()))
      return std::nullopt;
    offsets.assign(slice.getStaticOffsets().begin(), slice.getStaticOffsets().end());
    read = slice.getSource();
  }
  RegionRead region{block, use.getOperandNumber(), {}, {}, {}};
  if (auto expand = read.getDefiningOp<tensor::ExpandShapeOp>()) {
    // Each group keeps its one dimension of more than one element (or, all units, its last).
    ArrayRef<int64_t> expanded = expand.getResultType().getShape();
    for (ReassociationIndices group : expand.getReassociationIndices()) {
      if (llvm::count_if(group, [&](int64_t dim) { return expanded[dim] != 1; }) > 1)
        return std::nullopt;
      auto kept = llvm::find_if(group, [&](int64_t dim) { return expanded[dim] != 1; });
      region.keptResults.push_back(kept == group.end() ? group.back() : *kept);
    }
    read = expand.getSrc();
  } else {
    region.keptResults = llvm::to_vector(llvm::seq<unsigned>(0, readType.getRank()));
  }
  if (read != produced)
    return std::nullopt;
  for (unsigned dim : region.keptResults) {
    region.offsets.push_back(offsets[dim]);
    region.sizes.push_back(sizes[dim]);
  }
  return region;
}

/// Whether the regions tile `shape` exactly: no two overlap, and together they hold every element.
bool regionsPartition(ArrayRef<RegionRead> regions, ArrayRef<int64_t> shape) {
  auto volume = [](ArrayRef<int64_t> sizes) {
    return std::accumulate(sizes.begin(), sizes.end(), int64_t(1), std::multiplies<>());
  };
  int64_t covered = 0;
  for (auto [i, a] : llvm::enumerate(regions)) {
    covered += volume(a.sizes);
    for (const RegionRead &b : regions.drop_front(i + 1)) {
      bool overlap = true;
      for (size_t dim = 0; dim < shape.size(); ++dim)
        overlap &= a.offsets[dim] < b.offsets[dim] + b.sizes[dim] && b.offsets[dim] < a.offsets[dim] + a.sizes[dim];
      if (overlap)
        return false;
    }
  }
  return covered == volume(shape);
}

/// The uses that read `value`, seen through the slices and expansions of it: the ops that use the values.
void collectReaders(Value value, SmallVectorImpl<OpOperand *> &readers) {
  for (OpOperand &use : value.getUses()) {
    if (isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp>(use.getOwner()))
      collectReaders(use.getOwner()->getResult(0), readers);
    else
      readers.push_back(&use);
  }
}

/// The blocks that read `producer` and the region each reads, where fusing it into them replaces it
/// entirely: its other uses are the function's results (at least one: a producer that only blocks read is
/// la-fuse-elementwise's to recompute), and the regions partition it.
std::optional<SmallVector<RegionRead>> fusibleReads(linalg::GenericOp producer) {
  Value produced = producer->getResult(0);
  SmallVector<OpOperand *> readers;
  collectReaders(produced, readers);
  SmallVector<RegionRead> regions;
  bool returned = false;
  for (OpOperand *use : readers) {
    if (isa<func::ReturnOp>(use->getOwner()) && use->get() == produced) {
      returned = true;
      continue;
    }
    std::optional<RegionRead> region = readByBlock(*use, produced);
    if (!region)
      return std::nullopt;
    regions.push_back(std::move(*region));
  }
  if (!returned || regions.empty() || !regionsPartition(regions, producer.getStaticLoopRanges()))
    return std::nullopt;
  // In program order: the tiles are inserted into one tensor in the order the blocks run (below).
  llvm::sort(regions, [](const RegionRead &a, const RegionRead &b) { return a.block->isBeforeInBlock(b.block); });
  return regions;
}

/// Erases the slices and expansions of `value` that nothing reads any more.
void eraseUnreadViews(RewriterBase &rewriter, Value value) {
  for (Operation *user : llvm::make_early_inc_range(value.getUsers())) {
    if (!isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp>(user))
      continue;
    eraseUnreadViews(rewriter, user->getResult(0));
    if (user->use_empty())
      rewriter.eraseOp(user);
  }
}

/// Computes apart, once per element of its input, each transcendental function (or square root) that `producer` applies
/// to one input its vector loop (the innermost) does not index: GLA's step `exp(g[k]) · S[k, v] + k[k] · v[v]` reads
/// exp(g) in a separate generic over g. Fused into a block, the producer runs one row of its vector loop per reduction
/// step, so such a function would be evaluated as a scalar per row: at K = V = 64, 64 scalar exponentials per head and
/// step, where the separate generic evaluates them 16 lanes at a time. Returns the producer, rebuilt with the new
/// inputs (or as it was).
linalg::GenericOp hoistRowInvariantFunctions(RewriterBase &rewriter, linalg::GenericOp producer) {
  unsigned vectorLoop = producer.getNumLoops() - 1;
  Block *body = producer.getBlock();
  for (Operation &op : llvm::make_early_inc_range(body->without_terminator())) {
    // A transcendental function or a square root (RecomputeCost.h), not an absolute value or a rounding.
    if (op.getNumOperands() != 1 || op.getNumResults() != 1 || recomputeCost(op) < 4)
      continue;
    auto arg = dyn_cast<BlockArgument>(op.getOperand(0));
    if (!arg || arg.getOwner() != body || arg.getArgNumber() >= producer.getNumDpsInputs())
      continue;
    OpOperand *input = producer.getDpsInputOperand(arg.getArgNumber());
    AffineMap map = producer.getMatchingIndexingMap(input);
    if (map.isFunctionOfDim(vectorLoop))
      continue;
    // The function over the input's own elements.
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(producer);
    auto inputType = cast<RankedTensorType>(input->get().getType());
    Value empty = tensor::EmptyOp::create(rewriter, loc, inputType.getShape(), inputType.getElementType());
    AffineMap identity = rewriter.getMultiDimIdentityMap(inputType.getRank());
    SmallVector<utils::IteratorType> parallel(inputType.getRank(), utils::IteratorType::parallel);
    auto function = linalg::GenericOp::create(
        rewriter, loc, inputType, ValueRange{input->get()}, ValueRange{empty}, ArrayRef<AffineMap>{identity, identity},
        parallel, [&](OpBuilder &builder, Location nested, ValueRange args) {
          IRMapping mapping;
          mapping.map(arg, args[0]);
          linalg::YieldOp::create(builder, nested, builder.clone(op, mapping)->getResult(0));
        });
    // The producer reads it as one more input, where it read the function's result.
    SmallVector<Value> inputs(producer.getDpsInputs());
    inputs.push_back(function.getResult(0));
    SmallVector<AffineMap> maps = producer.getIndexingMapsArray();
    maps.insert(maps.begin() + producer.getNumDpsInputs(), map);
    auto rebuilt = linalg::GenericOp::create(rewriter, producer.getLoc(), producer.getResultTypes(), inputs,
                                             producer.getDpsInits(), maps, producer.getIteratorTypesArray());
    rewriter.inlineRegionBefore(producer.getRegion(), rebuilt.getRegion(), rebuilt.getRegion().end());
    BlockArgument computed = body->insertArgument(producer.getNumDpsInputs(), inputType.getElementType(), op.getLoc());
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "]   " << op.getName() << " computed apart over input "
                            << arg.getArgNumber() << "\n");
    rewriter.replaceAllUsesWith(op.getResult(0), computed);
    rewriter.eraseOp(&op);
    rewriter.replaceOp(producer, rebuilt->getResults());
    return hoistRowInvariantFunctions(rewriter, rebuilt);
  }
  return producer;
}

/// A block's operand restricted to the region it reads, and where its tiles go in the producer's result.
struct RegionPart {
  linalg::GenericOp producer;
  /// Inserts the part into the producer's result for its other uses.
  tensor::InsertSliceOp insert;
};

/// Gives each block of `regions` the producer restricted to its region as its operand (dropping the unit
/// dimensions from its indexing map), builds the producer's result from those parts for its other uses,
/// and erases it.
SmallVector<RegionPart> splitByRegion(RewriterBase &rewriter, linalg::GenericOp producer,
                                      ArrayRef<RegionRead> regions) {
  Value produced = producer->getResult(0);
  // The producer's other uses are returns: its result is the parts inserted into its destination, one after
  // the other (the regions partition it, so none of the destination's contents survive).
  Value whole = producer.getDpsInits().front();
  SmallVector<RegionPart> parts;
  for (const RegionRead &region : regions) {
    MLIRContext *context = rewriter.getContext();
    SmallVector<OpFoldResult> offsets = getAsIndexOpFoldResult(context, region.offsets),
                              sizes = getAsIndexOpFoldResult(context, region.sizes);
    rewriter.setInsertionPoint(region.block);
    FailureOr<TilingResult> part =
        cast<TilingInterface>(producer.getOperation()).getTiledImplementation(rewriter, offsets, sizes);
    assert(succeeded(part) && "an elementwise generic tiles on any region");
    Value partValue = part->tiledValues.front();
    auto partOp = cast<linalg::GenericOp>(part->tiledOps.front());
    // The part writes its region of the result built so far, so the result stays one buffer.
    SmallVector<OpFoldResult> strides(sizes.size(), rewriter.getIndexAttr(1));
    Value destination = tensor::ExtractSliceOp::create(rewriter, producer.getLoc(), whole, offsets, sizes, strides);
    rewriter.modifyOpInPlace(partOp, [&] { partOp.getDpsInitsMutable()[0].set(destination); });
    linalg::GenericOp block = region.block;
    SmallVector<AffineMap> maps = block.getIndexingMapsArray();
    maps[region.operand] = maps[region.operand].getSubMap(region.keptResults);
    rewriter.modifyOpInPlace(block, [&] {
      block->getOpOperand(region.operand).set(partValue);
      block.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    // After the block for now; moved after its tile loops once they exist.
    rewriter.setInsertionPointAfter(block);
    auto insert = tensor::InsertSliceOp::create(rewriter, producer.getLoc(), partValue, whole, offsets, sizes, strides);
    whole = insert.getResult();
    parts.push_back({partOp, insert});
  }
  eraseUnreadViews(rewriter, produced);
  rewriter.replaceAllUsesWith(produced, whole);
  rewriter.eraseOp(producer);
  return parts;
}

/// Tiles `block` into its register blocks with `part`, its operand's producer, fused into each tile; the
/// loops return the tiles of `part` they computed, which replace `part`'s other uses.
LogicalResult tileWithPrologue(RewriterBase &rewriter, linalg::GenericOp block, unsigned operand,
                               RegionPart regionPart) {
  linalg::GenericOp part = regionPart.producer;
  RegisterBlockAttr config = getRegisterBlock(block);
  scf::SCFTileAndFuseOptions options;
  // Rows share nothing of an operand that the row loop indexes (each head its own state): blocking them
  // only interleaves rows × 2 streams of the state (read and written) in one loop and spills the prologue's
  // per-row operands. One row per block: a B = 1, H = 32, K = V = 64 step of linear attention 4.2 -> 3.5 µs.
  // Each reduction step of the block should read and write one contiguous row of the state: at K = V = 128,
  // two 64-lane blocks each took half of every 512-byte row, and a B = 8 step (16 MiB of state, from memory)
  // was 20-35% slower than unfused (docs/BENCHMARKS.md, session 34). So the block takes up to twice its
  // planned lanes: a one-row block of 128 lanes holds its accumulators, the state row and the prologue's
  // row operand (v) in 24 registers, the strategy's budget.
  SmallVector<int64_t> tileSizes(config.getTileSizes());
  std::optional<int64_t> rowLoop = config.getRowLoop();
  if (rowLoop && block.getMatchingIndexingMap(block.getDpsInputOperand(operand)).isFunctionOfDim(*rowLoop))
    tileSizes[*rowLoop] = 1;
  int64_t vectorLoop = config.getVectorLoop();
  uint64_t lanes = std::min(block.getStaticLoopRanges()[vectorLoop], 2 * tileSizes[vectorLoop]);
  tileSizes[vectorLoop] = std::max(tileSizes[vectorLoop], static_cast<int64_t>(llvm::bit_floor(lanes)));
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "]   reader " << block.getLoc() << " tiled ["
                          << llvm::interleaved(tileSizes) << "]\n");
  options.tilingOptions.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), tileSizes));
  options.tilingOptions.setInterchange(config.getLoopOrder());
  options.setFusionControlFn([&](tensor::ExtractSliceOp, OpResult producer,
                                 bool isDestination) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
    if (isDestination || producer.getOwner() != part.getOperation())
      return std::nullopt;
    return scf::SCFTileAndFuseOptions::ControlFnResult{/*yieldProducerReplacement=*/true};
  });
  rewriter.setInsertionPoint(block);
  FailureOr<scf::SCFTileAndFuseResult> tiled =
      scf::tileConsumerAndFuseProducersUsingSCF(rewriter, cast<TilingInterface>(block.getOperation()), options);
  if (failed(tiled))
    return failure();
  // The fused tiles of the producer are one block each: a config of the whole part fits every tile, and
  // the tiles made by peeling below are clones that keep it. The consumer's tiles get its config with the
  // tile sizes used here, which they fit.
  auto wholePart = RegisterBlockAttr::getBlock(rewriter.getContext(), part.getStaticLoopRanges());
  auto consumerBlock = RegisterBlockAttr::get(rewriter.getContext(), tileSizes, config.getLoopOrder(),
                                              config.getVectorLoop(), config.getRowLoop(), config.getTransposeInputs(),
                                              config.getPanelLoop(), config.getPanelSize());
  for (Operation *op : tiled->tiledAndFusedOps)
    op->setAttr(RegisterBlockAttr::kName, op == tiled->tiledAndFusedOps.front() ? consumerBlock : wholePart);
  for (Value result : {block->getResult(0), part->getResult(0)})
    if (Value replacement = tiled->replacements.lookup(result))
      rewriter.replaceAllUsesWith(result, replacement);
  rewriter.eraseOp(block);
  if (part->use_empty())
    rewriter.eraseOp(part);
  // The tiles go into the producer's result right after the loops that computed them, in the order the
  // loops run: empty-tensor elimination can then have each loop write its tiles into that result's buffer
  // (the destination of each insert is defined before the loop).
  rewriter.moveOpAfter(regionPart.insert, tiled->loops.front());
  peelOuterToInner(rewriter, tiled->loops);
  return success();
}

struct LAFuseBlockProloguesPass : impl::LAFuseBlockProloguesBase<LAFuseBlockProloguesPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<std::pair<linalg::GenericOp, SmallVector<RegionRead>>> targets;
    // A block takes one prologue (its tiling builds the loops the prologue runs in).
    llvm::SmallPtrSet<Operation *, 4> claimed;
    func.walk([&](linalg::GenericOp op) {
      if (!isElementwiseProducer(op))
        return;
      std::optional<SmallVector<RegionRead>> regions = fusibleReads(op);
      if (!regions || llvm::any_of(*regions, [&](const RegionRead &r) { return claimed.contains(r.block); }))
        return;
      for (const RegionRead &region : *regions)
        claimed.insert(region.block);
      targets.emplace_back(op, std::move(*regions));
    });
    if (targets.empty())
      return;
    IRRewriter rewriter(&getContext());
    for (auto &[producer, regions] : targets) {
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << producer.getLoc() << ": computed in the blocks of "
                              << regions.size() << " reader(s)\n");
      SmallVector<RegionPart> parts = splitByRegion(rewriter, hoistRowInvariantFunctions(rewriter, producer), regions);
      for (auto [region, part] : llvm::zip(regions, parts))
        if (failed(tileWithPrologue(rewriter, region.block, region.operand, part))) {
          region.block.emitError("la-fuse-block-prologues: tiling failed");
          return signalPassFailure();
        }
    }
    if (failed(canonicalizeBlocks(func)))
      return signalPassFailure();
  }
};

} // namespace
} // namespace mlir::la
