//===- LASlicePositions.cpp - slice coordinates as entry arguments --------===//

#include "Transforms/Passes.h"

#include "Analysis/BatchSlicing.h"

#include "LA/IR/LAOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::la {
#define GEN_PASS_DEF_LASLICEPOSITIONS
#include "Transforms/Passes.h.inc"

namespace {

/// `coordinate` (f32) as a value of `type`, the type of a `la.index`: index, f32 or f64.
Value convertCoordinate(OpBuilder &b, Location loc, Value coordinate, Type type) {
  if (type.isF32())
    return coordinate;
  if (type.isF64())
    return arith::ExtFOp::create(b, loc, type, coordinate);
  Value asInt = arith::FPToUIOp::create(b, loc, b.getI64Type(), coordinate);
  return arith::IndexCastUIOp::create(b, loc, type, asInt);
}

Value addPosition(OpBuilder &b, Location loc, Value position, Value offset) {
  if (isa<FloatType>(position.getType()))
    return arith::AddFOp::create(b, loc, position, offset);
  return arith::AddIOp::create(b, loc, position, offset);
}

struct LASlicePositionsPass : impl::LASlicePositionsBase<LASlicePositionsPass> {
  using LASlicePositionsBase::LASlicePositionsBase;

  void runOnOperation() override {
    if (dims <= 0)
      return;
    if (pieces < 1) {
      getOperation().emitError() << "la-slice-positions: pieces must be at least 1, not "
                                 << static_cast<int64_t>(pieces);
      return signalPassFailure();
    }
    auto func = getOperation().lookupSymbol<func::FuncOp>(entry);
    if (!func || func.isExternal()) {
      getOperation().emitError() << "la-slice-positions: no function body named '" << entry << "'";
      return signalPassFailure();
    }
    SmallVector<bool> shared(func.getNumArguments(), false);
    for (unsigned argument : sharedArguments) {
      if (argument >= func.getNumArguments()) {
        func.emitError() << "la-slice-positions: shared argument #" << argument << " of '" << entry << "', which takes "
                         << func.getNumArguments();
        return signalPassFailure();
      }
      shared[argument] = true;
    }
    // The coordinates are those of a slice's first position: every leading dimension of the first sliced
    // argument has size 1, except the last, which may hold a block of consecutive slices (the runtime groups
    // small slices); the in-kernel positions along it are then offsets from the coordinate.
    auto sliced = llvm::find(shared, false);
    auto first = sliced != shared.end()
                     ? dyn_cast<RankedTensorType>(func.getArgumentTypes()[std::distance(shared.begin(), sliced)])
                     : nullptr;
    if (!first || first.getRank() < dims ||
        llvm::any_of(first.getShape().take_front(dims - 1), [](int64_t size) { return size != 1; }) ||
        ShapedType::isDynamic(first.getDimSize(dims - 1))) {
      func.emitError() << "la-slice-positions: the first sliced argument of '" << entry
                       << "' is not a slice (its first " << static_cast<int64_t>(dims) - 1
                       << " dimensions must have size 1, and the next a static size)";
      return signalPassFailure();
    }
    // Before the coordinates are inserted, while argument numbers are the caller's.
    llvm::DenseSet<Value> sharedValues = getSharedValues(func, shared);

    OpBuilder b(func.getContext());
    for (auto [argument, isShared] : llvm::enumerate(shared))
      if (isShared)
        func.setArgAttr(argument, kSharedArgumentAttr, b.getUnitAttr());
    auto positionType = RankedTensorType::get(SmallVector<int64_t>(dims, 1), b.getF32Type());
    unsigned firstPosition = func.getNumArguments();
    // `la.slice_position = d` marks the coordinate arguments for the GPU target, which computes them from
    // the block index instead of taking them from the launcher (la-gpu-outline-slice-kernel).
    for (int64_t d = 0; d < dims; ++d)
      if (failed(func.insertArgument(firstPosition + d, positionType,
                                     b.getDictionaryAttr(b.getNamedAttr(kSlicePositionAttr, b.getI64IntegerAttr(d))),
                                     func.getLoc())))
        return signalPassFailure();

    // One scalar per coordinate, read at the top of the body where every map can see it.
    Block &body = func.getBody().front();
    b.setInsertionPointToStart(&body);
    Location loc = func.getLoc();
    SmallVector<Value> zeros(dims, arith::ConstantIndexOp::create(b, loc, 0));
    SmallVector<Value> coordinates;
    for (int64_t d = 0; d < dims; ++d)
      coordinates.push_back(tensor::ExtractOp::create(b, loc, body.getArgument(firstPosition + d), zeros));
    if (pieces > 1) {
      // The slice of a piece: ⌊coordinate / pieces⌋, in integers (the f32 quotient could round up to the
      // next slice).
      Value piece = arith::FPToUIOp::create(b, loc, b.getI64Type(), coordinates.back());
      Value slice = arith::DivUIOp::create(b, loc, piece, arith::ConstantIntOp::create(b, loc, pieces, 64));
      coordinates.back() = arith::UIToFPOp::create(b, loc, b.getF32Type(), slice);
    }

    SmallVector<IndexOp> indices;
    // A map of shared values has no slice dimensions: its leading positions are its own.
    func.walk([&](IndexOp index) {
      if (index.getDimAttr().getInt() < dims && !sharedValues.contains(index->getParentOfType<MapOp>().getResult()))
        indices.push_back(index);
    });
    for (IndexOp index : indices) {
      b.setInsertionPointAfter(index);
      Value offset = convertCoordinate(b, index.getLoc(), coordinates[index.getDimAttr().getInt()], index.getType());
      Value shifted = addPosition(b, index.getLoc(), index.getResult(), offset);
      index.getResult().replaceAllUsesExcept(shifted, shifted.getDefiningOp());
    }
  }
};

} // namespace
} // namespace mlir::la
