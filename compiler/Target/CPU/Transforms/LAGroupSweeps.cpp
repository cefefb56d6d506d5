//===- LAGroupSweeps.cpp - one loop over the sequence per group of ops ----===//
//
// After lowering and elementwise fusion, every `la` op is its own loop nest over the sequence: Flow-Attention
// reads each `[N, D]` operand in about a dozen separate sweeps. This pass groups them. Each *sweep root*
// (a generic that is not fused into a later one) is tiled along its longest loop, the sequence, with
// `scf::tileConsumerAndFuseProducersUsingSCF`, and every producer it reads tile by tile is computed inside
// the same loop. A producer that later ops also read is fused only when all of them come after the root:
// the loop then yields the producer's whole value for them (written tile by tile, computed once). A
// producer read before the root stays materialised; nothing is ever recomputed.
//
// Roots are visited from the end of the function backwards, so the last consumer of a chain claims the
// longest chain. For Flow-Attention this leaves the sweeps SPEC.md §6 describes (Σq and Σk; the flows with
// Σk·b and Σq·a; the competition with its softmax statistics and kᵀv; the read-out with its gate), each
// with its row-wise dot products and maps inside.
//
//===----------------------------------------------------------------------===//

#include "Target/CPU/Transforms/CPUPasses.h"
#include "Target/CPU/Transforms/FusedTiles.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::la {
#define GEN_PASS_DEF_LAGROUPSWEEPS
#include "Target/CPU/Transforms/CPUPasses.h.inc"

namespace {

/// A loop shorter than this many tiles is not swept: its operands stay in cache between separate loops.
constexpr int64_t kMinSweepTiles = 4;

/// The loop a sweep root is tiled along: its longest, when that spans at least `kMinSweepTiles` tiles.
/// Kernels on `[.., N, D]` operands have N ≫ D, and the choice only affects speed: tiling and fusing along
/// any loop computes the same values.
std::optional<unsigned> findSweepLoop(linalg::GenericOp op, int64_t sweepTile) {
  if (!op.hasPureTensorSemantics())
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges.empty() || llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  unsigned longest = std::distance(ranges.begin(), llvm::max_element(ranges));
  if (ranges[longest] < kMinSweepTiles * sweepTile)
    return std::nullopt;
  return longest;
}

/// Whether `slice` takes a proper part of its source: a slice of the whole tensor does not vary with the
/// sweep (`kᵀv` read by every tile of `q·kᵀv`) and fusing its producer would recompute all of it per tile.
bool isPartialSlice(tensor::ExtractSliceOp slice) {
  ArrayRef<int64_t> sourceShape = slice.getSourceType().getShape();
  for (auto [size, offset, full] : llvm::zip(slice.getMixedSizes(), slice.getMixedOffsets(), sourceShape)) {
    std::optional<int64_t> staticSize = getConstantIntValue(size);
    std::optional<int64_t> staticOffset = getConstantIntValue(offset);
    if (!staticSize || !staticOffset || *staticSize != full || *staticOffset != 0)
      return true;
  }
  return false;
}

/// The op of `block` that contains `op` (itself when `op` is directly in `block`).
Operation *ancestorIn(Block *block, Operation *op) { return block->findAncestorOpInBlock(*op); }

/// Fusion decision for the producer of `slice` in the sweep of `root`: fuse producers read tile by tile;
/// yield the whole value when later ops read it too; refuse when an op before the root reads it (fusing
/// would compute it twice). `fused` holds the ops already fused into this sweep: their untiled originals
/// still read the producer but die with the root.
std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> decideFusion(Operation *root,
                                                                        const llvm::SmallPtrSetImpl<Operation *> &fused,
                                                                        tensor::ExtractSliceOp slice, OpResult producer,
                                                                        bool isDestination) {
  // A destination is the accumulator of a tiled reduction: it must stay outside the loop. A fill is the
  // initial value of some accumulator: there is nothing to gain from computing it tile by tile.
  Operation *op = producer.getOwner();
  if (isDestination || !isPartialSlice(slice) || !isa<linalg::LinalgOp>(op) || isa<linalg::FillOp>(op))
    return std::nullopt;
  Block *block = root->getBlock();
  Operation *sweep = ancestorIn(block, slice);
  bool usedAfterRoot = false;
  for (OpResult result : op->getResults())
    for (Operation *user : result.getUsers()) {
      Operation *userInBlock = ancestorIn(block, user);
      if (!userInBlock)
        return std::nullopt;
      // The untiled root and fused ops are replaced by the sweep; slices inside it are fused the same way.
      if (userInBlock == root || userInBlock == sweep || fused.contains(userInBlock))
        continue;
      if (!root->isBeforeInBlock(userInBlock))
        return std::nullopt;
      usedAfterRoot = true;
    }
  scf::SCFTileAndFuseOptions::ControlFnResult decision;
  decision.yieldProducerReplacement = usedAfterRoot;
  return decision;
}

/// Tiles `root` along `sweepLoop` and fuses its producers into the loop; returns the loop and appends the
/// ops it erased (the root and the producers computed in the loop only) to `erased`.
FailureOr<scf::ForOp> groupSweep(RewriterBase &rewriter, linalg::GenericOp root, unsigned sweepLoop, int64_t sweepTile,
                                 SmallVectorImpl<Operation *> &erased) {
  SmallVector<OpFoldResult> tileSizes(root.getNumLoops(), rewriter.getIndexAttr(0));
  tileSizes[sweepLoop] = rewriter.getIndexAttr(sweepTile);
  scf::SCFTileAndFuseOptions options;
  options.tilingOptions.setTileSizes(tileSizes);
  Operation *rootOp = root.getOperation();
  llvm::SmallPtrSet<Operation *, 8> fusedOps;
  options.setFusionControlFn([rootOp, &fusedOps](tensor::ExtractSliceOp slice, OpResult producer, bool isDestination) {
    auto decision = decideFusion(rootOp, fusedOps, slice, producer, isDestination);
    if (decision)
      fusedOps.insert(producer.getOwner());
    return decision;
  });
  rewriter.setInsertionPoint(root);
  FailureOr<scf::SCFTileAndFuseResult> fused =
      scf::tileConsumerAndFuseProducersUsingSCF(rewriter, cast<TilingInterface>(rootOp), options);
  if (failed(fused) || fused->loops.size() != 1)
    return failure();
  auto loop = cast<scf::ForOp>(fused->loops.front().getOperation());
  // Readers after the loop take the yielded values; reads inside it were rewired to the fused tiles.
  for (auto [original, replacement] : fused->replacements)
    rewriter.replaceUsesWithIf(original, replacement,
                               [&](OpOperand &use) { return !loop->isAncestor(use.getOwner()); });
  // Fusion leaves the slices it read the originals through; they and the root still read the producers.
  // Producers are listed in fusion order, consumers before their own producers.
  SmallVector<Operation *> deadSlices;
  loop->walk([&](tensor::ExtractSliceOp slice) {
    if (slice->use_empty())
      deadSlices.push_back(slice);
  });
  for (Operation *slice : deadSlices)
    rewriter.eraseOp(slice);
  erased.push_back(root);
  rewriter.eraseOp(root);
  for (Operation *producer : fused->fusedProducers)
    if (producer->use_empty()) {
      erased.push_back(producer);
      rewriter.eraseOp(producer);
    }
  return loop;
}

/// Whether result `index` of `sweep` is written tile by tile (each step inserts its tile into the carried
/// tensor), as opposed to a reduction over the sweep, which is complete only after the last step.
bool isWrittenTileByTile(scf::ForOp sweep, unsigned index) {
  auto yield = cast<scf::YieldOp>(sweep.getBody()->getTerminator());
  auto insert = yield.getOperand(index).getDefiningOp<tensor::InsertSliceOp>();
  return insert && insert.getDest() == sweep.getRegionIterArg(index);
}

/// Whether `value` is a fresh initial value, `linalg.fill(constant, tensor.empty)` or `tensor.empty`, that
/// can move up to wherever it is needed.
bool isMovableInit(Value value) {
  if (value.getDefiningOp<tensor::EmptyOp>())
    return value.getDefiningOp()->getNumOperands() == 0;
  auto fill = value.getDefiningOp<linalg::FillOp>();
  return fill && fill.getInputs()[0].getDefiningOp<arith::ConstantOp>() && isMovableInit(fill.getOutputs()[0]);
}

/// Moves the ops defining the movable init `value` (see `isMovableInit`) in front of `point`.
void moveInitBefore(RewriterBase &rewriter, Value value, Operation *point) {
  Operation *definition = value.getDefiningOp();
  if (definition->isBeforeInBlock(point))
    return;
  if (auto fill = dyn_cast<linalg::FillOp>(definition)) {
    rewriter.moveOpBefore(fill.getInputs()[0].getDefiningOp(), point);
    moveInitBefore(rewriter, fill.getOutputs()[0], point);
  }
  rewriter.moveOpBefore(definition, point);
}

/// Whether `root` should wait for an earlier sibling: an op before it that reads one of its producers and
/// will be a sweep root too (`Σ k` after `kᵀv`, both over `φ(k)`), while every other operand of `root` is
/// already available before the sibling. The sibling's sweep then computes the producer, and `root` joins
/// that sweep as a consumer instead of sweeping the producer's value again.
bool hasEarlierSiblingSweep(linalg::GenericOp root, int64_t sweepTile) {
  for (Value input : root.getDpsInputs()) {
    auto producer = input.getDefiningOp<linalg::GenericOp>();
    if (!producer)
      continue;
    for (Operation *user : producer->getUsers()) {
      auto sibling = dyn_cast<linalg::GenericOp>(user);
      if (!sibling || sibling == root || sibling->getBlock() != root->getBlock() || !sibling->isBeforeInBlock(root) ||
          !findSweepLoop(sibling, sweepTile))
        continue;
      bool othersReady = llvm::all_of(root->getOperands(), [&](Value operand) {
        Operation *definition = operand.getDefiningOp();
        return operand == input || !definition || definition->isBeforeInBlock(sibling) || isMovableInit(operand);
      });
      if (othersReady)
        return true;
    }
  }
  return false;
}

/// Moves `consumer`, which reads results of `sweep`, into it: each step computes the consumer's tile from
/// the tile just produced. Fails (and leaves the IR alone) when an operand of the consumer is defined after
/// the sweep or the consumer cannot be tiled to match.
LogicalResult joinSweepAsConsumer(RewriterBase &rewriter, scf::ForOp &sweep, linalg::GenericOp consumer) {
  for (Value operand : consumer->getOperands()) {
    Operation *definition = operand.getDefiningOp();
    if (definition && definition != sweep.getOperation() && !definition->isBeforeInBlock(sweep) &&
        !isMovableInit(operand))
      return failure();
    // Only results written tile by tile can be read tile by tile (`Σ e` is not).
    if (definition == sweep.getOperation() && !isWrittenTileByTile(sweep, cast<OpResult>(operand).getResultNumber()))
      return failure();
  }
  for (Value init : consumer.getDpsInits())
    if (isMovableInit(init))
      moveInitBefore(rewriter, init, sweep);
  SmallVector<LoopLikeOpInterface> loops{cast<LoopLikeOpInterface>(sweep.getOperation())};
  FailureOr<scf::SCFFuseConsumerOfSliceResult> fused = scf::tileAndFuseConsumer(rewriter, consumer, loops);
  if (failed(fused))
    return failure();
  sweep = cast<scf::ForOp>(loops.front().getOperation());
  if (consumer->use_empty())
    rewriter.eraseOp(consumer);
  return success();
}

/// Stops writing the sweep results nobody reads (a producer yielded for a sibling that then joined the
/// sweep): the step reads its tile of the initial value instead of the loop-carried tensor, and yields
/// the carried tensor unchanged, which canonicalisation removes. Tiles are disjoint, so a step never
/// reads what an earlier step wrote.
void dropUnreadResults(RewriterBase &rewriter, scf::ForOp sweep) {
  auto yield = cast<scf::YieldOp>(sweep.getBody()->getTerminator());
  for (unsigned i = 0; i < sweep.getNumResults(); ++i) {
    if (!sweep.getResult(i).use_empty() || !isWrittenTileByTile(sweep, i))
      continue;
    BlockArgument carried = sweep.getRegionIterArg(i);
    Operation *insert = yield.getOperand(i).getDefiningOp();
    rewriter.replaceUsesWithIf(carried, sweep.getInitArgs()[i],
                               [&](OpOperand &use) { return use.getOwner() != insert; });
    rewriter.modifyOpInPlace(yield, [&] { yield.setOperand(i, carried); });
  }
}

struct LAGroupSweepsPass : impl::LAGroupSweepsBase<LAGroupSweepsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (sweepTile < 1) {
      func.emitError("la-group-sweeps: sweep-tile must be positive");
      return signalPassFailure();
    }
    if (func.isExternal())
      return;
    IRRewriter rewriter(&getContext());
    SmallVector<scf::ForOp> sweeps;
    // Roots waiting for an earlier sibling's sweep, in reverse program order.
    SmallVector<linalg::GenericOp> waiting;
    auto formSweep = [&](linalg::GenericOp root, unsigned sweepLoop) -> FailureOr<scf::ForOp> {
      SmallVector<Operation *> erased;
      FailureOr<scf::ForOp> sweep = groupSweep(rewriter, root, sweepLoop, sweepTile, erased);
      if (failed(sweep)) {
        root.emitError("la-group-sweeps: tiling along loop ") << sweepLoop << " failed";
        return failure();
      }
      llvm::erase_if(waiting, [&](linalg::GenericOp sibling) { return llvm::is_contained(erased, sibling); });
      // Waiting siblings that read what this sweep yields join it.
      llvm::erase_if(waiting, [&](linalg::GenericOp sibling) {
        bool readsSweep =
            llvm::any_of(sibling->getOperands(), [&](Value operand) { return operand.getDefiningOp() == *sweep; });
        return readsSweep && succeeded(joinSweepAsConsumer(rewriter, *sweep, sibling));
      });
      sweeps.push_back(*sweep);
      return sweep;
    };
    // Walk the body backwards; each sweep replaces its root, and the walk resumes before the new loop.
    Block &body = func.getBody().front();
    Operation *cursor = body.getTerminator();
    while (Operation *op = cursor->getPrevNode()) {
      cursor = op;
      auto root = dyn_cast<linalg::GenericOp>(op);
      std::optional<unsigned> sweepLoop = root ? findSweepLoop(root, sweepTile) : std::nullopt;
      if (!sweepLoop)
        continue;
      if (hasEarlierSiblingSweep(root, sweepTile)) {
        waiting.push_back(root);
        continue;
      }
      FailureOr<scf::ForOp> sweep = formSweep(root, *sweepLoop);
      if (failed(sweep))
        return signalPassFailure();
      cursor = *sweep;
    }
    // Siblings that could not join a sweep get their own, last to first.
    while (!waiting.empty()) {
      linalg::GenericOp root = waiting.front();
      waiting.erase(waiting.begin());
      if (failed(formSweep(root, *findSweepLoop(root, sweepTile))))
        return signalPassFailure();
    }
    for (scf::ForOp sweep : sweeps)
      dropUnreadResults(rewriter, sweep);
    // Peel each sweep's last partial tile, so the tiles of the main loop have static shapes for the
    // register blocks that follow.
    for (scf::ForOp sweep : sweeps) {
      scf::ForOp remainder;
      (void)scf::peelForLoopAndSimplifyBounds(rewriter, sweep, remainder);
    }
    if (failed(giveFusedTilesOwnDestinations(rewriter, func)))
      return signalPassFailure();
  }
};

} // namespace
} // namespace mlir::la
