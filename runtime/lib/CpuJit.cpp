//===- CpuJit.cpp - load a compiled kernel object and call it -------------===//

#include "CpuJit.h"
#include "CudaLauncher.h"
#include "ParsedProgram.h"

#include "Target/CPU/CPUTarget.h"
#include "Target/CUDA/KernelNames.h"

#include "la/runtime/KernelMemory.h"

#include "llvm/ExecutionEngine/Orc/AbsoluteSymbols.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

namespace la {

llvm::Expected<std::unique_ptr<LoadedKernel>> LoadedKernel::load(CompiledKernel kernel) {
  mlir::la::initializeNativeTarget();
  auto jit = llvm::orc::LLJITBuilder().setNumCompileThreads(0).create();
  if (!jit)
    return jit.takeError();
  char prefix = (*jit)->getDataLayout().getGlobalPrefix();
  auto generator = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
  if (!generator)
    return generator.takeError();
  (*jit)->getMainJITDylib().addGenerator(std::move(*generator));
  // Kernel scratch memory comes from the runtime's per-thread block cache (KernelMemory.h), bound here
  // explicitly: a static library's symbols are not visible to the process-symbol search.
  llvm::orc::MangleAndInterner mangle((*jit)->getExecutionSession(), (*jit)->getDataLayout());
  llvm::orc::SymbolMap scratch;
  auto bind = [&](llvm::StringRef name, auto *function) {
    scratch[mangle(name)] = {llvm::orc::ExecutorAddr::fromPtr(function), llvm::JITSymbolFlags::Exported};
  };
  bind("_mlir_memref_to_llvm_alloc", &_mlir_memref_to_llvm_alloc);
  bind("_mlir_memref_to_llvm_aligned_alloc", &_mlir_memref_to_llvm_aligned_alloc);
  bind("_mlir_memref_to_llvm_free", &_mlir_memref_to_llvm_free);
  if (llvm::Error err = (*jit)->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(scratch))))
    return std::move(err);

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

llvm::Expected<std::unique_ptr<LoadedKernel>> LoadedKernel::loadOnEmulator(CompiledKernel kernel) {
  llvm::StringRef text(kernel.object.data(), kernel.object.size());
  auto program = EmulatedProgram::compile(text, kernel.entry + ".gpu.mlir");
  if (!program)
    return program.takeError();
  std::string name = mlir::la::getKernelName(kernel.entry);
  const EmulatedKernel *entry = (*program)->find(name);
  if (!entry)
    return llvm::createStringError("the CUDA target produced no kernel named '" + name + "'");
  auto loaded = std::unique_ptr<LoadedKernel>(new LoadedKernel());
  loaded->emulated = std::move(*program);
  loaded->emulatedEntry = entry;
  kernel.object.clear();
  kernel.object.shrink_to_fit();
  loaded->kernel = std::move(kernel);
  return std::move(loaded);
}

llvm::Expected<std::unique_ptr<LoadedKernel>> LoadedKernel::loadOnDevice(CompiledKernel kernel,
                                                                         const cuda::Driver &driver,
                                                                         const CompileOptions &options,
                                                                         std::vector<char> &cubin) {
  // A cubin runs on devices of its major architecture with an equal or newer minor one.
  llvm::StringRef deviceArch = driver.getArch(), arch = options.arch;
  if (deviceArch.take_front(4) != arch.take_front(4) || deviceArch < arch) {
    std::string remedy = deviceArch.starts_with("sm_8")   ? "set the arch option to sm_80"
                         : deviceArch.starts_with("sm_9") ? "set the arch option to sm_90"
                                                          : "the CUDA target supports sm_80 and sm_90 devices";
    return llvm::createStringError(
        llvm::formatv("the kernels are compiled for {0}, which cannot run on {1}: {2}", arch, driver.describe(), remedy)
            .str());
  }
  auto image = buildDeviceImage(kernel, options, /*assemble=*/cubin.empty());
  if (!image)
    return image.takeError();
  if (cubin.empty())
    cubin.assign(image->cubin.begin(), image->cubin.end());
  const mlir::la::AotKernel &launch = image->launch;
  auto loadedModule = driver.loadKernel(llvm::StringRef(cubin.data(), cubin.size()), launch.name,
                                        static_cast<unsigned>(launch.dynamicSharedBytes));
  if (!loadedModule)
    return loadedModule.takeError();
  auto loaded = std::unique_ptr<LoadedKernel>(new LoadedKernel());
  loaded->device = {std::move(*loadedModule), static_cast<unsigned>(launch.blockSize), launch.scratchBytesPerSlice};
  kernel.object.clear();
  kernel.object.shrink_to_fit();
  loaded->kernel = std::move(kernel);
  return std::move(loaded);
}

} // namespace la
