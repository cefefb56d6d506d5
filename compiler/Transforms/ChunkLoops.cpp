//===- ChunkLoops.cpp - loops over chunks of a sequence -------------------===//

#include "Transforms/ChunkLoops.h"

#include "LA/IR/LAOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::la {

Value extractWindows(OpBuilder &b, Location loc, Value source, ArrayRef<DimWindow> windows,
                     RankedTensorType resultType) {
  auto type = cast<RankedTensorType>(source.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)), sizes,
      strides(type.getRank(), b.getIndexAttr(1));
  for (int64_t s : type.getShape())
    sizes.push_back(b.getIndexAttr(s));
  for (const DimWindow &w : windows) {
    offsets[w.dim] = w.window.start;
    sizes[w.dim] = b.getIndexAttr(w.window.size);
  }
  if (resultType)
    return tensor::ExtractSliceOp::create(b, loc, resultType, source, offsets, sizes, strides);
  return tensor::ExtractSliceOp::create(b, loc, source, offsets, sizes, strides);
}

Value insertChunk(OpBuilder &b, Location loc, Value chunk, Value dest, int64_t dim, OpFoldResult start) {
  auto size = cast<RankedTensorType>(chunk.getType()).getDimSize(dim);
  return insertWindows(b, loc, chunk, dest, {DimWindow{dim, {start, size}}});
}

Value insertWindows(OpBuilder &b, Location loc, Value chunk, Value dest, ArrayRef<DimWindow> windows) {
  if (windows.empty())
    return chunk;
  auto type = cast<RankedTensorType>(chunk.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)), sizes,
      strides(type.getRank(), b.getIndexAttr(1));
  for (int64_t s : type.getShape())
    sizes.push_back(b.getIndexAttr(s));
  for (const DimWindow &w : windows)
    offsets[w.dim] = w.window.start;
  return tensor::InsertSliceOp::create(b, loc, chunk, dest, offsets, sizes, strides);
}

SmallVector<Value> buildChunkLoop(OpBuilder &b, Location loc, int64_t length, int64_t chunk, ValueRange init,
                                  ChunkBodyFn body) {
  int64_t fullChunks = length / chunk, tail = length % chunk;
  SmallVector<Value> carried(init);
  Value end = arith::ConstantIndexOp::create(b, loc, fullChunks * chunk);
  if (fullChunks > 0) {
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value step = arith::ConstantIndexOp::create(b, loc, chunk);
    auto loop = scf::ForOp::create(b, loc, zero, end, step, carried,
                                   [&](OpBuilder &nested, Location, Value start, ValueRange iterArgs) {
                                     scf::YieldOp::create(nested, loc, body(nested, start, chunk, iterArgs));
                                   });
    carried.assign(loop.getResults().begin(), loop.getResults().end());
  }
  if (tail > 0)
    carried = body(b, end, tail, carried);
  return carried;
}

/// The loops of `buildBatchLoops` from dimension `dim` on; `index` holds the windows of the outer ones.
static SmallVector<Value> buildBatchLoopsFrom(OpBuilder &b, Location loc, ArrayRef<int64_t> batchShape, int64_t dim,
                                              SmallVectorImpl<DimWindow> &index, ValueRange carried, BatchBodyFn body) {
  if (dim == static_cast<int64_t>(batchShape.size()))
    return body(b, index, carried);
  if (batchShape[dim] == 1)
    return buildBatchLoopsFrom(b, loc, batchShape, dim + 1, index, carried, body);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value end = arith::ConstantIndexOp::create(b, loc, batchShape[dim]);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, zero, end, one, carried, [&](OpBuilder &nested, Location, Value position, ValueRange iterArgs) {
        index.push_back({dim, {position, 1}});
        SmallVector<Value> next = buildBatchLoopsFrom(nested, loc, batchShape, dim + 1, index, iterArgs, body);
        index.pop_back();
        scf::YieldOp::create(nested, loc, next);
      });
  return SmallVector<Value>(loop.getResults());
}

SmallVector<Value> buildBatchLoops(OpBuilder &b, Location loc, ArrayRef<int64_t> batchShape, ValueRange init,
                                   BatchBodyFn body) {
  SmallVector<DimWindow> index;
  return buildBatchLoopsFrom(b, loc, batchShape, 0, index, init, body);
}

} // namespace mlir::la
