//===- ArgumentViews.h - what a kernel does with its buffer arguments -*- C++ -*-===//
//
// The prefetching passes look for reads of a function's true inputs through views of them; a buffer the
// function also writes (bufferisation may compute a temporary in an output) is in cache when it is read.
//
//===----------------------------------------------------------------------===//

#ifndef LA_TARGET_CPU_TRANSFORMS_ARGUMENTVIEWS_H
#define LA_TARGET_CPU_TRANSFORMS_ARGUMENTVIEWS_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::la {

/// Whether `predicate` holds for a use of `buffer` or of a view of it (views are followed, not tested).
bool anyUseThroughViews(Value buffer, llvm::function_ref<bool(OpOperand &)> predicate);

/// Whether the function writes `buffer` (through any view of it); an op with unknown effects counts as a
/// write.
bool isWritten(Value buffer);

} // namespace mlir::la

#endif // LA_TARGET_CPU_TRANSFORMS_ARGUMENTVIEWS_H
