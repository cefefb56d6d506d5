//===- RegisterBlockPatterns.h - clean-up of vectorised register blocks -*- C++ -*-===//
//
// Rewrites that turn a freshly vectorised register block (n-D vectors with broadcasts everywhere) into
// the shape a register tile needs: per-row scalars broadcast late, and fused multiply-adds.
//
//===----------------------------------------------------------------------===//

#ifndef LA_TARGET_CPU_TRANSFORMS_REGISTERBLOCKPATTERNS_H
#define LA_TARGET_CPU_TRANSFORMS_REGISTERBLOCKPATTERNS_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::la {

/// Adds four rewrites:
/// - an elementwise op whose operands are all broadcasts (or splats) runs on the smallest vector that
///   holds every source and is broadcast afterwards: `exp(bcast(x[m]))` over a 6×64 block is one exp;
/// - `transpose(broadcast(x))` that keeps the order of x's non-unit dims is `broadcast(shape_cast(x))`,
///   so a column of row scalars is splatted row by row instead of transposed element by element;
/// - `shape_cast(broadcast(x))` that only adds or drops unit dims is `broadcast(shape_cast(x))`, for the
///   same reason (an n-D shape_cast is lowered element by element);
/// - `addf(acc, mulf(a, b))` with a `contract` multiply becomes `vector.fma(a, b, acc)`.
void populateRegisterBlockCleanupPatterns(RewritePatternSet &patterns);

} // namespace mlir::la

#endif // LA_TARGET_CPU_TRANSFORMS_REGISTERBLOCKPATTERNS_H
