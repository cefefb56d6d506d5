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
#include "la/runtime/Tuner.h"
#include "la/runtime/TuningDatabase.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <ctime>

#include <unistd.h>

namespace cl = llvm::cl;

namespace lac {

cl::SubCommand &tuneSubcommand() {
  static cl::SubCommand command("tune", "Search an entry's tunable compile options for the fastest configuration "
                                        "and store it in the tuning database");
  return command;
}

cl::OptionCategory &tuneCategory() {
  static cl::OptionCategory category("lac tune options");
  return category;
}

namespace {

cl::opt<std::string> strategyName("strategy",
                                  cl::desc("Search strategy: exhaustive (every candidate), random (seeded draws "
                                           "without replacement) or anneal (seeded simulated annealing over "
                                           "one-step neighbours)"),
                                  cl::init("anneal"), cl::sub(tuneSubcommand()), cl::cat(tuneCategory()));
cl::opt<unsigned> budget("budget",
                         cl::desc("Candidates to evaluate, the default included (default: all for exhaustive, 32 "
                                  "otherwise)"),
                         cl::init(0), cl::sub(tuneSubcommand()), cl::cat(tuneCategory()));
cl::opt<double> timeLimit("time", cl::desc("Stop the search after this many seconds (0: no limit)"), cl::init(0),
                          cl::sub(tuneSubcommand()), cl::cat(tuneCategory()));
cl::opt<double> measureMs("measure-ms",
                          cl::desc("Milliseconds of calls timed per candidate, and as many of the default's "
                                   "interleaved with them (at least 5 calls each)"),
                          cl::init(200), cl::sub(tuneSubcommand()), cl::cat(tuneCategory()));
cl::opt<std::string> databasePath("db",
                                  cl::desc("Tuning database: a JSON-lines file (default: <cache dir>/tuning.jsonl)"),
                                  cl::sub(tuneSubcommand()), cl::cat(tuneCategory()));
cl::opt<std::string> tracePath("log",
                               cl::desc("Write the search as JSON lines: each pruned configuration with its "
                                        "reason, each candidate evaluated, the result"),
                               cl::sub(tuneSubcommand()), cl::cat(tuneCategory()));
cl::opt<std::string> bucketName("bucket",
                                cl::desc("Sequence lengths sharing a record: pow2 (N rounded up to a power of two) "
                                         "or exact"),
                                cl::init("pow2"), cl::sub(tuneSubcommand()), cl::cat(tuneCategory()));

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

/// Progress on stderr and the trace file.
class Progress : public la::TuningObserver {
public:
  Progress(std::string defaultConfig, llvm::raw_ostream *trace) : defaultConfig(std::move(defaultConfig)), trace(trace) {}

  void candidateDone(const la::CandidateResult &result, size_t evaluated, size_t planned, double elapsed,
                     const la::CandidateResult &best) override {
    if (trace)
      *trace << result.toJSON() << "\n";
    std::string outcome;
    switch (result.status) {
    case la::CandidateResult::Status::Measured:
      outcome = llvm::formatv("{0:f3}x the default's time", result.relativeTime());
      break;
    case la::CandidateResult::Status::SameCode:
      outcome = llvm::formatv("same code as candidate #{0}", *result.sameAs);
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
};

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "lac") << message << "\n";
  return 1;
}

int fail(llvm::Error err) { return fail(llvm::toString(std::move(err))); }

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
  mlir::la::PipelineTarget target = request.runtime.target == la::RuntimeTarget::CPU ? mlir::la::PipelineTarget::CPU
                                                                                     : mlir::la::PipelineTarget::CUDA;
  request.runtime.compile.target = target;

  std::vector<la::TensorSpec> argumentSpecs;
  std::vector<la::TensorRef> inputRefs;
  for (la::HostTensor &tensor : request.inputs) {
    argumentSpecs.push_back(tensor.spec());
    inputRefs.push_back(tensor.ref());
  }
  llvm::StringMap<int64_t> sizes;
  if (std::optional<int64_t> length = la::sequenceLength(argumentSpecs))
    sizes["N"] = *length;
  auto space = mlir::la::TuningSpace::build(request.runtime.compile, target, sizes, request.pinned);
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
                                tunableNames.empty() ? "none" : llvm::join(tunableNames, ", "),
                                space->pruned().size(), trace ? " (reasons in --log)" : "");

  if (request.runtime.target == la::RuntimeTarget::CUDA) {
    // Measuring needs a device; without one the static part above is all there is.
    auto probe = la::Runtime::create(request.runtime);
    if (!probe)
      return fail("measuring the candidates needs a GPU: " + llvm::toString(probe.takeError()));
  }

  auto database = la::TuningDatabase::open(databasePath);
  if (!database)
    return fail("--db: " + llvm::toString(database.takeError()));

  la::TunerOptions options;
  options.strategy = *strategy;
  options.budget = budget;
  options.timeLimitSeconds = timeLimit;
  options.seed = request.seed;
  options.measureMs = measureMs;
  std::string defaultConfig = space->candidates().front().str(target);
  Progress progress(defaultConfig, trace.get());
  auto source = llvm::MemoryBuffer::getFile(request.file, /*IsText=*/true);
  if (!source)
    return fail(request.file + ": cannot read the file: " + source.getError().message());
  auto result = la::tune(request.runtime, (*source)->getBuffer(), request.file, request.entry, inputRefs, *space,
                         options, &progress);
  if (!result)
    return fail(request.file + ": entry '" + request.entry + "': " + llvm::toString(result.takeError()));

  // The record's key: the runtime that looks it up resolves the same program hash and thread count.
  auto runtime = la::Runtime::create(request.runtime);
  if (!runtime)
    return fail(runtime.takeError());
  auto program = (*runtime)->loadSource((*source)->getBuffer(), request.file);
  if (!program)
    return fail(program.takeError());
  la::TuningRecord record;
  record.key = la::makeTuningKey((*program)->contentHash(), request.entry, argumentSpecs,
                                 (*runtime)->options().numThreads,
                                 la::getTargetFingerprint(target, request.runtime.compile), la::getCompilerVersion(),
                                 buckets);
  record.config = result->bestConfig;
  record.best = result->best;
  record.baseline = result->baseline;
  record.status = result->complete ? "tuned" : "partial";
  record.provenance = llvm::json::Object{{"tool", "lac tune"},
                                         {"file", request.file},
                                         {"strategy", la::searchStrategyName(*strategy)},
                                         {"seed", int64_t(request.seed)},
                                         {"budget", int64_t(budget)},
                                         {"evaluated", int64_t(result->candidates.size())},
                                         {"space_size", int64_t(result->spaceSize)},
                                         {"tuning_s", result->tuningSeconds},
                                         {"date", isoDate()},
                                         {"host", hostName()}};
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

} // namespace lac
