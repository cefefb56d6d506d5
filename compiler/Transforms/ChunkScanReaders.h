//===- ChunkScanReaders.h - prefix scans fused with the dot that reads them -*- C++ -*-===//
#ifndef LA_TRANSFORMS_CHUNKSCANREADERS_H
#define LA_TRANSFORMS_CHUNKSCANREADERS_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::la {

/// Adds the rewrite of a row-wise dot product that reads an elementwise function of a prefix sum,
/// `contract "Bnd,Bnd->Bn" (x, f(scan add y along n))`, into a loop over chunks of `chunk` positions that
/// carries the [B.., D] running sum: the [.., N, D] prefix sum is never materialised.
void populateChunkScanReaderPatterns(RewritePatternSet &patterns, int64_t chunk);

} // namespace mlir::la

#endif // LA_TRANSFORMS_CHUNKSCANREADERS_H
