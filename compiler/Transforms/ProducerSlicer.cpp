//===- ProducerSlicer.cpp - slice a value by recomputing its producers ----===//

#include "Transforms/ProducerSlicer.h"
#include "Transforms/RecomputeCost.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::la {

bool mapUsesIndex(MapOp map) {
  bool found = false;
  map.getBody().walk([&](IndexOp) { found = true; });
  return found;
}

RankedTensorType ProducerSlicer::slicedType(Value value, ArrayRef<DimWindow> windows) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape = llvm::to_vector(type.getShape());
  for (const DimWindow &w : windows)
    shape[w.dim] = w.window.size;
  return RankedTensorType::get(shape, type.getElementType());
}

Value ProducerSlicer::slice(Value value, ArrayRef<DimWindow> windows) {
  if (windows.empty())
    return value;
  Operation *producer = value.getDefiningOp();
  if (auto map = dyn_cast_or_null<MapOp>(producer);
      map && (map->hasOneUse() || windows.size() >= 2 || (cheapMaps && recomputeCost(map) <= kCheapRecomputeCost)))
    return sliceMap(map, windows);
  if (auto contract = dyn_cast_or_null<ContractOp>(producer)) {
    if (Value sliced = sliceBlockContract(contract, windows))
      return sliced;
    if (Value sliced = sliceUnmaskedContract(contract, windows))
      return sliced;
    if (Value sliced = sliceTrilContract(contract, windows))
      return sliced;
  }
  return extractWindows(builder, loc, value, windows);
}

Value ProducerSlicer::sliceMap(MapOp map, ArrayRef<DimWindow> windows, Value replaced, Value replacement) {
  SmallVector<Value> inputs;
  for (auto [input, toResult] : llvm::zip(map.getInputs(), map.getInputToResultDims())) {
    if (replaced && input == replaced) {
      inputs.push_back(replacement);
      continue;
    }
    SmallVector<DimWindow> inputWindows;
    for (auto [inputDim, resultDim] : llvm::enumerate(toResult))
      for (const DimWindow &w : windows)
        if (w.dim == resultDim)
          inputWindows.push_back({static_cast<int64_t>(inputDim), w.window});
    inputs.push_back(slice(input, inputWindows));
  }
  // A position the map reads (`la.index d`) is the whole value's: on a window, the window's start plus the
  // slice's own position (causal AFT-full's mask on a block of the bias).
  SmallVector<std::pair<int64_t, Value>> starts;
  for (const DimWindow &w : windows)
    if (!isConstantIntValue(w.window.start, 0))
      starts.push_back({w.dim, getValueOrCreateConstantIndexOp(builder, loc, w.window.start)});
  auto clone = cast<MapOp>(builder.clone(*map));
  clone->setOperands(inputs);
  clone->getResult(0).setType(slicedType(map.getResult(), windows));
  clone.getBody().walk([&](IndexOp index) {
    for (auto [dim, start] : starts) {
      if (static_cast<int64_t>(index.getDim()) != dim)
        continue;
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointAfter(index);
      Value absolute;
      if (index.getType().isIndex()) {
        absolute = arith::AddIOp::create(builder, loc, index, start);
      } else {
        Value count = arith::IndexCastUIOp::create(builder, loc, builder.getI64Type(), start);
        Value offset = arith::UIToFPOp::create(builder, loc, index.getType(), count);
        absolute = arith::AddFOp::create(builder, loc, index, offset);
      }
      index.getResult().replaceAllUsesExcept(absolute, absolute.getDefiningOp());
    }
  });
  return clone.getResult();
}

/// Whether the two `windows` of `contract`'s result are along its mask's row and column letters.
static bool windowsCoverMask(ContractOp contract, ArrayRef<DimWindow> windows) {
  MaskAttr mask = contract.getMaskAttr();
  StringRef result = contract.getSubscripts().getResult();
  std::string sliced = {result[windows[0].dim], result[windows[1].dim]};
  return StringRef(sliced).contains(mask.getRow()) && StringRef(sliced).contains(mask.getCol());
}

/// Inside a diagonal block of its own size, a block mask keeps everything and a causal_block mask is tril.
Value ProducerSlicer::sliceBlockContract(ContractOp contract, ArrayRef<DimWindow> windows) {
  MaskAttr mask = contract.getMaskAttr();
  if (!mask || (mask.getKind() != MaskKind::block && mask.getKind() != MaskKind::causal_block) ||
      mask.getSize() != diagonalBlock || windows.size() != 2)
    return Value();
  const Window &first = windows[0].window, &second = windows[1].window;
  if (first.start != second.start || first.size != second.size)
    return Value();
  if (!windowsCoverMask(contract, windows))
    return Value();
  auto clone = cloneOnWindows(contract, windows);
  if (mask.getKind() == MaskKind::causal_block)
    clone.setMaskAttr(MaskAttr::get(contract.getContext(), MaskKind::tril, mask.getRow(), mask.getCol(), 0));
  else
    clone.removeMaskAttr();
  return clone.getResult();
}

Value ProducerSlicer::sliceUnmaskedContract(ContractOp contract, ArrayRef<DimWindow> windows) {
  if (!contractions || contract.getMaskAttr() || windows.size() < 2)
    return Value();
  return cloneOnWindows(contract, windows).getResult();
}

Value ProducerSlicer::sliceTrilContract(ContractOp contract, ArrayRef<DimWindow> windows) {
  MaskAttr mask = contract.getMaskAttr();
  if (tril == TrilWindows::Unknown || !mask || mask.getKind() != MaskKind::tril || mask.getOffset() != 0 ||
      windows.size() != 2)
    return Value();
  if (!windowsCoverMask(contract, windows))
    return Value();
  ContractOp clone = cloneOnWindows(contract, windows);
  if (tril == TrilWindows::Below)
    clone.removeMaskAttr();
  return clone.getResult();
}

ContractOp ProducerSlicer::cloneOnWindows(ContractOp contract, ArrayRef<DimWindow> windows) {
  SubscriptsAttr s = contract.getSubscripts();
  SmallVector<Value> inputs;
  for (auto [input, term] : llvm::zip(contract.getInputs(), s.getInputs())) {
    SmallVector<DimWindow> inputWindows;
    for (auto [d, letter] : llvm::enumerate(term))
      for (const DimWindow &w : windows)
        if (s.getResult()[w.dim] == letter)
          inputWindows.push_back({static_cast<int64_t>(d), w.window});
    inputs.push_back(slice(input, inputWindows));
  }
  auto clone = cast<ContractOp>(builder.clone(*contract));
  clone->setOperands(inputs);
  clone.getResult().setType(slicedType(contract.getResult(), windows));
  return clone;
}

} // namespace mlir::la
