//===- ProducerSlicer.cpp - slice a value by recomputing its producers ----===//

#include "Transforms/ProducerSlicer.h"
#include "Transforms/RecomputeCost.h"

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
      map && !mapUsesIndex(map) &&
      (map->hasOneUse() || windows.size() >= 2 || (cheapMaps && recomputeCost(map) <= kCheapRecomputeCost)))
    return sliceMap(map, windows);
  if (auto contract = dyn_cast_or_null<ContractOp>(producer))
    if (Value sliced = sliceBlockContract(contract, windows))
      return sliced;
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
  Operation *clone = builder.clone(*map);
  clone->setOperands(inputs);
  clone->getResult(0).setType(slicedType(map.getResult(), windows));
  return clone->getResult(0);
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
  SubscriptsAttr s = contract.getSubscripts();
  std::string sliced = {s.getResult()[windows[0].dim], s.getResult()[windows[1].dim]};
  if (!StringRef(sliced).contains(mask.getRow()) || !StringRef(sliced).contains(mask.getCol()))
    return Value();
  SmallVector<Value> inputs;
  for (auto [input, term] : llvm::zip(contract.getInputs(), s.getInputs())) {
    SmallVector<DimWindow> inputWindows;
    for (auto [d, letter] : llvm::enumerate(term))
      if (letter == mask.getRow() || letter == mask.getCol())
        inputWindows.push_back({static_cast<int64_t>(d), first});
    inputs.push_back(slice(input, inputWindows));
  }
  auto clone = cast<ContractOp>(builder.clone(*contract));
  clone->setOperands(inputs);
  clone.getResult().setType(slicedType(contract.getResult(), windows));
  if (mask.getKind() == MaskKind::causal_block)
    clone.setMaskAttr(MaskAttr::get(contract.getContext(), MaskKind::tril, mask.getRow(), mask.getCol(), 0));
  else
    clone.removeMaskAttr();
  return clone.getResult();
}

} // namespace mlir::la
