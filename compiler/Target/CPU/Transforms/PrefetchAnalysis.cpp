//===- PrefetchAnalysis.cpp - what the prefetching passes ask of a kernel ---===//

#include "Target/CPU/Transforms/PrefetchAnalysis.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::la {

bool anyUseThroughViews(Value buffer, llvm::function_ref<bool(OpOperand &)> predicate) {
  SmallVector<Value> worklist{buffer};
  while (!worklist.empty()) {
    Value view = worklist.pop_back_val();
    for (OpOperand &use : view.getUses()) {
      if (isa<ViewLikeOpInterface>(use.getOwner()))
        worklist.append(use.getOwner()->result_begin(), use.getOwner()->result_end());
      else if (predicate(use))
        return true;
    }
  }
  return false;
}

bool isWritten(Value buffer) {
  return anyUseThroughViews(buffer, [](OpOperand &use) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(use.getOwner());
    return !effects || effects.getEffectOnValue<MemoryEffects::Write>(use.get()); // unknown effects: a write
  });
}

bool holdsRegisterBlocks(scf::ForOp loop) {
  return loop.getBody()->walk([](vector::FMAOp) { return WalkResult::interrupt(); }).wasInterrupted();
}

} // namespace mlir::la
