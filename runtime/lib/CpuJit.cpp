//===- CpuJit.cpp - load a compiled kernel object and call it -------------===//

#include "CpuJit.h"

#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"

#include <mutex>

namespace la {

llvm::Expected<std::unique_ptr<LoadedKernel>> LoadedKernel::load(CompiledKernel kernel) {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  auto jit = llvm::orc::LLJITBuilder().setNumCompileThreads(0).create();
  if (!jit)
    return jit.takeError();
  char prefix = (*jit)->getDataLayout().getGlobalPrefix();
  auto generator = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
  if (!generator)
    return generator.takeError();
  (*jit)->getMainJITDylib().addGenerator(std::move(*generator));

  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(kernel.object.data(), kernel.object.size()),
                                                     kernel.symbol());
  if (llvm::Error err = (*jit)->addObjectFile(std::move(buffer)))
    return std::move(err);
  auto address = (*jit)->lookup(kernel.symbol());
  if (!address)
    return address.takeError();

  auto loaded = std::unique_ptr<LoadedKernel>(new LoadedKernel());
  loaded->function = address->toPtr<void (*)(void **)>();
  loaded->jit = std::move(*jit);
  kernel.object.clear();
  kernel.object.shrink_to_fit();
  loaded->kernel = std::move(kernel);
  return std::move(loaded);
}

} // namespace la
