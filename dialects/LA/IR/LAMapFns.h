//===- LAMapFns.h - scalar semantics of named la.map functions --*- C++ -*-===//
//
// The single definition of what each named `la.map` function computes on scalars. Folding, fusion and every
// lowering build their arithmetic through here so the meaning of `elu1` or `clamp` is written once.
//
//===----------------------------------------------------------------------===//

#ifndef LA_IR_LAMAPFNS_H
#define LA_IR_LAMAPFNS_H

#include "LA/IR/LAOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::la {

/// Number of tensor inputs the named function takes (1, 2 or 3).
unsigned getMapFnArity(MapFn fn);

/// Number of scalar parameters the named function takes (clamp: 2, add_const/mul_const: 1, else 0).
unsigned getMapFnNumParams(MapFn fn);

/// Emits arith/math ops computing `fn(args; params)` on scalars of one float type.
Value buildMapFn(OpBuilder &builder, Location loc, MapFn fn, ArrayRef<double> params, ValueRange args);

/// Emits the gate function of `la.gate` on a scalar.
Value buildGateFn(OpBuilder &builder, Location loc, GateFn fn, Value gate);

} // namespace mlir::la

#endif // LA_IR_LAMAPFNS_H
