//===- RegisterBlockPatterns.cpp - clean-up of vectorised register blocks -===//
//
// Upstream's broadcast sinking needs every operand broadcast from the same type; the blocks built from
// fused generics mix per-row, per-step and per-block sources (`x[m]`, `max[]`, `v[m, e]`), so the sinking
// here broadcasts operands to their common smallest shape first.
//
//===----------------------------------------------------------------------===//

#include "Target/CPU/Transforms/RegisterBlockPatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

namespace mlir::la {
namespace {

/// The shape `value` is broadcast from, right-aligned to `rank` (all ones for a scalar or splat source),
/// or nothing when `value` is not a broadcast or splat constant.
std::optional<SmallVector<int64_t>> getBroadcastSourceShape(Value value, int64_t rank) {
  SmallVector<int64_t> shape(rank, 1);
  if (auto broadcast = value.getDefiningOp<vector::BroadcastOp>()) {
    if (auto sourceType = dyn_cast<VectorType>(broadcast.getSourceType()))
      llvm::copy(sourceType.getShape(), shape.end() - sourceType.getRank());
    return shape;
  }
  SplatElementsAttr splat;
  if (matchPattern(value, m_Constant(&splat)))
    return shape;
  return std::nullopt;
}

/// `value` (a broadcast or splat, see above) re-expressed with the smaller shape `shape`.
Value rebroadcastTo(PatternRewriter &rewriter, Location loc, Value value, ArrayRef<int64_t> shape) {
  auto type = VectorType::get(shape, cast<VectorType>(value.getType()).getElementType());
  if (auto broadcast = value.getDefiningOp<vector::BroadcastOp>()) {
    Value source = broadcast.getSource();
    if (source.getType() == type)
      return source;
    return vector::BroadcastOp::create(rewriter, loc, type, source);
  }
  SplatElementsAttr splat;
  matchPattern(value, m_Constant(&splat));
  return arith::ConstantOp::create(rewriter, loc, splat.resizeSplat(type));
}

struct SinkBroadcastThroughElementwise : RewritePattern {
  SinkBroadcastThroughElementwise(MLIRContext *context) : RewritePattern(MatchAnyOpTypeTag(), 1, context) {}

  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    if (!op->hasTrait<OpTrait::Elementwise>() || op->getNumResults() != 1 || op->getNumOperands() == 0 ||
        op->getNumRegions() != 0)
      return failure();
    auto resultType = dyn_cast<VectorType>(op->getResult(0).getType());
    if (!resultType || resultType.isScalable())
      return failure();
    int64_t rank = resultType.getRank();
    SmallVector<int64_t> common(rank, 1);
    bool anyBroadcast = false;
    for (Value operand : op->getOperands()) {
      auto type = dyn_cast<VectorType>(operand.getType());
      if (!type || type.getShape() != resultType.getShape())
        return failure();
      std::optional<SmallVector<int64_t>> shape = getBroadcastSourceShape(operand, rank);
      if (!shape)
        return failure();
      anyBroadcast |= static_cast<bool>(operand.getDefiningOp<vector::BroadcastOp>());
      for (int64_t dim = 0; dim < rank; ++dim)
        common[dim] = std::max(common[dim], (*shape)[dim]);
    }
    if (!anyBroadcast || ArrayRef<int64_t>(common) == resultType.getShape())
      return failure();

    SmallVector<Value> operands;
    for (Value operand : op->getOperands())
      operands.push_back(rebroadcastTo(rewriter, op->getLoc(), operand, common));
    OperationState state(op->getLoc(), op->getName(), operands,
                         TypeRange{VectorType::get(common, resultType.getElementType())}, op->getAttrs());
    Operation *narrow = rewriter.create(state);
    rewriter.replaceOpWithNewOp<vector::BroadcastOp>(op, resultType, narrow->getResult(0));
    return success();
  }
};

/// Shape of the source of `broadcast`, already rearranged into the layout the reshaping op (transpose or
/// shape_cast) of the broadcast result would give it, or nothing when the reshaping moves source data.
using NarrowShapeFn =
    function_ref<std::optional<SmallVector<int64_t>>(ArrayRef<int64_t> broadcastShape, VectorType sourceType)>;

/// Rewrites `reshape(broadcast(x))` (of type `resultType`) as `broadcast(shape_cast(x))`, with the
/// shape_cast target given by `narrowShape`.
LogicalResult foldReshapeOfBroadcast(PatternRewriter &rewriter, Operation *reshape, Value reshaped,
                                     VectorType resultType, NarrowShapeFn narrowShape) {
  auto broadcast = reshaped.getDefiningOp<vector::BroadcastOp>();
  if (!broadcast)
    return failure();
  Value narrow = broadcast.getSource();
  if (auto sourceType = dyn_cast<VectorType>(narrow.getType())) {
    std::optional<SmallVector<int64_t>> shape = narrowShape(broadcast.getResultVectorType().getShape(), sourceType);
    if (!shape)
      return failure();
    auto narrowType = VectorType::get(*shape, sourceType.getElementType());
    if (narrowType != sourceType)
      narrow = vector::ShapeCastOp::create(rewriter, reshape->getLoc(), narrowType, narrow);
  }
  rewriter.replaceOpWithNewOp<vector::BroadcastOp>(reshape, resultType, narrow);
  return success();
}

struct FoldTransposeOfBroadcast : OpRewritePattern<vector::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::TransposeOp transpose, PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> permutation = transpose.getPermutation();
    auto narrowShape = [&](ArrayRef<int64_t> broadcastShape,
                           VectorType sourceType) -> std::optional<SmallVector<int64_t>> {
      // Dims of the broadcast result that carry data of the source (not added, not stretched, not unit).
      int64_t added = broadcastShape.size() - sourceType.getRank();
      auto carriesData = [&](int64_t dim) {
        return dim >= added && broadcastShape[dim] != 1 && sourceType.getDimSize(dim - added) == broadcastShape[dim];
      };
      SmallVector<int64_t> shape;
      SmallVector<int64_t> dataDimsInResultOrder;
      for (int64_t dim : permutation) {
        shape.push_back(carriesData(dim) ? broadcastShape[dim] : 1);
        if (carriesData(dim))
          dataDimsInResultOrder.push_back(dim);
      }
      if (!llvm::is_sorted(dataDimsInResultOrder))
        return std::nullopt;
      return shape;
    };
    return foldReshapeOfBroadcast(rewriter, transpose, transpose.getVector(), transpose.getResultVectorType(),
                                  narrowShape);
  }
};

struct FoldShapeCastOfBroadcast : OpRewritePattern<vector::ShapeCastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::ShapeCastOp shapeCast, PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> resultShape = shapeCast.getResultVectorType().getShape();
    auto narrowShape = [&](ArrayRef<int64_t> broadcastShape,
                           VectorType sourceType) -> std::optional<SmallVector<int64_t>> {
      // Only unit dims may differ between the broadcast result and the shape_cast result.
      SmallVector<int64_t> nonUnitPositions;
      for (auto [dim, size] : llvm::enumerate(broadcastShape))
        if (size != 1)
          nonUnitPositions.push_back(dim);
      SmallVector<int64_t> shape;
      size_t next = 0;
      int64_t added = broadcastShape.size() - sourceType.getRank();
      for (int64_t size : resultShape) {
        if (size == 1) {
          shape.push_back(1);
          continue;
        }
        if (next == nonUnitPositions.size() || broadcastShape[nonUnitPositions[next]] != size)
          return std::nullopt;
        int64_t dim = nonUnitPositions[next++];
        shape.push_back(dim < added ? 1 : sourceType.getDimSize(dim - added));
      }
      if (next != nonUnitPositions.size())
        return std::nullopt;
      return shape;
    };
    return foldReshapeOfBroadcast(rewriter, shapeCast, shapeCast.getSource(), shapeCast.getResultVectorType(),
                                  narrowShape);
  }
};

struct FuseMulAddIntoFMA : OpRewritePattern<arith::AddFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::AddFOp add, PatternRewriter &rewriter) const override {
    if (!isa<VectorType>(add.getType()))
      return failure();
    for (unsigned side = 0; side < 2; ++side) {
      Value product = add->getOperand(side);
      Value accumulator = add->getOperand(1 - side);
      // The vectoriser puts a shape_cast between the block product and the accumulator; look through it.
      auto shapeCast = product.getDefiningOp<vector::ShapeCastOp>();
      if (shapeCast && shapeCast->hasOneUse())
        product = shapeCast.getSource();
      auto multiply = product.getDefiningOp<arith::MulFOp>();
      if (!multiply || !multiply->hasOneUse() ||
          !arith::bitEnumContainsAll(multiply.getFastmath(), arith::FastMathFlags::contract))
        continue;
      Location loc = add.getLoc();
      Value lhs = multiply.getLhs(), rhs = multiply.getRhs();
      if (shapeCast) {
        lhs = vector::ShapeCastOp::create(rewriter, loc, add.getType(), lhs);
        rhs = vector::ShapeCastOp::create(rewriter, loc, add.getType(), rhs);
      }
      rewriter.replaceOpWithNewOp<vector::FMAOp>(add, lhs, rhs, accumulator);
      return success();
    }
    return failure();
  }
};

} // namespace

void populateRegisterBlockCleanupPatterns(RewritePatternSet &patterns) {
  patterns.add<SinkBroadcastThroughElementwise, FoldTransposeOfBroadcast, FoldShapeCastOfBroadcast, FuseMulAddIntoFMA>(
      patterns.getContext());
}

} // namespace mlir::la
