//===- BlockLoops.h - helpers shared by the register-tiling steps -*- C++ -*-===//
//
// Several steps (panels, epilogue fusion, tiling) leave loops whose trip does not divide, and each then
// canonicalises so that the peeled blocks get static shapes, which the vectoriser needs.
//
//===----------------------------------------------------------------------===//

#ifndef LA_TARGET_CPU_TRANSFORMS_BLOCKLOOPS_H
#define LA_TARGET_CPU_TRANSFORMS_BLOCKLOOPS_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace mlir::la {

/// Peels the ragged last trip of each loop of a tile loop nest (`loops` outermost first), outer to inner.
/// Peeling a loop copies its body into the remainder loop, so the loops inside that copy are peeled too:
/// every block ends up with a static shape.
void peelOuterToInner(RewriterBase &rewriter, ArrayRef<LoopLikeOpInterface> loops);

/// Canonicalisation patterns of every loaded dialect and registered op, as the canonicalizer collects them.
void populateCanonicalizationPatterns(MLIRContext *context, RewritePatternSet &patterns);

/// Canonicalises `op` after a step that peeled loops: the peeled bounds fold into static block shapes.
/// With `foldEmptyTensors`, a slice of a `tensor.empty` also becomes a block-sized `tensor.empty` (one
/// small buffer per block instead of a slice of a sequence-long one).
LogicalResult canonicalizeBlocks(Operation *op, bool foldEmptyTensors = false);

} // namespace mlir::la

#endif // LA_TARGET_CPU_TRANSFORMS_BLOCKLOOPS_H
