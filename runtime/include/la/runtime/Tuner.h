//===- Tuner.h - search a tunable space for the fastest configuration -*- C++ -*-===//
//
// The autotuner behind `lac tune`, and its API for experiments. Given a program, an entry, inputs and a
// tunable space (compiler/Pipelines/TuningSpace.h: the option registry's domains, or values a user lists),
// it visits candidates in the order a strategy picks and, for each:
//
//   1. compiles it and runs it once (a runtime per configuration, sharing the disk cache), into buffers of its
//      own (the caller's tensors are never written), and compares every output with the default
//      configuration's, by the numerics guard's measure and tolerance (la/runtime/NumericsCheck.h), then by
//      the caller's own check if there is one. With `TunerOptions::isolate` (the default) this probe runs in
//      a child process (fork): a candidate whose compile or first call kills the process is recorded as
//      `crashed` and the search goes on;
//   2. skips the timing when its object code equals an earlier candidate's (an option with no effect on
//      this kernel): it shares that candidate's figures;
//   3. scores it by the objective (wall time by default) interleaved with the default, call for call, so
//      drift of the machine hits both alike.
//
// At the end the best few and the default are scored again, round-robin, and the winner is the least
// median; among the configurations within noise of it (the larger relative spread of the two, at least
// 1%), the default wins, else the least canonical text, so two runs on one machine pick the same one.
//
// `replayTuning` runs a strategy against the candidates a trace recorded (`lac tune --log`), without
// compiling or running anything: how many evaluations a strategy needs to find what an exhaustive search
// found, as Kernel Tuner's simulation mode answers.
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
  Anneal,     ///< simulated annealing over neighbours: one tunable moved one step (seeded)
  Model       ///< half the budget in the order a cost model predicts (TunerOptions::predict), fastest first;
              ///< then the one-step neighbours of the best measured so far, least predicted first
};
/// "exhaustive", "random", "anneal", "model"; the error lists the choices.
llvm::Expected<SearchStrategy> parseSearchStrategy(llvm::StringRef name);
llvm::StringRef searchStrategyName(SearchStrategy strategy);

/// What a search minimises, from one call of a candidate: its wall time in milliseconds and what the runtime
/// reported (CallStats: on cuda-emu the emulator's counters, say). Time by default.
struct TuningObjective {
  /// For records and messages: "time", "global-bytes", ...
  std::string name = "time";
  /// The score of one call; null: `wallMs`.
  std::function<double(double wallMs, const CallStats &stats)> score;
  /// Whether two calls of one configuration may score differently (time does; counts do not). A
  /// deterministic objective is scored once per candidate, and there is no final round.
  bool noisy = true;

  /// The emulator's count of global-memory bytes (cuda-emu): a GPU experiment that needs no GPU.
  static TuningObjective globalBytes();
};

struct TunerOptions {
  SearchStrategy strategy = SearchStrategy::Anneal;
  /// Candidates to evaluate, the default included; 0: every candidate (exhaustive), a quarter of the space
  /// (model, at most 32) or 32 (the others).
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
  TuningObjective objective;
  /// Run each candidate's compile and first call in a child process first (fork), so that one that crashes
  /// is recorded and skipped instead of ending the search. Costs a fork per candidate, and a second compile
  /// where the disk cache is off.
  bool isolate = true;
  /// With `isolate`: a child that has not answered after this many seconds (a compile or call that hangs,
  /// or a fork that deadlocked on a lock another thread held) is killed and its candidate `crashed`.
  double probeSeconds = 300;
  /// The caller's own acceptance test of a candidate's outputs, after the comparison with the default's:
  /// why `outputs` of configuration `config` are not acceptable, or nothing. Runs where the first call does
  /// (the child process, with `isolate`).
  std::function<std::optional<std::string>(llvm::ArrayRef<TensorRef> outputs, llvm::StringRef config)> check;
  /// Model: the predicted cost of a configuration (any unit: only the order counts). Null: the analytic
  /// model of la/runtime/CostModel.h for the entry and shape.
  std::function<double(const mlir::la::PipelineConfig &)> predict;
};

/// What became of one candidate.
struct CandidateResult {
  enum class Status {
    Measured,     ///< compiled, agreed with the default, timed
    SameCode,     ///< its object code equals an earlier candidate's: that one's figures
    CompileError, ///< did not compile; `message` says why
    RunError,     ///< compiled but the call failed; `message` says why
    Mismatch,     ///< its outputs disagree with the default's (or the caller's check); `message` says how
    Crashed,      ///< its compile or first call killed the (child) process; `message` has the signal
    Unrecorded    ///< replay: the trace has no measurement of this configuration
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
  /// Model: the predicted cost.
  std::optional<double> predicted;

  bool ok() const { return status == Status::Measured || status == Status::SameCode; }
  /// Time relative to the default's, from the interleaved timing (1.0: as fast).
  double relativeTime() const { return baseline.medianMs > 0 ? timing.medianMs / baseline.medianMs : 1.0; }
  llvm::json::Value toJSON() const;
  /// Parses what toJSON wrote (a line of a trace); the error names the field.
  static llvm::Expected<CandidateResult> fromJSON(const llvm::json::Value &value);
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
/// two, at least 1%) the default is preferred, then the least canonical text of those faster than the
/// default.
size_t pickWinner(llvm::ArrayRef<TimingStats> timings, llvm::ArrayRef<std::string> configs);

/// Searches `space` (built around the runtime's configuration, which is its default) for `entry` of
/// `program` on `inputs`. `runtimeOptions` are those of the runtime the tuned kernel will run in: threads,
/// target, cache directory.
llvm::Expected<TuningResult> tune(const RuntimeOptions &runtimeOptions, llvm::StringRef source,
                                  llvm::StringRef sourceName, llvm::StringRef entry, llvm::ArrayRef<TensorRef> inputs,
                                  const mlir::la::TuningSpace &space, const TunerOptions &options,
                                  TuningObserver *observer = nullptr);

/// Runs the search of `options` over `space` with each candidate's figures taken from `recorded` (by
/// configuration text; a trace of `lac tune --log`, usually of an exhaustive search) instead of measured:
/// nothing compiles or runs. A candidate the trace lacks is `Unrecorded`. The default must be recorded.
llvm::Expected<TuningResult> replayTuning(const mlir::la::TuningSpace &space, llvm::ArrayRef<CandidateResult> recorded,
                                          const TunerOptions &options, TuningObserver *observer = nullptr);

/// The record of `result` for `key`: the best configuration and its timing beside the default's, status
/// "tuned" or "partial" (a time limit stopped the search), and the provenance (strategy, seed, budget,
/// candidates evaluated, space size, tuning time, date, host) with `provenance`'s fields added.
TuningRecord makeTuningRecord(const TuningKey &key, const TuningResult &result, const TunerOptions &options,
                              llvm::json::Object provenance = {});

/// This process as a lease holder and in provenance: "<host> pid <pid> since <UTC date>".
std::string describeThisProcess();

/// The candidates of a trace file written by `lac tune --log` (other lines skipped); the error names the
/// file and line of a candidate that does not parse.
llvm::Expected<std::vector<CandidateResult>> readTuningTrace(llvm::StringRef path);

} // namespace la

#endif // LA_RUNTIME_TUNER_H
