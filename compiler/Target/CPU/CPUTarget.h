//===- CPUTarget.h - the CPU target: register tiles, LLVM, native code -*- C++ -*-===//
//
// Tiles fused linalg into register blocks and cache panels, bufferises, lowers to the LLVM dialect with
// the function attributes the code generator needs (target-cpu/features, noalias), and emits LLVM IR,
// assembly or an object file for `target-cpu` (the host by default).
//
//===----------------------------------------------------------------------===//
#ifndef LA_TARGET_CPU_CPUTARGET_H
#define LA_TARGET_CPU_CPUTARGET_H

#include "Pipelines/Pipelines.h"
#include "Target/TargetBackend.h"

#include <memory>

namespace mlir::la {

/// The CPU backend for one configuration.
class CPUTarget : public TargetBackend {
public:
  /// Resolves "host" in `target-cpu`/`target-features` and checks that LLVM knows the CPU; the error
  /// names an unknown one.
  static llvm::Expected<std::unique_ptr<CPUTarget>> create(const PipelineConfig &config);

  PipelineTarget getKind() const override { return PipelineTarget::CPU; }
  const PipelineConfig &getConfig() const override { return config; }
  void buildTensorPipeline(OpPassManager &pm) const override;
  void buildLoweringPipeline(OpPassManager &pm) const override;
  /// "llvm" (LLVM IR after -O3), "asm", "obj".
  llvm::ArrayRef<llvm::StringRef> getArtifactKinds() const override;
  llvm::Expected<std::string> emitArtifact(ModuleOp module, llvm::StringRef kind) const override;

private:
  explicit CPUTarget(PipelineConfig config) : config(std::move(config)) {}
  PipelineConfig config;
};

/// Registers the host's LLVM target and its asm printer, once per process, whoever asks first. LLVM's target
/// registration is not thread-safe (TargetRegistry::RegisterTarget links the target into a global list
/// without a lock), so code generation here and the runtime's JIT loader must share this one
/// std::once_flag: with one each, a compile on one thread and a disk-cache load on another could register
/// the same target at the same time in a fresh process.
void initializeNativeTarget();

/// `config` with target-cpu/target-features "host" replaced by this machine's CPU and its features
/// (`+f` or `-f` for every feature LLVM reports, sorted).
PipelineConfig resolveHostCPU(PipelineConfig config);

/// The `la-opt` form of a CPU PipelineConfig: one pipeline option per registry row of the Common and CPU
/// targets (generated from PipelineOptions.def), plus the specialisation.
struct CPUPipelineOptions : public PassPipelineOptions<CPUPipelineOptions> {
#define LA_OPTION(TARGET, FIELD, NAME, TYPE, DEFAULT, DOMAIN, DESCRIPTION)                                             \
  LA_OPTION_IN_##TARGET(FIELD, NAME, TYPE, DEFAULT, DESCRIPTION)
#define LA_OPTION_IN_Common(FIELD, NAME, TYPE, DEFAULT, DESCRIPTION)                                                   \
  Option<TYPE> FIELD{*this, NAME, llvm::cl::desc(DESCRIPTION), llvm::cl::init(DEFAULT)};
#define LA_OPTION_IN_CPU LA_OPTION_IN_Common
#define LA_OPTION_IN_CUDA(FIELD, NAME, TYPE, DEFAULT, DESCRIPTION)
#include "Pipelines/PipelineOptions.def"
#undef LA_OPTION_IN_Common
#undef LA_OPTION_IN_CPU
#undef LA_OPTION_IN_CUDA

  Option<std::string> entry{*this, "entry", llvm::cl::desc("Function to keep and specialise (la-specialize)")};
  ListOption<std::string> argTypes{*this, "arg-types",
                                   llvm::cl::desc("Argument types of the entry, e.g. tensor<1x1x37x64xf32>")};

  PipelineConfig getConfig() const;
  Specialization getSpecialization() const;
};

/// Registers `-la-cpu-pipeline` and its stages `-la-cpu-optimize` (la ⇒ fused la), `-la-cpu-to-linalg`
/// (fused la ⇒ tiled linalg) and `-la-cpu-to-llvm` (tiled linalg ⇒ LLVM dialect).
void registerCPUPipelines();

} // namespace mlir::la

#endif // LA_TARGET_CPU_CPUTARGET_H
