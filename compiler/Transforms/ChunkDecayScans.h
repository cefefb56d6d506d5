//===- ChunkDecayScans.h - chunked form of decay scans ----------*- C++ -*-===//
#ifndef LA_TRANSFORMS_CHUNKDECAYSCANS_H
#define LA_TRANSFORMS_CHUNKDECAYSCANS_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::la {

/// Adds the rewrite of `contract(q, scan decay(outer(k, v), g [init h0]))` (and last-position slices of the
/// scan, its final state) into chunks of `chunk` positions carrying a [.., K, V] state (SPEC §5), one
/// (batch, head) slice at a time. `factorGatedScores`: per-key-gated scores as a matrix product where that is
/// exact to rounding (LAChunkScans' `factor-gated-scores`).
void populateChunkDecayScanPatterns(RewritePatternSet &patterns, int64_t chunk, bool factorGatedScores);

} // namespace mlir::la

#endif // LA_TRANSFORMS_CHUNKDECAYSCANS_H
