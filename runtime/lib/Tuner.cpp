//===- Tuner.cpp - search a tunable space for the fastest configuration ---===//

#include "la/runtime/Tuner.h"

#include "la/runtime/NumericsCheck.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <cmath>
#include <map>
#include <random>

#define DEBUG_TYPE "la-tuner"

namespace la {

using mlir::la::PipelineConfig;
using mlir::la::TuningSpace;

llvm::Expected<SearchStrategy> parseSearchStrategy(llvm::StringRef name) {
  if (name == "exhaustive")
    return SearchStrategy::Exhaustive;
  if (name == "random")
    return SearchStrategy::Random;
  if (name == "anneal")
    return SearchStrategy::Anneal;
  return llvm::createStringError("'" + name.str() + "' is not a search strategy (choose exhaustive, random, anneal)");
}

llvm::StringRef searchStrategyName(SearchStrategy strategy) {
  switch (strategy) {
  case SearchStrategy::Exhaustive:
    return "exhaustive";
  case SearchStrategy::Random:
    return "random";
  case SearchStrategy::Anneal:
    return "anneal";
  }
  return "anneal";
}

llvm::StringRef candidateStatusName(CandidateResult::Status status) {
  switch (status) {
  case CandidateResult::Status::Measured:
    return "measured";
  case CandidateResult::Status::SameCode:
    return "same-code";
  case CandidateResult::Status::CompileError:
    return "compile-error";
  case CandidateResult::Status::RunError:
    return "run-error";
  case CandidateResult::Status::Mismatch:
    return "mismatch";
  }
  return "measured";
}

llvm::json::Value CandidateResult::toJSON() const {
  llvm::json::Object object{{"index", int64_t(index)},
                            {"config", config},
                            {"status", candidateStatusName(status)},
                            {"compile_ms", compileMs}};
  if (!message.empty())
    object["message"] = message;
  if (ok()) {
    object["timing"] = timing.toJSON();
    object["baseline"] = baseline.toJSON();
    object["relative_time"] = relativeTime();
  }
  if (sameAs)
    object["same_as"] = int64_t(*sameAs);
  return object;
}

TuningObserver::~TuningObserver() = default;

size_t pickWinner(llvm::ArrayRef<TimingStats> timings, llvm::ArrayRef<std::string> configs) {
  constexpr double kMinNoise = 0.01;
  size_t fastest = 0;
  for (size_t i = 1; i < timings.size(); ++i)
    if (timings[i].medianMs < timings[fastest].medianMs)
      fastest = i;
  size_t winner = fastest;
  for (size_t i = 0; i < timings.size(); ++i) {
    double noise = std::max({kMinNoise, timings[i].relativeSpread, timings[fastest].relativeSpread});
    if (timings[i].medianMs > timings[fastest].medianMs * (1 + noise))
      continue;
    if (i == 0 || (winner != 0 && configs[i] < configs[winner]))
      winner = i;
  }
  return winner;
}

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

/// Most calls one timing takes, whatever the kernel's speed.
constexpr unsigned kMaxRuns = 1000;

/// A configuration compiled into a runtime of its own, with output buffers of its own.
struct Contender {
  std::unique_ptr<Runtime> runtime;
  std::vector<HostTensor> outputs;
  std::vector<TensorRef> outputRefs;
};

class Search {
public:
  Search(const RuntimeOptions &runtimeOptions, const mlir::la::TuningSpace &space, const TunerOptions &options,
         TuningObserver *observer, llvm::StringRef entry, llvm::ArrayRef<TensorRef> inputs)
      : runtimeOptions(runtimeOptions), space(space), options(options), observer(observer), entry(entry),
        inputs(inputs), generator(options.seed) {}

  llvm::Expected<TuningResult> run(llvm::StringRef source, llvm::StringRef sourceName) {
    start = Clock::now();
    size_t planned = plannedEvaluations();
    // The default: compiled, run and timed first; every candidate is compared and timed against it.
    auto defaultContender = makeContender(0, source, sourceName);
    if (!defaultContender)
      return defaultContender.takeError();
    contenders[0] = std::move(*defaultContender);
    for (const HostTensor &output : contenders[0].outputs)
      expected.push_back(toF64(output));
    CandidateResult baseline = describe(0);
    baseline.compileMs = lastCompileMs;
    baseline.timing = baseline.baseline = TimingStats::of(timeCalls({&contenders[0]}).front());
    codeOwners[lastCodeHash] = 0;
    record(std::move(baseline), planned);

    while (result.candidates.size() < planned) {
      if (options.timeLimitSeconds > 0 && secondsSince(start) > options.timeLimitSeconds) {
        result.complete = false;
        break;
      }
      std::optional<size_t> next = nextCandidate();
      if (!next)
        break;
      record(evaluate(*next), planned);
    }
    return finish();
  }

private:
  size_t plannedEvaluations() const {
    size_t candidates = space.candidates().size();
    unsigned budget = options.budget ? options.budget : options.strategy == SearchStrategy::Exhaustive ? 0 : 32;
    return budget ? std::min<size_t>(budget, candidates) : candidates;
  }

  CandidateResult describe(size_t index) const {
    CandidateResult result;
    result.index = index;
    result.config = space.candidates()[index].str(runtimeOptions.compile.target);
    return result;
  }

  /// A runtime for candidate `index`, its kernel compiled and run once into buffers of its own.
  llvm::Expected<Contender> makeContender(size_t index, llvm::StringRef source = {},
                                          llvm::StringRef sourceName = {}) {
    RuntimeOptions candidateOptions = runtimeOptions;
    static_cast<PipelineConfig &>(candidateOptions.compile) = space.candidates()[index];
    candidateOptions.checkNumerics = false;
    Contender contender;
    auto runtime = Runtime::create(candidateOptions);
    if (!runtime)
      return runtime.takeError();
    contender.runtime = std::move(*runtime);
    if (!program) {
      auto loaded = contender.runtime->loadSource(source, sourceName);
      if (!loaded)
        return loaded.takeError();
      program = std::move(*loaded);
    }
    llvm::SmallVector<TensorSpec> inputSpecs;
    for (const TensorRef &input : inputs)
      inputSpecs.push_back(input.spec);
    CallStats stats;
    auto specs = contender.runtime->resultSpecs(*program, entry, inputSpecs, &stats);
    if (!specs)
      return specs.takeError();
    lastCompileMs = stats.compileMs;
    lastCodeHash = stats.codeHash;
    for (const TensorSpec &spec : *specs)
      contender.outputs.emplace_back(spec);
    for (HostTensor &output : contender.outputs)
      contender.outputRefs.push_back(output.ref());
    if (llvm::Error err = contender.runtime->call(*program, entry, inputs, contender.outputRefs))
      return llvm::make_error<RunFailure>(llvm::toString(std::move(err)));
    return contender;
  }

  /// A failed call of a kernel that compiled (makeContender's errors are compile errors otherwise).
  struct RunFailure : llvm::ErrorInfo<RunFailure> {
    static char ID;
    explicit RunFailure(std::string message) : message(std::move(message)) {}
    void log(llvm::raw_ostream &os) const override { os << message; }
    std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }
    std::string message;
  };

  static HostTensor toF64(const HostTensor &tensor) {
    TensorSpec spec = tensor.spec();
    spec.dtype = DType::F64;
    HostTensor wide(spec);
    for (int64_t i = 0; i < tensor.numElements(); ++i)
      wide.set(i, tensor.get(i));
    return wide;
  }

  CandidateResult evaluate(size_t index) {
    evaluated.insert(index);
    CandidateResult result = describe(index);
    auto contender = makeContender(index);
    result.compileMs = lastCompileMs;
    if (!contender) {
      bool ran = contender.errorIsA<RunFailure>();
      result.status = ran ? CandidateResult::Status::RunError : CandidateResult::Status::CompileError;
      result.message = llvm::toString(contender.takeError());
      return result;
    }
    for (auto [i, output] : llvm::enumerate(contender->outputRefs)) {
      OutputCheck check = compareWithReference(i, output, expected[i].ref());
      if (!check.passed()) {
        result.status = CandidateResult::Status::Mismatch;
        result.message = "against the default's output: " + check.str();
        return result;
      }
    }
    auto [owner, fresh] = codeOwners.try_emplace(lastCodeHash, index);
    if (!fresh) {
      const CandidateResult &same = *resultOf(owner->second);
      result.status = CandidateResult::Status::SameCode;
      result.sameAs = owner->second;
      result.timing = same.timing;
      result.baseline = same.baseline;
      return result;
    }
    contenders[index] = std::move(*contender);
    std::vector<std::vector<double>> times = timeCalls({&contenders[0], &contenders[index]});
    result.baseline = TimingStats::of(times[0]);
    result.timing = TimingStats::of(times[1]);
    return result;
  }

  /// Times the contenders call for call, round-robin, until each had `measureMs` and at least `minRuns`
  /// calls (after one untimed call each). Returns each one's times in milliseconds.
  std::vector<std::vector<double>> timeCalls(llvm::ArrayRef<Contender *> group) {
    std::vector<std::vector<double>> times(group.size());
    auto callOnce = [&](Contender &contender) {
      auto begin = Clock::now();
      llvm::Error err = contender.runtime->call(*program, entry, inputs, contender.outputRefs);
      double ms = std::chrono::duration<double, std::milli>(Clock::now() - begin).count();
      // The first call of every contender succeeded, so a failure here is not the configuration's.
      llvm::consumeError(std::move(err));
      return ms;
    };
    for (Contender *contender : group)
      callOnce(*contender);
    double spent = 0;
    for (unsigned run = 0; run < kMaxRuns && (run < options.minRuns || spent < options.measureMs); ++run)
      for (auto [i, contender] : llvm::enumerate(group)) {
        double ms = callOnce(*contender);
        times[i].push_back(ms);
        if (i == 0)
          spent += ms;
      }
    return times;
  }

  const CandidateResult *resultOf(size_t index) const {
    for (const CandidateResult &candidate : result.candidates)
      if (candidate.index == index)
        return &candidate;
    return nullptr;
  }

  void record(CandidateResult candidate, size_t planned) {
    LLVM_DEBUG(llvm::dbgs() << "la-tuner: " << candidate.toJSON() << "\n");
    evaluated.insert(candidate.index);
    bool better = candidate.ok() && (!bestIndex || candidate.relativeTime() < bestRelative);
    if (better) {
      bestIndex = candidate.index;
      bestRelative = candidate.relativeTime();
    }
    if (candidate.status != CandidateResult::Status::Measured)
      contenders.erase(candidate.index);
    result.candidates.push_back(std::move(candidate));
    const CandidateResult &stored = result.candidates.back();
    if (observer) {
      if (better)
        observer->newBest(stored);
      observer->candidateDone(stored, result.candidates.size(), planned, secondsSince(start), *resultOf(*bestIndex));
    }
    // Anneal: move to the candidate with the Metropolis rule.
    if (options.strategy == SearchStrategy::Anneal && stored.ok()) {
      double current = resultOf(currentIndex)->relativeTime();
      double step = stored.relativeTime() - current;
      std::uniform_real_distribution<double> uniform(0, 1);
      if (step <= 0 || uniform(generator) < std::exp(-step / temperature))
        currentIndex = stored.index;
      temperature *= 0.85;
    }
    // Contenders other than the default and the few best so far are released (their JIT memory).
    if (contenders.size() > options.finalists + 1) {
      std::vector<size_t> measured;
      for (const auto &[index, contender] : contenders)
        if (index != 0)
          measured.push_back(index);
      llvm::sort(measured, [&](size_t a, size_t b) { return resultOf(a)->relativeTime() < resultOf(b)->relativeTime(); });
      for (size_t i = options.finalists; i < measured.size(); ++i)
        contenders.erase(measured[i]);
    }
  }

  std::optional<size_t> nextCandidate() {
    size_t count = space.candidates().size();
    switch (options.strategy) {
    case SearchStrategy::Exhaustive:
      for (size_t index = 1; index < count; ++index)
        if (!evaluated.contains(index))
          return index;
      return std::nullopt;
    case SearchStrategy::Random:
      return randomUnevaluated();
    case SearchStrategy::Anneal:
      if (std::optional<size_t> neighbour = randomNeighbour(currentIndex))
        return neighbour;
      return randomUnevaluated();
    }
    return std::nullopt;
  }

  std::optional<size_t> randomUnevaluated() {
    std::vector<size_t> left;
    for (size_t index = 1; index < space.candidates().size(); ++index)
      if (!evaluated.contains(index))
        left.push_back(index);
    if (left.empty())
      return std::nullopt;
    return left[std::uniform_int_distribution<size_t>(0, left.size() - 1)(generator)];
  }

  /// An unevaluated candidate one step from `index`: one tunable moved to the next or previous value of its
  /// domain (any value, for a default outside the domain). Chosen at random among all such.
  std::optional<size_t> randomNeighbour(size_t index) {
    std::vector<unsigned> point = space.coordinates()[index];
    std::vector<size_t> neighbours;
    for (auto [t, values] : llvm::enumerate(space.values())) {
      unsigned here = point[t];
      for (unsigned value = 0; value < values.size(); ++value) {
        bool adjacent = here == ~0u || value + 1 == here || value == here + 1;
        if (!adjacent)
          continue;
        std::vector<unsigned> moved = point;
        moved[t] = value;
        if (std::optional<size_t> found = space.find(moved); found && !evaluated.contains(*found))
          neighbours.push_back(*found);
      }
    }
    if (neighbours.empty())
      return std::nullopt;
    return neighbours[std::uniform_int_distribution<size_t>(0, neighbours.size() - 1)(generator)];
  }

  /// Times the default and the best few again, round-robin, and picks the winner (Tuner.h says how).
  llvm::Expected<TuningResult> finish() {
    std::vector<size_t> finalists{0};
    std::vector<size_t> measured;
    for (const CandidateResult &candidate : result.candidates)
      if (candidate.status == CandidateResult::Status::Measured && candidate.index != 0 &&
          contenders.count(candidate.index))
        measured.push_back(candidate.index);
    llvm::sort(measured, [&](size_t a, size_t b) { return resultOf(a)->relativeTime() < resultOf(b)->relativeTime(); });
    for (size_t i = 0; i < measured.size() && i < options.finalists; ++i)
      finalists.push_back(measured[i]);

    std::vector<TimingStats> finalTiming(finalists.size());
    if (finalists.size() > 1) {
      if (observer) {
        std::vector<const CandidateResult *> described;
        for (size_t index : finalists)
          described.push_back(resultOf(index));
        observer->finalRound(described);
      }
      std::vector<Contender *> group;
      for (size_t index : finalists)
        group.push_back(&contenders[index]);
      std::vector<std::vector<double>> times = timeCalls(group);
      for (size_t i = 0; i < finalists.size(); ++i)
        finalTiming[i] = TimingStats::of(times[i]);
    } else {
      finalTiming[0] = resultOf(0)->timing;
    }

    std::vector<std::string> configs;
    for (size_t index : finalists)
      configs.push_back(resultOf(index)->config);
    size_t winner = pickWinner(finalTiming, configs);
    result.bestConfig = resultOf(finalists[winner])->config;
    result.best = finalTiming[winner];
    result.baseline = finalTiming[0];
    result.spaceSize = space.candidates().size();
    result.tuningSeconds = secondsSince(start);
    if (observer)
      observer->done(result);
    return std::move(result);
  }

  const RuntimeOptions &runtimeOptions;
  const TuningSpace &space;
  const TunerOptions &options;
  TuningObserver *observer;
  std::string entry;
  llvm::ArrayRef<TensorRef> inputs;
  std::mt19937_64 generator;
  Clock::time_point start;

  std::shared_ptr<Program> program;
  /// The default's outputs in f64: what every candidate's outputs are compared with.
  std::vector<HostTensor> expected;
  /// Live contenders by candidate index: the default and the few best so far.
  std::map<size_t, Contender> contenders;
  /// The first candidate measured for each object-code hash.
  llvm::DenseMap<uint64_t, size_t> codeOwners;
  llvm::DenseSet<size_t> evaluated;
  double lastCompileMs = 0;
  uint64_t lastCodeHash = 0;

  std::optional<size_t> bestIndex;
  double bestRelative = 0;
  size_t currentIndex = 0;
  /// Anneal: how much slower (relative to the default) a move may be and still be taken with probability 1/e.
  double temperature = 0.05;

  TuningResult result;
};

char Search::RunFailure::ID = 0;

} // namespace

llvm::Expected<TuningResult> tune(const RuntimeOptions &runtimeOptions, llvm::StringRef source,
                                  llvm::StringRef sourceName, llvm::StringRef entry, llvm::ArrayRef<TensorRef> inputs,
                                  const TuningSpace &space, const TunerOptions &options, TuningObserver *observer) {
  if (space.candidates().empty())
    return llvm::createStringError("the tuning space is empty");
  Search search(runtimeOptions, space, options, observer, entry, inputs);
  return search.run(source, sourceName);
}

} // namespace la
