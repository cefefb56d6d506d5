//===- LAOps.h - ops and attributes of the `la` dialect ---------*- C++ -*-===//

#ifndef LA_IR_LAOPS_H
#define LA_IR_LAOPS_H

#include "LA/IR/LADialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "LA/IR/LAEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "LA/IR/LAAttrs.h.inc"

#define GET_OP_CLASSES
#include "LA/IR/LAOps.h.inc"

#endif // LA_IR_LAOPS_H
