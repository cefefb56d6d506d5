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

/// Whether one op keeps the first k dimensions as independent batch dimensions.
bool keepsBatchDims(Operation *op, int64_t k) {
  if (auto map = dyn_cast<MapOp>(op)) {
    bool indexOk = true;
    map.getBody().walk([&](IndexOp index) { indexOk &= index.getDimAttr().getInt() >= k; });
    if (!indexOk)
      return false;
    for (auto [input, dims] : llvm::zip(map.getInputs(), map.getInputToResultDims())) {
      if (rankOf(input) == 0)
        continue; // A scalar (e.g. a sequence length) is the same for every slice.
      if (rankOf(input) < k)
        return false;
      for (int64_t d = 0; d < k; ++d)
        if (dims[d] != d)
          return false;
    }
    return true;
  }
  if (auto contract = dyn_cast<ContractOp>(op)) {
    Subscripts subscripts = contract.getParsedSubscripts();
    if (static_cast<int64_t>(subscripts.result.size()) < k)
      return false;
    StringRef batch = StringRef(subscripts.result).take_front(k);
    for (const std::string &term : subscripts.inputs)
      if (!StringRef(term).starts_with(batch))
        return false;
    if (MaskAttr mask = contract.getMaskAttr())
      if (batch.contains(mask.getRow()) || batch.contains(mask.getCol()))
        return false;
    return !contract.getGate() || rankOf(contract.getGate()) >= k;
  }
  if (auto reduce = dyn_cast<ReduceOp>(op))
    return allAtLeast(reduce.getDims(), k);
  if (auto scan = dyn_cast<ScanOp>(op))
    return scan.getDimAttr().getInt() >= k &&
           llvm::all_of(scan.getOperands(), [&](Value v) { return rankOf(v) >= k; });
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
  // Scalar arithmetic inside map regions and constants are per element; anything else is unknown.
  if (isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
    return llvm::none_of(op->getResultTypes(), [](Type t) { return isa<TensorType>(t); });
  return isa<func::ReturnOp>(op);
}

} // namespace

int64_t getSliceableLeadingDims(func::FuncOp func, int64_t maxDims) {
  for (int64_t k = maxDims; k > 0; --k) {
    auto hasBatchDims = [&](Type type) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      return tensor && tensor.getRank() >= k;
    };
    if (!llvm::all_of(func.getArgumentTypes(), hasBatchDims) ||
        !llvm::all_of(func.getResultTypes(), hasBatchDims))
      continue;
    bool ok = true;
    func.walk([&](Operation *op) {
      if (op != func.getOperation() && !keepsBatchDims(op, k))
        ok = false;
    });
    if (ok)
      return k;
  }
  return 0;
}

} // namespace mlir::la
