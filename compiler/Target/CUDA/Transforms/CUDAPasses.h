//===- CUDAPasses.h - the CUDA target's passes ------------------*- C++ -*-===//

#ifndef LA_TARGET_CUDA_TRANSFORMS_PASSES_H
#define LA_TARGET_CUDA_TRANSFORMS_PASSES_H

#include "Target/CUDA/IR/LAGPUDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::la {

/// The kernel attribute that lists, per argument, the bytes of one batch×head slice.
inline constexpr llvm::StringLiteral kSliceBytesAttr = "la.slice_bytes";
/// Marks an scf.parallel whose iterations are lanes: la-gpu-distribute-to-threads must give each run of 32
/// consecutive iterations to the 32 lanes of one warp (la-gpu-contract-to-mma's tiles hold warp collectives).
inline constexpr llvm::StringLiteral kWarpLanesAttr = "la.warp_lanes";
/// The gpu.module that holds the generated kernels.
inline constexpr llvm::StringLiteral kKernelModuleName = "la_kernels";
/// The most shared memory a kernel may declare statically on sm_80 and sm_90; beyond it, the block's shared
/// buffer is dynamic (la-gpu-dynamic-shared-memory) and each launch asks for its bytes.
inline constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;

#define GEN_PASS_DECL
#include "Target/CUDA/Transforms/CUDAPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "Target/CUDA/Transforms/CUDAPasses.h.inc"

} // namespace mlir::la

#endif // LA_TARGET_CUDA_TRANSFORMS_PASSES_H
