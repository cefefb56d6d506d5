//===- BlockEpilogues.h - elementwise consumers run on register blocks -*- C++ -*-===//
//
// A contraction whose only user is elementwise (Flow's gate `w[n]·(q·kv)[n,e]`, linear attention's
// `num / den`) otherwise writes its whole N×Dv result to a temporary, and a second sweep reads it back to
// write the output: a zero fill, a store and two more passes over N×Dv floats. Tiling the consumer by the
// contraction's register block and fusing the contraction (with its zero fill) into each tile lets every
// block apply the consumer to its accumulators and store the output once, while the next block's FMAs run.
// A causal chunk loop, which writes its output a chunk at a time, gets its consumer fused the same way.
//
//===----------------------------------------------------------------------===//

#ifndef LA_TARGET_CPU_TRANSFORMS_BLOCKEPILOGUES_H
#define LA_TARGET_CPU_TRANSFORMS_BLOCKEPILOGUES_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace mlir::la {

/// The elementwise generic that can run on the tiles that produce `value`, or null: the only user of
/// `value`, all loops parallel, one static output, reading `value` at the same position it writes (identity
/// maps, so each of its loops is one dimension of `value`).
linalg::GenericOp findEpilogue(Value value);

/// Tiles `epilogue` by the output part of the register block of `contractions` (`blockShape` over the
/// loops of each, which share one plan; the tile loops follow `loopOrder`'s output loops) and fuses each
/// contraction and the `linalg.fill` that initialises it into each tile. The epilogue and fill tiles get a
/// #la.register_block of their tile's shape, so they are vectorised with the block; each fused contraction
/// tile is an ordinary, smaller contraction, without a config until it is planned again. Returns the tile
/// loops, outermost first (ragged ones still to be peeled).
FailureOr<SmallVector<LoopLikeOpInterface>>
fuseEpilogueIntoBlocks(RewriterBase &rewriter, ArrayRef<linalg::GenericOp> contractions, linalg::GenericOp epilogue,
                       ArrayRef<int64_t> blockShape, ArrayRef<int64_t> loopOrder);

/// Fuses `epilogue`, the elementwise consumer of `produced`, a result of an `scf.for` that each iteration
/// writes with one `tensor.insert_slice` into its carried tensor (a causal chunk loop's output), into the
/// loop: every iteration applies it to the slice it writes (`scf::tileAndFuseConsumer`), and the loop no
/// longer builds the unconsumed result. The tiled epilogue gets a #la.register_block of its shape when that is
/// static. The epilogue's other operands
/// are moved in front of the loop. Fails, leaving an equivalent program, when the loop writes its result
/// any other way, or the operands cannot be moved or the consumer cannot be fused.
LogicalResult fuseEpilogueIntoLoop(RewriterBase &rewriter, OpResult produced, linalg::GenericOp epilogue);

} // namespace mlir::la

#endif // LA_TARGET_CPU_TRANSFORMS_BLOCKEPILOGUES_H
