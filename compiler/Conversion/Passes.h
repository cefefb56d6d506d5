//===- Passes.h - conversions out of the la dialect -------------*- C++ -*-===//

#ifndef LA_CONVERSION_PASSES_H
#define LA_CONVERSION_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
class TypeConverter;
} // namespace mlir

namespace mlir::la {

#define GEN_PASS_DECL
#include "Conversion/Passes.h.inc"

/// Patterns lowering each la op family to linalg/tensor/scf; used by `la-to-linalg`.
void populateLAMapToLinalgPatterns(RewritePatternSet &patterns);
void populateLAReductionToLinalgPatterns(RewritePatternSet &patterns);
/// `registerStateElements`: the largest scan state carried as a vector (see `la-to-linalg`).
void populateLAScanToLinalgPatterns(RewritePatternSet &patterns, int64_t registerStateElements);
void populateLAContractToLinalgPatterns(RewritePatternSet &patterns);
void populateLAWindowToLinalgPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "Conversion/Passes.h.inc"

} // namespace mlir::la

#endif // LA_CONVERSION_PASSES_H
