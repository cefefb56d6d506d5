//===- ReductionPanels.h - cache panels for long contractions ---*- C++ -*-===//
//
// A register-blocked contraction with a long reduction (`kᵀ(v·c)` over the whole sequence) reads both
// operands once per row block: eleven times for a 64-row output in 6-row blocks. Over N = 4096 positions
// those reads come from L3 and the blocks run at two thirds of the FMA peak. Cutting the reduction into
// panels of P positions keeps each panel's operands in L1 across the row blocks, and lets an elementwise
// prologue that the blocks would recompute (`v·c`, invariant in the row loop) be computed once per panel.
//
//===----------------------------------------------------------------------===//

#ifndef LA_TARGET_CPU_TRANSFORMS_REDUCTIONPANELS_H
#define LA_TARGET_CPU_TRANSFORMS_REDUCTIONPANELS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::la {

/// Moves the part of `op`'s body that is invariant in `rowLoop` and feeds the row-dependent product (at most
/// one value, computed from the inputs that do not read `rowLoop`: `v·c` in `kᵀ(v·c)`) into an elementwise
/// generic of its own, which `op` (replaced) then reads as one more input. Returns that generic, or null
/// when there is no such part.
linalg::GenericOp splitRowInvariantPrologue(RewriterBase &rewriter, linalg::GenericOp &op, unsigned rowLoop);

/// Cuts reduction loop `reductionLoop` of contraction `op` into panels of `panel` iterations (the last
/// panel peeled when `panel` does not divide the trip count). Before tiling, the part of the body that is
/// invariant in `rowLoop` and feeds the row-dependent product (at most one value, computed from the inputs
/// that do not read `rowLoop`) becomes its own elementwise generic, which is fused into the panel loop: one
/// P×V tile per panel. A panel contraction is not cut again by a planner with the same panel length: its
/// reduction is one panel long. Fails when the loop cannot be tiled
/// (the prologue may have been split off by then, which leaves an equivalent program).
LogicalResult tileReductionIntoPanels(RewriterBase &rewriter, linalg::GenericOp op, unsigned reductionLoop,
                                      unsigned rowLoop, int64_t panel);

} // namespace mlir::la

#endif // LA_TARGET_CPU_TRANSFORMS_REDUCTIONPANELS_H
