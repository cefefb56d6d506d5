//===- CPUTarget.cpp - the CPU target -------------------------------------===//

#include "Target/CPU/CPUTarget.h"
#include "Target/CPU/RegisterTilePipeline.h"

#include "Conversion/Passes.h"
#include "Target/CPU/Transforms/CPUPasses.h"
#include "Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <mutex>

namespace mlir::la {
namespace {

/// An LLVM target machine for the configured CPU, at -O3. With the host defaults it is the machine ORC's
/// `JITTargetMachineBuilder::detectHost` builds, which the runtime's JIT links for.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>> createTargetMachine(const PipelineConfig &config) {
  initializeNativeTarget();
  llvm::orc::JITTargetMachineBuilder builder{llvm::Triple(llvm::sys::getProcessTriple())};
  builder.setCPU(config.targetCPU);
  if (!config.targetFeatures.empty()) {
    llvm::SmallVector<llvm::StringRef> features;
    llvm::StringRef(config.targetFeatures).split(features, ',', -1, /*KeepEmpty=*/false);
    builder.addFeatures(std::vector<std::string>(features.begin(), features.end()));
  }
  builder.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  return builder.createTargetMachine();
}

llvm::Expected<std::string> emitMachineCode(llvm::Module &module, llvm::TargetMachine &machine,
                                            llvm::CodeGenFileType type) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, os, nullptr, type))
    return llvm::createStringError("the LLVM target cannot emit this file type");
  codegen.run(module);
  return std::string(buffer.begin(), buffer.end());
}

} // namespace

void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

PipelineConfig resolveHostCPU(PipelineConfig config) {
  bool hostCPU = config.targetCPU == "host";
  if (hostCPU)
    config.targetCPU = llvm::sys::getHostCPUName().str();
  if (config.targetFeatures == "host") {
    std::vector<std::string> features;
    if (hostCPU)
      for (const auto &feature : llvm::sys::getHostCPUFeatures())
        features.push_back((feature.getValue() ? "+" : "-") + feature.getKey().str());
    llvm::sort(features);
    config.targetFeatures = llvm::join(features, ",");
  }
  return config;
}

llvm::Expected<std::unique_ptr<CPUTarget>> CPUTarget::create(const PipelineConfig &config) {
  PipelineConfig resolved = resolveHostCPU(config);
  // Probe with the generic CPU: LLVM warns on stderr when it builds a machine for a CPU it does not know.
  PipelineConfig generic = resolved;
  generic.targetCPU = "generic";
  generic.targetFeatures.clear();
  auto machine = createTargetMachine(generic);
  if (!machine)
    return machine.takeError();
  if (!(*machine)->getMCSubtargetInfo()->isCPUStringValid(resolved.targetCPU))
    return llvm::createStringError(llvm::formatv("target-cpu '{0}' is not a CPU LLVM knows for {1} (e.g. "
                                                 "skylake-avx512, znver4, x86-64-v3, or host)",
                                                 resolved.targetCPU, (*machine)->getTargetTriple().str())
                                       .str());
  return std::unique_ptr<CPUTarget>(new CPUTarget(std::move(resolved)));
}

void CPUTarget::buildTensorPipeline(OpPassManager &pm) const {
  if (config.fuse) {
    LATileIndependentDimOptions independent;
    independent.cacheTileBytes = config.cacheTileBytes;
    pm.addNestedPass<func::FuncOp>(createLATileIndependentDim(independent));
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
  if (config.fuse && config.groupSweeps) {
    LAGroupSweepsOptions sweeps;
    sweeps.sweepTile = config.sweepTile;
    pm.addNestedPass<func::FuncOp>(createLAGroupSweeps(sweeps));
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
  if (config.registerTile) {
    // The steps of register tiling (RegisterTilePipeline.h), each listed in the pipeline text.
    RegisterTileOptions tiling;
    tiling.vectorTile = config.vectorTile;
    tiling.maxRows = config.maxRows;
    tiling.reductionPanel = config.reductionPanel;
    buildRegisterTilePipeline(pm, tiling);
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
  if (config.fuse) {
    // After register tiling, which turns reductions along the sequence into the row loops this fuses into.
    pm.addNestedPass<func::FuncOp>(createLAFuseProducersIntoSweeps());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
}

void CPUTarget::buildLoweringPipeline(OpPassManager &pm) const {
  // Chunk loops carry their state in a fresh buffer per iteration (D×Dv, small next to the chunk work),
  // which the deallocation pipeline frees.
  buildBufferizationPipeline(pm, /*loopsMayReturnAllocations=*/true);
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  pm.addNestedPass<func::FuncOp>(createLAExpandStridedCopies());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  LAPrefetchNextTileOptions prefetch;
  prefetch.maxTileBytes = config.prefetchTileBytes;
  pm.addNestedPass<func::FuncOp>(createLAPrefetchNextTile(prefetch));
  pm.addNestedPass<func::FuncOp>(createLAPrefetchStridedStreams());
  if (config.approximateMath)
    pm.addNestedPass<func::FuncOp>(createLAApproximateMath());
  // Register blocks: n-D transfers become 1-D loads and stores, then vector ops become LLVM vectors.
  VectorTransferToSCFOptions transfers;
  transfers.enableFullUnroll();
  pm.addNestedPass<func::FuncOp>(createConvertVectorToSCFPass(transfers));
  pm.addPass(createCanonicalizerPass());
  LAStreamLargeResultsOptions streaming;
  streaming.minBytes = config.streamResultBytes;
  streaming.sfence = llvm::Triple(llvm::sys::getProcessTriple()).isX86();
  pm.addNestedPass<func::FuncOp>(createLAStreamLargeResults(streaming));
  pm.addPass(createLAEmitCInterface());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // Temporaries go through _mlir_memref_to_llvm_{alloc,aligned_alloc,free}, which the runtime serves from
  // a per-thread cache of freed blocks (la/runtime/KernelMemory.h).
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  // The aligned form returns the data pointer itself, which keeps its provenance from the (noalias) call.
  memrefToLLVM.useAlignedAlloc = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  // Transposed copies of register-block operands are 16×16 vector.transposes: lower them as the 16×16
  // shuffle network rather than 256 element extracts and inserts.
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.vectorTransposeLowering = vector::VectorTransposeLowering::Shuffle16x16;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createLAEmitCallWrappers());
  LALLVMFunctionAttributesOptions attributes;
  attributes.targetCPU = config.targetCPU;
  attributes.targetFeatures = config.targetFeatures;
  pm.addPass(createLALLVMFunctionAttributes(attributes));
}

llvm::ArrayRef<llvm::StringRef> CPUTarget::getArtifactKinds() const {
  static const llvm::StringRef kinds[] = {"llvm", "asm", "obj"};
  return kinds;
}

llvm::Expected<std::string> CPUTarget::emitArtifact(ModuleOp module, llvm::StringRef kind) const {
  auto machine = createTargetMachine(config);
  if (!machine)
    return machine.takeError();
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule = translateModuleToLLVMIR(module, llvmContext, "la_kernel");
  if (!llvmModule)
    return llvm::createStringError("translation to LLVM IR failed");
  llvmModule->setDataLayout((*machine)->createDataLayout());
  llvmModule->setTargetTriple((*machine)->getTargetTriple());
  auto optimize = makeOptimizingTransformer(3, 0, machine->get());
  if (llvm::Error err = optimize(llvmModule.get()))
    return std::move(err);
  if (kind == "llvm") {
    std::string text;
    llvm::raw_string_ostream os(text);
    llvmModule->print(os, nullptr);
    return text;
  }
  if (kind == "asm" || kind == "obj")
    return emitMachineCode(*llvmModule, **machine,
                           kind == "asm" ? llvm::CodeGenFileType::AssemblyFile : llvm::CodeGenFileType::ObjectFile);
  return llvm::createStringError(
      llvm::formatv("the CPU target has no artefact '{0}' (choose {1})", kind, llvm::join(getArtifactKinds(), ", "))
          .str());
}

PipelineConfig CPUPipelineOptions::getConfig() const {
  PipelineConfig config;
#define LA_OPTION(TARGET, FIELD, NAME, TYPE, DEFAULT, DOMAIN, DESCRIPTION) LA_COPY_##TARGET(FIELD)
#define LA_COPY_Common(FIELD) config.FIELD = FIELD;
#define LA_COPY_CPU LA_COPY_Common
#define LA_COPY_CUDA(FIELD)
#include "Pipelines/PipelineOptions.def"
#undef LA_COPY_Common
#undef LA_COPY_CPU
#undef LA_COPY_CUDA
  return config;
}

Specialization CPUPipelineOptions::getSpecialization() const {
  return Specialization{entry, llvm::to_vector(argTypes)};
}

namespace {

/// Registers `arg` as the stages [first, last] of the CPU pipeline, with CPUPipelineOptions.
void registerCPUStages(llvm::StringRef arg, llvm::StringRef description, std::optional<PipelineStage> first,
                       PipelineStage last) {
  registerPassPipeline(
      arg, description,
      [=](OpPassManager &pm, llvm::StringRef text, function_ref<LogicalResult(const llvm::Twine &)> onError) {
        CPUPipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        auto target = CPUTarget::create(options.getConfig());
        if (!target)
          return onError(llvm::toString(target.takeError()));
        const PipelineConfig &config = (*target)->getConfig();
        if (!first) {
          buildPipeline(pm, **target, options.getSpecialization(), last);
        } else if (*first == PipelineStage::Linalg) {
          buildLAToLinalgPipeline(pm, config, PipelineTarget::CPU);
          (*target)->buildTensorPipeline(pm);
        } else {
          (*target)->buildLoweringPipeline(pm);
        }
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> printOptions) { printOptions(CPUPipelineOptions()); });
}

} // namespace

void registerCPUPipelines() {
  registerRegisterTilePipeline();
  registerCPUStages("la-cpu-pipeline", "Compile la kernels to the LLVM dialect for the CPU (what the JIT runs)",
                    std::nullopt, PipelineStage::TargetIR);
  registerCPUStages("la-cpu-optimize", "Stage 1: la => specialised, chunked la", std::nullopt, PipelineStage::Fused);
  registerCPUStages("la-cpu-to-linalg", "Stage 2: la => fused linalg on tensors, tiled for the CPU",
                    PipelineStage::Linalg, PipelineStage::Linalg);
  registerCPUStages("la-cpu-to-llvm", "Stage 3: tiled linalg => LLVM dialect", PipelineStage::TargetIR,
                    PipelineStage::TargetIR);
}

} // namespace mlir::la
