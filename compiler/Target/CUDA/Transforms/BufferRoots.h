//===- BufferRoots.h - which buffers a bufferised GPU kernel's accesses may alias -*- C++ -*-===//
//
// The CUDA passes that move or merge memory accesses after bufferisation (la-gpu-promote-accumulators,
// la-gpu-contract-to-mma) decide aliasing by roots: two accesses can touch the same bytes only when their
// memrefs are views of the same buffer.
//
//===----------------------------------------------------------------------===//
#ifndef LA_TARGET_CUDA_TRANSFORMS_BUFFERROOTS_H
#define LA_TARGET_CUDA_TRANSFORMS_BUFFERROOTS_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::la {

/// The buffer `memref` is a view of: an allocation, a function argument, or whatever a view chain ends in.
inline Value rootBuffer(Value memref) { return memref::skipViewLikeOps(cast<MemrefValue>(memref)); }

/// True when `root` is an argument of the enclosing function: in a kernel, global memory.
inline bool isFunctionArgument(Value root) {
  auto argument = dyn_cast<BlockArgument>(root);
  return argument && isa<FunctionOpInterface>(argument.getOwner()->getParentOp());
}

/// True when `root` is a buffer that no other root aliases: an allocation, or an argument of the function
/// (the runtime's outputs overlap no other argument, and inputs are never written).
inline bool isDistinctRoot(Value root) {
  return root.getDefiningOp<memref::AllocOp>() || root.getDefiningOp<memref::AllocaOp>() || isFunctionArgument(root);
}

} // namespace mlir::la

#endif // LA_TARGET_CUDA_TRANSFORMS_BUFFERROOTS_H
