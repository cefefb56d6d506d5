//===- RegisterBlockConfig.h - how a contraction becomes register blocks -*- C++ -*-===//
//
// The planning half of register tiling (the strategy, in IREE's terms): which contractions are cut into
// register blocks and how, recorded on each as a `#la.register_block` (LAAttrs.td). The steps that carry
// the plan out (Passes.td: la-reduction-panels ... la-hoist-block-accumulators) read that attribute and
// never plan themselves.
//
// Why register blocks: loop vectorisers give a contraction one vector accumulator per output row and reload
// it every step of the reduction: a load, an FMA and a store per 16 lanes, about a quarter of the FMA peak.
// A register block keeps R rows × V lanes of the output in registers for the whole reduction, so each step
// is R broadcasts, ⌈V/16⌉ loads and R·⌈V/16⌉ FMAs.
//
//===----------------------------------------------------------------------===//

#ifndef LA_TARGET_CPU_TRANSFORMS_REGISTERBLOCKCONFIG_H
#define LA_TARGET_CPU_TRANSFORMS_REGISTERBLOCKCONFIG_H

#include "LA/IR/LAOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::la {

/// What the target offers a register block (the strategy's options).
struct RegisterBlockLimits {
  /// Largest block of the vector loop, in lanes.
  int64_t vectorTile;
  /// Lanes of one hardware vector register.
  int64_t vectorWidth;
  /// Vector registers for the accumulator block (rows × ⌈lanes / vectorWidth⌉).
  int64_t registerBudget;
  /// Largest block of the row loop.
  int64_t maxRows;
  /// Reduction iterations per cache panel of a long contraction; 0 plans no panels.
  int64_t reductionPanel;
};

/// Returns the register-block plan of `op`, or nothing when `op` is not a contraction that register blocks
/// improve: dynamic shapes, several outputs, no reduction, a transcendental function of the output position
/// in the body, or a vector loop that some input reads with a stride where a transposed copy of that input
/// would not pay off. The plan includes a reduction panel when `limits.reductionPanel` is positive and the
/// contraction has several row blocks and one long reduction.
std::optional<RegisterBlockAttr> planRegisterBlock(linalg::GenericOp op, const RegisterBlockLimits &limits);

/// In a register block, where the offset loops of a window read (la.window fused into its consumer: an input
/// read at a position plus an offset loop) run one step (the block's slice of the input is already shifted
/// by them), reads the position alone: a plain read the vectoriser takes. Changes nothing where an offset
/// loop is longer than one.
void dropWindowOffsets(linalg::GenericOp op);

/// The register-block config attached to `op`, or null.
RegisterBlockAttr getRegisterBlock(Operation *op);

/// Whether `op` is one register block: it carries a config and its loops fit in one block of it.
bool isOneRegisterBlock(linalg::LinalgOp op);

} // namespace mlir::la

#endif // LA_TARGET_CPU_TRANSFORMS_REGISTERBLOCKCONFIG_H
