//===- GpuEmulator.h - Compile gpu.module kernels and run them on the emulator -*- C++ -*-===//
//
// The host side of `lac gpu-run`: a program holding gpu.modules (kernels written with the gpu, nvgpu, nvvm,
// vector, memref, scf, cf, arith, math and affine dialects, static-shape memref arguments) is lowered with
// the project's NVVM pipeline (compiler/Target/NVVM), rewritten onto the emulator (la-nvvm-to-emulator),
// JIT-compiled for this CPU, and launched on the SIMT emulator (la/emulator/Launch.h), which checks it as
// compute-sanitizer would and counts its traffic. See docs/gpu-emulator.md.
//
//   auto program = la::EmulatedProgram::compile(source, "gemm.mlir");
//   const la::EmulatedKernel *kernel = (*program)->find("gemm::gemm");
//   void *a = A.data(), *b = B.data(), *c = C.data();      // one pointer per memref argument
//   std::vector<void *> args = {&a, &b, &c};               // a pointer to each argument's value
//   la::emu::LaunchConfig config;  config.grid = {4, 4, 1};  config.block = {32, 1, 1};
//   llvm::Expected<la::emu::LaunchReport> report = (*program)->launch(*kernel, args, config);
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_GPUEMULATOR_H
#define LA_RUNTIME_GPUEMULATOR_H

#include "la/emulator/Launch.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace la {

/// One argument of a kernel, from its gpu.func signature.
struct EmulatedArgument {
  /// A memref (passed as a pointer to its first element) or a scalar (passed by value).
  bool isBuffer = false;
  /// The element (or scalar) type as MLIR prints it: "f16", "f32", "i32", "index", ...
  std::string elementType;
  /// Bytes per element (or of the scalar).
  size_t elementBytes = 0;
  /// A memref's static shape.
  llvm::SmallVector<int64_t, 4> shape;
  /// For a per-slice kernel of the CUDA target (`la.slice_bytes`): the bytes of one block's slice. The
  /// buffer then holds one slice per block of the grid, and `shape` is one slice's. 0 otherwise.
  size_t sliceBytes = 0;

  size_t numBytes() const;
  /// "memref<64x64xf16>" or "f32": how the kernel declared it.
  std::string str() const;
};

/// A kernel of the program and what launching it needs.
struct EmulatedKernel {
  /// "module::function".
  std::string name;
  std::vector<EmulatedArgument> arguments;
  /// Bytes of the block's shared arena: the module's shared globals and workgroup attributions, laid out.
  uint32_t sharedBytes = 0;
  /// The block size the kernel was compiled for (`known_block_size`), if it declared one.
  std::optional<emu::Dim3> blockSize;
  /// The JIT-compiled packed entry point: `entry(args)` with args[i] pointing to argument i's value.
  void (*entry)(void **) = nullptr;
};

/// A program's kernels, compiled for the emulator and ready to launch.
class EmulatedProgram {
public:
  ~EmulatedProgram();

  /// Parses `source` (named `bufferName` in diagnostics), lowers every gpu.module in it and JIT-compiles the
  /// result. Errors: parse errors and every operation the emulator cannot run, each at its file:line:col; a
  /// kernel argument that is not a static-shape memref or a scalar.
  static llvm::Expected<std::unique_ptr<EmulatedProgram>> compile(llvm::StringRef source, llvm::StringRef bufferName);

  const std::vector<EmulatedKernel> &kernels() const { return kernelList; }
  /// The kernel called "module::function" (or just "function" when only one module has it); null if none.
  const EmulatedKernel *find(llvm::StringRef name) const;

  /// Runs `kernel` on the grid of `config` (its sharedBytes and buffers are filled in here: one buffer per
  /// memref argument, "argument #i"). `arguments[i]` points to argument i's value: for a memref, to a
  /// pointer to its data. Fails for a launch the kernel cannot take (wrong argument count, a block size
  /// other than the one it was compiled for, an invalid configuration); what the kernel did wrong is in the
  /// report's findings.
  llvm::Expected<emu::LaunchReport> launch(const EmulatedKernel &kernel, llvm::ArrayRef<void *> arguments,
                                           emu::LaunchConfig config) const;

private:
  EmulatedProgram();
  struct Impl;
  std::unique_ptr<Impl> impl;
  std::vector<EmulatedKernel> kernelList;
};

} // namespace la

#endif // LA_RUNTIME_GPUEMULATOR_H
