//===- LAGPULoopStateInPlace.cpp - loop-carried tensors in their own buffer ===//

#include "Target/CUDA/Transforms/CUDAPasses.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::la {
#define GEN_PASS_DEF_LAGPULOOPSTATEINPLACE
#include "Target/CUDA/Transforms/CUDAPasses.h.inc"

namespace {

/// Whether the loop reads its carried tensor `iterArg` (a state), rather than only writing it a slice per
/// iteration (a sequence-long result).
bool readsCarriedTensor(BlockArgument iterArg) {
  return llvm::any_of(iterArg.getUses(), [](OpOperand &use) {
    auto insert = dyn_cast<tensor::InsertSliceOp>(use.getOwner());
    return !insert || use.get() != insert.getDest();
  });
}

/// Copies each returned loop state out after its loop. Returned as it is, bufferisation would give the loop
/// the caller's result buffer (buffer-results-to-out-params puts a returned allocation there), and the loop
/// would read and write its state in global memory at every chunk; with the copy the state lives in a
/// temporary that la-gpu-outline-slice-kernel can keep in shared memory, and the result is written once.
void copyOutReturnedStates(func::FuncOp func) {
  func.walk([](func::ReturnOp ret) {
    OpBuilder b(ret);
    for (OpOperand &operand : ret->getOpOperands()) {
      auto result = dyn_cast<OpResult>(operand.get());
      auto loop = result ? dyn_cast<scf::ForOp>(result.getOwner()) : scf::ForOp();
      auto type = loop ? dyn_cast<RankedTensorType>(result.getType()) : RankedTensorType();
      if (!type || !type.hasStaticShape() || !readsCarriedTensor(loop.getRegionIterArg(result.getResultNumber())))
        continue;
      Value empty = tensor::EmptyOp::create(b, ret.getLoc(), type.getShape(), type.getElementType());
      operand.set(linalg::CopyOp::create(b, ret.getLoc(), result, empty).getResult(0));
    }
  });
}

struct LAGPULoopStateInPlacePass : impl::LAGPULoopStateInPlaceBase<LAGPULoopStateInPlacePass> {
  void runOnOperation() override {
    // In-place loop state never lands in a caller's input (retention_with_state's h0): the arguments are
    // read-only to bufferisation (la-read-only-arguments, in the shared bufferisation steps), which copies
    // such an initial state first.
    func::FuncOp func = getOperation();
    copyOutReturnedStates(func);
    func.walk([](scf::ForOp loop) {
      auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
      OpBuilder b(yield);
      for (auto [operand, iterArg] : llvm::zip(yield->getOpOperands(), loop.getRegionIterArgs())) {
        Value value = operand.get();
        if (value == iterArg || !isa<RankedTensorType>(value.getType()))
          continue;
        auto inPlace = bufferization::MaterializeInDestinationOp::create(b, yield.getLoc(), value, iterArg);
        operand.set(inPlace.getResult());
      }
    });
  }
};

} // namespace
} // namespace mlir::la
