//===- CandidateEvaluator.h - where a search's figures come from -*- C++ -*-===//
//
// Internal to the runtime. The search of la/runtime/Tuner.h decides which candidate to look at next; an
// evaluator says what that candidate is worth. Two exist: one that compiles, checks and measures
// (MeasuringEvaluator.cpp), and one that reads what a trace recorded (replay, in Tuner.cpp). Strategies
// therefore run the same against a machine and against a trace.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_LIB_CANDIDATEEVALUATOR_H
#define LA_RUNTIME_LIB_CANDIDATEEVALUATOR_H

#include "la/runtime/Tuner.h"

#include <memory>

namespace la {

class CandidateEvaluator {
public:
  virtual ~CandidateEvaluator();
  /// Candidate 0, the default, which every other is compared with and scored against; an error ends the
  /// search.
  virtual llvm::Expected<CandidateResult> evaluateDefault() = 0;
  /// Candidate `index` of the space: never an error, a status (compile error, mismatch, crashed, ...).
  virtual CandidateResult evaluate(size_t index) = 0;
  /// Scores the default and `finalists` (space indices, the default first) again, round-robin.
  virtual std::vector<TimingStats> rescore(llvm::ArrayRef<size_t> finalists) = 0;
  /// May drop what it holds for measured candidates other than the default and `keep` (JIT memory).
  virtual void release(llvm::ArrayRef<size_t> keep) {}
};

/// Compiles, checks and scores candidates of `space` for `entry` of `source` on `inputs`, each in a runtime
/// of `runtimeOptions` with the candidate's configuration (la/runtime/Tuner.h, steps 1-3).
std::unique_ptr<CandidateEvaluator> makeMeasuringEvaluator(const RuntimeOptions &runtimeOptions, llvm::StringRef source,
                                                           llvm::StringRef sourceName, llvm::StringRef entry,
                                                           llvm::ArrayRef<TensorRef> inputs,
                                                           const mlir::la::TuningSpace &space,
                                                           const TunerOptions &options);

} // namespace la

#endif // LA_RUNTIME_LIB_CANDIDATEEVALUATOR_H
