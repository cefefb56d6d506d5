//===- Tune.cpp - `lac tune`: search an entry's tunable options -----------===//
//
//   lac tune FILE --entry E (--input A.npy ... | --random B,H,N,D) [--shape ...] [--target cpu|cuda]
//       [--strategy exhaustive|random|anneal] [--budget N] [--time SECONDS] [--seed S]
//       [--db PATH] [--json] [--log TRACE.jsonl] [--bucket pow2|exact] [compile options: fixed]
//
// Builds the space (compiler/Pipelines/TuningSpace.h), runs the search (la/runtime/Tuner.h) with progress
// on stderr, stores the best configuration in the tuning database (la/runtime/TuningDatabase.h) even when it
// is the default, and prints it.
//
//===----------------------------------------------------------------------===//

#include "Tune.h"

#include "la/runtime/Compiler.h"
#include "la/runtime/CostModel.h"
#include "la/runtime/Tuner.h"
#include "la/runtime/TuningDatabase.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <thread>

namespace cl = llvm::cl;

namespace lac {

cl::SubCommand &tuneSubcommand() {
  static cl::SubCommand command("tune", "Search an entry's tunable compile options for the fastest configuration "
                                        "and store it in the tuning database");
  return command;
}

cl::SubCommand &tuneDbSubcommand() {
  static cl::SubCommand command("tune-db", "Move tuning records between databases: `export` prints a database's "
                                           "records as JSON lines, `import` stores JSON lines into one");
  return command;
}

cl::OptionCategory &tuneCategory() {
  static cl::OptionCategory category("lac tune options");
  return category;
}

namespace {

cl::opt<std::string> strategyName("strategy",
                                  cl::desc("Search strategy: exhaustive (every candidate), random (seeded draws "
                                           "without replacement), anneal (seeded simulated annealing over "
                                           "one-step neighbours) or model (half the budget in the order the "
                                           "analytic cost model predicts, then the best one's neighbours)"),
                                  cl::init("anneal"), cl::sub(tuneSubcommand()), cl::cat(tuneCategory()));
cl::opt<unsigned> budget("budget",
                         cl::desc("Candidates to evaluate, the default included (default: all for exhaustive, a "
                                  "quarter of the space up to 32 for model, 32 otherwise)"),
                         cl::init(0), cl::sub(tuneSubcommand()), cl::cat(tuneCategory()));
cl::opt<double> timeLimit("time", cl::desc("Stop the search after this many seconds (0: no limit)"), cl::init(0),
                          cl::sub(tuneSubcommand()), cl::cat(tuneCategory()));
cl::opt<double> measureMs("measure-ms",
                          cl::desc("Milliseconds of calls timed per candidate, and as many of the default's "
                                   "interleaved with them (at least 5 calls each)"),
                          cl::init(200), cl::sub(tuneSubcommand()), cl::cat(tuneCategory()));
cl::opt<std::string> databasePath("db",
                                  cl::desc("Tuning database: a JSON-lines file or redis://HOST:PORT (default: "
                                           "<cache dir>/tuning.jsonl)"),
                                  cl::sub(tuneSubcommand()), cl::sub(tuneDbSubcommand()), cl::cat(tuneCategory()));
cl::opt<std::string> tuneDbAction(cl::Positional, cl::desc("<export|import>"), cl::Required,
                                  cl::sub(tuneDbSubcommand()));
cl::opt<std::string> tuneDbFile(cl::Positional,
                                cl::desc("[FILE] (export: where to write, import: what to read; default: stdout, "
                                         "stdin)"),
                                cl::init("-"), cl::sub(tuneDbSubcommand()));
cl::opt<std::string> tracePath("log",
                               cl::desc("Write the search as JSON lines: each pruned configuration with its "
                                        "reason, each candidate evaluated, the result"),
                               cl::sub(tuneSubcommand()), cl::cat(tuneCategory()));
cl::opt<std::string> bucketName("bucket",
                                cl::desc("Sequence lengths sharing a record: pow2 (N rounded up to a power of two) "
                                         "or exact"),
                                cl::init("pow2"), cl::sub(tuneSubcommand()), cl::cat(tuneCategory()));

cl::opt<std::string> replayPath("replay",
                                cl::desc("Replay the search against the candidates a trace (--log) recorded, "
                                         "usually of an exhaustive search: nothing is compiled, run or stored; "
                                         "prints how close the strategy came and after how many evaluations"),
                                cl::sub(tuneSubcommand()), cl::cat(tuneCategory()));
cl::opt<bool> isolate("isolate",
                      cl::desc("Compile and first run each candidate in a child process, so that one that "
                               "crashes is recorded and skipped (default: on)"),
                      cl::init(true), cl::sub(tuneSubcommand()), cl::cat(tuneCategory()));

/// How long a lease lasts without renewal; a tuner renews it after every candidate, so only one that died
/// (or a candidate that ran this long) lets it run out.
constexpr double kLeaseSeconds = 600;

/// The options of `config` that differ from `base`, as `name=value` separated by spaces ("default" if none).
std::string differences(llvm::StringRef config, llvm::StringRef base) {
  llvm::SmallVector<llvm::StringRef> items, baseItems;
  config.split(items, ',');
  base.split(baseItems, ',');
  std::vector<std::string> changed;
  for (llvm::StringRef item : items)
    if (!llvm::is_contained(baseItems, item))
      changed.push_back(item.str());
  return changed.empty() ? "default" : llvm::join(changed, " ");
}

/// Progress on stderr and the trace file.
class Progress : public la::TuningObserver {
public:
  Progress(std::string defaultConfig, llvm::raw_ostream *trace, la::TuningLease *lease)
      : defaultConfig(std::move(defaultConfig)), trace(trace), lease(lease) {}

  void candidateDone(const la::CandidateResult &result, size_t evaluated, size_t planned, double elapsed,
                     const la::CandidateResult &best) override {
    if (trace)
      *trace << result.toJSON() << "\n";
    configs[result.index] = result.config;
    if (lease)
      if (llvm::Error err = lease->renew(kLeaseSeconds))
        llvm::WithColor::warning(llvm::errs(), "lac") << llvm::toString(std::move(err)) << "\n";
    std::string outcome;
    switch (result.status) {
    case la::CandidateResult::Status::Measured:
      outcome = llvm::formatv("{0:f3}x the default's time", result.relativeTime());
      break;
    case la::CandidateResult::Status::SameCode:
      outcome = !result.sameAs        ? std::string("same code as an earlier candidate")
                : *result.sameAs == 0 ? std::string("same code as the default")
                                      : "same code as " + differences(configs.lookup(*result.sameAs), defaultConfig);
      break;
    default:
      outcome = (la::candidateStatusName(result.status) + ": " + firstLine(result.message)).str();
      break;
    }
    double eta = evaluated ? elapsed / double(evaluated) * double(planned - evaluated) : 0;
    llvm::errs() << llvm::formatv("lac tune: [{0,3}/{1}] {2:f1}s  {3}: {4}  (best {5:f3}x: {6}; ETA {7:f0}s)\n",
                                  evaluated, planned, elapsed, differences(result.config, defaultConfig), outcome,
                                  best.relativeTime(), differences(best.config, defaultConfig), eta);
  }

  void finalRound(llvm::ArrayRef<const la::CandidateResult *> finalists) override {
    llvm::errs() << "lac tune: timing the default and the " << finalists.size() - 1 << " best again, interleaved\n";
  }

private:
  static llvm::StringRef firstLine(llvm::StringRef text) { return text.split('\n').first; }

  std::string defaultConfig;
  llvm::raw_ostream *trace;
  la::TuningLease *lease;
  /// The configuration of each candidate evaluated, by index (to name the one a candidate shares code with).
  llvm::DenseMap<size_t, std::string> configs;
};

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "lac") << message << "\n";
  return 1;
}

int fail(llvm::Error err) { return fail(llvm::toString(std::move(err))); }

/// The time relative to the default's of the candidate la::pickWinner picks among `candidates` (the default,
/// index 0, among them), each timing its recorded relative time with the larger spread of its two timings.
double pickedRelative(llvm::ArrayRef<la::CandidateResult> candidates) {
  std::vector<la::TimingStats> timings;
  std::vector<std::string> configs;
  for (const la::CandidateResult &candidate : candidates) {
    if (!candidate.ok())
      continue;
    la::TimingStats timing;
    timing.medianMs = candidate.relativeTime();
    timing.relativeSpread = std::max(candidate.timing.relativeSpread, candidate.baseline.relativeSpread);
    // pickWinner prefers its first timing within noise: the default.
    bool isDefault = candidate.index == 0;
    timings.insert(isDefault ? timings.begin() : timings.end(), timing);
    configs.insert(isDefault ? configs.begin() : configs.end(), candidate.config);
  }
  if (timings.empty())
    return 1;
  return timings[la::pickWinner(timings, configs)].medianMs;
}

/// `lac tune --replay TRACE`: the strategy against the trace's figures; how close it came to the best the
/// trace holds, after how many evaluations, and (with a cost model) how well the model ranks the trace.
int runReplay(const TuneRequest &request, const mlir::la::TuningSpace &space, const la::TunerOptions &options,
              la::CostModel *model, llvm::raw_ostream *trace) {
  auto recorded = la::readTuningTrace(replayPath);
  if (!recorded)
    return fail("--replay: " + llvm::toString(recorded.takeError()));
  auto result = la::replayTuning(space, *recorded, options);
  if (!result)
    return fail("--replay " + replayPath + ": " + llvm::toString(result.takeError()));
  // The replayed search in the order it went, each candidate with what the model predicted of it.
  if (trace)
    for (const la::CandidateResult &candidate : result->candidates)
      *trace << candidate.toJSON() << "\n";
  // What the tuner's rule (la::pickWinner: the fastest beyond noise, else the default) picks among the whole
  // trace, and among the first k candidates of the replayed search: a lucky single measurement with a wide
  // spread does not count as a find, on either side.
  double traceBest = pickedRelative(*recorded);
  double traceMinimum = 1;
  for (const la::CandidateResult &candidate : *recorded)
    if (candidate.ok())
      traceMinimum = std::min(traceMinimum, candidate.relativeTime());
  double found = pickedRelative(result->candidates);
  int64_t within3 = -1;
  for (size_t k = 1; k <= result->candidates.size() && within3 < 0; ++k)
    if (pickedRelative(llvm::ArrayRef(result->candidates).take_front(k)) <= traceBest * 1.03)
      within3 = int64_t(k);
  llvm::json::Object report{{"file", request.file},
                            {"entry", request.entry},
                            {"strategy", la::searchStrategyName(options.strategy)},
                            {"best_config", result->bestConfig},
                            {"best_relative", found},
                            {"trace_best_relative", traceBest},
                            {"trace_min_relative", traceMinimum},
                            {"gap", found / traceBest - 1},
                            {"evaluated", int64_t(result->candidates.size())},
                            {"evaluations_to_within_3pct", within3},
                            {"space_size", int64_t(result->spaceSize)},
                            {"recorded", int64_t(recorded->size())}};
  if (model) {
    // Over the distinct code the trace timed (a candidate with the same code adds no information).
    std::vector<double> predicted, measured;
    for (const la::CandidateResult &candidate : *recorded) {
      if (candidate.status != la::CandidateResult::Status::Measured)
        continue;
      auto config = mlir::la::PipelineConfig::parse(candidate.config);
      if (!config) {
        llvm::consumeError(config.takeError());
        continue;
      }
      predicted.push_back(model->predict(*config));
      measured.push_back(candidate.relativeTime());
    }
    report["model_rank_correlation"] = la::rankCorrelation(predicted, measured);
    report["model_points"] = int64_t(predicted.size());
  }
  llvm::outs() << llvm::json::Value(std::move(report)) << "\n";
  return 0;
}

} // namespace

int runTune(TuneRequest &request) {
  auto strategy = la::parseSearchStrategy(strategyName);
  if (!strategy)
    return fail("--strategy: " + llvm::toString(strategy.takeError()));
  if (bucketName != "pow2" && bucketName != "exact")
    return fail("--bucket " + bucketName + ": expected pow2 or exact");
  la::SequenceBuckets buckets = bucketName == "exact" ? la::SequenceBuckets::Exact : la::SequenceBuckets::PowersOfTwo;
  if (request.runtime.target == la::RuntimeTarget::CUDAEmulator)
    return fail("--target cuda-emu: the emulator's time says nothing about a GPU's; tune with --target cuda on a "
                "machine with one (without one, --target cuda prunes the space and stops)");
  mlir::la::PipelineTarget target =
      request.runtime.target == la::RuntimeTarget::CPU ? mlir::la::PipelineTarget::CPU : mlir::la::PipelineTarget::CUDA;
  request.runtime.compile.target = target;

  std::vector<la::TensorSpec> argumentSpecs;
  std::vector<la::TensorRef> inputRefs;
  for (la::HostTensor &tensor : request.inputs) {
    argumentSpecs.push_back(tensor.spec());
    inputRefs.push_back(tensor.ref());
  }
  auto space =
      mlir::la::TuningSpace::build(request.runtime.compile, target, la::tuningSizes(argumentSpecs), request.pinned);
  if (!space)
    return fail(request.file + ": entry '" + request.entry + "': " + llvm::toString(space.takeError()));

  std::unique_ptr<llvm::raw_fd_ostream> trace;
  if (!tracePath.empty()) {
    std::error_code ec;
    trace = std::make_unique<llvm::raw_fd_ostream>(tracePath, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return fail("--log " + tracePath + ": " + ec.message());
    for (const mlir::la::PrunedConfig &pruned : space->pruned())
      *trace << llvm::json::Object{{"pruned", pruned.config}, {"reason", pruned.reason}} << "\n";
  }
  std::vector<std::string> tunableNames;
  for (const mlir::la::OptionInfo *option : space->tunables())
    tunableNames.push_back(option->name.str());
  llvm::errs() << llvm::formatv("lac tune: {0} '{1}' on {2}: {3} candidates over {4} of {5} configurations "
                                "(tunables: {6}); {7} pruned{8}\n",
                                request.file, request.entry, mlir::la::getTargetName(target),
                                space->candidates().size(), tunableNames.size(), space->unprunedSize(),
                                tunableNames.empty() ? "none" : llvm::join(tunableNames, ", "), space->pruned().size(),
                                trace ? " (reasons in --log)" : "");

  la::TunerOptions options;
  options.strategy = *strategy;
  options.budget = budget;
  options.timeLimitSeconds = timeLimit;
  options.seed = request.seed;
  options.measureMs = measureMs;
  options.isolate = isolate;
  std::unique_ptr<la::CostModel> model;
  if (*strategy == la::SearchStrategy::Model || !replayPath.empty()) {
    auto built =
        la::CostModel::forCPU(request.source, request.file, request.entry, argumentSpecs, request.runtime.compile);
    if (built) {
      model = std::move(*built);
      options.predict = [&model](const mlir::la::PipelineConfig &config) { return model->predict(config); };
    } else if (*strategy == la::SearchStrategy::Model) {
      return fail("--strategy model: " + llvm::toString(built.takeError()));
    } else {
      llvm::consumeError(built.takeError());
    }
  }
  if (!replayPath.empty())
    return runReplay(request, *space, options, model.get(), trace.get());

  if (request.runtime.target == la::RuntimeTarget::CUDA) {
    // Measuring needs a device; without one the static part above is all there is.
    auto probe = la::Runtime::create(request.runtime);
    if (!probe)
      return fail("measuring the candidates needs a GPU: " + llvm::toString(probe.takeError()));
  }

  auto database = la::TuningDatabase::open(databasePath, request.runtime.cacheDir);
  if (!database)
    return fail("--db: " + llvm::toString(database.takeError()));
  // The record's key: the runtime that looks it up resolves the same program hash and thread count.
  auto runtime = la::Runtime::create(request.runtime);
  if (!runtime)
    return fail(runtime.takeError());
  auto program = (*runtime)->loadSource(request.source, request.file);
  if (!program)
    return fail(program.takeError());
  la::TuningKey key =
      la::makeTuningKey((*program)->contentHash(), request.entry, argumentSpecs, (*runtime)->options().numThreads,
                        la::getTargetFingerprint(target, request.runtime.compile), la::getCompilerVersion(), buckets);

  // One tuner per key at a time: wait for another's lease, then take its record rather than tune again.
  std::string owner = la::describeThisProcess();
  auto attempt = (*database)->lease(key, owner, kLeaseSeconds);
  if (!attempt)
    return fail(attempt.takeError());
  std::string waitedFor;
  while (!attempt->lease) {
    if (waitedFor.empty())
      llvm::errs() << "lac tune: " << attempt->holder << " is tuning this key; waiting for its record\n";
    waitedFor = attempt->holder;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    attempt = (*database)->lease(key, owner, kLeaseSeconds);
    if (!attempt)
      return fail(attempt.takeError());
  }
  if (!waitedFor.empty()) {
    auto existing = (*database)->lookup(key);
    if (!existing)
      return fail(existing.takeError());
    if (*existing && (*existing)->key.str() == key.str()) {
      const la::TuningRecord &record = **existing;
      if (request.json)
        llvm::outs() << llvm::json::Value(llvm::json::Object{{"file", request.file},
                                                             {"entry", request.entry},
                                                             {"best_config", record.config},
                                                             {"best_ms", record.best.medianMs},
                                                             {"default_ms", record.baseline.medianMs},
                                                             {"reused", true},
                                                             {"tuned_by", waitedFor},
                                                             {"db", (*database)->describe()}})
                     << "\n";
      else
        llvm::outs() << "best: " << record.config << "\n  tuned meanwhile by " << waitedFor << "; not tuned again\n";
      return 0;
    }
  }

  std::string defaultConfig = space->candidates().front().str(target);
  Progress progress(defaultConfig, trace.get(), attempt->lease.get());
  auto result =
      la::tune(request.runtime, request.source, request.file, request.entry, inputRefs, *space, options, &progress);
  if (!result)
    return fail(request.file + ": entry '" + request.entry + "': " + llvm::toString(result.takeError()));

  la::TuningRecord record =
      la::makeTuningRecord(key, *result, options, llvm::json::Object{{"tool", "lac tune"}, {"file", request.file}});
  if (llvm::Error err = (*database)->store(record))
    return fail(std::move(err));

  double speedup = result->best.medianMs > 0 ? result->baseline.medianMs / result->best.medianMs : 1;
  size_t rejected = llvm::count_if(result->candidates, [](const la::CandidateResult &candidate) {
    return candidate.status == la::CandidateResult::Status::Mismatch;
  });
  if (trace)
    *trace << llvm::json::Object{{"best_config", result->bestConfig},
                                 {"best", result->best.toJSON()},
                                 {"baseline", result->baseline.toJSON()}}
           << "\n";
  if (request.json) {
    llvm::outs() << llvm::json::Value(llvm::json::Object{{"file", request.file},
                                                         {"entry", request.entry},
                                                         {"target", mlir::la::getTargetName(target)},
                                                         {"strategy", la::searchStrategyName(*strategy)},
                                                         {"best_config", result->bestConfig},
                                                         {"best_ms", result->best.medianMs},
                                                         {"default_ms", result->baseline.medianMs},
                                                         {"speedup", speedup},
                                                         {"evaluated", int64_t(result->candidates.size())},
                                                         {"rejected", int64_t(rejected)},
                                                         {"space_size", int64_t(result->spaceSize)},
                                                         {"pruned", int64_t(space->pruned().size())},
                                                         {"tuning_s", result->tuningSeconds},
                                                         {"complete", result->complete},
                                                         {"reused", false},
                                                         {"db", (*database)->describe()}})
                 << "\n";
    return 0;
  }
  llvm::outs() << llvm::formatv("best: {0}\n  {1:f3} ms against the default's {2:f3} ms ({3:f3}x), {4} candidates "
                                "evaluated ({5} rejected) of {6}, {7:f1} s; stored in {8}\n",
                                result->bestConfig, result->best.medianMs, result->baseline.medianMs, speedup,
                                result->candidates.size(), rejected, result->spaceSize, result->tuningSeconds,
                                (*database)->describe());
  return 0;
}

int runTuneDb() {
  auto database = la::TuningDatabase::open(databasePath);
  if (!database)
    return fail("--db: " + llvm::toString(database.takeError()));
  if (tuneDbAction == "export") {
    auto records = (*database)->records();
    if (!records)
      return fail(records.takeError());
    std::error_code ec;
    llvm::raw_fd_ostream out(tuneDbFile, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return fail(tuneDbFile + ": " + ec.message());
    for (const la::TuningRecord &record : *records)
      out << record.toJSON() << "\n";
    llvm::errs() << "lac tune-db: exported " << records->size() << " records from " << (*database)->describe() << "\n";
    return 0;
  }
  if (tuneDbAction != "import")
    return fail("tune-db " + tuneDbAction + ": expected export or import");
  auto input = llvm::MemoryBuffer::getFileOrSTDIN(tuneDbFile, /*IsText=*/true);
  if (!input)
    return fail(tuneDbFile + ": cannot read it: " + input.getError().message());
  llvm::SmallVector<llvm::StringRef> lines;
  (*input)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
  size_t imported = 0, skipped = 0;
  for (auto [number, line] : llvm::enumerate(lines)) {
    auto parsed = llvm::json::parse(line);
    auto record = parsed ? la::TuningRecord::fromJSON(*parsed) : llvm::Expected<la::TuningRecord>(parsed.takeError());
    if (!record) {
      llvm::WithColor::warning(llvm::errs(), "lac")
          << tuneDbFile << ":" << number + 1 << ": not a tuning record, skipped: " << llvm::toString(record.takeError())
          << "\n";
      ++skipped;
      continue;
    }
    if (llvm::Error err = (*database)->store(*record))
      return fail(std::move(err));
    ++imported;
  }
  llvm::errs() << "lac tune-db: imported " << imported << " records (" << skipped << " skipped) into "
               << (*database)->describe() << "\n";
  return 0;
}

} // namespace lac
