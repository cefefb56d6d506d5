//===- LoweringUtils.h - shared helpers of the la-to-linalg patterns -*- C++ -*-===//
//
// Small builders every la-to-linalg pattern needs: result buffers sized from operands, identity-filled
// accumulators, scalar casts, and the loop-order heuristic for generics.
//
//===----------------------------------------------------------------------===//
#ifndef LA_CONVERSION_LATOLINALG_LOWERINGUTILS_H
#define LA_CONVERSION_LATOLINALG_LOWERINGUTILS_H

#include "LA/IR/LAOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::la {

/// Sizes of `value` (static sizes as attributes, dynamic ones as `tensor.dim`).
SmallVector<OpFoldResult> getSizes(OpBuilder &b, Location loc, Value value);

/// A `tensor.empty` of the given sizes and element type.
Value createEmpty(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes, Type elementType);

/// A tensor of the given sizes filled with `value` (`linalg.fill`).
Value createFilled(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes, Type elementType, double value);

/// `value` cast to `type` with `tensor.cast` when the (static-ness of the) types differ.
Value castToType(OpBuilder &b, Location loc, Value value, Type type);

/// A float constant of `type`: a scalar, or a splat when `type` is a vector type.
Value createFloat(OpBuilder &b, Location loc, Type type, double value);

/// Converts a scalar or a vector between float element types (extf/truncf; `type` is the target element
/// type), or returns it unchanged.
Value convertFloat(OpBuilder &b, Location loc, Value value, Type type);

/// `value` with every element converted to `elementType` (one elementwise generic), or `value` itself.
Value convertElementType(OpBuilder &b, Location loc, Value value, Type elementType);

/// The accumulation element type of an op: its `acc` attribute, else f64 for f64 data and f32 otherwise.
Type getAccumulationType(std::optional<Type> acc, Type elementType);

/// Fast-math flags for arithmetic whose order the compiler may change (sums of contractions and
/// reductions): reassociation lets LLVM vectorise reductions, contraction forms FMAs.
arith::FastMathFlagsAttr getReassocFlags(MLIRContext *context);

/// The identity of a named single-state combiner (add: 0, max/logaddexp: -inf, min: +inf), or none.
std::optional<double> getCombinerIdentity(Combiner combiner);

/// Emits `acc ⊕ x` for a named single-state combiner (add, max, min, logaddexp).
Value buildCombine(OpBuilder &b, Location loc, Combiner combiner, Value acc, Value x);

/// Chooses the loop order of an iteration space of letters: the batch letters (shared by every operand, see
/// ContractionDims) first, then the others by decreasing static size (dynamic counts as largest), and last
/// `innermost`, the contiguous dimension the vectoriser should see. Returns the letters in loop order.
std::string chooseLoopOrder(ArrayRef<StringRef> operandTerms, StringRef resultTerm, StringRef batchLetters,
                            const llvm::StringMap<int64_t> &letterSizes);

/// The final state taken from a scan's result `scanResult` (la-derive-state-variants' form): a slice of its last
/// position along `dim` with full sizes elsewhere, keeping the unit dimension, collapsed into the state's rank
/// (a rank-reducing slice would be ambiguous about which unit dimension it drops). A sequence of one position
/// is its own last position, and the slice then folds away: the collapse reads the scan itself. Returns the
/// collapse, or null. A chunk loop replaces it with the state it ends with; the sequential lowering with its
/// carried state, when nothing else reads that result.
tensor::CollapseShapeOp matchFinalState(Operation *user, Value scanResult, int64_t dim);

} // namespace mlir::la

#endif // LA_CONVERSION_LATOLINALG_LOWERINGUTILS_H
