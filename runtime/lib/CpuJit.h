//===- CpuJit.h - load a compiled kernel object and call it -----*- C++ -*-===//
//
// Internal to the runtime. Each kernel object is linked in-process by its own ORC LLJIT instance (so kernels
// are independent and freed together with their cache entry); external symbols (malloc, free, libm)
// resolve against the running process.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_LIB_CPUJIT_H
#define LA_RUNTIME_LIB_CPUJIT_H

#include "la/runtime/Compiler.h"

#include "llvm/ExecutionEngine/Orc/LLJIT.h"

namespace la {

/// A kernel object linked into this process and ready to call.
class LoadedKernel {
public:
  static llvm::Expected<std::unique_ptr<LoadedKernel>> load(CompiledKernel kernel);

  /// Calls the kernel on one slice: one memref-descriptor pointer per argument, then one per result.
  void call(void **descriptors) const { function(descriptors); }

  /// The compiled kernel's metadata (its object bytes are released once linked).
  const CompiledKernel &info() const { return kernel; }

private:
  LoadedKernel() = default;
  CompiledKernel kernel;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  void (*function)(void **) = nullptr;
};

} // namespace la

#endif // LA_RUNTIME_LIB_CPUJIT_H
