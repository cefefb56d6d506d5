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
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir::la {

/// Marks a `memref.alloc` that holds a copy of an operand (its one `memref.copy` writer's source).
inline constexpr llvm::StringLiteral kStagedCopyAttr = "la.staged_copy";

/// On a staged temporary that saves no global traffic (la-gpu-stage-loop-inputs: the loop reads each byte of
/// it once anyway) but lets the copy run ahead of its readers: it gets shared memory only where the
/// temporaries that do save traffic leave room.
inline constexpr llvm::StringLiteral kStagedForLatencyAttr = "la.staged_for_latency";

/// On a staged temporary's view (la-gpu-outline-slice-kernel): the bytes from its slot to a second one of
/// the same size, which la-gpu-prefetch-staged-copies fills one loop iteration ahead.
inline constexpr llvm::StringLiteral kPrefetchSlotStrideAttr = "la.prefetch_slot_stride";

/// The buffer operand of `user` when it only reads that buffer and takes any layout of it (a `memref.load`
/// or an `la_gpu.mma_fragment`), so that it can read a staged copy instead of the operand or the other way
/// round; null for any other op.
OpOperand *layoutFreeRead(Operation *user);

/// A temporary holding a copy of `operand`, made at `b`'s insertion point, marked as a staged copy; before
/// the enclosing `scf.for` loops instead (outermost first) that neither define `operand` nor may write the
/// buffer it views, since each iteration would copy the same bytes.
Value stageInTemporary(OpBuilder &b, Location loc, Value operand);

/// Replaces a staged temporary by the operand it copies: its readers (loads and fragments, directly or
/// through subviews) read the operand, the copy and the allocation go. Returns false (and changes nothing)
/// when `alloc` is not a staged copy or something else reads it.
bool dissolveStagedCopy(memref::AllocOp alloc);

/// The copy that fills the staged temporary `buffer` (an allocation or its view), if there is exactly one.
memref::CopyOp stagingCopy(Value buffer);

/// The loop in which `copy` can be issued one iteration ahead: the `scf.for` whose body holds it directly,
/// when its source is computed there from the induction variable and values defined outside the loop
/// only, by ops without memory effects or regions, and everything else that uses its target comes after
/// it in the body. Null otherwise.
scf::ForOp prefetchLoop(memref::CopyOp copy);

/// Whether `value` is computed in `loop`'s body from the induction variable and values defined outside the
/// loop only, by ops without memory effects or regions: it can be computed for any iteration.
bool computedPerIteration(Value value, scf::ForOp loop);

/// `copy`'s source as it is in the iteration of `loop` (prefetchLoop) whose induction variable is `iv`,
/// computed at `b`'s insertion point by clones of the ops that compute it.
Value sourceInIteration(OpBuilder &b, memref::CopyOp copy, scf::ForOp loop, Value iv);

} // namespace mlir::la

#endif // LA_TARGET_CUDA_TRANSFORMS_STAGEDOPERANDS_H
