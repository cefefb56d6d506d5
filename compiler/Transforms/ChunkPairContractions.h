//===- ChunkPairContractions.h - contractions over a pairs tensor in tiles -*- C++ -*-===//
#ifndef LA_TRANSFORMS_CHUNKPAIRCONTRACTIONS_H
#define LA_TRANSFORMS_CHUNKPAIRCONTRACTIONS_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::la {

/// Adds the rewrite of an unmasked contraction that reduces a computed [.., N, M] pairs tensor over M (GAU's
/// `relu(q kᵀ)² v`) into tiles of `tile` rows by `tile` columns: the pairs tensor is recomputed tile by tile
/// from its producers and each row tile accumulates over the column tiles, so no [.., N, M] tensor is built.
void populateChunkPairContractionPatterns(RewritePatternSet &patterns, int64_t tile);

} // namespace mlir::la

#endif // LA_TRANSFORMS_CHUNKPAIRCONTRACTIONS_H
