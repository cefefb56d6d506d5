//===- LAGPUDialect.h - the `la_gpu` dialect --------------------*- C++ -*-===//

#ifndef LA_TARGET_CUDA_IR_LAGPUDIALECT_H
#define LA_TARGET_CUDA_IR_LAGPUDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "Target/CUDA/IR/LAGPUDialect.h.inc"

#define GET_OP_CLASSES
#include "Target/CUDA/IR/LAGPUOps.h.inc"

#endif // LA_TARGET_CUDA_IR_LAGPUDIALECT_H
