//===- LAGPUStageLoopInputs.cpp - a chunk loop's input slices through shared memory ===//
//
// A chunk loop reads slices of its inputs (the chunk's rows of q, k, v) straight from global memory, at
// the point of use: every iteration waits for them. Copied into a staged temporary instead, they can be
// copied one iteration ahead by cp.async (la-gpu-prefetch-staged-copies) while the loop computes on the
// previous chunk. The copy saves no global traffic: each byte is read once either way (an input several
// warps read as tensor-core fragments, which would be read more than once, la-gpu-contract-to-mma has
// staged already). So the temporaries get only the shared memory left over (kStagedForLatencyAttr), and
// are dissolved otherwise: letting them compete with the traffic-saving temporaries measured worse
// (docs/BENCHMARKS.md, session 38).
//
//===----------------------------------------------------------------------===//

#include "Target/CUDA/Transforms/BufferRoots.h"
#include "Target/CUDA/Transforms/CUDAPasses.h"
#include "Target/CUDA/Transforms/StagedOperands.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "la-gpu-stage-loop-inputs"

namespace mlir::la {
#define GEN_PASS_DEF_LAGPUSTAGELOOPINPUTS
#include "Target/CUDA/Transforms/CUDAPasses.h.inc"

namespace {

/// Whether `subview` is a slice of a function argument that its `scf.for`, a loop of the function body
/// itself (a chunk loop), computes from the induction variable alone and only loads from (elements or
/// tensor-core fragments, layoutFreeRead): a copy of it can
/// be made for any iteration, ahead of time. (A loop nested in another, such as a scan over a chunk's rows,
/// would copy a row at a time and wait at a barrier for each.)
bool isStageableLoopInput(memref::SubViewOp subview) {
  auto loop = dyn_cast<scf::ForOp>(subview->getParentOp());
  MemRefType type = subview.getType();
  if (!loop || !isa<FunctionOpInterface>(loop->getParentOp()) || !type.hasStaticShape() || type.getRank() == 0 ||
      subview->use_empty() || !isFunctionArgument(rootBuffer(subview.getResult())))
    return false;
  if (!llvm::all_of(subview->getUsers(), [](Operation *user) { return layoutFreeRead(user); }))
    return false;
  return computedPerIteration(subview.getResult(), loop);
}

struct LAGPUStageLoopInputsPass : impl::LAGPUStageLoopInputsBase<LAGPUStageLoopInputsPass> {
  void runOnOperation() override {
    SmallVector<memref::SubViewOp> inputs;
    getOperation().walk([&](memref::SubViewOp subview) {
      if (isStageableLoopInput(subview))
        inputs.push_back(subview);
    });
    for (memref::SubViewOp subview : inputs) {
      OpBuilder b(subview->getContext());
      b.setInsertionPointAfter(subview);
      Value staged = stageInTemporary(b, subview.getLoc(), subview.getResult());
      staged.getDefiningOp()->setAttr(kStagedForLatencyAttr, b.getUnitAttr());
      for (Operation *user : llvm::make_early_inc_range(subview->getUsers()))
        if (OpOperand *read = layoutFreeRead(user))
          read->assign(staged);
    }
    LLVM_DEBUG(llvm::dbgs() << "la-gpu-stage-loop-inputs: " << inputs.size() << " input slice(s) staged\n");
  }
};

} // namespace
} // namespace mlir::la
