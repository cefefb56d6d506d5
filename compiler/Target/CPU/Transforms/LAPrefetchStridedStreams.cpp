//===- LAPrefetchStridedStreams.cpp - prefetch the streams prefetchers miss ===//
//
// Hardware prefetchers follow runs of consecutive cache lines. A loop that reads one short run per
// iteration, far apart from the previous one, gives them nothing to follow: aft_conv, computed one head
// at a time, reads each head's 256 bytes of every 2 KiB position of its [B, X, Y, h, c] operands, and its
// pass over K for the head's maximum waited on DRAM for 13% of the kernel's time. Each such loop now
// prefetches the position `distance` iterations ahead: aft_conv at T = 4096 about 8% faster, aft_simple's
// column-wise softmax over [B, T, 512] faster too (docs/BENCHMARKS.md, session 35).
//
//===----------------------------------------------------------------------===//

#include "Target/CPU/Transforms/CPUPasses.h"
#include "Target/CPU/Transforms/PrefetchAnalysis.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "la-prefetch-strided-streams"

namespace mlir::la {
#define GEN_PASS_DEF_LAPREFETCHSTRIDEDSTREAMS
#include "Target/CPU/Transforms/CPUPasses.h.inc"

namespace {

/// A loop prefetches only if it runs at least this many times the prefetch distance.
constexpr int64_t kMinTripsPerDistance = 4;

/// One position of a view of a function argument that each iteration of a unit-step loop reads: the
/// view's index along `dim` is the induction variable, every other index but the innermost is the same in
/// all iterations, and the run read along the innermost dimension starts at `runStart`.
struct StridedStream {
  Value view;
  BlockArgument argument; // the read-only function argument `view` is a view of
  SmallVector<OpFoldResult> indices;
  unsigned dim;
  OpFoldResult runStart;
  int64_t runLength;
};

/// Whether `value` is the same in every iteration of `loop`.
bool isLoopInvariant(scf::ForOp loop, OpFoldResult value) {
  auto v = dyn_cast<Value>(value);
  return !v || !loop->isAncestor(v.getParentRegion()->getParentOp());
}

/// Whether `loop` may prefetch a stream `distance` iterations ahead. A unit step: a loop over tiles of
/// several positions (the read-out's row blocks) computes long enough per tile for its reads; prefetching
/// aft_conv's q a few blocks ahead made it 5% slower. A long loop: in a short one most prefetches land past
/// its end (aft_local's 16-row tiles of its bias: 7-10% slower). No register blocks: their reduction steps
/// read panels and row blocks that the tiling keeps in cache (FLASH's v panel: prefetching it made causal
/// FLASH 7% slower at N = 1024).
bool mayPrefetchAhead(scf::ForOp loop, int64_t distance) {
  std::optional<APInt> trips = loop.getStaticTripCount();
  return isConstantIntValue(loop.getStep(), 1) && trips && trips->getSExtValue() >= kMinTripsPerDistance * distance &&
         !holdsRegisterBlocks(loop);
}

/// The read-only function argument `view` is a view of through subviews, or null.
BlockArgument getReadOnlyArgument(Value view, Block &entry) {
  while (auto subview = view.getDefiningOp<memref::SubViewOp>())
    view = subview.getSource();
  auto argument = dyn_cast<BlockArgument>(view);
  return argument && argument.getOwner() == &entry && !isWritten(argument) ? argument : BlockArgument();
}

/// The position `op` reads in each iteration of `loop` (one that `mayPrefetchAhead`), if it is a strided
/// stream: a subview in the body
/// (one element long in every dimension but the innermost; its offsets are the position), or a load or
/// transfer read anywhere in the body of a view from outside the loop (the run: the view's innermost
/// dimension). The view is of a read-only argument, with static strides; the run is at least a line and at
/// most `maxRunBytes`, and consecutive positions lie more than twice the run apart: a full row after full
/// row is one stream, which hardware prefetchers follow, and so is a column read element by element.
std::optional<StridedStream> matchStridedStream(scf::ForOp loop, Operation *op, Block &entry, int64_t lineBytes,
                                                int64_t maxRunBytes, int64_t minArgumentBytes) {
  StridedStream stream;
  if (auto subview = dyn_cast<memref::SubViewOp>(op)) {
    if (subview->getParentOp() != loop ||
        !llvm::all_of(subview.getMixedStrides(), [](OpFoldResult s) { return isConstantIntValue(s, 1); }) ||
        subview.getSourceType().getRank() != subview.getType().getRank())
      return std::nullopt;
    stream = {subview.getSource(), {}, subview.getMixedOffsets(), 0, subview.getMixedOffsets().back(), 0};
  } else if (isa<memref::LoadOp, vector::TransferReadOp>(op)) {
    Value view =
        isa<memref::LoadOp>(op) ? cast<memref::LoadOp>(op).getMemRef() : cast<vector::TransferReadOp>(op).getBase();
    auto type = dyn_cast<MemRefType>(view.getType());
    if (!type || type.getRank() == 0 || ShapedType::isDynamic(type.getShape().back()))
      return std::nullopt;
    ValueRange indices =
        isa<memref::LoadOp>(op) ? cast<memref::LoadOp>(op).getIndices() : cast<vector::TransferReadOp>(op).getIndices();
    stream = {view,
              {},
              getAsOpFoldResult(indices),
              0,
              OpFoldResult(Builder(op->getContext()).getIndexAttr(0)),
              type.getShape().back()};
  } else {
    return std::nullopt;
  }
  if (!isLoopInvariant(loop, stream.view))
    return std::nullopt;
  auto type = cast<MemRefType>(stream.view.getType());
  auto [strides, offset] = type.getStridesAndOffset();
  stream.argument = getReadOnlyArgument(stream.view, entry);
  if (!stream.argument || strides.back() != 1 || !isLoopInvariant(loop, stream.runStart))
    return std::nullopt;
  // A smaller argument stays in cache from one call to the next, where the prefetches only cost
  // instructions (aft_simple at T = 1024, 2 MiB per slice: 15% slower with them).
  auto argumentType = cast<MemRefType>(stream.argument.getType());
  if (argumentType.getNumElements() * argumentType.getElementTypeBitWidth() / 8 < minArgumentBytes)
    return std::nullopt;
  // The loop's induction variable indexes one dimension; no other index but the innermost changes in it.
  std::optional<unsigned> dim;
  for (unsigned d = 0, innermost = stream.indices.size() - 1; d < innermost; ++d) {
    auto index = dyn_cast<Value>(stream.indices[d]);
    if (index && index == loop.getInductionVar() && !dim)
      dim = d;
    else if (!isLoopInvariant(loop, stream.indices[d]))
      return std::nullopt;
  }
  if (!dim || ShapedType::isDynamic(strides[*dim]))
    return std::nullopt;
  stream.dim = *dim;
  // A subview is one element long along every dimension but the innermost, whose length is the run.
  if (auto subview = dyn_cast<memref::SubViewOp>(op)) {
    SmallVector<OpFoldResult> sizes = subview.getMixedSizes();
    if (!llvm::all_of(ArrayRef(sizes).drop_back(), [](OpFoldResult s) { return isConstantIntValue(s, 1); }))
      return std::nullopt;
    std::optional<int64_t> run = getConstantIntValue(sizes.back());
    if (!run)
      return std::nullopt;
    stream.runLength = *run;
  }
  int64_t elementBytes = type.getElementTypeBitWidth() / 8;
  int64_t runBytes = stream.runLength * elementBytes, strideBytes = strides[*dim] * elementBytes;
  if (runBytes < lineBytes || runBytes > maxRunBytes || strideBytes <= 2 * runBytes)
    return std::nullopt;
  return stream;
}

/// `a + b`, folded where either is a constant 0 or both are constants.
OpFoldResult add(OpBuilder &b, Location loc, OpFoldResult lhs, OpFoldResult rhs) {
  std::optional<int64_t> x = getConstantIntValue(lhs), y = getConstantIntValue(rhs);
  if (x && y)
    return b.getIndexAttr(*x + *y);
  if (x == 0)
    return rhs;
  if (y == 0)
    return lhs;
  return arith::AddIOp::create(b, loc, getValueOrCreateConstantIndexOp(b, loc, lhs),
                               getValueOrCreateConstantIndexOp(b, loc, rhs))
      .getResult();
}

/// At the start of `loop`'s body: prefetches the position `distance` iterations ahead (clamped to the
/// loop's last), one prefetch per `lineElements` elements of its run.
void prefetchAhead(scf::ForOp loop, StridedStream &stream, int64_t distance, int64_t lineElements, int64_t locality) {
  OpBuilder b = OpBuilder::atBlockBegin(loop.getBody());
  Location loc = loop.getLoc();
  Value last = arith::SubIOp::create(b, loc, loop.getUpperBound(), arith::ConstantIndexOp::create(b, loc, 1));
  Value ahead = arith::MinSIOp::create(
      b, loc, arith::AddIOp::create(b, loc, loop.getInductionVar(), arith::ConstantIndexOp::create(b, loc, distance)),
      last);
  SmallVector<OpFoldResult> position = stream.indices;
  position[stream.dim] = ahead;
  for (int64_t column = 0; column < stream.runLength; column += lineElements) {
    position.back() = add(b, loc, stream.runStart, b.getIndexAttr(column));
    memref::PrefetchOp::create(b, loc, stream.view, getValueOrCreateConstantIndexOp(b, loc, position),
                               /*isWrite=*/false, locality, /*isDataCache=*/true);
  }
}

struct LAPrefetchStridedStreamsPass : impl::LAPrefetchStridedStreamsBase<LAPrefetchStridedStreamsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (distance < 1 || lineBytes < 1 || maxRunBytes < 1 || minArgumentBytes < 0 || locality < 0 || locality > 3) {
      func.emitError("la-prefetch-strided-streams: distance, line-bytes and max-run-bytes must be positive, "
                     "min-argument-bytes not negative, locality in [0, 3]");
      return signalPassFailure();
    }
    if (func.isExternal())
      return;
    Block &entry = func.getBody().front();
    SmallVector<std::pair<scf::ForOp, StridedStream>> streams;
    func.walk([&](scf::ForOp loop) {
      if (!mayPrefetchAhead(loop, distance))
        return;
      llvm::SmallPtrSet<Value, 4> seen; // one prefetch stream per view and loop
      loop.getBody()->walk([&](Operation *op) {
        if (std::optional<StridedStream> stream =
                matchStridedStream(loop, op, entry, lineBytes, maxRunBytes, minArgumentBytes))
          if (seen.insert(stream->view).second)
            streams.emplace_back(loop, std::move(*stream));
      });
    });
    for (auto &[loop, stream] : streams) {
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << loop.getLoc() << ": argument " << stream.argument.getArgNumber()
                              << " prefetched " << distance << " ahead\n");
      int64_t elementBytes = cast<MemRefType>(stream.view.getType()).getElementTypeBitWidth() / 8;
      prefetchAhead(loop, stream, distance, std::max<int64_t>(1, lineBytes / std::max<int64_t>(1, elementBytes)),
                    locality);
    }
  }
};

} // namespace
} // namespace mlir::la
