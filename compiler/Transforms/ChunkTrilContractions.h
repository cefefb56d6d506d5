//===- ChunkTrilContractions.h - causal contractions over the triangle -*- C++ -*-===//
#ifndef LA_TRANSFORMS_CHUNKTRILCONTRACTIONS_H
#define LA_TRANSFORMS_CHUNKTRILCONTRACTIONS_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::la {

/// Adds the rewrite of a contraction with a `tril(n, m)` mask over a contracted position m (causal AFT-full's
/// products) into a loop over blocks of `block` result rows, each reading only the columns up to its own
/// end: dense blocks before the diagonal, the mask on the diagonal block alone. T(T + block)/2 pairs
/// instead of T².
/// With `recomputeTriangles`, a tril-masked contraction that produces an operand (FLASH's causal scores) is
/// recomputed on each block too: unmasked on the blocks before the diagonal, masked on the diagonal one.
void populateChunkTrilContractionPatterns(RewritePatternSet &patterns, int64_t block, bool recomputeTriangles = false);

} // namespace mlir::la

#endif // LA_TRANSFORMS_CHUNKTRILCONTRACTIONS_H
