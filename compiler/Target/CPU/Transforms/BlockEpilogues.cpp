//===- BlockEpilogues.cpp - elementwise consumers run on register blocks --===//
//
// `scf::tileConsumerAndFuseProducersUsingSCF` does the work, rooted at the consumer; what is ours is the
// choice of consumer, its tile (the contraction's block, seen through the output map) and which producers
// follow it into the tile: the contractions and the fills of their accumulators, nothing shared with other
// ops.
// For a loop that already writes its result tile by tile, upstream `scf::tileAndFuseConsumer` does the
// work; ours is moving the consumer's other operands in front of the loop and dropping the dead result.
//
//===----------------------------------------------------------------------===//

#include "Target/CPU/Transforms/BlockEpilogues.h"

#include "LA/IR/LAOps.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::la {

linalg::GenericOp findEpilogue(Value value) {
  if (!value.hasOneUse())
    return nullptr;
  OpOperand &use = *value.getUses().begin();
  auto epilogue = dyn_cast<linalg::GenericOp>(use.getOwner());
  if (!epilogue || !epilogue.hasPureTensorSemantics() || epilogue.getNumDpsInits() != 1 ||
      epilogue.getNumLoops() != epilogue.getNumParallelLoops() || !epilogue.isDpsInput(&use))
    return nullptr;
  if (!epilogue.getMatchingIndexingMap(&use).isIdentity() ||
      !epilogue.getMatchingIndexingMap(epilogue.getDpsInitOperand(0)).isIdentity())
    return nullptr;
  if (llvm::any_of(epilogue.getStaticLoopRanges(), ShapedType::isDynamic) ||
      failed(linalg::vectorizeOpPrecondition(epilogue)))
    return nullptr;
  return epilogue;
}

FailureOr<SmallVector<LoopLikeOpInterface>>
fuseEpilogueIntoBlocks(RewriterBase &rewriter, ArrayRef<linalg::GenericOp> contractions, linalg::GenericOp epilogue,
                       ArrayRef<int64_t> blockShape, ArrayRef<int64_t> loopOrder) {
  // Epilogue loop i is output dimension i of the contraction (identity maps), i.e. contraction loop
  // outputMap(i).
  linalg::GenericOp contraction = contractions.front();
  AffineMap outputMap = contraction.getMatchingIndexingMap(contraction.getDpsInitOperand(0));
  unsigned numLoops = epilogue.getNumLoops();
  SmallVector<int64_t> tileSizes(numLoops), interchange;
  for (unsigned loop = 0; loop < numLoops; ++loop)
    tileSizes[loop] = blockShape[outputMap.getDimPosition(loop)];
  for (int64_t contractionLoop : loopOrder)
    if (std::optional<unsigned> loop = outputMap.getResultPosition(rewriter.getAffineDimExpr(contractionLoop)))
      interchange.push_back(*loop);

  llvm::SmallPtrSet<Operation *, 2> fusedContractions;
  llvm::SmallPtrSet<Value, 2> accumulatorInits;
  for (linalg::GenericOp op : contractions) {
    fusedContractions.insert(op);
    accumulatorInits.insert(op.getDpsInits().front());
  }
  scf::SCFTileAndFuseOptions options;
  options.tilingOptions.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), tileSizes));
  options.tilingOptions.setInterchange(interchange);
  options.setFusionControlFn([&](tensor::ExtractSliceOp, OpResult producer,
                                 bool isDestination) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
    // (`isDestination` marks slices of the epilogue's own output; the contraction's init is not one.)
    bool isContraction = !isDestination && fusedContractions.contains(producer.getOwner());
    bool isAccumulatorFill =
        !isDestination && accumulatorInits.contains(producer) && isa<linalg::FillOp>(producer.getOwner());
    if (!isContraction && !isAccumulatorFill)
      return std::nullopt;
    return scf::SCFTileAndFuseOptions::ControlFnResult{};
  });
  rewriter.setInsertionPoint(epilogue);
  FailureOr<scf::SCFTileAndFuseResult> tiled =
      scf::tileConsumerAndFuseProducersUsingSCF(rewriter, cast<TilingInterface>(epilogue.getOperation()), options);
  if (failed(tiled))
    return failure();
  // The fused contraction tile was cloned with the contraction's config, which is not its own.
  auto block = RegisterBlockAttr::getBlock(rewriter.getContext(), tileSizes);
  for (Operation *op : tiled->tiledAndFusedOps) {
    if (op == tiled->tiledAndFusedOps.front() || isa<linalg::FillOp>(op))
      op->setAttr(RegisterBlockAttr::kName, block);
    else
      op->removeAttr(RegisterBlockAttr::kName);
  }
  rewriter.replaceOp(epilogue, tiled->replacements.lookup(epilogue->getResult(0)));
  for (linalg::GenericOp op : contractions)
    if (op->use_empty())
      rewriter.eraseOp(op);
  return tiled->loops;
}

/// Rewrites a rank-reducing `insert` (its source drops unit dimensions of the slice it writes) as a
/// `tensor.expand_shape` of the source back to the slice's rank and an insert of that, which writes the same
/// elements. `scf::tileAndFuseConsumer` hands the inserted value to the consumer as its tile of the loop
/// result as it is: a rank-reduced one (a scan loop writing a [B, D] row of its [B, N, D] result at batch
/// B > 1) would become an operand of lower rank than the consumer's indexing maps, an invalid op that the
/// vectoriser then turns into a `vector.transfer_read` whose permutation map does not match its source.
static void expandRankReducingInsert(RewriterBase &rewriter, tensor::InsertSliceOp insert) {
  llvm::SmallBitVector dropped = insert.getDroppedDims();
  if (dropped.none())
    return;
  // Each dropped dimension joins the group of the next kept one (trailing ones the last group); a rank-0
  // source expands with no groups at all.
  int64_t rank = insert.getType().getRank();
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  for (int64_t dim = 0; dim < rank; ++dim) {
    pending.push_back(dim);
    if (!dropped.test(dim)) {
      groups.push_back(std::move(pending));
      pending.clear();
    }
  }
  if (!groups.empty())
    groups.back().append(pending.begin(), pending.end());
  // The kept sizes come from the source type, the dropped ones are 1.
  ArrayRef<int64_t> sourceShape = insert.getSourceType().getShape();
  SmallVector<int64_t> shape;
  for (int64_t dim = 0, kept = 0; dim < rank; ++dim)
    shape.push_back(dropped.test(dim) ? 1 : sourceShape[kept++]);
  SmallVector<OpFoldResult> sizes = insert.getMixedSizes();
  rewriter.setInsertionPoint(insert);
  Value expanded = tensor::ExpandShapeOp::create(rewriter, insert.getLoc(), insert.getSourceType().clone(shape),
                                                 insert.getSource(), groups, sizes);
  rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(insert, expanded, insert.getDest(), insert.getMixedOffsets(),
                                                     sizes, insert.getMixedStrides());
}

LogicalResult fuseEpilogueIntoLoop(RewriterBase &rewriter, OpResult produced, linalg::GenericOp epilogue) {
  auto loop = cast<scf::ForOp>(produced.getOwner());
  unsigned number = produced.getResultNumber();
  // The fused tile is the one slice the yielded insert writes; that is all an iteration writes only when it
  // inserts into the carried tensor itself. An outer loop whose iteration runs an inner loop over most of its
  // slice and then inserts the tail into the inner loop's result (a loop over batch×head slices around a
  // chunk loop) would apply the epilogue to the tail alone.
  auto written = loop.getYieldedValues()[number].getDefiningOp<tensor::InsertSliceOp>();
  if (!written || written.getDest() != loop.getRegionIterArg(number))
    return failure();
  // The epilogue's other operands (a gate computed from sums the loop does not touch) go in front of the
  // loop, so the fused tile can read them there (those already there are left alone).
  SmallVector<Value> others;
  for (Value operand : epilogue->getOperands())
    if (operand != produced)
      others.push_back(operand);
  DominanceInfo dominance;
  if (failed(moveValueDefinitions(rewriter, others, loop, dominance)))
    return failure();
  // Upstream consumer fusion takes the inserted value as the consumer's tile: it must have the rank of the
  // loop result.
  expandRankReducingInsert(rewriter, written);
  SmallVector<LoopLikeOpInterface> loops{cast<LoopLikeOpInterface>(loop.getOperation())};
  FailureOr<scf::SCFFuseConsumerOfSliceResult> fused = scf::tileAndFuseConsumer(rewriter, epilogue, loops);
  if (failed(fused))
    return failure();
  // A tile of dynamic shape could not be vectorised: it gets no config and stays a scalar loop nest.
  for (Operation *tile : fused->tiledOps)
    if (auto linalgTile = dyn_cast<linalg::LinalgOp>(tile)) {
      SmallVector<int64_t> shape = linalgTile.getStaticLoopRanges();
      if (!shape.empty() && llvm::none_of(shape, ShapedType::isDynamic))
        tile->setAttr(RegisterBlockAttr::kName, RegisterBlockAttr::getBlock(rewriter.getContext(), shape));
    }
  // The loop was rebuilt with one more result, which replaced the epilogue's (the old loop is erased, the
  // epilogue left without uses).
  loop = fused->tiledOps.front()->getParentOfType<scf::ForOp>();
  if (epilogue->use_empty())
    rewriter.eraseOp(epilogue);

  // The loop still inserts each unconsumed tile into the old result, which nothing reads any more: yield
  // the loop-carried tensor unchanged instead, so canonicalisation drops it (and its N×Dv buffer).
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  auto insert = yield.getOperand(number).getDefiningOp<tensor::InsertSliceOp>();
  if (loop->getResult(number).use_empty() && insert && insert->hasOneUse() &&
      insert.getDest() == loop.getRegionIterArg(number)) {
    rewriter.modifyOpInPlace(yield, [&] { yield->setOperand(number, loop.getRegionIterArg(number)); });
    rewriter.eraseOp(insert);
  }
  return success();
}

} // namespace mlir::la
