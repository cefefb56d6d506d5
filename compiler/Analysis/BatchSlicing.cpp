//===- BatchSlicing.cpp - which leading dimensions a kernel is independent over ----===//

#include "Analysis/BatchSlicing.h"

#include "LA/IR/LAOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::la {
namespace {

int64_t rankOf(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type ? type.getRank() : -1;
}

bool allAtLeast(ArrayRef<int64_t> dims, int64_t k) {
  return llvm::all_of(dims, [&](int64_t d) { return d >= k; });
}

/// The dimension `value` is the extent of, when it is `tensor.dim` with a constant index.
std::optional<int64_t> extentDim(Value value) {
  auto dim = value.getDefiningOp<tensor::DimOp>();
  return dim ? dim.getConstantIndex() : std::nullopt;
}

/// Whether `size`, the size of a slice along leading dimension `d` of `source`, is the whole dimension: a
/// slice keeps the dimension's full extent only then, whatever that extent is in a slice of the kernel.
bool isFullExtent(OpFoldResult size, Value source, int64_t d) {
  if (auto value = dyn_cast<Value>(size))
    return extentDim(value) == d;
  auto type = cast<RankedTensorType>(source.getType());
  return !type.isDynamicDim(d) && getConstantIntValue(size) == type.getDimSize(d);
}

/// A slice keeps the first k dimensions whole: offset 0, full size, stride 1, none dropped.
bool keepsLeadingDimsWhole(tensor::ExtractSliceOp slice, int64_t k) {
  if (slice.getSourceType().getRank() < k)
    return false;
  llvm::SmallBitVector dropped = slice.getDroppedDims();
  for (int64_t d = 0; d < k; ++d)
    if (dropped.test(d) || !isConstantIntValue(slice.getMixedOffsets()[d], 0) ||
        !isConstantIntValue(slice.getMixedStrides()[d], 1) ||
        !isFullExtent(slice.getMixedSizes()[d], slice.getSource(), d))
      return false;
  return true;
}

/// The dimension given by the `j`-th dynamic entry of a static size list, or -1.
int64_t dynamicEntryDim(ArrayRef<int64_t> staticSizes, int64_t j) {
  for (auto [i, size] : llvm::enumerate(staticSizes))
    if (ShapedType::isDynamic(size) && j-- == 0)
      return i;
  return -1;
}

/// A leading dimension's extent differs between the whole tensor and a slice (B against 1): `tensor.dim` of
/// one may only size that same dimension of a slice, a new tensor or an expanded one, never feed arithmetic
/// or an offset.
bool isOnlyUsedAsExtent(tensor::DimOp dim, int64_t d) {
  return llvm::all_of(dim->getUses(), [&](OpOperand &use) {
    Operation *user = use.getOwner();
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user)) {
      int64_t j = static_cast<int64_t>(use.getOperandNumber()) - slice.getSizes().getBeginOperandIndex();
      return j >= 0 && j < static_cast<int64_t>(slice.getSizes().size()) &&
             dynamicEntryDim(slice.getStaticSizes(), j) == d;
    }
    if (auto empty = dyn_cast<tensor::EmptyOp>(user))
      return dynamicEntryDim(empty.getType().getShape(), use.getOperandNumber()) == d;
    // Leading groups are single dimensions (checked on the reshape), so result dimension d is source's d.
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(user)) {
      int64_t j = static_cast<int64_t>(use.getOperandNumber()) - expand.getOutputShape().getBeginOperandIndex();
      return j >= 0 && dynamicEntryDim(expand.getStaticOutputShape(), j) == d;
    }
    return false;
  });
}

/// A reshape keeps the first k dimensions when each starts a group of its own, joined at most by unit
/// dimensions of `wide` (the side with more dimensions): a [B, H, 1] state collapsed to [B, H] merges the
/// sequence's unit dimension into H, which a slice leaves alone.
bool keepsLeadingGroups(ArrayRef<ReassociationIndices> groups, RankedTensorType wide, int64_t k) {
  if (static_cast<int64_t>(groups.size()) < k)
    return false;
  for (int64_t d = 0; d < k; ++d) {
    if (groups[d].front() != d)
      return false;
    for (int64_t member : ArrayRef<int64_t>(groups[d]).drop_front())
      if (wide.getDimSize(member) != 1)
        return false;
  }
  return true;
}

/// Whether `dims`, the result dimensions an operand spans, avoid the first k: it is broadcast along them.
bool avoidsLeadingDims(ArrayRef<int64_t> dims, int64_t k) {
  return llvm::all_of(dims, [&](int64_t d) { return d >= k; });
}

/// Whether a contraction's term names none of the batch letters.
bool avoidsLetters(StringRef term, StringRef batch) {
  return llvm::none_of(term, [&](char c) { return batch.contains(c); });
}

/// Whether one op keeps the first k dimensions as independent batch dimensions, given the values every slice
/// computes alike (`shared`, which have none of them).
bool keepsBatchDims(Operation *op, int64_t k, const llvm::DenseSet<Value> &shared) {
  // A result must be written slice by slice.
  if (isa<func::ReturnOp>(op))
    return llvm::none_of(op->getOperands(), [&](Value v) { return shared.contains(v); });
  // Every slice computes an op of shared values alike, whatever dimensions it involves. Only a map or a
  // contraction may combine them with values of the slice (by broadcasting them along its dimensions).
  int64_t numTensors = llvm::count_if(op->getOperands(), [](Value v) { return isa<TensorType>(v.getType()); });
  int64_t numShared = llvm::count_if(op->getOperands(), [&](Value v) { return shared.contains(v); });
  if (numTensors > 0 && numShared == numTensors)
    return true;
  if (numShared > 0 && !isa<MapOp, ContractOp>(op))
    return false;

  if (auto map = dyn_cast<MapOp>(op)) {
    // A `la.index` along a leading dimension is fine: a slice reads its coordinates from arguments
    // (la-slice-positions). The map's own leading dimensions must be the batch dimensions, though.
    if (rankOf(map.getResult()) < k)
      return false;
    for (auto [input, dims] : llvm::zip(map.getInputs(), map.getInputToResultDims())) {
      if (rankOf(input) == 0)
        continue; // A scalar (e.g. a sequence length) is the same for every slice.
      if (shared.contains(input)) {
        if (!avoidsLeadingDims(dims, k))
          return false;
        continue;
      }
      if (rankOf(input) < k)
        return false;
      for (int64_t d = 0; d < k; ++d)
        if (dims[d] != d)
          return false;
    }
    return true;
  }
  if (auto contract = dyn_cast<ContractOp>(op)) {
    SubscriptsAttr subscripts = contract.getSubscripts();
    if (static_cast<int64_t>(subscripts.getResult().size()) < k)
      return false;
    StringRef batch = subscripts.getResult().take_front(k);
    for (auto [input, term] : llvm::zip(contract.getInputs(), subscripts.getInputs()))
      if (shared.contains(input) ? !avoidsLetters(term, batch) : !term.starts_with(batch))
        return false;
    if (MaskAttr mask = contract.getMaskAttr())
      if (batch.contains(mask.getRow()) || batch.contains(mask.getCol()))
        return false;
    return !contract.getGate() || (!shared.contains(contract.getGate()) && rankOf(contract.getGate()) >= k);
  }
  if (auto reduce = dyn_cast<ReduceOp>(op))
    return allAtLeast(reduce.getDims(), k);
  if (auto scan = dyn_cast<ScanOp>(op))
    return scan.getDimAttr().getInt() >= k && llvm::all_of(scan.getOperands(), [&](Value v) { return rankOf(v) >= k; });
  if (auto window = dyn_cast<WindowOp>(op))
    return allAtLeast(window.getDims(), k);
  if (auto normalize = dyn_cast<NormalizeOp>(op))
    return normalize.getDimAttr().getInt() >= k;
  if (auto gate = dyn_cast<GateOp>(op))
    return rankOf(gate.getGate()) >= k;
  if (auto size = dyn_cast<SizeOp>(op))
    return size.getDimAttr().getInt() >= k;
  if (isa<IndexOp, YieldOp>(op))
    return true;
  // Shape glue the frontend writes around the ops, e.g. the last position of a state sequence.
  if (auto dim = dyn_cast<tensor::DimOp>(op)) {
    std::optional<int64_t> d = dim.getConstantIndex();
    return d && (*d >= k || (rankOf(dim.getSource()) >= k && isOnlyUsedAsExtent(dim, *d)));
  }
  // A new tensor's leading extents are dynamic, hence sizes read by `tensor.dim` (checked above).
  if (auto empty = dyn_cast<tensor::EmptyOp>(op))
    return empty.getType().getRank() >= k &&
           llvm::all_of(llvm::seq<int64_t>(0, k), [&](int64_t d) { return empty.getType().isDynamicDim(d); });
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
    return keepsLeadingDimsWhole(slice, k);
  if (auto reshape = dyn_cast<tensor::CollapseShapeOp>(op))
    return keepsLeadingGroups(reshape.getReassociationIndices(), reshape.getSrcType(), k);
  if (auto reshape = dyn_cast<tensor::ExpandShapeOp>(op))
    return keepsLeadingGroups(reshape.getReassociationIndices(), reshape.getResultType(), k);
  // Scalar arithmetic inside map regions and constants are per element; anything else is unknown.
  if (isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
    return llvm::none_of(op->getResultTypes(), [](Type t) { return isa<TensorType>(t); });
  return false;
}

/// Whether some use of `value` broadcasts it along the first k dimensions: a map input that spans none of
/// them, or a contraction term without the batch letters.
bool hasBroadcastingUse(Value value, int64_t k) {
  // A scalar (a sequence length read by `la.size`) spans no dimension to tell.
  if (rankOf(value) < 1)
    return false;
  for (OpOperand &use : value.getUses()) {
    if (auto map = dyn_cast<MapOp>(use.getOwner())) {
      if (rankOf(map.getResult()) >= k && avoidsLeadingDims(map.getInputToResultDims()[use.getOperandNumber()], k))
        return true;
    } else if (auto contract = dyn_cast<ContractOp>(use.getOwner())) {
      SubscriptsAttr subscripts = contract.getSubscripts();
      unsigned input = use.getOperandNumber();
      if (input < subscripts.getNumInputs() && static_cast<int64_t>(subscripts.getResult().size()) >= k &&
          avoidsLetters(subscripts.getInput(input), subscripts.getResult().take_front(k)))
        return true;
    }
  }
  return false;
}

} // namespace

llvm::DenseSet<Value> getSharedValues(func::FuncOp func, ArrayRef<bool> sharedArguments) {
  llvm::DenseSet<Value> shared;
  for (auto [argument, isShared] : llvm::zip(func.getArguments(), sharedArguments))
    if (isShared)
      shared.insert(argument);
  // Operands come before their users, so one walk in program order propagates.
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    auto tensors = llvm::make_filter_range(op->getOperands(), [](Value v) { return isa<TensorType>(v.getType()); });
    if (tensors.empty() || !llvm::all_of(tensors, [&](Value v) { return shared.contains(v); }))
      return;
    for (Value result : op->getResults())
      if (isa<TensorType>(result.getType()))
        shared.insert(result);
  });
  return shared;
}

BatchSlicing analyzeBatchSlicing(func::FuncOp func, int64_t maxDims) {
  for (int64_t k = maxDims; k > 0; --k) {
    auto hasBatchDims = [&](Type type) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      return tensor && tensor.getRank() >= k;
    };
    if (!llvm::all_of(func.getResultTypes(), hasBatchDims))
      continue;
    // An argument without the batch dimensions, or one that some op broadcasts along them, is shared; the
    // ops' checks below then hold every use of it to that.
    // AFT-local's bias is broadcast after a map of its own (e^w - 1), so the uses are looked for on every
    // value computed from the argument alone.
    SmallVector<bool> sharedArguments;
    for (BlockArgument argument : func.getArguments()) {
      SmallVector<bool> alone(func.getNumArguments(), false);
      alone[argument.getArgNumber()] = true;
      bool broadcast = llvm::any_of(getSharedValues(func, alone), [&](Value v) { return hasBroadcastingUse(v, k); });
      sharedArguments.push_back(isa<RankedTensorType>(argument.getType()) &&
                                (!hasBatchDims(argument.getType()) || broadcast));
    }
    if (llvm::any_of(llvm::zip(func.getArgumentTypes(), sharedArguments),
                     [&](auto pair) { return !std::get<1>(pair) && !hasBatchDims(std::get<0>(pair)); }))
      continue;
    llvm::DenseSet<Value> shared = getSharedValues(func, sharedArguments);
    bool ok = true;
    func.walk([&](Operation *op) {
      if (op != func.getOperation() && !keepsBatchDims(op, k, shared))
        ok = false;
    });
    if (ok)
      return {k, std::move(sharedArguments)};
  }
  return {};
}

} // namespace mlir::la
