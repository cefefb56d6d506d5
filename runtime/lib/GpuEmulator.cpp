//===- GpuEmulator.cpp - Compile gpu.module kernels and run them on the emulator ===//
//
// parse → record each kernel's signature (the memref shapes are gone after lowering) → la-gpu-to-emulator
// (compiler/Target/NVVM) → LLVM IR → ORC LLJIT, with the emulator's ABI and libdevice functions bound by
// address → launch through la::emu::launch.
//
//===----------------------------------------------------------------------===//

#include "la/runtime/GpuEmulator.h"

#include "ParsedProgram.h"

#include "Target/CPU/CPUTarget.h"
#include "Target/CUDA/Transforms/CUDAPasses.h"
#include "Target/NVVM/NVVMLowering.h"

#include "la/emulator/Symbols.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ExecutionEngine/Orc/AbsoluteSymbols.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace la {

size_t EmulatedArgument::numBytes() const {
  size_t bytes = elementBytes;
  for (int64_t size : shape)
    bytes *= size_t(size);
  return bytes;
}

std::string EmulatedArgument::str() const {
  if (!isBuffer)
    return elementType;
  std::string text = "memref<";
  for (int64_t size : shape)
    text += std::to_string(size) + "x";
  return text + elementType + ">";
}

struct EmulatedProgram::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
};

EmulatedProgram::EmulatedProgram() : impl(std::make_unique<Impl>()) {}
EmulatedProgram::~EmulatedProgram() = default;

namespace {

std::string typeName(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

/// What the kernels of `module` take, read before lowering turns memrefs into bare pointers.
FailureOr<std::vector<EmulatedKernel>> readSignatures(ModuleOp module) {
  std::vector<EmulatedKernel> kernels;
  DataLayout dataLayout(module);
  for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
    for (auto function : gpuModule.getOps<gpu::GPUFuncOp>()) {
      if (!function.isKernel())
        continue;
      EmulatedKernel kernel;
      kernel.name = (gpuModule.getName() + "::" + function.getName()).str();
      for (auto [i, type] : llvm::enumerate(function.getArgumentTypes())) {
        EmulatedArgument argument;
        Type element = type;
        if (auto memref = dyn_cast<MemRefType>(type)) {
          if (!memref.hasStaticShape() || !memref.getLayout().isIdentity())
            return function.emitError("argument #")
                   << i << " of '" << kernel.name << "' is " << type
                   << ": the emulator takes memrefs of static shape and identity layout (one pointer each)";
          argument.isBuffer = true;
          argument.shape.assign(memref.getShape().begin(), memref.getShape().end());
          element = memref.getElementType();
        }
        if (!element.isIntOrIndexOrFloat())
          return function.emitError("argument #")
                 << i << " of '" << kernel.name << "' has type " << type << ", which the emulator cannot pass";
        argument.elementType = typeName(element);
        argument.elementBytes = element.isIndex() ? 8 : (element.getIntOrFloatBitWidth() + 7) / 8;
        kernel.arguments.push_back(std::move(argument));
      }
      // A per-slice kernel of the CUDA target: each block addresses its own slice of every argument.
      if (auto sliceBytes = function->getAttrOfType<DenseI64ArrayAttr>(mlir::la::kSliceBytesAttr)) {
        if (sliceBytes.size() != static_cast<int64_t>(kernel.arguments.size()))
          return function.emitError() << mlir::la::kSliceBytesAttr << " lists " << sliceBytes.size()
                                      << " arguments but '" << kernel.name << "' has " << kernel.arguments.size();
        for (auto [argument, bytes] : llvm::zip(kernel.arguments, sliceBytes.asArrayRef()))
          argument.sliceBytes = bytes;
      }
      kernels.push_back(std::move(kernel));
    }
  }
  return kernels;
}

llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> createJIT() {
  mlir::la::initializeNativeTarget();
  auto jit = llvm::orc::LLJITBuilder().setNumCompileThreads(0).create();
  if (!jit)
    return jit.takeError();
  // The ABI lives in the static library LAGpuEmulator, invisible to a process-symbol search: bind it.
  llvm::orc::MangleAndInterner mangle((*jit)->getExecutionSession(), (*jit)->getDataLayout());
  llvm::orc::SymbolMap symbols;
  for (const emu::Symbol &symbol : emu::abiSymbols())
    symbols[mangle(symbol.name)] = {llvm::orc::ExecutorAddr::fromPtr(symbol.address), llvm::JITSymbolFlags::Exported};
  if (llvm::Error err = (*jit)->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(symbols))))
    return std::move(err);
  char prefix = (*jit)->getDataLayout().getGlobalPrefix();
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
  if (!process)
    return process.takeError();
  (*jit)->getMainJITDylib().addGenerator(std::move(*process));
  return jit;
}

} // namespace

llvm::Expected<std::unique_ptr<EmulatedProgram>> EmulatedProgram::compile(llvm::StringRef source,
                                                                          llvm::StringRef bufferName) {
  auto parsed = parseProgram(source, bufferName);
  if (!parsed)
    return parsed.takeError();
  ModuleOp module = *(*parsed)->module;
  auto program = std::unique_ptr<EmulatedProgram>(new EmulatedProgram());
  FailureOr<std::vector<EmulatedKernel>> kernels = readSignatures(module);
  if (failed(kernels))
    return (*parsed)->diagnostics.error("cannot read the kernels' signatures");
  if (kernels->empty())
    return llvm::createStringError(
        llvm::formatv("{0}: no kernel (a gpu.func with the `kernel` attribute inside a gpu.module)", bufferName));
  program->kernelList = std::move(*kernels);

  PassManager pm((*parsed)->context.get());
  mlir::la::buildEmulatorPipeline(pm);
  if (failed(pm.run(module)))
    return (*parsed)->diagnostics.error(
        (bufferName + ": lowering for the GPU emulator failed (la-gpu-to-emulator)").str());

  for (EmulatedKernel &kernel : program->kernelList) {
    LLVM::LLVMFuncOp function;
    for (auto candidate : module.getOps<LLVM::LLVMFuncOp>())
      if (auto name = candidate->getAttrOfType<StringAttr>("la_emu.kernel"); name && name.getValue() == kernel.name)
        function = candidate;
    if (!function)
      return llvm::createStringError(llvm::formatv("kernel '{0}' did not survive the lowering", kernel.name));
    kernel.sharedBytes = function->getAttrOfType<IntegerAttr>("la_emu.shared_bytes").getInt();
    if (auto block = function->getAttrOfType<DenseI32ArrayAttr>("la_emu.block_size"); block && block.size() == 3)
      kernel.blockSize = emu::Dim3{uint32_t(block[0]), uint32_t(block[1]), uint32_t(block[2])};
  }

  auto context = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> llvmModule = translateModuleToLLVMIR(module, *context, bufferName);
  if (!llvmModule)
    return (*parsed)->diagnostics.error((bufferName + ": translation to LLVM IR failed").str());
  auto jit = createJIT();
  if (!jit)
    return jit.takeError();
  llvmModule->setDataLayout((*jit)->getDataLayout());
  llvmModule->setTargetTriple((*jit)->getTargetTriple());
  // -O2: the kernels run once per emulated thread, and every emulator call is opaque anyway.
  if (llvm::Error err = makeOptimizingTransformer(2, 0, nullptr)(llvmModule.get()))
    return std::move(err);
  if (llvm::Error err = (*jit)->addIRModule(llvm::orc::ThreadSafeModule(std::move(llvmModule), std::move(context))))
    return std::move(err);
  for (EmulatedKernel &kernel : program->kernelList) {
    auto [moduleName, functionName] = llvm::StringRef(kernel.name).split("::");
    auto address = (*jit)->lookup((moduleName + "." + functionName + ".call").str());
    if (!address)
      return address.takeError();
    kernel.entry = address->toPtr<void (*)(void **)>();
  }
  program->impl->jit = std::move(*jit);
  return std::move(program);
}

const EmulatedKernel *EmulatedProgram::find(llvm::StringRef name) const {
  const EmulatedKernel *byFunction = nullptr;
  unsigned functionMatches = 0;
  for (const EmulatedKernel &kernel : kernelList) {
    if (kernel.name == name)
      return &kernel;
    if (llvm::StringRef(kernel.name).split("::").second == name) {
      byFunction = &kernel;
      ++functionMatches;
    }
  }
  return functionMatches == 1 ? byFunction : nullptr;
}

llvm::Expected<emu::LaunchReport> EmulatedProgram::launch(const EmulatedKernel &kernel,
                                                          llvm::ArrayRef<void *> arguments,
                                                          emu::LaunchConfig config) const {
  auto dims = [](const emu::Dim3 &d) { return llvm::formatv("({0},{1},{2})", d.x, d.y, d.z).str(); };
  if (arguments.size() != kernel.arguments.size())
    return llvm::createStringError(llvm::formatv("kernel '{0}' takes {1} arguments, the launch passes {2}", kernel.name,
                                                 kernel.arguments.size(), arguments.size()));
  if (kernel.blockSize && !(*kernel.blockSize == config.block))
    return llvm::createStringError(llvm::formatv("kernel '{0}' was compiled for blocks of {1} threads "
                                                 "(known_block_size); the launch asks for {2}",
                                                 kernel.name, dims(*kernel.blockSize), dims(config.block)));
  config.sharedBytes = kernel.sharedBytes;
  config.buffers.clear();
  for (auto [i, argument] : llvm::enumerate(kernel.arguments))
    if (argument.isBuffer)
      config.buffers.push_back({llvm::formatv("argument #{0}", i).str(), *static_cast<void **>(arguments[i]),
                                argument.sliceBytes ? argument.sliceBytes * config.grid.count() : argument.numBytes()});
  std::vector<void *> packed(arguments.begin(), arguments.end());
  void (*entry)(void **) = kernel.entry;
  return emu::launch([&packed, entry] { entry(packed.data()); }, config);
}

} // namespace la
