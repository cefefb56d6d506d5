//===- RecomputeCost.h - what recomputing one element costs -----*- C++ -*-===//
//
// Two decisions trade recomputation against a materialised tensor: `la-fuse-elementwise` recomputes a
// lowered producer in each consumer, and the chunking rewrites (ProducerSlicer) recompute a shared `la.map`
// on each chunk. Both weigh the producer's scalar body with the one model here, so a map that is cheap for
// one is cheap for the other. The CPU's `la-fuse-block-prologues` uses the same weights to pick the costly
// functions of a decode step's state update that it computes apart.
//
//===----------------------------------------------------------------------===//
#ifndef LA_TRANSFORMS_RECOMPUTECOST_H
#define LA_TRANSFORMS_RECOMPUTECOST_H

#include "LA/IR/LAOps.h"
#include "mlir/IR/Block.h"

namespace mlir::la {

/// The largest cost that is recomputed wherever it is read, even where it would then be evaluated once per
/// vector lane (a producer broadcast along the consumer's innermost loop) or where a materialised copy
/// exists anyway: an add, a multiply or a clamp, not an exp and not a division.
constexpr int64_t kCheapRecomputeCost = 2;

/// What one scalar op costs, in simple-op units: an exp, log, tanh or other transcendental 8, a division or
/// square root 4, a constant 0, anything else 1.
int64_t recomputeCost(Operation &op);

/// What computing one element with the ops of `body` (its terminator excluded) costs, in simple-op units:
/// an exp, log, tanh or other transcendental counts 8, a division or square root 4, a constant 0 (it is
/// materialised once, outside the loops), anything else 1.
int64_t recomputeCost(Block &body);

/// The cost of one element of `map`: its region's body, or the scalar ops its named function expands to
/// (`buildMapFn`, as the lowering emits them).
int64_t recomputeCost(MapOp map);

} // namespace mlir::la

#endif // LA_TRANSFORMS_RECOMPUTECOST_H
