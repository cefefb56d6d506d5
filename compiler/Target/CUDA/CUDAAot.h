//===- CUDAAot.h - ahead-of-time C launchers for the CUDA target -*- C++ -*-===//
//
// `lac compile --target cuda --emit=h|c`: a C header and source that embed an entry's cubins and launch them
// through the CUDA driver API, the model being Triton's AOT compiler. The header declares, for entry E,
//   CUresult la_E_load(void);     loads the embedded cubins (la_E calls it on first use)
//   CUresult la_E_unload(void);
//   size_t   la_E_scratch_bytes(unsigned batches, unsigned heads);   device scratch la_E needs
//   CUresult la_E(CUstream stream, CUdeviceptr arg0, ..., CUdeviceptr result0, ..., CUdeviceptr scratch,
//                 unsigned batches, unsigned heads);
// Each pointer is a whole tensor, row-major, of the shapes the kernels were compiled for, except that B and H
// of [B, H, N, D] arguments (B of [B, N, D], heads then 1) are the launch's: the kernels cover one batch×head
// slice per thread block, on grids of (heads, batches) blocks. Both are needed, not their product: an entry
// that reads the head index (retention's per-head decay) takes it from the block's x.
//
// The launcher runs what the runtime runs for the call (AotLauncher): one kernel, or a causal entry's
// kernels over pieces of its sequence (runtime/lib/GpuPiecesPlan.h). The scratch holds the states the
// pieces hand on, each region filled before the first launch, then the kernels' own temporaries.
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
  /// Whether its last argument is a scratch buffer for its temporaries, and that buffer's bytes per block.
  bool takesScratch = false;
  int64_t scratchBytesPerSlice = 0;
  int64_t blockSize = 0;
  /// Bytes of dynamic shared memory each launch asks for (la-gpu-dynamic-shared-memory); 0: all static.
  int64_t dynamicSharedBytes = 0;
};

/// Reads the kernel of `module` (after la-gpu-outline-slice-kernel); an error when there is not exactly one.
llvm::Expected<AotKernel> describeAotKernel(ModuleOp module);

/// A call's launches, as the launcher writes them out. Sizes are per batch×head slice of the call: the
/// launcher multiplies them by the slices it is given.
struct AotLauncher {
  /// The entry; `la_<entry>` names the launcher (a '.' of a variant's name written '_').
  std::string entry;
  /// How many leading dimensions the call's slices cover (0: the kernels run the call whole, one block).
  int64_t slicedDims = 2;
  /// Per tensor parameter (inputs, then results): its description for the header.
  llvm::SmallVector<std::string> parameters;
  struct Kernel {
    AotKernel launch;
    /// The ELF cubin; empty for the header.
    std::string cubin;
  };
  llvm::SmallVector<Kernel> kernels;
  /// Scratch regions the launcher fills before the first launch: their bytes per slice (multiples of 4),
  /// and the 32-bit pattern of each word (an f32's bits).
  struct Region {
    int64_t bytesPerSlice = 0;
    uint32_t fill = 0;
    std::string what;
  };
  llvm::SmallVector<Region> regions;
  /// A launch's argument: parameter `index` (a tensor of the call) or scratch region `index`.
  struct Operand {
    bool region = false;
    size_t index = 0;
  };
  /// One launch of kernel `kernel`, `blocksPerSlice` blocks along x per slice (its pieces).
  struct Launch {
    size_t kernel = 0;
    int64_t blocksPerSlice = 1;
    llvm::SmallVector<Operand> operands;
    std::string what;
  };
  llvm::SmallVector<Launch> launches;
};

/// The header (`la_<entry>.h`).
std::string emitAotHeader(const AotLauncher &launcher, llvm::StringRef arch);
/// The source: includes `la_<entry>.h`, embeds every kernel's cubin.
std::string emitAotSource(const AotLauncher &launcher, llvm::StringRef arch);

} // namespace mlir::la

#endif // LA_TARGET_CUDA_CUDAAOT_H
