//===- LAExpandPaddedCopies.cpp - a zero pad as an interior write and border fills -===//
//
// `tensor.pad` is what tiling understands, but one-shot bufferisation makes it a fill of the whole buffer
// and a copy of the materialised source: two extra passes over aft_conv's e^K and e^K ⊙ V. Rewritten as an
// insert of the source into a fresh buffer plus fills of the border slabs alone, empty-tensor elimination
// lets the source's producer write into the interior, and every element is stored once.
//
//===----------------------------------------------------------------------===//

#include "Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"

namespace mlir::la {
#define GEN_PASS_DEF_LAEXPANDPADDEDCOPIES
#include "Transforms/Passes.h.inc"

namespace {

/// The constant `pad` pads with, when it pads with one (la.window pads with zeros).
TypedAttr getPaddingConstant(tensor::PadOp pad) {
  Value value = pad.getConstantPaddingValue();
  TypedAttr constant;
  if (!value || !matchPattern(value, m_Constant(&constant)))
    return {};
  return constant;
}

/// Makes the producer of `source` write into the interior of `buffer` (offsets `low`) when its destination
/// is a fresh tensor (undefined contents, so its other users are unaffected) and `buffer` is created before
/// the producer in the same block. Empty-tensor elimination does this for a `tensor.empty` destination; a
/// producer fused into a tile loop has an `alloc_tensor` (FusedTiles.h says why), which it leaves alone.
void writeIntoInterior(RewriterBase &rewriter, Value source, Value buffer, ArrayRef<OpFoldResult> low,
                       ArrayRef<OpFoldResult> sizes, ArrayRef<OpFoldResult> strides) {
  auto producer = source.getDefiningOp<DestinationStyleOpInterface>();
  Operation *bufferOp = buffer.getDefiningOp();
  if (!producer || producer->getBlock() != bufferOp->getBlock() || !bufferOp->isBeforeInBlock(producer) ||
      !cast<RankedTensorType>(source.getType()).hasStaticShape())
    return;
  OpOperand *init = producer.getTiedOpOperand(cast<OpResult>(source));
  Operation *fresh = init->get().getDefiningOp();
  auto alloc = dyn_cast_or_null<bufferization::AllocTensorOp>(fresh);
  if (!fresh || !(isa<tensor::EmptyOp>(fresh) || (alloc && !alloc.getCopy())))
    return;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(producer);
  Value interior = tensor::ExtractSliceOp::create(rewriter, source.getLoc(), buffer, low, sizes, strides);
  rewriter.modifyOpInPlace(producer, [&] { init->set(interior); });
}

/// `pad` as its source inserted into the interior of a fresh tensor, then the low and the high border slab of
/// every padded dimension filled with the padding value (each slab whole along every other dimension).
void expandPad(RewriterBase &rewriter, tensor::PadOp pad) {
  Location loc = pad.getLoc();
  RankedTensorType type = pad.getResultType();
  int64_t rank = type.getRank();
  Value source = pad.getSource();
  SmallVector<OpFoldResult> low = pad.getMixedLowPad(), high = pad.getMixedHighPad();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(pad);
  SmallVector<OpFoldResult> sourceSizes = tensor::getMixedSizes(rewriter, loc, source);
  AffineExpr s0 = getAffineSymbolExpr(0, rewriter.getContext());
  AffineExpr s1 = getAffineSymbolExpr(1, rewriter.getContext());
  AffineExpr s2 = getAffineSymbolExpr(2, rewriter.getContext());
  SmallVector<OpFoldResult> paddedSizes;
  for (int64_t d = 0; d < rank; ++d)
    paddedSizes.push_back(
        affine::makeComposedFoldedAffineApply(rewriter, loc, s0 + s1 + s2, {low[d], sourceSizes[d], high[d]}));

  // With a static shape the buffer and its border go to the start of the pad's block, where they dominate
  // the source's producer when that is computed in the same block (the function body, or one tile of a
  // loop), so that producer can write into the interior. The border is filled before it, since a write to
  // the buffer between the producer and a later reader of the source would make bufferisation copy the
  // source. An alloc_tensor, not a tensor.empty: CSE would merge two pads' empty tensors of one shape into
  // one, and bufferisation would then copy one pad's buffer.
  SmallVector<Value> dynamicSizes;
  SmallVector<int64_t> staticSizes;
  dispatchIndexOpFoldResults(paddedSizes, dynamicSizes, staticSizes);
  if (dynamicSizes.empty())
    rewriter.setInsertionPointToStart(pad->getBlock());
  Value padded = bufferization::AllocTensorOp::create(rewriter, loc, type, dynamicSizes);
  // A fresh constant: the pad's own may be defined inside its region.
  Value fillValue = arith::ConstantOp::create(rewriter, loc, getPaddingConstant(pad));
  SmallVector<OpFoldResult> unitStrides(rank, rewriter.getIndexAttr(1));
  for (int64_t d = 0; d < rank; ++d) {
    // The low slab [0, low) and the high slab [low + size, padded size) of dimension d.
    OpFoldResult highStart = affine::makeComposedFoldedAffineApply(rewriter, loc, s0 + s1, {low[d], sourceSizes[d]});
    for (auto [start, width] : {std::pair(OpFoldResult(rewriter.getIndexAttr(0)), low[d]), {highStart, high[d]}}) {
      if (isZeroInteger(width))
        continue;
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)), slabSizes(paddedSizes);
      offsets[d] = start;
      slabSizes[d] = width;
      Value slab = tensor::ExtractSliceOp::create(rewriter, loc, padded, offsets, slabSizes, unitStrides);
      Value filled = linalg::FillOp::create(rewriter, loc, fillValue, slab).getResult(0);
      padded = tensor::InsertSliceOp::create(rewriter, loc, filled, padded, offsets, slabSizes, unitStrides);
    }
  }
  writeIntoInterior(rewriter, source, padded, low, sourceSizes, unitStrides);
  // The source goes into the buffer as late as possible: right before the first reader of the padded
  // tensor. A reader of the source after the insert would count it as a conflicting write to the source's
  // buffer, and bufferisation would copy the source.
  Operation *firstReader = pad;
  for (Operation *user : pad->getUsers())
    if (Operation *inBlock = pad->getBlock()->findAncestorOpInBlock(*user);
        inBlock && (firstReader == pad || inBlock->isBeforeInBlock(firstReader)))
      firstReader = inBlock;
  rewriter.setInsertionPoint(firstReader);
  padded = tensor::InsertSliceOp::create(rewriter, loc, source, padded, low, sourceSizes, unitStrides);
  rewriter.replaceOp(pad, padded);
}

struct LAExpandPaddedCopiesPass : impl::LAExpandPaddedCopiesBase<LAExpandPaddedCopiesPass> {
  void runOnOperation() override {
    SmallVector<tensor::PadOp> pads;
    getOperation().walk([&](tensor::PadOp pad) {
      if (getPaddingConstant(pad))
        pads.push_back(pad);
    });
    IRRewriter rewriter(&getContext());
    for (tensor::PadOp pad : pads)
      expandPad(rewriter, pad);
  }
};

} // namespace
} // namespace mlir::la
