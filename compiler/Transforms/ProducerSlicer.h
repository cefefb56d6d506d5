//===- ProducerSlicer.h - slice a value by recomputing its producers -*- C++ -*-===//
//
// The chunking rewrites of masked contractions (block-diagonal for FLASH, banded for AFT-local) evaluate a
// contraction one window of positions at a time. Its operands are often cheap elementwise functions of a
// large tensor (FLASH's relu(q kᵀ)², AFT-local's e^w − 1 over a [T, T] bias); slicing the materialised
// operand would still build the whole of it. `ProducerSlicer` instead recomputes such producers on slices of
// their own operands, so only the window is ever computed.
//
//===----------------------------------------------------------------------===//
#ifndef LA_TRANSFORMS_PRODUCERSLICER_H
#define LA_TRANSFORMS_PRODUCERSLICER_H

#include "LA/IR/LAOps.h"
#include "Transforms/ChunkLoops.h"
#include "mlir/IR/Builders.h"

namespace mlir::la {

/// Restricts values to windows along some of their dimensions, recomputing producers on sliced operands
/// where that avoids computing positions outside the window.
class ProducerSlicer {
public:
  /// `diagonalBlock` (0 for none): the windows are diagonal blocks of this size, aligned to multiples of
  /// it, so a contraction with a block mask of the same size can be recomputed inside one.
  ProducerSlicer(OpBuilder &builder, Location loc, int64_t diagonalBlock = 0)
      : builder(builder), loc(loc), diagonalBlock(diagonalBlock) {}

  /// Also recompute shared maps that cost at most kCheapRecomputeCost (RecomputeCost.h: `q + eps`, a
  /// clamp): cheaper on a slice than a materialised [N, D] operand that only the slices read.
  ProducerSlicer &recomputeCheapMaps() {
    cheapMaps = true;
    return *this;
  }

  /// Also recompute an unmasked contraction sliced along two or more of its result dimensions (a tensor
  /// over pairs of positions, GAU's q kᵀ) from slices of its operands along those letters.
  ProducerSlicer &recomputeContractions() {
    contractions = true;
    return *this;
  }

  /// Where the windows of a `tril(n, m)`-masked contraction's rows n and columns m lie against its diagonal.
  enum class TrilWindows {
    Unknown,  ///< anywhere: slice it
    Diagonal, ///< the same block of rows and columns: recompute it, still masked tril
    Below     ///< every column before every row: recompute it unmasked (the mask keeps everything)
  };
  /// Recompute tril-masked contractions sliced along their row and column letters, as `where` says.
  ProducerSlicer &recomputeTril(TrilWindows where) {
    tril = where;
    return *this;
  }

  /// `value` restricted to `windows`. Recomputes an `la.map` (its `la.index` positions shifted by the
  /// windows' starts) when it has no other use, when two or more of its dimensions are sliced (a tensor over
  /// pairs of positions, the very thing chunking avoids building) or when it is cheap (above); recomputes
  /// a `block`/`causal_block`-masked contraction whose two mask dimensions are sliced to the same diagonal
  /// block. Extracts a slice of anything else.
  Value slice(Value value, ArrayRef<DimWindow> windows);

  /// The type of `value` restricted to `windows`.
  static RankedTensorType slicedType(Value value, ArrayRef<DimWindow> windows);

  /// `map` recomputed on `windows`, reading `replacement` (already restricted) in place of its input
  /// `replaced`.
  Value sliceMap(MapOp map, ArrayRef<DimWindow> windows, Value replaced = Value(), Value replacement = Value());

private:
  Value sliceBlockContract(ContractOp contract, ArrayRef<DimWindow> windows);
  Value sliceUnmaskedContract(ContractOp contract, ArrayRef<DimWindow> windows);
  Value sliceTrilContract(ContractOp contract, ArrayRef<DimWindow> windows);
  /// `contract` recomputed on `windows` of its result, each operand sliced along the windows' letters.
  ContractOp cloneOnWindows(ContractOp contract, ArrayRef<DimWindow> windows);

  OpBuilder &builder;
  Location loc;
  int64_t diagonalBlock;
  bool cheapMaps = false;
  bool contractions = false;
  TrilWindows tril = TrilWindows::Unknown;
};

/// Whether `map`'s body reads its absolute positions (`la.index`), which slicing its operands would shift.
bool mapUsesIndex(MapOp map);

} // namespace mlir::la

#endif // LA_TRANSFORMS_PRODUCERSLICER_H
