//===- LAHoistBlockAccumulators.cpp - accumulators stay in registers ------===//
//
// After vectorisation a register block reads its accumulator, adds one reduction step and writes it back,
// every step. Upstream `hoistLoopInvariantSubsets` turns each such read/write pair of a loop-carried tensor
// into a loop-carried vector, so the accumulator block lives in registers for the whole reduction.
//
//===----------------------------------------------------------------------===//

#include "Target/CPU/Transforms/BlockLoops.h"
#include "Target/CPU/Transforms/CPUPasses.h"

#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "la-hoist-block-accumulators"

namespace mlir::la {
#define GEN_PASS_DEF_LAHOISTBLOCKACCUMULATORS
#include "Target/CPU/Transforms/CPUPasses.h.inc"

namespace {

struct LAHoistBlockAccumulatorsPass : impl::LAHoistBlockAccumulatorsBase<LAHoistBlockAccumulatorsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // Register blocks are the only vector code on tensors at this point of the pipeline; a function without
    // them is left as it is (its loops are LLVM's to vectorise).
    bool hasBlocks = func.walk([](Operation *op) {
                           return isa<vector::TransferReadOp, vector::TransferWriteOp>(op) ? WalkResult::interrupt()
                                                                                           : WalkResult::advance();
                         })
                         .wasInterrupted();
    if (!hasBlocks)
      return;
    IRRewriter rewriter(&getContext());
    func.walk<WalkOrder::PostOrder>([&](scf::ForOp loop) {
      // A loop that gains loop-carried values is rebuilt: compare the op, and log the old one's location.
      Operation *before = loop;
      Location loc = loop.getLoc();
      LoopLikeOpInterface after = hoistLoopInvariantSubsets(rewriter, cast<LoopLikeOpInterface>(before));
      LLVM_DEBUG(if (after.getOperation() != before) llvm::dbgs()
                 << "[" DEBUG_TYPE "] " << loc << ": accumulators carried across the loop\n");
      (void)after;
      (void)loc;
    });
    if (failed(canonicalizeBlocks(func)))
      return signalPassFailure();
  }
};

} // namespace
} // namespace mlir::la
