//===- Compiler.cpp - compile an la entry to a host object file -----------===//
//
// Parse (SourceMgr diagnostics with file:line:col) → la-specialize → CPU pipeline → LLVM IR → -O3 for the
// host CPU → object file. A small `la_call_<entry>(void **)` wrapper is added in LLVM IR so the runtime calls
// every kernel the same way, whatever its number of arguments.
//
//===----------------------------------------------------------------------===//

#include "la/runtime/Compiler.h"

#include "NativeTarget.h"

#include "Analysis/BatchSlicing.h"
#include "LA/IR/LADialect.h"
#include "Pipelines/Pipelines.h"
#include "Transforms/Passes.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"


using namespace mlir;

namespace la {
namespace {

/// Collects diagnostics as `name:line:col: error: ...` text with the source line, for error values.
struct DiagnosticCapture {
  llvm::SourceMgr sourceMgr;
  std::string text;
  llvm::raw_string_ostream os{text};
  SourceMgrDiagnosticHandler handler;

  DiagnosticCapture(MLIRContext &context) : handler(sourceMgr, &context, os) {}

  llvm::Error error(llvm::StringRef fallback) {
    std::string message = text.empty() ? fallback.str() : llvm::StringRef(text).rtrim().str();
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  }
};

std::unique_ptr<MLIRContext> createContext() {
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registry.insert<mlir::la::LADialect>();
  auto context = std::make_unique<MLIRContext>(registry, MLIRContext::Threading::DISABLED);
  context->loadAllAvailableDialects();
  // Diagnostics name the file, line and op; a dump of the whole module would bury them.
  context->printOpOnDiagnostic(false);
  return context;
}

/// A parsed module together with the context and diagnostics it lives in.
struct ParsedProgram {
  std::unique_ptr<MLIRContext> context = createContext();
  DiagnosticCapture diagnostics{*context};
  OwningOpRef<ModuleOp> module;
};

llvm::Expected<std::unique_ptr<ParsedProgram>> parseProgram(llvm::StringRef source, llvm::StringRef name) {
  auto parsed = std::make_unique<ParsedProgram>();
  parsed->diagnostics.sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(source, name),
                                                   llvm::SMLoc());
  parsed->module = parseSourceFile<ModuleOp>(parsed->diagnostics.sourceMgr, parsed->context.get());
  if (!parsed->module)
    return parsed->diagnostics.error((name + ": cannot parse the program").str());
  return std::move(parsed);
}

void setPipelineOptions(const CompileOptions &options, mlir::la::CPUPipelineOptions &pipeline) {
  pipeline.chunkSize = options.chunkSize;
  pipeline.fuse = options.fuse;
  pipeline.groupSweeps = options.groupSweeps;
  pipeline.registerTile = options.registerTile;
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>> createHostTargetMachine() {
  initializeNativeTarget();
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  return builder->createTargetMachine();
}

/// Adds `void la_call_<entry>(void **args)` calling `_mlir_ciface_<entry>(args[0], ..., args[n-1])`.
llvm::Error addCallWrapper(llvm::Module &module, llvm::StringRef entry) {
  llvm::Function *target = module.getFunction(("_mlir_ciface_" + entry).str());
  if (!target)
    return llvm::createStringError("the lowered module has no C interface for '%s'", entry.str().c_str());
  llvm::LLVMContext &context = module.getContext();
  auto *ptrType = llvm::PointerType::getUnqual(context);
  auto *wrapperType = llvm::FunctionType::get(llvm::Type::getVoidTy(context), {ptrType}, false);
  auto *wrapper = llvm::Function::Create(wrapperType, llvm::Function::ExternalLinkage,
                                         ("la_call_" + entry).str(), module);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "entry", wrapper));
  llvm::SmallVector<llvm::Value *> args;
  for (unsigned i = 0; i < target->arg_size(); ++i) {
    llvm::Value *slot = builder.CreateConstGEP1_64(ptrType, wrapper->getArg(0), i);
    args.push_back(builder.CreateLoad(ptrType, slot));
  }
  builder.CreateCall(target, args);
  builder.CreateRetVoid();
  return llvm::Error::success();
}

/// The runtime dtype of an MLIR element type (the dialect admits only these four).
std::optional<DType> toDType(Type element) {
  if (element.isF32())
    return DType::F32;
  if (element.isF16())
    return DType::F16;
  if (element.isBF16())
    return DType::BF16;
  if (element.isF64())
    return DType::F64;
  return std::nullopt;
}

llvm::Expected<std::vector<TensorSpec>> toSpecs(TypeRange types, llvm::StringRef what) {
  std::vector<TensorSpec> specs;
  for (Type type : types) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return llvm::createStringError("%s type is not a static tensor after specialisation", what.str().c_str());
    TensorSpec spec;
    std::optional<DType> dtype = toDType(tensor.getElementType());
    if (!dtype)
      return llvm::createStringError("%s has an unsupported element type", what.str().c_str());
    spec.dtype = *dtype;
    spec.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
    specs.push_back(spec);
  }
  return specs;
}

/// Runs the pipeline on `parsed` up to (and including) `stage` (LA..LLVM-dialect level).
LogicalResult runStages(ParsedProgram &parsed, llvm::StringRef entry, llvm::ArrayRef<TensorSpec> arguments,
                        const CompileOptions &options, Stage stage) {
  PassManager pm(parsed.context.get());
  mlir::la::CPUPipelineOptions pipeline;
  setPipelineOptions(options, pipeline);
  if (!arguments.empty() || stage > Stage::Fused) {
    mlir::la::LASpecializeOptions specialize;
    specialize.entry = entry.str();
    for (const TensorSpec &spec : arguments)
      specialize.argTypes.push_back(toMLIRTypeString(spec));
    pm.addPass(mlir::la::createLASpecialize(specialize));
  }
  if (stage >= Stage::Fused)
    mlir::la::buildLAOptimizationPipeline(pm, pipeline);
  if (stage >= Stage::Linalg)
    mlir::la::buildLAToLinalgPipeline(pm, pipeline);
  if (stage >= Stage::LLVM)
    mlir::la::buildLinalgToLLVMPipeline(pm, pipeline);
  return pm.run(*parsed.module);
}

/// Translates an LLVM-dialect module to optimised LLVM IR for the host, with the call wrapper.
llvm::Expected<std::unique_ptr<llvm::Module>> translateAndOptimize(ModuleOp module, llvm::StringRef entry,
                                                                   llvm::LLVMContext &llvmContext,
                                                                   llvm::TargetMachine &machine) {
  std::unique_ptr<llvm::Module> llvmModule = translateModuleToLLVMIR(module, llvmContext, "la_kernel");
  if (!llvmModule)
    return llvm::createStringError("translation of '%s' to LLVM IR failed", entry.str().c_str());
  llvmModule->setDataLayout(machine.createDataLayout());
  llvmModule->setTargetTriple(machine.getTargetTriple());
  if (llvm::Error err = addCallWrapper(*llvmModule, entry))
    return std::move(err);
  // The runtime rejects outputs that overlap other tensors and never writes inputs, so the data pointers of
  // the expanded memref arguments are noalias: LLVM may then hoist input loads above output stores.
  if (llvm::Function *kernel = llvmModule->getFunction(entry))
    for (llvm::Argument &arg : kernel->args())
      if (arg.getType()->isPointerTy())
        arg.addAttr(llvm::Attribute::NoAlias);
  // Temporaries come from _mlir_memref_to_llvm_aligned_alloc (the pipeline asks for the aligned form, so the
  // data pointer is the call's result, not an inttoptr of it): fresh memory, like malloc's. Saying so lets
  // LLVM see that a temporary never aliases another or an argument, so loads of per-row values are hoisted
  // and loops vectorise without runtime alias checks and their scalar fallbacks.
  for (llvm::StringRef allocator : {"_mlir_memref_to_llvm_aligned_alloc", "_mlir_memref_to_llvm_alloc"})
    if (llvm::Function *function = llvmModule->getFunction(allocator))
      function->addRetAttr(llvm::Attribute::NoAlias);
  // Kernels must vectorise for this CPU: say so on every function, not only in the target machine.
  for (llvm::Function &function : *llvmModule) {
    if (function.isDeclaration())
      continue;
    function.addFnAttr("target-cpu", machine.getTargetCPU());
    function.addFnAttr("target-features", machine.getTargetFeatureString());
  }
  auto optimize = makeOptimizingTransformer(3, 0, &machine);
  if (llvm::Error err = optimize(llvmModule.get()))
    return std::move(err);
  return std::move(llvmModule);
}

llvm::Expected<std::vector<char>> emitMachineCode(llvm::Module &module, llvm::TargetMachine &machine,
                                                  llvm::CodeGenFileType type) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, os, nullptr, type))
    return llvm::createStringError("the host target cannot emit this file type");
  codegen.run(module);
  return std::vector<char>(buffer.begin(), buffer.end());
}

} // namespace

std::optional<Stage> parseStage(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<Stage>>(name)
      .Case("la", Stage::LA)
      .Case("fused", Stage::Fused)
      .Case("linalg", Stage::Linalg)
      .Case("llvm", Stage::LLVM)
      .Case("asm", Stage::Asm)
      .Case("obj", Stage::Object)
      .Default(std::nullopt);
}

std::string getHostTargetDescription() {
  std::string description = llvm::sys::getHostCPUName().str();
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  std::vector<std::string> enabled;
  for (auto &feature : features)
    if (feature.getValue())
      enabled.push_back(feature.getKey().str());
  llvm::sort(enabled);
  for (const std::string &feature : enabled)
    description += "+" + feature;
  return description;
}

llvm::StringRef getCompilerVersion() {
  // Bump when generated code changes without a change of options (cache entries then miss).
  return "la-compiler 0.3 (LLVM " LLVM_VERSION_STRING ")";
}

std::string toMLIRTypeString(const TensorSpec &spec) {
  std::string text = "tensor<";
  for (int64_t size : spec.shape)
    text += (size < 0 ? std::string("?") : std::to_string(size)) + "x";
  return text + dtypeName(spec.dtype).str() + ">";
}

llvm::Expected<std::vector<EntryInfo>> inspectProgram(llvm::StringRef source, llvm::StringRef bufferName) {
  auto parsed = parseProgram(source, bufferName);
  if (!parsed)
    return parsed.takeError();
  ModuleOp module = *(*parsed)->module;
  std::vector<EntryInfo> entries;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func.isPublic() || func.isExternal())
      continue;
    EntryInfo info;
    info.name = func.getSymName().str();
    auto toSignature = [](TypeRange types, llvm::SmallVectorImpl<TensorSpec> &specs) {
      for (Type type : types) {
        TensorSpec spec;
        auto tensor = dyn_cast<RankedTensorType>(type);
        if (!tensor)
          return false;
        std::optional<DType> dtype = toDType(tensor.getElementType());
        if (!dtype)
          return false;
        spec.dtype = *dtype;
        for (int64_t size : tensor.getShape())
          spec.shape.push_back(ShapedType::isDynamic(size) ? -1 : size);
        specs.push_back(spec);
      }
      return true;
    };
    if (!toSignature(func.getArgumentTypes(), info.signature.arguments) ||
        !toSignature(func.getResultTypes(), info.signature.results))
      return llvm::createStringError("%s: entry '%s' has an argument or result that is not a f16/bf16/f32/f64 tensor",
                                     bufferName.str().c_str(), info.name.c_str());
    entries.push_back(std::move(info));
  }
  // Slicing is decided on the inlined, simplified program, which is what gets compiled.
  PassManager pm((*parsed)->context.get());
  pm.addPass(createInlinerPass());
  pm.addPass(createCanonicalizerPass());
  if (failed(pm.run(module)))
    return (*parsed)->diagnostics.error("simplifying the program failed");
  for (EntryInfo &info : entries)
    if (auto func = module.lookupSymbol<func::FuncOp>(info.name))
      info.slicedDims = mlir::la::getSliceableLeadingDims(func);
  return entries;
}

llvm::Expected<CompiledKernel> compileKernel(llvm::StringRef source, llvm::StringRef bufferName,
                                             llvm::StringRef entry, llvm::ArrayRef<TensorSpec> arguments,
                                             const CompileOptions &options, int64_t slicedDims) {
  auto parsed = parseProgram(source, bufferName);
  if (!parsed)
    return parsed.takeError();
  ParsedProgram &program = **parsed;
  if (failed(runStages(program, entry, arguments, options, Stage::Linalg)))
    return program.diagnostics.error("lowering to linalg failed");
  auto func = program.module->lookupSymbol<func::FuncOp>(entry);
  auto results = toSpecs(func.getResultTypes(), "a result");
  if (!results)
    return results.takeError();

  PassManager pm(program.context.get());
  mlir::la::CPUPipelineOptions pipeline;
  setPipelineOptions(options, pipeline);
  mlir::la::buildLinalgToLLVMPipeline(pm, pipeline);
  if (failed(pm.run(*program.module)))
    return program.diagnostics.error("lowering to LLVM failed");

  auto machine = createHostTargetMachine();
  if (!machine)
    return machine.takeError();
  llvm::LLVMContext llvmContext;
  auto llvmModule = translateAndOptimize(*program.module, entry, llvmContext, **machine);
  if (!llvmModule)
    return llvmModule.takeError();
  auto object = emitMachineCode(**llvmModule, **machine, llvm::CodeGenFileType::ObjectFile);
  if (!object)
    return object.takeError();

  CompiledKernel kernel;
  kernel.entry = entry.str();
  kernel.arguments.assign(arguments.begin(), arguments.end());
  kernel.results = std::move(*results);
  kernel.slicedDims = slicedDims;
  kernel.object = std::move(*object);
  return kernel;
}

llvm::Expected<std::string> promoteToF64(llvm::StringRef source, llvm::StringRef bufferName, llvm::StringRef entry) {
  auto parsed = parseProgram(source, bufferName);
  if (!parsed)
    return parsed.takeError();
  ParsedProgram &program = **parsed;
  // Only `entry` and what it calls are widened: another entry that cannot be (say, one with an explicit
  // truncation) must not stop this one from being checked.
  for (auto func : llvm::make_early_inc_range(program.module->getOps<func::FuncOp>()))
    if (func.isPublic() && func.getSymName() != entry)
      func.erase();
  PassManager pm(program.context.get());
  pm.addPass(createSymbolDCEPass());
  pm.addPass(mlir::la::createLAPromoteToF64());
  if (failed(pm.run(*program.module))) {
    llvm::Error diagnostics = program.diagnostics.error("");
    return llvm::createStringError(llvm::formatv("{0}\n{1}: cannot build the fp64 reference of '{2}': it does not "
                                                 "verify once every float type is f64",
                                                 llvm::toString(std::move(diagnostics)), bufferName, entry)
                                       .str());
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  program.module->print(os);
  return text;
}

llvm::Expected<std::string> emitStage(llvm::StringRef source, llvm::StringRef bufferName, llvm::StringRef entry,
                                      llvm::ArrayRef<TensorSpec> arguments, const CompileOptions &options,
                                      Stage stage) {
  auto parsed = parseProgram(source, bufferName);
  if (!parsed)
    return parsed.takeError();
  ParsedProgram &program = **parsed;
  Stage mlirStage = std::min(stage, Stage::LLVM);
  if (failed(runStages(program, entry, arguments, options, mlirStage)))
    return program.diagnostics.error("compilation failed");
  if (stage <= Stage::Linalg) {
    std::string text;
    llvm::raw_string_ostream os(text);
    program.module->print(os);
    return text;
  }
  auto machine = createHostTargetMachine();
  if (!machine)
    return machine.takeError();
  llvm::LLVMContext llvmContext;
  auto llvmModule = translateAndOptimize(*program.module, entry, llvmContext, **machine);
  if (!llvmModule)
    return llvmModule.takeError();
  if (stage == Stage::LLVM) {
    std::string text;
    llvm::raw_string_ostream os(text);
    (*llvmModule)->print(os, nullptr);
    return text;
  }
  auto code = emitMachineCode(**llvmModule, **machine,
                              stage == Stage::Asm ? llvm::CodeGenFileType::AssemblyFile
                                                  : llvm::CodeGenFileType::ObjectFile);
  if (!code)
    return code.takeError();
  return std::string(code->begin(), code->end());
}

} // namespace la
