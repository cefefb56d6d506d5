//===- ChunkLoops.h - loops over chunks of a sequence -----------*- C++ -*-===//
//
// The chunking rewrites of `la-chunk-scans` (causal contractions, decay scans, block-diagonal and banded
// contractions, prefix sums read by a dot) share the same skeleton: slice every operand to a window of the
// sequence, compute the chunk, write its rows back, and run that over full chunks in an `scf.for` followed
// by one static partial chunk.
//
//===----------------------------------------------------------------------===//
#ifndef LA_TRANSFORMS_CHUNKLOOPS_H
#define LA_TRANSFORMS_CHUNKLOOPS_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::la {

class ScanOp;

/// Positions [start, start + size) of one dimension.
struct Window {
  OpFoldResult start;
  int64_t size;
};

/// A dimension of a value together with the window it is restricted to.
struct DimWindow {
  int64_t dim;
  Window window;
};

/// `source` restricted to each window along its dimension (full extent elsewhere). A `resultType` of lower
/// rank drops unit dimensions (a window of one position).
Value extractWindows(OpBuilder &b, Location loc, Value source, ArrayRef<DimWindow> windows,
                     RankedTensorType resultType = {});

/// `chunk` written into `dest` from position `start` along `dim`.
Value insertChunk(OpBuilder &b, Location loc, Value chunk, Value dest, int64_t dim, OpFoldResult start);

/// `chunk` written into `dest` at the start of each window along its dimension (from 0 elsewhere); `chunk`
/// itself when there are no windows (it is then all of `dest`).
Value insertWindows(OpBuilder &b, Location loc, Value chunk, Value dest, ArrayRef<DimWindow> windows);

/// Builds the chunk of `size` positions from `start`, given the values carried from the previous chunk;
/// returns the values carried to the next one.
using ChunkBodyFn = function_ref<SmallVector<Value>(OpBuilder &b, Value start, int64_t size, ValueRange carried)>;

/// Runs `body` over [0, length) in chunks of `chunk` positions: an `scf.for` over the full chunks (omitted when
/// there are none) carrying `init`, then the partial tail chunk with its own static size. Returns the values
/// carried out of the last chunk.
SmallVector<Value> buildChunkLoop(OpBuilder &b, Location loc, int64_t length, int64_t chunk, ValueRange init,
                                  ChunkBodyFn body);

/// Builds the computation of one index of the leading dimensions, given as a window of one position along
/// each dimension that has more than one (none for unit dimensions), and the values carried from the
/// previous index; returns the values carried to the next one.
using BatchBodyFn = function_ref<SmallVector<Value>(OpBuilder &b, ArrayRef<DimWindow> index, ValueRange carried)>;

/// Runs `body` once per index of leading dimensions of sizes `batchShape`: nested `scf.for`s over the
/// dimensions longer than one, carrying `init` (no loop at all when every size is 1). Returns the values
/// carried out of the last index.
SmallVector<Value> buildBatchLoops(OpBuilder &b, Location loc, ArrayRef<int64_t> batchShape, ValueRange init,
                                   BatchBodyFn body);

} // namespace mlir::la

#endif // LA_TRANSFORMS_CHUNKLOOPS_H
