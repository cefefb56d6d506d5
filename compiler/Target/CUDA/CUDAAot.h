//===- CUDAAot.h - ahead-of-time C launchers for the CUDA target -*- C++ -*-===//
//
// `lac compile --target cuda --emit=h|c`: a C header and source that embed an entry's cubin and launch it
// through the CUDA driver API, the model being Triton's AOT compiler. The header declares, for entry E,
//   CUresult la_E_load(void);     loads the embedded cubin (la_E calls it on first use)
//   CUresult la_E_unload(void);
//   size_t   la_E_scratch_bytes(unsigned batches, unsigned heads);   device scratch la_E needs (0: pass 0)
//   CUresult la_E(CUstream stream, CUdeviceptr arg0, ..., CUdeviceptr result0, ..., CUdeviceptr scratch,
//                 unsigned batches, unsigned heads);
// One block per batch×head slice on a grid of (heads, batches): B and H of [B, H, N, D] arguments, B and 1
// of [B, N, D]. Both are needed, not their product: an entry that reads the head index (retention's per-head
// decay) takes it from the block's x. Each pointer is a whole tensor, row-major, of the shapes the kernel was
// compiled for.
//
//===----------------------------------------------------------------------===//
#ifndef LA_TARGET_CUDA_CUDAAOT_H
#define LA_TARGET_CUDA_CUDAAOT_H

#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/Error.h"

#include <string>

namespace mlir::la {

/// What a launcher needs to know about the one kernel of a `gpu`-stage module.
struct AotKernel {
  std::string name;
  /// The one-slice memref type of each tensor argument (inputs, then results), for the comments.
  llvm::SmallVector<std::string> tensorTypes;
  /// Bytes of scratch per slice; 0 when the kernel takes none.
  int64_t scratchBytesPerSlice = 0;
  int64_t blockSize = 0;
};

/// Reads the kernel of `module` (after la-gpu-outline-slice-kernel); an error when there is not exactly one.
llvm::Expected<AotKernel> describeAotKernel(ModuleOp module);
/// The header (`la_<name>.h`).
std::string emitAotHeader(const AotKernel &kernel, llvm::StringRef arch);
/// The source: includes `la_<name>.h`, embeds `cubin`.
std::string emitAotSource(const AotKernel &kernel, llvm::StringRef arch, llvm::StringRef cubin);

} // namespace mlir::la

#endif // LA_TARGET_CUDA_CUDAAOT_H
