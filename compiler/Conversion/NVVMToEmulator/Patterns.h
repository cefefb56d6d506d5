//===- Patterns.h - NVVM -> emulator rewrite patterns -----------*- C++ -*-===//
//
// The patterns of la-nvvm-to-emulator, one family per file: thread state and warp collectives
// (ThreadPatterns.cpp), memory (MemoryPatterns.cpp), tensor cores (TensorCorePatterns.cpp). Each replaces an
// NVVM operation, or an LLVM memory operation on shared or global memory, by calls into the emulator's C ABI.
//
//===----------------------------------------------------------------------===//
#ifndef LA_CONVERSION_NVVMTOEMULATOR_PATTERNS_H
#define LA_CONVERSION_NVVMTOEMULATOR_PATTERNS_H

#include "Conversion/NVVMToEmulator/EmulatorABI.h"

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::la::emu {

/// Where each shared-memory global (address space 3) lives in the block's arena.
using SharedLayout = llvm::DenseMap<StringAttr, uint64_t>;

/// Special registers, barriers, shfl, vote, redux, bar.warp.sync and memory barriers.
void populateThreadPatterns(RewritePatternSet &patterns, EmulatorABI &abi);
/// Loads, stores and atomics on shared and global memory, cp.async, fences, and the addresses of shared
/// globals (which become arena offsets).
void populateMemoryPatterns(RewritePatternSet &patterns, EmulatorABI &abi, const SharedLayout &layout);
/// ldmatrix, mma.sync and wmma load/mma/store.
void populateTensorCorePatterns(RewritePatternSet &patterns, EmulatorABI &abi);

/// Base of the patterns: an OpConversionPattern that can build ABI calls.
template <typename Op> struct EmulatorPattern : OpConversionPattern<Op> {
  EmulatorPattern(MLIRContext *context, EmulatorABI &abi) : OpConversionPattern<Op>(context), abi(abi) {}
  EmulatorABI &abi;
};

} // namespace mlir::la::emu

#endif // LA_CONVERSION_NVVMTOEMULATOR_PATTERNS_H
