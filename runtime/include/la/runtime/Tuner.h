//===- Tuner.h - search a tunable space for the fastest configuration -*- C++ -*-===//
//
// The autotuner behind `lac tune`. Given a program, an entry, inputs and a tunable space
// (compiler/Pipelines/TuningSpace.h), it visits candidates in the order a strategy picks and, for each:
//
//   1. compiles it (a runtime per configuration, sharing the disk cache); a compile error is recorded and
//      the search goes on;
//   2. runs it once into buffers of its own (the caller's tensors are never written) and compares every
//      output with the default configuration's, by the numerics guard's measure and tolerance
//      (la/runtime/NumericsCheck.h); a candidate that disagrees is rejected and reported, never timed;
//   3. skips the timing when its object code equals an earlier candidate's (an option with no effect on
//      this kernel): it shares that candidate's figures;
//   4. times it interleaved with the default, call for call, so drift of the machine hits both alike.
//
// At the end the best few and the default are timed again, round-robin, and the winner is the fastest
// median; among the configurations within noise of it (the larger relative spread of the two, at least
// 1%), the default wins, else the least canonical text, so two runs on one machine pick the same one.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_TUNER_H
#define LA_RUNTIME_TUNER_H

#include "la/runtime/Runtime.h"
#include "la/runtime/TuningDatabase.h"

#include "Pipelines/TuningSpace.h"

#include <functional>

namespace la {

enum class SearchStrategy {
  Exhaustive, ///< every candidate, in the space's order
  Random,     ///< candidates drawn without replacement (seeded)
  Anneal      ///< simulated annealing over neighbours: one tunable moved one step (seeded)
};
/// "exhaustive", "random", "anneal"; the error lists the choices.
llvm::Expected<SearchStrategy> parseSearchStrategy(llvm::StringRef name);
llvm::StringRef searchStrategyName(SearchStrategy strategy);

struct TunerOptions {
  SearchStrategy strategy = SearchStrategy::Anneal;
  /// Candidates to evaluate, the default included; 0: every candidate (exhaustive) or 32 (the others).
  unsigned budget = 0;
  /// Wall-clock limit of the search in seconds (0: none); the final re-timing comes after it.
  double timeLimitSeconds = 0;
  uint64_t seed = 0;
  /// Time spent timing each candidate (and as much on the default beside it), in milliseconds; at least
  /// `minRuns` calls each.
  double measureMs = 200;
  unsigned minRuns = 5;
  /// Candidates re-timed against the default at the end.
  unsigned finalists = 3;
};

/// What became of one candidate.
struct CandidateResult {
  enum class Status {
    Measured,     ///< compiled, agreed with the default, timed
    SameCode,     ///< its object code equals an earlier candidate's: that one's figures
    CompileError, ///< did not compile; `message` says why
    RunError,     ///< compiled but the call failed; `message` says why
    Mismatch      ///< its outputs disagree with the default's; `message` has the comparison
  };
  size_t index = 0; ///< in TuningSpace::candidates()
  std::string config;
  Status status = Status::Measured;
  std::string message;
  TimingStats timing;
  /// The default's timing interleaved with this candidate's; `timing.medianMs / baseline.medianMs` is the
  /// candidate's speed relative to the default, free of drift between candidates.
  TimingStats baseline;
  /// The candidate this one shares its code with (SameCode).
  std::optional<size_t> sameAs;
  double compileMs = 0;

  bool ok() const { return status == Status::Measured || status == Status::SameCode; }
  /// Time relative to the default's, from the interleaved timing (1.0: as fast).
  double relativeTime() const {
    return baseline.medianMs > 0 ? timing.medianMs / baseline.medianMs : 1.0;
  }
  llvm::json::Value toJSON() const;
};
llvm::StringRef candidateStatusName(CandidateResult::Status status);

struct TuningResult {
  std::string bestConfig;
  TimingStats best;
  TimingStats baseline;
  /// Candidates evaluated (compiled), the default included, in the order they were.
  std::vector<CandidateResult> candidates;
  size_t spaceSize = 0;
  double tuningSeconds = 0;
  /// False when the time limit stopped the search before its budget.
  bool complete = true;
};

/// Hooks for progress output and experiments; every method has an empty default.
class TuningObserver {
public:
  virtual ~TuningObserver();
  /// A candidate was evaluated; `evaluated` of at most `planned` so far.
  virtual void candidateDone(const CandidateResult &result, size_t evaluated, size_t planned, double elapsedSeconds,
                             const CandidateResult &bestSoFar) {}
  /// A candidate became the best so far.
  virtual void newBest(const CandidateResult &result) {}
  /// The finalists are being timed again.
  virtual void finalRound(llvm::ArrayRef<const CandidateResult *> finalists) {}
  virtual void done(const TuningResult &result) {}
};

/// The winner of the final round: `timings[i]` of configuration `configs[i]`, the default first. The fastest
/// median wins, except that among the configurations within noise of it (the larger relative spread of the
/// two, at least 1%) the default is preferred, then the least canonical text.
size_t pickWinner(llvm::ArrayRef<TimingStats> timings, llvm::ArrayRef<std::string> configs);

/// Searches `space` (built around the runtime's configuration, which is its default) for `entry` of
/// `program` on `inputs`. `runtimeOptions` are those of the runtime the tuned kernel will run in: threads,
/// target, cache directory.
llvm::Expected<TuningResult> tune(const RuntimeOptions &runtimeOptions, llvm::StringRef source,
                                  llvm::StringRef sourceName, llvm::StringRef entry, llvm::ArrayRef<TensorRef> inputs,
                                  const mlir::la::TuningSpace &space, const TunerOptions &options,
                                  TuningObserver *observer = nullptr);

} // namespace la

#endif // LA_RUNTIME_TUNER_H
