//===- StagedOperands.h - operand copies that only pay in shared memory -*- C++ -*-===//
//
// la-gpu-contract-to-mma and la-gpu-register-tile copy an operand that many threads read from global memory
// into a temporary first, so that global memory is read once. The copy pays only if the temporary ends up in
// shared memory, which la-gpu-outline-slice-kernel decides later, for all temporaries at once: a staged
// temporary it leaves global is dissolved again (its readers read the operand itself).
//
//===----------------------------------------------------------------------===//
#ifndef LA_TARGET_CUDA_TRANSFORMS_STAGEDOPERANDS_H
#define LA_TARGET_CUDA_TRANSFORMS_STAGEDOPERANDS_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir::la {

/// Marks a `memref.alloc` that holds a copy of an operand (its one `memref.copy` writer's source).
inline constexpr llvm::StringLiteral kStagedCopyAttr = "la.staged_copy";

/// Whether `operand` (a memref) is an argument of the enclosing function, through views: global memory.
bool isKernelArgument(Value operand);

/// A temporary holding a copy of `operand`, made at `b`'s insertion point, marked as a staged copy.
Value stageInTemporary(OpBuilder &b, Location loc, Value operand);

/// Replaces a staged temporary by the operand it copies: its readers read the operand, the copy and the
/// allocation go. Returns false (and changes nothing) when `alloc` is not a staged copy.
bool dissolveStagedCopy(memref::AllocOp alloc);

} // namespace mlir::la

#endif // LA_TARGET_CUDA_TRANSFORMS_STAGEDOPERANDS_H
