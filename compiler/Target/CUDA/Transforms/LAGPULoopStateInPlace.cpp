//===- LAGPULoopStateInPlace.cpp - loop-carried tensors in their own buffer ===//

#include "Target/CUDA/Transforms/CUDAPasses.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::la {
#define GEN_PASS_DEF_LAGPULOOPSTATEINPLACE
#include "Target/CUDA/Transforms/CUDAPasses.h.inc"

namespace {

struct LAGPULoopStateInPlacePass : impl::LAGPULoopStateInPlaceBase<LAGPULoopStateInPlacePass> {
  void runOnOperation() override {
    // In-place loop state never lands in a caller's input (retention_with_state's h0): the arguments are
    // read-only to bufferisation (la-read-only-arguments, in the shared bufferisation steps), which copies
    // such an initial state first.
    func::FuncOp func = getOperation();
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
