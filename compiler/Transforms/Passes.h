//===- Passes.h - transformations on the `la` dialect -----------*- C++ -*-===//

#ifndef LA_TRANSFORMS_PASSES_H
#define LA_TRANSFORMS_PASSES_H

#include "LA/IR/LADialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::la {

/// The argument attribute `la-slice-positions` puts on each coordinate argument it adds: its dimension.
inline constexpr llvm::StringLiteral kSlicePositionAttr = "la.slice_position";
/// The argument attribute `la-slice-positions` puts on each argument every slice reads whole.
inline constexpr llvm::StringLiteral kSharedArgumentAttr = "la.shared_argument";

#define GEN_PASS_DECL
#include "Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Transforms/Passes.h.inc"

} // namespace mlir::la

#endif // LA_TRANSFORMS_PASSES_H
