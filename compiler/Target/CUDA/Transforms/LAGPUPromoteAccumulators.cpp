//===- LAGPUPromoteAccumulators.cpp - a loop's accumulator in a register ===//

#include "Target/CUDA/Transforms/BufferRoots.h"
#include "Target/CUDA/Transforms/CUDAPasses.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "la-gpu-promote-accumulators"

namespace mlir::la {
#define GEN_PASS_DEF_LAGPUPROMOTEACCUMULATORS
#include "Target/CUDA/Transforms/CUDAPasses.h.inc"

namespace {

/// A load and a later store of `loop`'s body on one element whose indices do not change in the loop, with
/// no other access to its buffer inside the loop.
struct Accumulator {
  memref::LoadOp load;
  memref::StoreOp store;
};

std::optional<Accumulator> findAccumulator(scf::ForOp loop) {
  for (auto store : loop.getBody()->getOps<memref::StoreOp>()) {
    Value root = rootBuffer(store.getMemRef());
    if (!isDistinctRoot(root) || !loop.isDefinedOutsideOfLoop(store.getMemRef()) ||
        !llvm::all_of(store.getIndices(), [&](Value index) { return loop.isDefinedOutsideOfLoop(index); }))
      continue;
    memref::LoadOp load;
    for (auto candidate : loop.getBody()->getOps<memref::LoadOp>())
      if (candidate.getMemRef() == store.getMemRef() && candidate.getIndices() == store.getIndices() &&
          candidate->isBeforeInBlock(store))
        load = candidate;
    if (!load)
      continue;
    // Any other op inside the loop that takes a buffer of the same root may read or write the element.
    WalkResult other = loop.getBody()->walk([&](Operation *op) {
      if (op == load || op == store)
        return WalkResult::advance();
      for (Value operand : op->getOperands())
        if (isa<MemRefType>(operand.getType()) && rootBuffer(operand) == root && !isa<ViewLikeOpInterface>(op))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (!other.wasInterrupted())
      return Accumulator{load, store};
  }
  return std::nullopt;
}

/// x0 = load M[i] before the loop; the loop carries x (the load's value) and yields the stored value;
/// store the loop's result to M[i] after it.
void promote(RewriterBase &rewriter, scf::ForOp &loop, Accumulator accumulator) {
  rewriter.setInsertionPoint(loop);
  Value initial = memref::LoadOp::create(rewriter, accumulator.load.getLoc(), accumulator.load.getMemRef(),
                                         accumulator.load.getIndices());
  Value stored = accumulator.store.getValueToStore();
  auto newLoop = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
      rewriter, initial, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &, Location, ArrayRef<BlockArgument>) { return SmallVector<Value>{stored}; }));
  Value carried = newLoop.getRegionIterArgs().back();
  rewriter.replaceOp(accumulator.load, carried);
  rewriter.setInsertionPointAfter(newLoop);
  memref::StoreOp::create(rewriter, accumulator.store.getLoc(), newLoop.getResults().back(),
                          accumulator.store.getMemRef(), accumulator.store.getIndices());
  rewriter.eraseOp(accumulator.store);
  loop = newLoop;
}

struct LAGPUPromoteAccumulatorsPass : impl::LAGPUPromoteAccumulatorsBase<LAGPUPromoteAccumulatorsPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); }); // innermost first
    IRRewriter rewriter(&getContext());
    unsigned promoted = 0;
    for (scf::ForOp loop : loops)
      while (std::optional<Accumulator> accumulator = findAccumulator(loop)) {
        promote(rewriter, loop, *accumulator);
        ++promoted;
      }
    LLVM_DEBUG(llvm::dbgs() << "promoted " << promoted << " accumulators\n");
  }
};

} // namespace
} // namespace mlir::la
