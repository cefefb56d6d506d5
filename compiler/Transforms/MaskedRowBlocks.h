//===- MaskedRowBlocks.h - masked contractions cut into blocks of rows -*- C++ -*-===//
//
// The band and tril rewrites of `la-chunk-scans` (ChunkBandContractions.cpp, ChunkTrilContractions.cpp)
// both take a contraction whose mask pairs result rows (letter n) with contracted columns (letter m) and
// evaluate it one block of rows at a time over the columns the mask can reach. This is what they share:
// recognising such a contraction and slicing its operands to a block.
//
//===----------------------------------------------------------------------===//
#ifndef LA_TRANSFORMS_MASKEDROWBLOCKS_H
#define LA_TRANSFORMS_MASKEDROWBLOCKS_H

#include "Transforms/ChunkLoops.h"
#include "Transforms/ProducerSlicer.h"

#include "LA/IR/LAOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::la {

/// Where a masked contraction's rows and columns are.
struct MaskedRows {
  MaskAttr mask;
  /// The result dimension of the mask's row letter.
  int64_t rowDim = 0;
  /// Extents of the rows (result) and of the columns (contracted).
  int64_t rows = 0, cols = 0;
};

/// `op`'s rows and columns when its mask is of `kind` with offset 0, it has no gate, the mask's row letter
/// is a result letter and its column letter is contracted, and every shape is static; failure otherwise
/// (with the reason noted on `rewriter`).
FailureOr<MaskedRows> matchMaskedRows(ContractOp op, MaskKind kind, PatternRewriter &rewriter);

/// `op`'s inputs restricted to `rows` along the mask's row letter and to `cols` along its column letter,
/// their producers recomputed on the windows where that avoids building them whole (ProducerSlicer). With
/// `triangles` other than Unknown, a tril-masked contraction among the producers is recomputed too, on a
/// block that lies as `triangles` says (FLASH's causal scores on the tiles of a diagonal block).
SmallVector<Value> sliceMaskedInputs(OpBuilder &b, Location loc, ContractOp op, const MaskedRows &masked, Window rows,
                                     Window cols,
                                     ProducerSlicer::TrilWindows triangles = ProducerSlicer::TrilWindows::Unknown);

} // namespace mlir::la

#endif // LA_TRANSFORMS_MASKEDROWBLOCKS_H
