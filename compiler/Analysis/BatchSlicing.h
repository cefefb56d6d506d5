//===- BatchSlicing.h - which leading dimensions a kernel is independent over -*- C++ -*-===//
//
// Attention kernels compute each (batch, head) pair independently. When an entry provably does, the runtime
// compiles it once for a single slice (leading dimensions of size 1) and runs the slices in parallel on its
// thread pool: smaller code, static inner shapes, and parallelism without threading in generated code.
//
//===----------------------------------------------------------------------===//
#ifndef LA_ANALYSIS_BATCHSLICING_H
#define LA_ANALYSIS_BATCHSLICING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::la {

/// The largest k ≤ `maxDims` such that `func` (inlined `la`, no calls) computes every index of its first k
/// dimensions independently: every argument and result has those k leading dimensions, every op keeps them
/// as leading batch dimensions (contract batch letters, map/gate leading subscripts), and no reduction, scan,
/// normalisation, size or mask involves them. 0 when nothing can be sliced. A `la.index` along one of them is
/// allowed: a compiled slice reads its coordinates from extra arguments (the `la-slice-positions` pass).
int64_t getSliceableLeadingDims(func::FuncOp func, int64_t maxDims = 2);

} // namespace mlir::la

#endif // LA_ANALYSIS_BATCHSLICING_H
