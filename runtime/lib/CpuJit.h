//===- CpuJit.h - load a compiled kernel object and call it -----*- C++ -*-===//
//
// Internal to the runtime. Each CPU kernel object is linked in-process by its own ORC LLJIT instance (so kernels
// are independent and freed together with their cache entry); external symbols (malloc, free, libm)
// resolve against the running process. A CUDA kernel is compiled for the GPU emulator instead, or assembled
// (ptxas) and loaded on a device through the driver.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_LIB_CPUJIT_H
#define LA_RUNTIME_LIB_CPUJIT_H

#include "CudaDriver.h"

#include "la/runtime/Compiler.h"
#include "la/runtime/GpuEmulator.h"

#include "llvm/ExecutionEngine/Orc/LLJIT.h"

namespace la {

/// A CUDA kernel loaded on a device, and how to launch it (CUDATarget.h): blocks of `blockSize` threads on
/// a grid of (heads, batches), `scratchBytesPerSlice` bytes of scratch per block after the tensors.
struct DeviceKernel {
  std::unique_ptr<cuda::KernelModule> module;
  unsigned blockSize = 0;
  int64_t scratchBytesPerSlice = 0;
};

/// A kernel object linked into this process and ready to call.
class LoadedKernel {
public:
  static llvm::Expected<std::unique_ptr<LoadedKernel>> load(CompiledKernel kernel);
  /// A kernel of the CUDA target (its object is the `gpu` stage text), compiled for the SIMT emulator.
  static llvm::Expected<std::unique_ptr<LoadedKernel>> loadOnEmulator(CompiledKernel kernel);
  /// A kernel of the CUDA target loaded on `driver`'s device. `cubin` is its assembled form when the disk
  /// cache has it; when empty, the kernel is assembled for `options.arch` (ptxas) and `cubin` receives the
  /// result for the caller to cache. The launch facts (name, block size, scratch) come from the `gpu` stage.
  static llvm::Expected<std::unique_ptr<LoadedKernel>> loadOnDevice(CompiledKernel kernel, const cuda::Driver &driver,
                                                                    const CompileOptions &options,
                                                                    std::vector<char> &cubin);

  /// Calls the kernel on one slice: one memref-descriptor pointer per argument, then one per result.
  void call(void **descriptors) const { function(descriptors); }

  /// For a kernel loaded on the emulator: the program and its kernel; null otherwise.
  const EmulatedProgram *emulatedProgram() const { return emulated.get(); }
  const EmulatedKernel *emulatedKernel() const { return emulatedEntry; }
  /// For a kernel loaded on a device: its module and launch facts; null otherwise.
  const DeviceKernel *deviceKernel() const { return device.module ? &device : nullptr; }

  /// The compiled kernel's metadata (its object bytes are released once linked).
  const CompiledKernel &info() const { return kernel; }

  /// A hash of the object it was loaded from (CallStats::codeHash); set by whoever loaded it.
  uint64_t codeHash = 0;

private:
  LoadedKernel() = default;
  CompiledKernel kernel;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  void (*function)(void **) = nullptr;
  std::unique_ptr<EmulatedProgram> emulated;
  const EmulatedKernel *emulatedEntry = nullptr;
  DeviceKernel device;
};

} // namespace la

#endif // LA_RUNTIME_LIB_CPUJIT_H
