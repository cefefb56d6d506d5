//===- CPUPasses.h - the CPU target's passes -------------------*- C++ -*-===//

#ifndef LA_TARGET_CPU_TRANSFORMS_PASSES_H
#define LA_TARGET_CPU_TRANSFORMS_PASSES_H

#include "LA/IR/LADialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::la {

#define GEN_PASS_DECL
#include "Target/CPU/Transforms/CPUPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "Target/CPU/Transforms/CPUPasses.h.inc"

} // namespace mlir::la

#endif // LA_TARGET_CPU_TRANSFORMS_PASSES_H
