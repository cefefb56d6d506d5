//===- ChunkCausalSweep.h - a causal kernel as one loop over chunks -*- C++ -*-===//
#ifndef LA_TRANSFORMS_CHUNKCAUSALSWEEP_H
#define LA_TRANSFORMS_CHUNKCAUSALSWEEP_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::la {

/// Rewrites `func` into one `scf.for` over chunks of `chunk` positions when every op that reads the
/// sequence is causal: pointwise along it, a prefix `add` scan along it, or a `tril`-masked contraction.
/// Each chunk evaluates every such op on its own positions, with the scans' running sums and the causal
/// contractions' states carried to the next chunk; only the returned values are written out. Returns
/// whether it rewrote (a kernel with a reduction over the sequence, an unknown op or no causal op at all is
/// left to the per-op rewrites).
bool sweepCausalKernel(func::FuncOp func, int64_t chunk);

} // namespace mlir::la

#endif // LA_TRANSFORMS_CHUNKCAUSALSWEEP_H
