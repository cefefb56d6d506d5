//===- ChunkBlockContractions.h - block-diagonal contractions in chunks -*- C++ -*-===//
#ifndef LA_TRANSFORMS_CHUNKBLOCKCONTRACTIONS_H
#define LA_TRANSFORMS_CHUNKBLOCKCONTRACTIONS_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::la {

/// Adds the rewrite of a contraction with a `block`/`causal_block` mask over a contracted position (FLASH's
/// quadratic part) into a loop over the diagonal blocks, recomputing the masked producer chain per block, so
/// that no [.., N, N] tensor is built.
void populateChunkBlockContractionPatterns(RewritePatternSet &patterns);

} // namespace mlir::la

#endif // LA_TRANSFORMS_CHUNKBLOCKCONTRACTIONS_H
