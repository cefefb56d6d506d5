//===- PrefetchAnalysis.h - what the prefetching passes ask of a kernel -*- C++ -*-===//
//
// The prefetching passes (la-prefetch-next-tile, la-prefetch-strided-streams) look for reads of a
// function's true inputs through views of them (a buffer the function also writes, as bufferisation may
// compute a temporary in an output, is in cache when it is read), and tell the loops of register blocks,
// which compute from cache, from the others.
//
//===----------------------------------------------------------------------===//

#ifndef LA_TARGET_CPU_TRANSFORMS_PREFETCHANALYSIS_H
#define LA_TARGET_CPU_TRANSFORMS_PREFETCHANALYSIS_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::la {

/// Whether `predicate` holds for a use of `buffer` or of a view of it (views are followed, not tested).
bool anyUseThroughViews(Value buffer, llvm::function_ref<bool(OpOperand &)> predicate);

/// Whether the function writes `buffer` (through any view of it); an op with unknown effects counts as a
/// write.
bool isWritten(Value buffer);

/// Whether `loop` holds register-blocked arithmetic (`vector.fma`): it computes from cache, on panels and
/// row blocks that the tiling keeps there.
bool holdsRegisterBlocks(scf::ForOp loop);

} // namespace mlir::la

#endif // LA_TARGET_CPU_TRANSFORMS_PREFETCHANALYSIS_H
