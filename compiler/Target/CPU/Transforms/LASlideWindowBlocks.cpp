//===- LASlideWindowBlocks.cpp - window rows loaded once per block --------===//
//
// A register block of a window contraction (AFT-conv's 7×7 convolution, `la.window` read by `la.contract`)
// steps each window offset v in a loop: every step reads the block's R rows at positions v .. v+R−1 and adds
// w[v] times them to the R accumulator rows. Consecutive steps read R−1 of the same rows again, so the block
// loads one row per row-FMA, and the loads, not the FMAs, bound it.
//
// This pass replaces such an offset loop (K static steps) by straight-line code over the R+K−1 distinct rows:
// each row p is read once and added to every accumulator row r it reaches, with the weight of offset p − r.
// For a fixed row r the offsets still come in increasing order, so every sum is formed in the same order as
// before (the results are bitwise the same); only the loads change, from R·K rows to R+K−1.
//
//===----------------------------------------------------------------------===//

#include "Target/CPU/Transforms/CPUPasses.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "la-slide-window-blocks"

namespace mlir::la {
#define GEN_PASS_DEF_LASLIDEWINDOWBLOCKS
#include "Target/CPU/Transforms/CPUPasses.h.inc"

namespace {

/// Offset loops longer than this are left alone: the straight-line form grows with R·K.
constexpr int64_t kMaxOffsets = 16;

Value skipShapeCasts(Value value) {
  while (auto cast = value.getDefiningOp<vector::ShapeCastOp>())
    value = cast.getSource();
  return value;
}

/// The one dimension at which `slice` is offset by `iv` (every other offset independent of it), with unit
/// strides; nullopt otherwise.
std::optional<int64_t> offsetDimension(tensor::ExtractSliceOp slice, Value iv) {
  if (!slice || !slice.hasUnitStride())
    return std::nullopt;
  std::optional<int64_t> found;
  for (auto [d, offset] : llvm::enumerate(slice.getMixedOffsets())) {
    auto value = dyn_cast<Value>(offset);
    if (value != iv)
      continue;
    if (found)
      return std::nullopt;
    found = d;
  }
  return found;
}

/// A read of a whole slice from its origin, in bounds.
bool readsWholeSlice(vector::TransferReadOp read) {
  return read && read.getPermutationMap().isMinorIdentity() && !read.hasOutOfBoundsDim() &&
         llvm::all_of(read.getIndices(), [](Value index) { return isConstantIntValue(index, 0); });
}

/// One window-offset step of a register block, as matched in the loop body.
struct OffsetStep {
  vector::FMAOp fma;
  /// The R rows at offset v: slice (offset iv along `rowDim` of the source, R long there) and its read.
  tensor::ExtractSliceOp rows;
  vector::TransferReadOp rowsRead;
  int64_t rowDim = 0;
  /// The weight of offset v: a one-element slice (offset iv along one dimension), read and broadcast.
  tensor::ExtractSliceOp weight;
  vector::TransferReadOp weightRead;
  /// Whether the FMA's first operand is the rows (else the broadcast weight).
  bool rowsFirst = true;
};

FailureOr<OffsetStep> matchOffsetStep(scf::ForOp loop, PatternRewriter &rewriter) {
  Value iv = loop.getInductionVar();
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  OffsetStep step;
  step.fma = skipShapeCasts(yield.getOperand(0)).getDefiningOp<vector::FMAOp>();
  if (!step.fma || skipShapeCasts(step.fma.getAcc()) != loop.getRegionIterArgs()[0])
    return rewriter.notifyMatchFailure(loop, "the step is not one FMA into the carried block");
  Value lhs = skipShapeCasts(step.fma.getLhs()), rhs = skipShapeCasts(step.fma.getRhs());
  auto broadcast = rhs.getDefiningOp<vector::BroadcastOp>();
  if (!broadcast) {
    broadcast = lhs.getDefiningOp<vector::BroadcastOp>();
    std::swap(lhs, rhs);
    step.rowsFirst = false;
  }
  if (!broadcast)
    return rewriter.notifyMatchFailure(loop, "no broadcast weight");
  step.rowsRead = lhs.getDefiningOp<vector::TransferReadOp>();
  step.weightRead = broadcast.getSource().getDefiningOp<vector::TransferReadOp>();
  if (!readsWholeSlice(step.rowsRead) || !readsWholeSlice(step.weightRead) ||
      step.weightRead.getVectorType().getNumElements() != 1)
    return rewriter.notifyMatchFailure(loop, "the rows or the weight are not whole-slice reads");
  step.rows = step.rowsRead.getBase().getDefiningOp<tensor::ExtractSliceOp>();
  step.weight = step.weightRead.getBase().getDefiningOp<tensor::ExtractSliceOp>();
  std::optional<int64_t> rowDim = offsetDimension(step.rows, iv);
  if (!rowDim || !offsetDimension(step.weight, iv))
    return rewriter.notifyMatchFailure(loop, "the rows and the weight are not both offset by the loop");
  step.rowDim = *rowDim;

  // The read's leading vector dimension is the block's rows and runs along rowDim, R long: row r of the
  // block at offset v is position v + r of the source.
  auto accType = cast<VectorType>(loop.getRegionIterArgs()[0].getType());
  VectorType rowsType = step.rowsRead.getVectorType();
  int64_t rank = step.rows.getType().getRank();
  if (rowsType.getShape() != accType.getShape() ||
      rank - static_cast<int64_t>(rowsType.getRank()) != step.rowDim ||
      step.rows.getStaticSizes()[step.rowDim] != accType.getDimSize(0))
    return rewriter.notifyMatchFailure(loop, "the rows read is not the block's rows along the offset");
  // Nothing else in the body (the slices' other offsets come from outside the loop).
  for (Operation &op : loop.getBody()->without_terminator())
    if (!isa<tensor::ExtractSliceOp, vector::TransferReadOp, vector::ShapeCastOp, vector::BroadcastOp,
             vector::FMAOp>(op))
      return rewriter.notifyMatchFailure(loop, "the step does more than one FMA");
  return step;
}

struct SlideWindowOffsets : OpRewritePattern<scf::ForOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(scf::ForOp loop, PatternRewriter &rewriter) const override {
    std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
    std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
    std::optional<int64_t> stride = getConstantIntValue(loop.getStep());
    if (!lower || *lower != 0 || !upper || *upper < 2 || *upper > kMaxOffsets || !stride || *stride != 1 ||
        loop.getNumRegionIterArgs() != 1 || !isa<VectorType>(loop.getRegionIterArgs()[0].getType()))
      return rewriter.notifyMatchFailure(loop, "not a short static offset loop carrying one block");
    FailureOr<OffsetStep> step = matchOffsetStep(loop, rewriter);
    if (failed(step))
      return failure();

    Location loc = loop.getLoc();
    auto accType = cast<VectorType>(loop.getRegionIterArgs()[0].getType());
    int64_t rows = accType.getDimSize(0), offsets = *upper;
    auto rowType = VectorType::get(accType.getShape().drop_front(), accType.getElementType());
    IRMapping outside; // the slices re-created before the loop, with the offset as a constant
    auto sliceAt = [&](tensor::ExtractSliceOp slice, int64_t dim, int64_t position, bool single) {
      SmallVector<OpFoldResult> offsetsAt = slice.getMixedOffsets(), sizes = slice.getMixedSizes();
      offsetsAt[dim] = rewriter.getIndexAttr(position);
      if (single)
        sizes[dim] = rewriter.getIndexAttr(1);
      return tensor::ExtractSliceOp::create(rewriter, loc, slice.getSource(), offsetsAt, sizes,
                                            slice.getMixedStrides());
    };
    auto readFrom = [&](vector::TransferReadOp read, Value source, VectorType type) {
      SmallVector<Value> zeros(read.getIndices().size(), arith::ConstantIndexOp::create(rewriter, loc, 0));
      return vector::TransferReadOp::create(rewriter, loc, type, source, zeros, read.getPermutationMapAttr(),
                                            read.getPadding(), read.getMask(), read.getInBoundsAttr())
          .getResult();
    };

    rewriter.setInsertionPoint(loop);
    SmallVector<Value> weights;
    std::optional<int64_t> weightDim = offsetDimension(step->weight, loop.getInductionVar());
    for (int64_t v = 0; v < offsets; ++v) {
      Value slice = sliceAt(step->weight, *weightDim, v, /*single=*/false);
      Value scalar = readFrom(step->weightRead, slice, step->weightRead.getVectorType());
      weights.push_back(vector::BroadcastOp::create(rewriter, loc, rowType, scalar));
    }
    SmallVector<Value> sums;
    for (int64_t r = 0; r < rows; ++r)
      sums.push_back(vector::ExtractOp::create(rewriter, loc, loop.getInitArgs()[0], r));
    auto singleRow = VectorType::get(llvm::to_vector(llvm::concat<const int64_t>(ArrayRef<int64_t>{1},
                                                                                 rowType.getShape())),
                                     accType.getElementType());
    for (int64_t p = 0; p < rows + offsets - 1; ++p) {
      Value slice = sliceAt(step->rows, step->rowDim, p, /*single=*/true);
      Value row = vector::ShapeCastOp::create(rewriter, loc, rowType, readFrom(step->rowsRead, slice, singleRow));
      for (int64_t r = std::min(rows - 1, p); r >= 0 && p - r < offsets; --r) {
        Value weight = weights[p - r];
        sums[r] = step->rowsFirst ? vector::FMAOp::create(rewriter, loc, row, weight, sums[r])
                                  : vector::FMAOp::create(rewriter, loc, weight, row, sums[r]);
      }
    }
    Value block = loop.getInitArgs()[0];
    for (int64_t r = 0; r < rows; ++r)
      block = vector::InsertOp::create(rewriter, loc, sums[r], block, r);
    LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << loc << ": " << rows << " rows × " << offsets
                            << " offsets: " << rows * offsets << " row loads → " << rows + offsets - 1 << "\n");
    rewriter.replaceOp(loop, block);
    return success();
  }
};

struct LASlideWindowBlocksPass : impl::LASlideWindowBlocksBase<LASlideWindowBlocksPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SlideWindowOffsets>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::la
