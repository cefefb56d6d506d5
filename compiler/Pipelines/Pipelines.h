//===- Pipelines.h - the CPU compilation pipeline, stage by stage -*- C++ -*-===//
//
// One definition of the pass pipeline shared by `la-opt` (`-la-cpu-pipeline`), `lac compile --emit=STAGE`
// and the runtime JIT. The pipeline is split at the stages `lac` can show:
//
//   la ──(buildLAOptimizationPipeline)──▶ fused la ──(buildLAToLinalgPipeline)──▶ linalg on tensors
//      ──(buildLinalgToLLVMPipeline)──▶ LLVM dialect ──(translation, LLVM -O3)──▶ LLVM IR / asm / object
//
//===----------------------------------------------------------------------===//
#ifndef LA_PIPELINES_PIPELINES_H
#define LA_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir::la {

/// Tunable options of the CPU pipeline; every one is part of the runtime's cache key.
struct CPUPipelineOptions : public PassPipelineOptions<CPUPipelineOptions> {
  Option<int64_t> chunkSize{*this, "chunk-size",
                            llvm::cl::desc("Chunk length of the chunked form of causal scans"),
                            llvm::cl::init(16)};
  Option<bool> fuse{*this, "fuse",
                    llvm::cl::desc("Fuse elementwise maps into producers/consumers and group sweeps"),
                    llvm::cl::init(true)};
  Option<bool> groupSweeps{
      *this, "group-sweeps",
      llvm::cl::desc("Group the ops that read the sequence tile by tile into shared loops (la-group-sweeps); "
                     "off by default, see docs/BENCHMARKS.md"),
      llvm::cl::init(false)};
  Option<bool> registerTile{
      *this, "register-tile",
      llvm::cl::desc("Tile contractions into register blocks and vectorise them (la-register-tile-contractions)"),
      llvm::cl::init(true)};
  Option<bool> approximateMath{
      *this, "approximate-math",
      llvm::cl::desc("Expand exp/log/tanh into polynomials (within 2 ulp in f32) so loops vectorise"),
      llvm::cl::init(true)};
};

/// `la` ⇒ optimised `la`: inlining, canonicalisation, chunking of causal scans.
void buildLAOptimizationPipeline(OpPassManager &pm, const CPUPipelineOptions &options);

/// Optimised `la` ⇒ fused `linalg` on tensors.
void buildLAToLinalgPipeline(OpPassManager &pm, const CPUPipelineOptions &options);

/// `linalg` on tensors ⇒ the LLVM dialect: bufferisation (results become out-parameters), loops, sweep
/// fusion, lowering to LLVM. Every public function gets a C interface (`_mlir_ciface_<name>`).
void buildLinalgToLLVMPipeline(OpPassManager &pm, const CPUPipelineOptions &options);

/// All three stages.
void buildCPUPipeline(OpPassManager &pm, const CPUPipelineOptions &options);

/// Registers `-la-cpu-pipeline` (and each stage: `-la-cpu-optimize`, `-la-cpu-to-linalg`,
/// `-la-cpu-to-llvm`) with the pass registry.
void registerCPUPipelines();

} // namespace mlir::la

#endif // LA_PIPELINES_PIPELINES_H
