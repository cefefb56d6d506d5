//===- ChunkBandContractions.h - banded contractions in row blocks -*- C++ -*-===//
#ifndef LA_TRANSFORMS_CHUNKBANDCONTRACTIONS_H
#define LA_TRANSFORMS_CHUNKBANDCONTRACTIONS_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::la {

/// Adds the rewrite of a contraction with a `band(n, m, w)` mask over a contracted position m (AFT-local's
/// local correction) into a loop over blocks of `rowBlock` result rows, each reading only the
/// `rowBlock + 2(w - 1)` columns its band can reach: O(N·(rowBlock + 2w)) work instead of O(N·M).
void populateChunkBandContractionPatterns(RewritePatternSet &patterns, int64_t rowBlock);

} // namespace mlir::la

#endif // LA_TRANSFORMS_CHUNKBANDCONTRACTIONS_H
