//===- NVVMLowering.h - gpu/nvgpu kernels down to NVVM, and onto the emulator -*- C++ -*-===//
//
// The lowering tail every GPU kernel of this project goes through: the CUDA target translates its result to
// PTX, and the emulator runs the same result on the CPU (la-nvvm-to-emulator). One pipeline, so that what
// the emulator checks is what ptxas assembles.
//
//===----------------------------------------------------------------------===//
#ifndef LA_TARGET_NVVM_NVVMLOWERING_H
#define LA_TARGET_NVVM_NVVMLOWERING_H

#include "mlir/Pass/PassManager.h"

namespace mlir::la {

/// Kernels in gpu.modules, written with the gpu, nvgpu, vector, memref, scf, cf, arith, math and affine
/// dialects ⇒ LLVM dialect plus NVVM ops (`la-gpu-to-nvvm`):
///   expand-strided-metadata (subviews become pointer arithmetic), lower-affine, canonicalize, cse (upstream-generated
///   kernels carry affine index math and dead vector ops; without lower-affine an unrealized cast survives),
///   convert-scf-to-cf, convert-nvgpu-to-nvvm, convert-gpu-to-nvvm with bare-pointer memref arguments (a memref is one
///   pointer: simple launchers), reconcile-unrealized-casts, la-gpu-offset-slice-arguments (only kernels with
///   `la.slice_bytes`: the CUDA target's per-slice kernels).
/// The stock gpu-lower-to-nvvm-pipeline is not used: it runs convert-nvvm-to-llvm, which turns ops the
/// emulator runs (and ptxas accepts as intrinsics) into inline PTX (shared/DESIGN.md, Toolchain).
void buildNVVMLoweringTail(OpPassManager &pm);

/// buildNVVMLoweringTail, then la-nvvm-to-emulator: each kernel as a host function calling the emulator
/// (`la-gpu-to-emulator`).
void buildEmulatorPipeline(OpPassManager &pm);

/// Registers `la-gpu-to-nvvm` and `la-gpu-to-emulator` as pass pipelines (la-opt).
void registerNVVMPipelines();

} // namespace mlir::la

#endif // LA_TARGET_NVVM_NVVMLOWERING_H
