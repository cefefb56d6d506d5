//===- Pipelines.h - the compilation pipeline, stage by stage ---*- C++ -*-===//
//
// The one owner of the pass pipeline. `la-opt` (`-la-cpu-pipeline`), `lac compile --emit=STAGE` and the
// runtime JIT all build it here, so `lac compile --emit=pipeline` prints exactly what the JIT runs and
// `la-opt --pass-pipeline=<that text>` reproduces every stage.
//
//   la ──(specialise, inline, canonicalise, chunk)──▶ fused la                       target-neutral
//      ──(la-to-linalg, fuse elementwise)──▶ linalg on tensors                        target-neutral
//      ──(TargetBackend::buildTensorPipeline)──▶ linalg tiled for the target           per target
//      ──(TargetBackend::buildLoweringPipeline)──▶ what the target translates          per target
//         (the LLVM dialect for the CPU)
//
// The options of every stage are one `PipelineConfig` (PipelineConfig.h, declared in PipelineOptions.def).
//
//===----------------------------------------------------------------------===//
#ifndef LA_PIPELINES_PIPELINES_H
#define LA_PIPELINES_PIPELINES_H

#include "Pipelines/PipelineConfig.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir::la {

class TargetBackend;

/// What `la-specialize` is asked for: keep `entry` and give its arguments `argTypes`
/// ("tensor<1x1x4096x64xf32>", one per argument). An empty entry means no specialisation.
struct Specialization {
  std::string entry;
  llvm::SmallVector<std::string> argTypes;
  /// When the runtime compiles one batch×head slice of `entry`: how many leading dimensions it slices over.
  /// The entry then reads its slice's coordinates from extra arguments (la-slice-positions).
  int64_t slicedDims = 0;
  /// The arguments each slice reads whole, having none of those dimensions (AFT's bias w[T, T]).
  llvm::SmallVector<unsigned> sharedArguments;
  /// Pieces of each slice's sequence along the last sliced dimension (la-slice-positions `pieces`).
  int64_t slicePieces = 1;
};

/// The stages `lac compile --emit` can stop after, in pipeline order.
enum class PipelineStage {
  Fused,   ///< specialised, inlined, canonicalised, chunked `la`
  Linalg,  ///< linalg on tensors, fused and tiled for the target
  TargetIR ///< what the target translates (the LLVM dialect for the CPU)
};

/// Adds `la-specialize` for `specialization` (nothing when its entry is empty).
void addSpecialization(OpPassManager &pm, const Specialization &specialization);

/// Target-neutral `la` ⇒ optimised `la`: specialisation (when asked), inlining, canonicalisation, chunking
/// of causal scans. `target` decides the one chunking choice that differs between targets (la-chunk-scans'
/// `factor-gated-scores`, off for CUDA).
void buildLAOptimizationPipeline(OpPassManager &pm, const PipelineConfig &config, const Specialization &specialization,
                                 PipelineTarget target);

/// Target-neutral optimised `la` ⇒ fused `linalg` on tensors. `target` decides two fusion choices: which
/// maps are recomputed in each consumer for their size (la-fuse-elementwise's `large-result-bytes`) and
/// whether matrix products stay plain for matrix units (`keep-contractions`), both the CUDA target's.
void buildLAToLinalgPipeline(OpPassManager &pm, const PipelineConfig &config, PipelineTarget target);

/// Tensors ⇒ buffers, for any target: one-shot bufferisation across function boundaries (identity layouts),
/// static allocations hoisted out of loops, results as out-parameters (a static result allocation becomes
/// the out-parameter itself). `loopsMayReturnAllocations`: a loop may yield a fresh buffer per iteration
/// (which then needs deallocation); without it, loop-carried buffers are updated in place.
void buildBufferizationPipeline(OpPassManager &pm, bool loopsMayReturnAllocations);

/// The whole pipeline for `target`, up to and including `last`.
void buildPipeline(OpPassManager &pm, const TargetBackend &target, const Specialization &specialization,
                   PipelineStage last = PipelineStage::TargetIR);

} // namespace mlir::la

#endif // LA_PIPELINES_PIPELINES_H
