//===- LADialect.h - the `la` dialect ---------------------------*- C++ -*-===//

#ifndef LA_IR_LADIALECT_H
#define LA_IR_LADIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "LA/IR/LADialect.h.inc"

#endif // LA_IR_LADIALECT_H
