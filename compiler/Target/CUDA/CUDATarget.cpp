//===- CUDATarget.cpp - the CUDA target -----------------------------------===//

#include "Target/CUDA/CUDATarget.h"

#include "Target/CUDA/Transforms/CUDAPasses.h"
#include "Target/NVVM/NVVMLowering.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

namespace mlir::la {
namespace {

/// The PTX ISA version each architecture needs at least (LLVM's NVPTX backend aborts on sm_80/sm_90 with
/// its default, PTX 6.0).
llvm::StringRef ptxFeatures(llvm::StringRef arch) { return arch == "sm_90" ? "+ptx80" : "+ptx70"; }

/// Runs `build` on `module`; the error carries the pass failure's diagnostics (already emitted to the
/// context's handler) and `what`.
llvm::Error runPasses(ModuleOp module, llvm::StringRef what, llvm::function_ref<void(OpPassManager &)> build) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  build(pm);
  if (failed(pm.run(module)))
    return llvm::createStringError(llvm::formatv("{0} failed", what).str());
  return llvm::Error::success();
}

/// The registrations `gpu-module-to-binary` needs: the NVVM target attribute's serializer and the
/// translations of every dialect left in a lowered kernel.
void registerNVVMSerialization(MLIRContext *context) {
  DialectRegistry registry;
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  context->appendDialectRegistry(registry);
}

} // namespace

llvm::Expected<std::unique_ptr<CUDATarget>> CUDATarget::create(const PipelineConfig &config) {
  if (config.arch != "sm_80" && config.arch != "sm_90")
    return llvm::createStringError(
        llvm::formatv("arch '{0}' is not a GPU architecture the CUDA target supports (sm_80, sm_90)", config.arch)
            .str());
  if (config.warpsPerBlock < 1 || config.warpsPerBlock > 32)
    return llvm::createStringError(
        llvm::formatv("warps-per-block {0} is outside 1..32 (a block has at most 1024 threads)", config.warpsPerBlock)
            .str());
  // sm_80 and sm_90 hold at most 2048 threads per SM: a larger product asks ptxas for what no SM can hold.
  if (config.minBlocksPerSM < 1 || config.minBlocksPerSM * config.warpsPerBlock * 32 > 2048)
    return llvm::createStringError(
        llvm::formatv("min-blocks-per-sm {0} is outside 1..{1} (an SM holds at most 2048 threads, {2} per block)",
                      config.minBlocksPerSM, 2048 / (config.warpsPerBlock * 32), config.warpsPerBlock * 32)
            .str());
  // A block's dynamic shared memory (la-gpu-dynamic-shared-memory): at most 163 KiB on sm_80, 227 KiB on
  // sm_90 (the CUDA C Programming Guide's table of technical specifications per compute capability).
  int64_t sharedLimit = config.arch == "sm_80" ? 163 * 1024 : 227 * 1024;
  if (config.sharedMemoryBytes < 0 || config.sharedMemoryBytes > sharedLimit)
    return llvm::createStringError(
        llvm::formatv("shared-memory-bytes {0} is outside 0..{1}, the most shared memory a block may have on {2}",
                      config.sharedMemoryBytes, sharedLimit, config.arch)
            .str());
  if (config.tensorCores != "auto" && config.tensorCores != "tf32" && config.tensorCores != "off")
    return llvm::createStringError(
        llvm::formatv("tensor-cores '{0}' is not auto, tf32 or off", config.tensorCores).str());
  return std::unique_ptr<CUDATarget>(new CUDATarget(config));
}

void CUDATarget::buildTensorPipeline(OpPassManager &pm) const {
  pm.addNestedPass<func::FuncOp>(createLAGPUFuseProducersIntoLoops());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void CUDATarget::buildLoweringPipeline(OpPassManager &pm) const {
  // In place: a kernel's temporaries are fixed slots of its scratch buffer, so no loop may yield a fresh one.
  pm.addNestedPass<func::FuncOp>(createLAGPULoopStateInPlace());
  buildBufferizationPipeline(pm, /*loopsMayReturnAllocations=*/false);
  LAGPUContractToMmaOptions mma;
  mma.mode = config.tensorCores;
  mma.warpsPerBlock = config.warpsPerBlock;
  mma.sharedMemoryBytes = config.sharedMemoryBytes;
  pm.addNestedPass<func::FuncOp>(createLAGPUContractToMma(mma));
  pm.addNestedPass<func::FuncOp>(createLAGPUNarrowFragmentTemporaries());
  // A chunk's row scans as one loop per element, which the distribution spreads over the threads.
  pm.addNestedPass<func::FuncOp>(createLAGPUScanLanes());
  // Before the register tiles, which would give a reduction to a few elements fewer threads still.
  LAGPUWarpReductionsOptions warpReductions;
  warpReductions.warpsPerBlock = config.warpsPerBlock;
  pm.addNestedPass<func::FuncOp>(createLAGPUWarpReductions(warpReductions));
  LAGPURegisterTileOptions registerTile;
  registerTile.warpsPerBlock = config.warpsPerBlock;
  pm.addNestedPass<func::FuncOp>(createLAGPURegisterTile(registerTile));
  pm.addNestedPass<func::FuncOp>(createLAGPUReductionsInnermost());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createLAGPUPromoteAccumulators());
  pm.addNestedPass<func::FuncOp>(createLAGPUStageLoopInputs());
  LAGPUOutlineSliceKernelOptions outline;
  outline.warpsPerBlock = config.warpsPerBlock;
  outline.minBlocksPerSM = config.minBlocksPerSM;
  outline.sharedMemoryBytes = config.sharedMemoryBytes;
  pm.addPass(createLAGPUOutlineSliceKernel(outline));
  pm.addNestedPass<gpu::GPUModuleOp>(createLAGPUPrefetchStagedCopies());
  pm.addNestedPass<gpu::GPUModuleOp>(createLAGPULowerMmaFragments());
  pm.addNestedPass<gpu::GPUModuleOp>(createLAGPUDistributeToThreads());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

llvm::ArrayRef<llvm::StringRef> CUDATarget::getArtifactKinds() const {
  static const llvm::StringRef kinds[] = {"nvvm", "ptx", "cubin"};
  return kinds;
}

llvm::Expected<std::string> CUDATarget::emitArtifact(ModuleOp module, llvm::StringRef kind) const {
  if (!llvm::is_contained(getArtifactKinds(), kind))
    return llvm::createStringError(
        llvm::formatv("the CUDA target has no artefact '{0}' (choose {1})", kind, llvm::join(getArtifactKinds(), ", "))
            .str());
  if (llvm::Error err = runPasses(module, "lowering to NVVM (la-gpu-to-nvvm)", [](OpPassManager &pm) {
        buildNVVMLoweringTail(pm);
        pm.addNestedPass<gpu::GPUModuleOp>(createLAGPUDynamicSharedMemory());
      }))
    return std::move(err);
  if (kind == "nvvm") {
    std::string text;
    llvm::raw_string_ostream os(text);
    module.print(os);
    return text;
  }

  auto ptxas = findPtxas();
  if (!ptxas)
    return ptxas.takeError();
  std::string toolkit = llvm::sys::path::parent_path(llvm::sys::path::parent_path(*ptxas)).str();
  registerNVVMSerialization(module.getContext());
  llvm::Error err =
      runPasses(module, "PTX generation (nvvm-attach-target, gpu-module-to-binary)", [&](OpPassManager &pm) {
        GpuNVVMAttachTargetOptions attach;
        attach.chip = config.arch;
        attach.features = ptxFeatures(config.arch).str();
        attach.optLevel = 3;
        pm.addPass(createGpuNVVMAttachTarget(attach));
        GpuModuleToBinaryPassOptions binary;
        binary.compilationTarget = "isa";
        // Where libdevice (nvvm/libdevice/libdevice.10.bc, for exp, log, ...) is linked from; without it the
        // NVVM target looks only at $CUDA_HOME-style variables and leaves __nv_* calls unresolved.
        binary.toolkitPath = toolkit;
        pm.addPass(createGpuModuleToBinaryPass(binary));
      });
  if (err)
    return std::move(err);
  std::string ptx;
  for (auto binary : module.getOps<gpu::BinaryOp>())
    for (Attribute object : binary.getObjects())
      ptx += cast<gpu::ObjectAttr>(object).getObject().getValue().str();
  if (ptx.empty())
    return llvm::createStringError("PTX generation produced no kernel");
  if (kind == "ptx")
    return ptx;
  auto assembled = assemblePTX(ptx, config.arch);
  if (!assembled)
    return assembled.takeError();
  return std::move(assembled->cubin);
}

llvm::Expected<std::string> findPtxas() {
  if (const char *fromEnv = std::getenv("LA_PTXAS"); fromEnv && *fromEnv) {
    if (!llvm::sys::fs::can_execute(fromEnv))
      return llvm::createStringError(llvm::formatv("$LA_PTXAS is '{0}', which is not an executable", fromEnv).str());
    return std::string(fromEnv);
  }
  if (auto onPath = llvm::sys::findProgramByName("ptxas"))
    return *onPath;
  const char *toolkit = "/usr/local/cuda/bin/ptxas";
  if (llvm::sys::fs::can_execute(toolkit))
    return std::string(toolkit);
  return llvm::createStringError("ptxas not found: set $LA_PTXAS, put the CUDA toolkit's bin/ on PATH, or install "
                                 "it at /usr/local/cuda");
}

llvm::Expected<AssembledKernel> assemblePTX(llvm::StringRef ptx, llvm::StringRef arch) {
  auto ptxas = findPtxas();
  if (!ptxas)
    return ptxas.takeError();
  llvm::SmallString<128> input, output, report;
  for (auto [path, suffix] : {std::pair{&input, "ptx"}, {&output, "cubin"}, {&report, "log"}})
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile("la-kernel", suffix, *path))
      return llvm::createStringError(ec, "cannot create a temporary file for ptxas");
  llvm::scope_exit cleanup([&] {
    for (const auto &path : {input, output, report})
      llvm::sys::fs::remove(path);
  });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(input, ec);
    if (ec)
      return llvm::createStringError(ec, "cannot write the PTX for ptxas");
    os << ptx;
  }
  std::string archFlag = ("-arch=" + arch).str();
  llvm::SmallVector<llvm::StringRef> args = {*ptxas, "-v", archFlag, input, "-o", output};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(report), llvm::StringRef(report)};
  std::string message;
  int status = llvm::sys::ExecuteAndWait(*ptxas, args, std::nullopt, redirects, /*SecondsToWait=*/120, 0, &message);
  auto log = llvm::MemoryBuffer::getFile(report);
  std::string logText = log ? (*log)->getBuffer().str() : "";
  if (status != 0)
    return llvm::createStringError(llvm::formatv("ptxas -arch={0} failed ({1}): {2}", arch,
                                                 message.empty() ? "exit status " + std::to_string(status) : message,
                                                 logText)
                                       .str());
  auto cubin = llvm::MemoryBuffer::getFile(output, /*IsText=*/false);
  if (!cubin)
    return llvm::createStringError(cubin.getError(), "cannot read the cubin ptxas wrote");
  return AssembledKernel{(*cubin)->getBuffer().str(), std::move(logText)};
}

} // namespace mlir::la
