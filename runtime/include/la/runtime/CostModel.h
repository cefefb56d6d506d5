//===- CostModel.h - predicted cost of a CPU configuration -----*- C++ -*-===//
//
// The analytic model behind `lac tune --strategy model`: it ranks the candidates of a CPU tuning space
// without compiling or running them, so a search can measure the promising few first.
//
// What it sees is what the compiler decides. For each chunk length in the space it runs the target-neutral
// pipeline once (specialisation, chunking, la → linalg, fusion) and keeps the fused linalg ops. For a
// configuration it then asks the register-tiling strategy itself (planRegisterBlock) how each contraction
// would be blocked under that configuration's vector-tile, max-rows and reduction-panel, and counts:
//
//   - per block and reduction step: R·⌈V/W⌉ FMAs over two FMA ports against R broadcasts and ⌈V/W⌉ loads
//     over two load ports (R rows, V lanes, W lanes a register), plus a step of loop overhead;
//   - per block: its accumulators set up and stored, again on every reduction panel;
//   - the operand bytes one row block streams (a panel's rows, or the whole reduction): loads cost 1× from
//     L1, 2× from L2 and 4× beyond, by whether that working set fits;
//   - contractions the strategy leaves to LLVM's vectoriser at a load, an FMA and a store per W lanes, and
//     elementwise ops at their body's operation count per W lanes;
//   - each op as often as the static trip counts of the loops around it (the chunk loop) run it.
//
// Options it cannot see (group-sweeps, sweep-tile, prefetch-tile-bytes) do not change a prediction; among
// equal predictions the configuration closer to the default ranks first, so the model keeps those at their
// default unless the budget reaches past every other choice. The unit is an estimate of cycles of one
// batch×head slice: only the order counts.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_COSTMODEL_H
#define LA_RUNTIME_COSTMODEL_H

#include "la/runtime/Compiler.h"

#include "llvm/Support/Error.h"

#include <memory>

namespace la {

class CostModel {
public:
  virtual ~CostModel();

  /// The model of `entry` of `source` for `arguments` on this machine (CPU target only), with `base` the
  /// configuration the space varies around (its fixed options are used as they are).
  static llvm::Expected<std::unique_ptr<CostModel>> forCPU(llvm::StringRef source, llvm::StringRef bufferName,
                                                           llvm::StringRef entry, llvm::ArrayRef<TensorSpec> arguments,
                                                           const CompileOptions &base);

  /// The predicted cost of `config`; a chunk length the model cannot lower predicts +infinity.
  virtual double predict(const mlir::la::PipelineConfig &config) = 0;
};

/// Spearman's rank correlation of two equally long series (ties share their mean rank); 0 for fewer than two
/// points or a constant series.
double rankCorrelation(llvm::ArrayRef<double> a, llvm::ArrayRef<double> b);

} // namespace la

#endif // LA_RUNTIME_COSTMODEL_H
