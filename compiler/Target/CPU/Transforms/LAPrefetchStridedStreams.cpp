//===- LAPrefetchStridedStreams.cpp - prefetch the streams prefetchers miss ===//
//
// Hardware prefetchers follow runs of consecutive cache lines. A loop that reads one short run per
// iteration, far apart from the previous one, gives them nothing to follow: aft_conv, computed one head
// at a time, reads each head's 256 bytes of every 2 KiB position of its [B, X, Y, h, c] operands, and its
// pass over K for the head's maximum waited on DRAM for 13% of the kernel's time. Each such loop now
// prefetches the position `distance` iterations ahead.
//
//===----------------------------------------------------------------------===//

#include "Target/CPU/Transforms/ArgumentViews.h"
#include "Target/CPU/Transforms/CPUPasses.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "la-prefetch-strided-streams"

namespace mlir::la {
#define GEN_PASS_DEF_LAPREFETCHSTRIDEDSTREAMS
#include "Target/CPU/Transforms/CPUPasses.h.inc"

namespace {

/// One position of a function argument that each iteration of a unit-step loop reads: a subview whose
/// offset along `dim` is the induction variable, one element long there and everywhere but the innermost
/// dimension, taken of the argument or of a slice of it that does not change in the loop.
struct StridedStream {
  memref::SubViewOp subview;
  BlockArgument argument;
  /// The position's offsets in the argument: the subview's and its enclosing slices', summed.
  SmallVector<SmallVector<OpFoldResult>> offsetTerms;
  unsigned dim;
};

/// Whether `value` is the same in every iteration of `loop`.
bool isLoopInvariant(scf::ForOp loop, OpFoldResult value) {
  auto v = dyn_cast<Value>(value);
  return !v || !loop->isAncestor(v.getParentRegion()->getParentOp());
}

/// Whether `subview` keeps the rank and steps by one along every dimension.
bool isUnitStrideSlice(memref::SubViewOp subview) {
  return subview.getSourceType().getRank() == subview.getType().getRank() &&
         llvm::all_of(subview.getMixedStrides(), [](OpFoldResult s) { return isConstantIntValue(s, 1); });
}

std::optional<StridedStream> matchStridedStream(scf::ForOp loop, memref::SubViewOp subview, Block &entry,
                                                int64_t lineBytes, int64_t maxRunBytes) {
  if (!isConstantIntValue(loop.getStep(), 1) || !isUnitStrideSlice(subview))
    return std::nullopt;
  SmallVector<SmallVector<OpFoldResult>> offsetTerms{subview.getMixedOffsets()};
  Value source = subview.getSource();
  while (auto slice = source.getDefiningOp<memref::SubViewOp>()) {
    if (loop->isAncestor(slice) || !isUnitStrideSlice(slice) ||
        !llvm::all_of(slice.getMixedOffsets(), [&](OpFoldResult o) { return isLoopInvariant(loop, o); }))
      return std::nullopt;
    offsetTerms.push_back(slice.getMixedOffsets());
    source = slice.getSource();
  }
  auto argument = dyn_cast<BlockArgument>(source);
  if (!argument || argument.getOwner() != &entry || isWritten(argument))
    return std::nullopt;
  auto type = cast<MemRefType>(argument.getType());
  if (!type.getLayout().isIdentity() || !type.hasStaticShape())
    return std::nullopt;
  std::optional<unsigned> dim;
  SmallVector<OpFoldResult> offsets = subview.getMixedOffsets(), sizes = subview.getMixedSizes();
  unsigned innermost = offsets.size() - 1;
  for (unsigned d = 0; d < offsets.size(); ++d) {
    std::optional<int64_t> size = getConstantIntValue(sizes[d]);
    if (!size || (*size != 1 && d != innermost))
      return std::nullopt;
    if (auto offset = dyn_cast<Value>(offsets[d]); offset && offset == loop.getInductionVar() && d != innermost) {
      if (dim)
        return std::nullopt;
      dim = d;
    } else if (!isLoopInvariant(loop, offsets[d])) {
      return std::nullopt;
    }
  }
  if (!dim)
    return std::nullopt;
  // A run of whole lines, short enough, and consecutive positions more than twice the run apart (a full
  // row after full row is one stream, which hardware prefetchers follow; so is a column read element by
  // element, at a constant stride).
  int64_t elementBytes = type.getElementTypeBitWidth() / 8;
  int64_t runBytes = *getConstantIntValue(sizes[innermost]) * elementBytes;
  int64_t strideBytes = elementBytes;
  for (int64_t d = type.getRank() - 1; d > static_cast<int64_t>(*dim); --d)
    strideBytes *= type.getDimSize(d);
  if (runBytes < lineBytes || runBytes > maxRunBytes || strideBytes <= 2 * runBytes)
    return std::nullopt;
  return StridedStream{subview, argument, std::move(offsetTerms), *dim};
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
void prefetchAhead(scf::ForOp loop, StridedStream &stream, int64_t distance, int64_t lineElements,
                   int64_t locality) {
  OpBuilder b = OpBuilder::atBlockBegin(loop.getBody());
  Location loc = stream.subview.getLoc();
  Value last = arith::SubIOp::create(b, loc, loop.getUpperBound(), arith::ConstantIndexOp::create(b, loc, 1));
  Value ahead = arith::MinSIOp::create(
      b, loc, arith::AddIOp::create(b, loc, loop.getInductionVar(), arith::ConstantIndexOp::create(b, loc, distance)),
      last);
  unsigned rank = stream.offsetTerms.front().size(), innermost = rank - 1;
  SmallVector<OpFoldResult> position;
  for (unsigned d = 0; d < rank; ++d) {
    OpFoldResult index = d == stream.dim ? OpFoldResult(ahead) : stream.offsetTerms[0][d];
    for (ArrayRef<OpFoldResult> terms : ArrayRef(stream.offsetTerms).drop_front())
      index = add(b, loc, index, terms[d]);
    position.push_back(index);
  }
  int64_t columns = *getConstantIntValue(stream.subview.getMixedSizes()[innermost]);
  OpFoldResult firstColumn = position[innermost];
  for (int64_t column = 0; column < columns; column += lineElements) {
    position[innermost] = add(b, loc, firstColumn, b.getIndexAttr(column));
    memref::PrefetchOp::create(b, loc, stream.argument, getValueOrCreateConstantIndexOp(b, loc, position),
                               /*isWrite=*/false, locality, /*isDataCache=*/true);
  }
}

struct LAPrefetchStridedStreamsPass : impl::LAPrefetchStridedStreamsBase<LAPrefetchStridedStreamsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (distance < 1 || lineBytes < 1 || maxRunBytes < 1 || locality < 0 || locality > 3) {
      func.emitError("la-prefetch-strided-streams: distance, line-bytes and max-run-bytes must be positive, "
                     "locality in [0, 3]");
      return signalPassFailure();
    }
    if (func.isExternal())
      return;
    Block &entry = func.getBody().front();
    SmallVector<std::pair<scf::ForOp, StridedStream>> streams;
    func.walk([&](scf::ForOp loop) {
      llvm::SmallPtrSet<Value, 4> seen; // one prefetch stream per argument and loop
      for (auto subview : loop.getBody()->getOps<memref::SubViewOp>())
        if (std::optional<StridedStream> stream = matchStridedStream(loop, subview, entry, lineBytes, maxRunBytes))
          if (seen.insert(stream->argument).second)
            streams.emplace_back(loop, std::move(*stream));
    });
    for (auto &[loop, stream] : streams) {
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << loop.getLoc() << ": argument "
                              << stream.argument.getArgNumber() << " prefetched " << distance << " ahead\n");
      int64_t elementBytes = cast<MemRefType>(stream.argument.getType()).getElementTypeBitWidth() / 8;
      prefetchAhead(loop, stream, distance, std::max<int64_t>(1, lineBytes / std::max<int64_t>(1, elementBytes)),
                    locality);
    }
  }
};

} // namespace
} // namespace mlir::la
