//===- Tuner.cpp - search a tunable space for the fastest configuration ---===//

#include "la/runtime/Tuner.h"

#include "CandidateEvaluator.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <chrono>
#include <cmath>
#include <ctime>
#include <numeric>
#include <random>

#include <unistd.h>

#define DEBUG_TYPE "la-tuner"

namespace la {

using mlir::la::PipelineConfig;
using mlir::la::PipelineTarget;
using mlir::la::TuningSpace;

llvm::Expected<SearchStrategy> parseSearchStrategy(llvm::StringRef name) {
  if (name == "exhaustive")
    return SearchStrategy::Exhaustive;
  if (name == "random")
    return SearchStrategy::Random;
  if (name == "anneal")
    return SearchStrategy::Anneal;
  if (name == "model")
    return SearchStrategy::Model;
  return llvm::createStringError("'" + name.str() +
                                 "' is not a search strategy (choose exhaustive, random, anneal, model)");
}

llvm::StringRef searchStrategyName(SearchStrategy strategy) {
  switch (strategy) {
  case SearchStrategy::Exhaustive:
    return "exhaustive";
  case SearchStrategy::Random:
    return "random";
  case SearchStrategy::Anneal:
    return "anneal";
  case SearchStrategy::Model:
    return "model";
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
  case CandidateResult::Status::Crashed:
    return "crashed";
  case CandidateResult::Status::Unrecorded:
    return "unrecorded";
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
  if (predicted)
    object["predicted"] = *predicted;
  return object;
}

llvm::Expected<CandidateResult> CandidateResult::fromJSON(const llvm::json::Value &value) {
  const llvm::json::Object *object = value.getAsObject();
  if (!object)
    return llvm::createStringError("a candidate is a JSON object");
  CandidateResult result;
  std::optional<int64_t> index = object->getInteger("index");
  std::optional<llvm::StringRef> config = object->getString("config"), status = object->getString("status");
  if (!index || *index < 0 || !config || !status)
    return llvm::createStringError("a candidate needs 'index', 'config' and 'status'");
  result.index = size_t(*index);
  result.config = config->str();
  bool known = false;
  for (Status each : {Status::Measured, Status::SameCode, Status::CompileError, Status::RunError, Status::Mismatch,
                      Status::Crashed, Status::Unrecorded})
    if (candidateStatusName(each) == *status) {
      result.status = each;
      known = true;
    }
  if (!known)
    return llvm::createStringError("'" + status->str() + "' is not a candidate status");
  if (std::optional<llvm::StringRef> message = object->getString("message"))
    result.message = message->str();
  result.compileMs = object->getNumber("compile_ms").value_or(0);
  if (std::optional<int64_t> same = object->getInteger("same_as"))
    result.sameAs = size_t(*same);
  result.predicted = object->getNumber("predicted");
  if (result.ok()) {
    auto timing = TimingStats::fromJSON(object->getObject("timing"), "timing");
    if (!timing)
      return timing.takeError();
    auto baseline = TimingStats::fromJSON(object->getObject("baseline"), "baseline");
    if (!baseline)
      return baseline.takeError();
    result.timing = *timing;
    result.baseline = *baseline;
  }
  return result;
}

namespace {

std::string isoDate() {
  std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

std::string hostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0)
    return "";
  return name;
}

} // namespace

std::string describeThisProcess() {
  return llvm::formatv("{0} pid {1} since {2}", hostName(), getpid(), isoDate()).str();
}

TuningRecord makeTuningRecord(const TuningKey &key, const TuningResult &result, const TunerOptions &options,
                              llvm::json::Object provenance) {
  TuningRecord record;
  record.key = key;
  record.config = result.bestConfig;
  record.best = result.best;
  record.baseline = result.baseline;
  record.status = result.complete ? "tuned" : "partial";
  record.provenance = llvm::json::Object{{"strategy", searchStrategyName(options.strategy)},
                                         {"seed", int64_t(options.seed)},
                                         {"budget", int64_t(options.budget)},
                                         {"evaluated", int64_t(result.candidates.size())},
                                         {"space_size", int64_t(result.spaceSize)},
                                         {"tuning_s", result.tuningSeconds},
                                         {"date", isoDate()},
                                         {"host", hostName()}};
  for (auto &[name, value] : provenance)
    record.provenance[name] = std::move(value);
  return record;
}

llvm::Expected<std::vector<CandidateResult>> readTuningTrace(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(path.str() + ": cannot read the trace: " + buffer.getError().message());
  std::vector<CandidateResult> candidates;
  llvm::SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  for (auto [number, line] : llvm::enumerate(lines)) {
    auto parsed = llvm::json::parse(line);
    if (!parsed) {
      llvm::consumeError(parsed.takeError());
      continue;
    }
    // Pruned configurations and the result share the file; candidates are the lines with a status.
    const llvm::json::Object *object = parsed->getAsObject();
    if (!object || !object->get("status"))
      continue;
    auto candidate = CandidateResult::fromJSON(*parsed);
    if (!candidate)
      return llvm::createStringError(
          llvm::formatv("{0}:{1}: {2}", path, number + 1, llvm::toString(candidate.takeError())).str());
    candidates.push_back(std::move(*candidate));
  }
  return candidates;
}

TuningObserver::~TuningObserver() = default;

TuningObjective TuningObjective::globalBytes() {
  TuningObjective objective;
  objective.name = "global-bytes";
  objective.noisy = false;
  objective.score = [](double wallMs, const CallStats &stats) {
    if (!stats.gpu || !stats.gpu->counters)
      return wallMs;
    return double(stats.gpu->counters->globalBytesLoaded + stats.gpu->counters->globalBytesStored);
  };
  return objective;
}

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
    // A configuration no faster than the default never displaces it, however wide its own spread (a wide
    // spread would otherwise bring a slow configuration within noise of the fastest).
    if (i != 0 && timings[i].medianMs >= timings[0].medianMs)
      continue;
    if (i == 0 || (winner != 0 && configs[i] < configs[winner]))
      winner = i;
  }
  return winner;
}

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

/// Figures from a trace instead of a machine.
class ReplayEvaluator : public CandidateEvaluator {
public:
  ReplayEvaluator(const TuningSpace &space, llvm::ArrayRef<CandidateResult> recorded, PipelineTarget target)
      : space(space), target(target) {
    for (const CandidateResult &candidate : recorded) {
      byConfig.try_emplace(candidate.config, candidate);
      configOfTraceIndex[candidate.index] = candidate.config;
    }
    for (auto [index, config] : llvm::enumerate(space.candidates()))
      indexOfConfig.try_emplace(config.str(target), index);
  }

  llvm::Expected<CandidateResult> evaluateDefault() override {
    CandidateResult result = evaluate(0);
    if (!result.ok())
      return llvm::createStringError("the trace has no measurement of the default configuration " + result.config);
    return result;
  }

  CandidateResult evaluate(size_t index) override {
    std::string config = space.candidates()[index].str(target);
    auto found = byConfig.find(config);
    if (found == byConfig.end()) {
      CandidateResult result;
      result.index = index;
      result.config = config;
      result.status = CandidateResult::Status::Unrecorded;
      result.message = "the trace has no measurement of it";
      return result;
    }
    CandidateResult result = found->second;
    result.index = index;
    result.predicted.reset();
    // The trace's index of the candidate it shares code with, as an index of this space.
    if (result.sameAs) {
      auto config = configOfTraceIndex.find(*result.sameAs);
      auto mapped = config == configOfTraceIndex.end() ? indexOfConfig.end() : indexOfConfig.find(config->second);
      result.sameAs = mapped == indexOfConfig.end() ? std::nullopt : std::optional<size_t>(mapped->second);
    }
    return result;
  }

  /// The recorded figures again: each finalist's time relative to the default, applied to the default's.
  std::vector<TimingStats> rescore(llvm::ArrayRef<size_t> finalists) override {
    std::vector<TimingStats> stats;
    TimingStats byDefault = evaluate(0).timing;
    for (size_t index : finalists) {
      CandidateResult recorded = evaluate(index);
      TimingStats scaled = recorded.timing;
      scaled.medianMs = recorded.relativeTime() * byDefault.medianMs;
      scaled.relativeSpread = std::max(recorded.timing.relativeSpread, recorded.baseline.relativeSpread);
      stats.push_back(index == 0 ? byDefault : scaled);
    }
    return stats;
  }

private:
  const TuningSpace &space;
  PipelineTarget target;
  llvm::StringMap<CandidateResult> byConfig;
  std::map<size_t, std::string> configOfTraceIndex;
  llvm::StringMap<size_t> indexOfConfig;
};

/// The strategies: which candidate to evaluate next, given what the evaluator said of the earlier ones.
class Search {
public:
  Search(const TuningSpace &space, const TunerOptions &options, TuningObserver *observer, CandidateEvaluator &evaluator,
         bool timeLimited)
      : space(space), options(options), observer(observer), evaluator(evaluator), timeLimited(timeLimited),
        generator(options.seed) {}

  llvm::Expected<TuningResult> run() {
    start = Clock::now();
    if (options.strategy == SearchStrategy::Model && !orderByPrediction())
      return llvm::createStringError("--strategy model needs a cost model for this target and entry");
    size_t planned = plannedEvaluations();
    auto baseline = evaluator.evaluateDefault();
    if (!baseline)
      return baseline.takeError();
    record(std::move(*baseline), planned);
    while (result.candidates.size() < planned) {
      if (timeLimited && options.timeLimitSeconds > 0 && secondsSince(start) > options.timeLimitSeconds) {
        result.complete = false;
        break;
      }
      std::optional<size_t> next = nextCandidate();
      if (!next)
        break;
      record(evaluator.evaluate(*next), planned);
    }
    return finish();
  }

private:
  size_t plannedEvaluations() const {
    size_t candidates = space.candidates().size();
    unsigned budget = options.budget;
    if (!budget && options.strategy == SearchStrategy::Model)
      budget = unsigned(std::clamp<size_t>((candidates + 3) / 4, 1, 32));
    else if (!budget && options.strategy != SearchStrategy::Exhaustive)
      budget = 32;
    return budget ? std::min<size_t>(budget, candidates) : candidates;
  }

  /// Model: the candidates by predicted cost, least first (ties in space order). False without a model.
  bool orderByPrediction() {
    if (!options.predict)
      return false;
    predictions.resize(space.candidates().size());
    for (auto [index, config] : llvm::enumerate(space.candidates()))
      predictions[index] = options.predict(config);
    modelOrder.resize(predictions.size());
    std::iota(modelOrder.begin(), modelOrder.end(), 0);
    llvm::stable_sort(modelOrder, [&](size_t a, size_t b) { return predictions[a] < predictions[b]; });
    return true;
  }

  const CandidateResult *resultOf(size_t index) const {
    auto found = positionOf.find(index);
    return found == positionOf.end() ? nullptr : &result.candidates[found->second];
  }

  void record(CandidateResult candidate, size_t planned) {
    if (!predictions.empty())
      candidate.predicted = predictions[candidate.index];
    LLVM_DEBUG(llvm::dbgs() << "la-tuner: " << candidate.toJSON() << "\n");
    bool better = candidate.ok() && (!bestIndex || candidate.relativeTime() < bestRelative);
    if (better) {
      bestIndex = candidate.index;
      bestRelative = candidate.relativeTime();
    }
    positionOf[candidate.index] = result.candidates.size();
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
    // The evaluator may let go of all but the few best so far (their JIT memory).
    evaluator.release(bestMeasured());
  }

  /// Measured candidates other than the default, best first, at most `finalists`.
  std::vector<size_t> bestMeasured() const {
    std::vector<size_t> measured;
    for (const CandidateResult &candidate : result.candidates)
      if (candidate.status == CandidateResult::Status::Measured && candidate.index != 0)
        measured.push_back(candidate.index);
    llvm::stable_sort(measured,
                      [&](size_t a, size_t b) { return resultOf(a)->relativeTime() < resultOf(b)->relativeTime(); });
    if (measured.size() > options.finalists)
      measured.resize(options.finalists);
    return measured;
  }

  std::optional<size_t> nextCandidate() {
    size_t count = space.candidates().size();
    switch (options.strategy) {
    case SearchStrategy::Exhaustive:
      for (size_t index = 1; index < count; ++index)
        if (!positionOf.contains(index))
          return index;
      return std::nullopt;
    case SearchStrategy::Random:
      return randomUnevaluated();
    case SearchStrategy::Anneal:
      if (std::optional<size_t> neighbour = randomNeighbour(currentIndex))
        return neighbour;
      return randomUnevaluated();
    case SearchStrategy::Model:
      // Half the candidates after the default (rounded up) in predicted order, then the neighbours of the best
      // measured so far, least predicted first. The model ranks the code's shape well (rank correlation about
      // 0.9) but not the last few percent between neighbouring register blocks, which measuring settles
      // (docs/BENCHMARKS.md, session 31: on one of 15 pairs predicted order alone missed the best by 5.3%).
      if (bestIndex && result.candidates.size() - 1 >= plannedEvaluations() / 2)
        if (std::optional<size_t> neighbour = leastPredictedNeighbour(*bestIndex))
          return neighbour;
      for (size_t index : modelOrder)
        if (!positionOf.contains(index))
          return index;
      return std::nullopt;
    }
    return std::nullopt;
  }

  /// The unevaluated candidates one step from `index`: one tunable moved to the next or previous value of its
  /// domain (any value, for a default outside the domain).
  std::vector<size_t> unevaluatedNeighbours(size_t index) const {
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
        if (std::optional<size_t> found = space.find(moved); found && !positionOf.contains(*found))
          neighbours.push_back(*found);
      }
    }
    return neighbours;
  }

  std::optional<size_t> leastPredictedNeighbour(size_t index) const {
    std::vector<size_t> neighbours = unevaluatedNeighbours(index);
    if (neighbours.empty())
      return std::nullopt;
    return *llvm::min_element(
        neighbours, [&](size_t a, size_t b) { return std::pair(predictions[a], a) < std::pair(predictions[b], b); });
  }

  std::optional<size_t> randomUnevaluated() {
    std::vector<size_t> left;
    for (size_t index = 1; index < space.candidates().size(); ++index)
      if (!positionOf.contains(index))
        left.push_back(index);
    if (left.empty())
      return std::nullopt;
    return left[std::uniform_int_distribution<size_t>(0, left.size() - 1)(generator)];
  }

  /// One of unevaluatedNeighbours(index), chosen at random.
  std::optional<size_t> randomNeighbour(size_t index) {
    std::vector<size_t> neighbours = unevaluatedNeighbours(index);
    if (neighbours.empty())
      return std::nullopt;
    return neighbours[std::uniform_int_distribution<size_t>(0, neighbours.size() - 1)(generator)];
  }

  /// Scores the default and the best few again, round-robin, and picks the winner (Tuner.h says how).
  llvm::Expected<TuningResult> finish() {
    std::vector<size_t> finalists{0};
    llvm::append_range(finalists, bestMeasured());
    std::vector<TimingStats> finalTiming;
    if (finalists.size() > 1 && options.objective.noisy) {
      if (observer) {
        std::vector<const CandidateResult *> described;
        for (size_t index : finalists)
          described.push_back(resultOf(index));
        observer->finalRound(described);
      }
      finalTiming = evaluator.rescore(finalists);
    } else {
      for (size_t index : finalists)
        finalTiming.push_back(resultOf(index)->timing);
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

  const TuningSpace &space;
  const TunerOptions &options;
  TuningObserver *observer;
  CandidateEvaluator &evaluator;
  bool timeLimited;
  std::mt19937_64 generator;
  Clock::time_point start;

  /// Where each candidate evaluated (by space index) sits in `result.candidates`.
  llvm::DenseMap<size_t, size_t> positionOf;
  std::optional<size_t> bestIndex;
  double bestRelative = 0;
  size_t currentIndex = 0;
  /// Anneal: how much slower (relative to the default) a move may be and still be taken with probability 1/e.
  double temperature = 0.05;
  /// Model: each candidate's predicted cost, and the candidates by it.
  std::vector<double> predictions;
  std::vector<size_t> modelOrder;

  TuningResult result;
};

} // namespace

llvm::Expected<TuningResult> tune(const RuntimeOptions &runtimeOptions, llvm::StringRef source,
                                  llvm::StringRef sourceName, llvm::StringRef entry, llvm::ArrayRef<TensorRef> inputs,
                                  const TuningSpace &space, const TunerOptions &options, TuningObserver *observer) {
  if (space.candidates().empty())
    return llvm::createStringError("the tuning space is empty");
  std::unique_ptr<CandidateEvaluator> evaluator =
      makeMeasuringEvaluator(runtimeOptions, source, sourceName, entry, inputs, space, options);
  Search search(space, options, observer, *evaluator, /*timeLimited=*/true);
  return search.run();
}

llvm::Expected<TuningResult> replayTuning(const TuningSpace &space, llvm::ArrayRef<CandidateResult> recorded,
                                          const TunerOptions &options, TuningObserver *observer) {
  if (space.candidates().empty())
    return llvm::createStringError("the tuning space is empty");
  ReplayEvaluator evaluator(space, recorded, space.target());
  Search search(space, options, observer, evaluator, /*timeLimited=*/false);
  return search.run();
}

} // namespace la
