//===- LAGPUOffsetSliceArguments.cpp - each block at its own slice ---------===//

#include "Target/CUDA/Transforms/CUDAPasses.h"

namespace mlir::la {
#define GEN_PASS_DEF_LAGPUOFFSETSLICEARGUMENTS
#include "Target/CUDA/Transforms/CUDAPasses.h.inc"

namespace {

LogicalResult offsetArguments(LLVM::LLVMFuncOp kernel, ArrayRef<int64_t> sliceBytes) {
  SmallVector<BlockArgument> pointers;
  for (BlockArgument argument : kernel.getArguments())
    if (isa<LLVM::LLVMPointerType>(argument.getType()))
      pointers.push_back(argument);
  if (pointers.size() != sliceBytes.size() || pointers.size() != kernel.getNumArguments())
    return kernel.emitError() << "la-gpu-offset-slice-arguments: " << kSliceBytesAttr << " lists " << sliceBytes.size()
                              << " arguments but the kernel has " << kernel.getNumArguments() << " arguments, "
                              << pointers.size() << " of them pointers (lower with bare-pointer memref arguments)";

  OpBuilder b(&kernel.getBody().front(), kernel.getBody().front().begin());
  Location loc = kernel.getLoc();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto widen = [&](Value value) { return LLVM::ZExtOp::create(b, loc, i64, value); };
  // Block (x, y) is slice x + nctaid.x · y: the runtime's slice order (batch-major, head fastest).
  Value x = widen(NVVM::BlockIdXOp::create(b, loc, i32));
  Value y = widen(NVVM::BlockIdYOp::create(b, loc, i32));
  Value width = widen(NVVM::GridDimXOp::create(b, loc, i32));
  Value slice = LLVM::AddOp::create(b, loc, x, LLVM::MulOp::create(b, loc, y, width));
  for (auto [pointer, bytes] : llvm::zip(pointers, sliceBytes)) {
    if (bytes == 0)
      continue; // read whole by every block (a shared argument)
    Value stride = LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(bytes));
    Value offset = LLVM::MulOp::create(b, loc, slice, stride);
    auto shifted = LLVM::GEPOp::create(b, loc, pointer.getType(), b.getI8Type(), pointer, ValueRange{offset},
                                       LLVM::GEPNoWrapFlags::inbounds);
    pointer.replaceAllUsesExcept(shifted.getResult(), shifted);
  }
  return success();
}

struct LAGPUOffsetSliceArgumentsPass : impl::LAGPUOffsetSliceArgumentsBase<LAGPUOffsetSliceArgumentsPass> {
  void runOnOperation() override {
    for (auto kernel : getOperation().getOps<LLVM::LLVMFuncOp>()) {
      auto sliceBytes = kernel->getAttrOfType<DenseI64ArrayAttr>(kSliceBytesAttr);
      if (!sliceBytes || kernel.isExternal())
        continue;
      if (failed(offsetArguments(kernel, sliceBytes.asArrayRef())))
        return signalPassFailure();
      // Applied: a second run must not move the pointers again.
      kernel->removeAttr(kSliceBytesAttr);
    }
  }
};

} // namespace
} // namespace mlir::la
