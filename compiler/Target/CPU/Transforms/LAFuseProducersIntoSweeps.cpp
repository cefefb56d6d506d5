//===- LAFuseProducersIntoSweeps.cpp - a feature map computed by the first loop that reads it ===//
//
// Flow-Attention computes σ(q) over the whole slice, then sums it over the sequence in a loop that reads it
// back row by row: two passes over a MiB, the second from L2 or L3, though the sum could take each row as it
// is computed. Where the first reader of an elementwise producer is such a loop and every other reader comes
// after it, the loop computes the producer's rows itself and yields the whole result for the others.
//
//===----------------------------------------------------------------------===//

#include "Target/CPU/Transforms/CPUPasses.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "la-fuse-producers-into-sweeps"

namespace mlir::la {
#define GEN_PASS_DEF_LAFUSEPRODUCERSINTOSWEEPS
#include "Target/CPU/Transforms/CPUPasses.h.inc"

namespace {

/// A single-result elementwise generic of static shape whose body never reads its init (its rows can be
/// computed anywhere its inputs are available), with a result of at least `minBytes`.
bool isRowwiseProducer(linalg::GenericOp generic, int64_t minBytes) {
  if (generic->getNumResults() != 1 || !linalg::isElementwise(generic))
    return false;
  auto type = cast<RankedTensorType>(generic->getResult(0).getType());
  if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat() ||
      type.getNumElements() * type.getElementTypeBitWidth() / 8 < minBytes)
    return false;
  return !generic.payloadUsesValueFromOperand(generic.getDpsInitOperand(0));
}

/// Whether `slice`, taken in the body of `loop`, visits its whole source exactly once over the loop's
/// iterations: the loop runs from 0 to the size of one dimension in constant steps, the slice takes
/// `step` rows of that dimension at the induction variable and every other dimension whole, unit strides.
bool sweepsWholeSource(scf::ForOp loop, tensor::ExtractSliceOp slice) {
  auto source = cast<RankedTensorType>(slice.getSourceType());
  std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (!lower || *lower != 0 || !upper || !step || slice.getSourceType().getRank() != slice.getType().getRank())
    return false;
  bool swept = false;
  for (auto [d, offset, size, stride] :
       llvm::enumerate(slice.getMixedOffsets(), slice.getMixedSizes(), slice.getMixedStrides())) {
    if (!isConstantIntValue(stride, 1))
      return false;
    if (auto value = dyn_cast<Value>(offset); value && value == loop.getInductionVar()) {
      if (swept || !isConstantIntValue(size, *step) || source.getDimSize(d) != *upper || *upper % *step != 0)
        return false;
      swept = true;
      continue;
    }
    if (!isConstantIntValue(offset, 0) || !isConstantIntValue(size, source.getDimSize(d)))
      return false;
  }
  return swept;
}

/// A loop that only carries vectors: a reduction along the sequence as register tiling leaves it (Σ_n x_n in
/// registers). A loop that carries tensors is a chunk or tile loop, whose body the later CPU passes lay out
/// (prefetches of the next tile, register blocks); a producer moved into it changes that layout (measured
/// 10% slower on retention, whose chunk loop took its decay factors).
bool isReductionSweep(scf::ForOp loop) {
  return llvm::all_of(loop.getRegionIterArgs(),
                      [](BlockArgument carried) { return isa<VectorType>(carried.getType()); });
}

/// The loop that may compute `producer`'s rows: the loop (in the producer's block) holding the one slice of
/// its result that sweeps it whole, when every other reader of the result comes after that loop.
std::optional<std::pair<scf::ForOp, tensor::ExtractSliceOp>> findSweep(linalg::GenericOp producer,
                                                                       DominanceInfo &dominance) {
  Value result = producer->getResult(0);
  scf::ForOp loop;
  tensor::ExtractSliceOp slice;
  for (Operation *user : result.getUsers()) {
    auto candidate = dyn_cast<tensor::ExtractSliceOp>(user);
    auto parent = candidate ? dyn_cast<scf::ForOp>(candidate->getParentOp()) : scf::ForOp();
    if (!parent || parent->getBlock() != producer->getBlock() || !isReductionSweep(parent) ||
        !sweepsWholeSource(parent, candidate))
      continue;
    if (!loop || parent->isBeforeInBlock(loop)) {
      loop = parent;
      slice = candidate;
    }
  }
  if (!loop)
    return std::nullopt;
  for (Operation *user : result.getUsers())
    if (user != slice && !dominance.properlyDominates(loop.getOperation(), user, /*enclosingOpOk=*/false)) {
      LLVM_DEBUG(llvm::dbgs() << "not fused: " << *user << " reads the result before or inside the sweep\n");
      return std::nullopt;
    }
  return std::make_pair(loop, slice);
}

/// Moves `producer` into `loop`: the loop carries the producer's result, computes the rows of `slice` on the
/// matching rows of the inputs and inserts them, and every other reader takes the loop's new result.
void fuseIntoSweep(RewriterBase &rewriter, linalg::GenericOp producer, scf::ForOp loop, tensor::ExtractSliceOp slice) {
  OpResult result = producer->getResult(0);
  Value init = producer.getDpsInitOperand(0)->get();
  rewriter.setInsertionPoint(loop);
  auto widened = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
      rewriter, ValueRange{init}, /*replaceInitOperandUsesInLoop=*/false,
      [](OpBuilder &, Location, ArrayRef<BlockArgument> carried) { return SmallVector<Value>{carried.front()}; }));
  BlockArgument carried = widened.getRegionIterArgs().back();

  // The slice's place, kept for the row's destination and insertion: the slice itself is replaced below.
  Location loc = slice.getLoc();
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets(), sizes = slice.getMixedSizes(),
                            strides = slice.getMixedStrides();
  rewriter.setInsertionPoint(slice);
  FailureOr<TilingResult> tiled = tensor::replaceExtractSliceWithTiledProducer(rewriter, slice, result);
  assert(succeeded(tiled) && "an elementwise generic tiles on any slice");
  Value rows = tiled->tiledValues.front();
  rewriter.replaceOp(slice, rows);
  // The rows are computed in place, in the carried tensor's slice: the tiled op's own init is a slice of
  // the producer's (a whole-sequence tensor.empty, which other ops may share), and left there it would leave
  // bufferisation a temporary and a copy per row.
  auto rowsOp = cast<linalg::GenericOp>(tiled->tiledOps.front());
  rewriter.setInsertionPoint(rowsOp);
  Value destination = tensor::ExtractSliceOp::create(rewriter, loc, carried, offsets, sizes, strides);
  Value oldInit = rowsOp.getDpsInitOperand(0)->get();
  rewriter.modifyOpInPlace(rowsOp, [&] { rowsOp.getDpsInitOperand(0)->set(destination); });
  if (Operation *unused = oldInit.getDefiningOp(); unused && unused->use_empty())
    rewriter.eraseOp(unused);

  auto yield = cast<scf::YieldOp>(widened.getBody()->getTerminator());
  rewriter.setInsertionPoint(yield);
  Value updated = tensor::InsertSliceOp::create(rewriter, loc, rows, carried, offsets, sizes, strides);
  rewriter.modifyOpInPlace(yield, [&] { yield->setOperand(yield->getNumOperands() - 1, updated); });
  rewriter.replaceAllUsesWith(result, widened.getResults().back());
  rewriter.eraseOp(producer);
}

struct LAFuseProducersIntoSweepsPass : impl::LAFuseProducersIntoSweepsBase<LAFuseProducersIntoSweepsPass> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::GenericOp> producers;
    getOperation().walk([&](linalg::GenericOp generic) {
      if (isRowwiseProducer(generic, minResultBytes))
        producers.push_back(generic);
    });
    for (linalg::GenericOp producer : producers) {
      // Recomputed per producer: each fusion replaces a loop.
      DominanceInfo dominance(getOperation());
      std::optional<std::pair<scf::ForOp, tensor::ExtractSliceOp>> sweep = findSweep(producer, dominance);
      if (!sweep)
        continue;
      LLVM_DEBUG(llvm::dbgs() << "fusing " << producer->getLoc() << " into the sweep at " << sweep->first.getLoc()
                              << "\n");
      fuseIntoSweep(rewriter, producer, sweep->first, sweep->second);
    }
  }
};

} // namespace
} // namespace mlir::la
