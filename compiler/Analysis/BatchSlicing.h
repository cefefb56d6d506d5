//===- BatchSlicing.h - which leading dimensions a kernel is independent over -*- C++ -*-===//
//
// Attention kernels compute each (batch, head) pair independently. When an entry provably does, the runtime
// compiles it once for a single slice (leading dimensions of size 1) and runs the slices in parallel on its
// thread pool: smaller code, static inner shapes, and parallelism without threading in generated code. An
// argument without batch dimensions (a bias every batch shares) is passed whole to every slice.
//
//===----------------------------------------------------------------------===//
#ifndef LA_ANALYSIS_BATCHSLICING_H
#define LA_ANALYSIS_BATCHSLICING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::la {

/// How an entry can be cut into independent slices over its leading dimensions.
struct BatchSlicing {
  /// The leading dimensions every slice takes one index of; 0 when nothing can be sliced.
  int64_t dims = 0;
  /// Per argument: it has none of those dimensions and every slice reads it whole (AFT's position bias
  /// w[T, T], shared by every batch). Empty when `dims` is 0.
  SmallVector<bool> sharedArguments;
};

/// The largest k ≤ `maxDims` such that `func` (inlined `la`, no calls) computes every index of its first k
/// dimensions independently. Each argument either has those k leading dimensions or none of them (shared);
/// every result has them; every op keeps them as leading batch dimensions (contract batch letters, map/gate
/// leading subscripts), broadcasts a shared operand along them, or reads shared values only; and no
/// reduction, scan, normalisation, size or mask involves them. A `la.index` along one of them is allowed: a
/// compiled slice reads its coordinates from extra arguments (the `la-slice-positions` pass).
BatchSlicing analyzeBatchSlicing(func::FuncOp func, int64_t maxDims = 2);

/// The tensor values of `func` that every slice computes alike: the shared arguments and whatever is
/// computed from them alone. Their `la.index` positions are their own, never a slice's coordinates.
llvm::DenseSet<Value> getSharedValues(func::FuncOp func, ArrayRef<bool> sharedArguments);

} // namespace mlir::la

#endif // LA_ANALYSIS_BATCHSLICING_H
