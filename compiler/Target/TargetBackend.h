//===- TargetBackend.h - what a compilation target provides -----*- C++ -*-===//
//
// The seam between the target-neutral stages (compiler/Pipelines: specialise, chunk, lower to linalg and
// fuse) and a target's own lowering. A target tiles the fused linalg for its memory hierarchy, lowers it
// to the IR it translates, and turns that into artefacts (an object file, assembly, PTX, ...). The CPU
// target (Target/CPU) is the first; a CUDA target implements the same three steps.
//
//===----------------------------------------------------------------------===//
#ifndef LA_TARGET_TARGETBACKEND_H
#define LA_TARGET_TARGETBACKEND_H

#include "Pipelines/PipelineConfig.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/Error.h"

#include <string>

namespace mlir::la {

class TargetBackend {
public:
  virtual ~TargetBackend();

  /// Which rows of PipelineOptions.def this target reads (besides the Common ones).
  virtual PipelineTarget getKind() const = 0;

  /// The configuration this target compiles with, every "host" default resolved to this machine's value:
  /// what the cache key must contain.
  virtual const PipelineConfig &getConfig() const = 0;

  /// Fused linalg on tensors ⇒ linalg tiled for the target, still on tensors (the `linalg` stage).
  virtual void buildTensorPipeline(OpPassManager &pm) const = 0;

  /// Tiled linalg on tensors ⇒ the IR the target translates (the `llvm-dialect` stage for the CPU).
  virtual void buildLoweringPipeline(OpPassManager &pm) const = 0;

  /// The artefacts `emitArtifact` can produce, in the order `lac compile --emit` lists them.
  virtual llvm::ArrayRef<llvm::StringRef> getArtifactKinds() const = 0;

  /// Translates a module that went through `buildLoweringPipeline` and produces artefact `kind` (text or
  /// binary bytes).
  virtual llvm::Expected<std::string> emitArtifact(ModuleOp module, llvm::StringRef kind) const = 0;
};

} // namespace mlir::la

#endif // LA_TARGET_TARGETBACKEND_H
