//===- FusedTiles.h - clean-up after tile-and-fuse -------------*- C++ -*-===//
//
// `scf::tileConsumerAndFuseProducersUsingSCF` leaves each fused producer writing its tile into a slice of its
// original, whole-tensor destination, and a producer read through two slices fused twice. The passes that
// tile and fuse (la-group-sweeps, la-tile-independent-dim) finish with this clean-up.
//
//===----------------------------------------------------------------------===//
#ifndef LA_TARGET_CPU_TRANSFORMS_FUSEDTILES_H
#define LA_TARGET_CPU_TRANSFORMS_FUSEDTILES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::la {

/// Gives every fused op in `func`'s loops a tile-sized destination (a slice of a `tensor.empty` or of a
/// `linalg.fill` becomes one of the tile's size), so bufferisation allocates one tile rather than the whole
/// tensor plus a copy of each tile; merges producers fused twice; and makes the tiles' `tensor.empty`s
/// `bufferization.alloc_tensor`s, which CSE never merges with an identical one outside the loop (it would
/// merge a tile's `fill(empty)` with the outer one, and bufferisation would then copy the outer zeros into
/// every tile).
LogicalResult giveFusedTilesOwnDestinations(RewriterBase &rewriter, func::FuncOp func);

} // namespace mlir::la

#endif // LA_TARGET_CPU_TRANSFORMS_FUSEDTILES_H
