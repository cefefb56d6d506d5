//===- MeasuringEvaluator.cpp - compile, check and score candidates -------===//
//
// Each candidate gets a runtime of its own, compiled with its configuration; its first call writes buffers
// of its own, which are compared with the default's outputs. With isolation, that compile and first call
// happen first in a forked child that reports back through a pipe: a candidate that kills the child is
// `crashed`, and the parent, which never ran it, goes on. A candidate the child admitted is then compiled
// again in the parent (a disk-cache hit where the cache is on) and scored there, interleaved with the
// default.
//
//===----------------------------------------------------------------------===//

#include "CandidateEvaluator.h"
#include "RuntimeOnTeam.h"

#include "la/runtime/NumericsCheck.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <csignal>
#include <cstring>
#include <map>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace la {

CandidateEvaluator::~CandidateEvaluator() = default;

namespace {

using Clock = std::chrono::steady_clock;

/// Most calls one scoring takes, whatever the kernel's speed.
constexpr unsigned kMaxRuns = 1000;

/// A configuration compiled into a runtime of its own, with output buffers of its own.
struct Contender {
  std::unique_ptr<Runtime> runtime;
  std::vector<HostTensor> outputs;
  std::vector<TensorRef> outputRefs;
};

/// A failed call of a kernel that compiled (admit's other errors are compile errors).
struct RunFailure : llvm::ErrorInfo<RunFailure> {
  static char ID;
  explicit RunFailure(std::string message) : message(std::move(message)) {}
  void log(llvm::raw_ostream &os) const override { os << message; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }
  std::string message;
};
char RunFailure::ID = 0;

HostTensor toF64(const HostTensor &tensor) {
  TensorSpec spec = tensor.spec();
  spec.dtype = DType::F64;
  HostTensor wide(spec);
  for (int64_t i = 0; i < tensor.numElements(); ++i)
    wide.set(i, tensor.get(i));
  return wide;
}

/// Reads `fd` to its end, or until `seconds` have passed (false then).
bool readAll(int fd, double seconds, std::string &text) {
  auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  char buffer[4096];
  for (;;) {
    double left = std::chrono::duration<double, std::milli>(deadline - Clock::now()).count();
    if (left <= 0)
      return false;
    pollfd waiting{fd, POLLIN, 0};
    int ready = ::poll(&waiting, 1, int(std::min(left, 1e9)));
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready == 0)
      return false;
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return true;
    text.append(buffer, size_t(n));
  }
}

class MeasuringEvaluator : public CandidateEvaluator {
public:
  MeasuringEvaluator(const RuntimeOptions &runtimeOptions, llvm::StringRef source, llvm::StringRef sourceName,
                     llvm::StringRef entry, llvm::ArrayRef<TensorRef> inputs, const mlir::la::TuningSpace &space,
                     const TunerOptions &options)
      : runtimeOptions(runtimeOptions), source(source.str()), sourceName(sourceName.str()), entry(entry.str()),
        inputs(inputs), space(space), options(options), team(makeWorkerTeam(runtimeOptions)) {}

  llvm::Expected<CandidateResult> evaluateDefault() override {
    CandidateResult result = describe(0);
    if (options.isolate) {
      CandidateResult probe = probeInChild(0);
      if (probe.status != CandidateResult::Status::Measured)
        return llvm::createStringError("the default configuration (" + result.config + ") cannot be tuned against: " +
                                       candidateStatusName(probe.status).str() + ": " + probe.message);
    }
    auto contender = admit(0, result, team);
    if (!contender)
      return contender.takeError();
    for (const HostTensor &output : contender->outputs)
      expected.push_back(toF64(output));
    contenders[0] = std::move(*contender);
    codeOwners[lastCodeHash] = 0;
    result.timing = result.baseline = TimingStats::of(score({&contenders[0]}).front());
    scored[0] = result;
    return result;
  }

  CandidateResult evaluate(size_t index) override {
    CandidateResult result = describe(index);
    std::optional<double> childCompileMs;
    if (options.isolate) {
      CandidateResult probe = probeInChild(index);
      if (probe.status != CandidateResult::Status::Measured)
        return probe;
      childCompileMs = probe.compileMs;
    }
    auto contender = admit(index, result, team);
    if (childCompileMs)
      result.compileMs = *childCompileMs;
    if (!contender) {
      result.status =
          contender.errorIsA<RunFailure>() ? CandidateResult::Status::RunError : CandidateResult::Status::CompileError;
      result.message = llvm::toString(contender.takeError());
      return result;
    }
    if (result.status != CandidateResult::Status::Measured)
      return result;
    auto [owner, fresh] = codeOwners.try_emplace(lastCodeHash, index);
    if (!fresh) {
      const CandidateResult &same = scored.at(owner->second);
      result.status = CandidateResult::Status::SameCode;
      result.sameAs = owner->second;
      result.timing = same.timing;
      result.baseline = same.baseline;
      return result;
    }
    contenders[index] = std::move(*contender);
    std::vector<std::vector<double>> scores = score({&contenders[0], &contenders[index]});
    result.baseline = TimingStats::of(scores[0]);
    result.timing = TimingStats::of(scores[1]);
    scored[index] = result;
    return result;
  }

  std::vector<TimingStats> rescore(llvm::ArrayRef<size_t> finalists) override {
    std::vector<Contender *> group;
    for (size_t index : finalists)
      group.push_back(&contenders.at(index));
    std::vector<TimingStats> stats;
    for (std::vector<double> &scores : score(group))
      stats.push_back(TimingStats::of(std::move(scores)));
    return stats;
  }

  void release(llvm::ArrayRef<size_t> keep) override {
    for (auto it = contenders.begin(); it != contenders.end();)
      it = it->first == 0 || llvm::is_contained(keep, it->first) ? std::next(it) : contenders.erase(it);
  }

private:
  CandidateResult describe(size_t index) const {
    CandidateResult result;
    result.index = index;
    result.config = space.candidates()[index].str(runtimeOptions.compile.target);
    return result;
  }

  /// Compiles candidate `index` in a runtime of its own and runs it once into buffers of its own; then
  /// compares the outputs with the default's and applies the caller's check. A failure to compile or run is
  /// the error; a rejection sets `result.status` (Mismatch) and `result.message`. Sets lastCodeHash. The
  /// runtime runs its slices on `workers`: the evaluator's team in this process, a new one in a child (whose
  /// copy of the team has no threads behind it).
  llvm::Expected<Contender> admit(size_t index, CandidateResult &result, std::shared_ptr<ForkJoinTeam> workers) {
    RuntimeOptions candidateOptions = runtimeOptions;
    static_cast<mlir::la::PipelineConfig &>(candidateOptions.compile) = space.candidates()[index];
    candidateOptions.checkNumerics = false;
    candidateOptions.tuning = TuningMode::Off;
    // The record configures the kernel for this shape, which a tuned shape then runs whole (a runtime runs
    // other causal calls on pieces, RuntimeOptions::splitSequences): time that kernel.
    candidateOptions.splitSequences = false;
    Contender contender;
    auto runtime = createRuntimeOnTeam(candidateOptions, std::move(workers));
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
    result.compileMs = stats.compileMs;
    if (!specs)
      return specs.takeError();
    lastCodeHash = stats.codeHash;
    for (const TensorSpec &spec : *specs)
      contender.outputs.emplace_back(spec);
    for (HostTensor &output : contender.outputs)
      contender.outputRefs.push_back(output.ref());
    if (llvm::Error err = contender.runtime->call(*program, entry, inputs, contender.outputRefs))
      return llvm::make_error<RunFailure>(llvm::toString(std::move(err)));
    if (index != 0)
      for (auto [i, output] : llvm::enumerate(contender.outputRefs)) {
        OutputCheck check = compareWithReference(i, output, expected[i].ref(), leastPreciseDType(inputs));
        if (!check.passed()) {
          result.status = CandidateResult::Status::Mismatch;
          result.message = "against the default's output: " + check.str();
          return contender;
        }
      }
    if (options.check)
      if (std::optional<std::string> why = options.check(contender.outputRefs, result.config)) {
        result.status = CandidateResult::Status::Mismatch;
        result.message = "rejected by the caller's check: " + *why;
      }
    return contender;
  }

  /// Runs `admit` for candidate `index` in a forked child. Measured means admitted (the compile time set);
  /// any other status is the verdict, Crashed where the child died without one.
  CandidateResult probeInChild(size_t index) {
    CandidateResult verdict = describe(index);
    int pipeFds[2];
    if (::pipe(pipeFds) != 0) {
      verdict.status = CandidateResult::Status::RunError;
      verdict.message = std::string("cannot create a pipe to a child process: ") + std::strerror(errno);
      return verdict;
    }
    pid_t child = ::fork();
    if (child == 0) {
      ::close(pipeFds[0]);
      CandidateResult result = describe(index);
      auto contender = admit(index, result, makeWorkerTeam(runtimeOptions));
      if (!contender) {
        result.status = contender.errorIsA<RunFailure>() ? CandidateResult::Status::RunError
                                                         : CandidateResult::Status::CompileError;
        result.message = llvm::toString(contender.takeError());
      }
      std::string text;
      llvm::raw_string_ostream os(text);
      os << result.toJSON();
      for (size_t written = 0; written < text.size();) {
        ssize_t n = ::write(pipeFds[1], text.data() + written, text.size() - written);
        if (n <= 0 && errno != EINTR)
          break;
        written += n > 0 ? size_t(n) : 0;
      }
      // No exit handlers, no flushing of the parent's buffers this process inherited.
      ::_exit(0);
    }
    ::close(pipeFds[1]);
    if (child < 0) {
      ::close(pipeFds[0]);
      verdict.status = CandidateResult::Status::RunError;
      verdict.message = std::string("cannot fork a child process: ") + std::strerror(errno);
      return verdict;
    }
    std::string reply;
    bool finished = readAll(pipeFds[0], options.probeSeconds, reply);
    ::close(pipeFds[0]);
    if (!finished)
      ::kill(child, SIGKILL);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (!finished) {
      verdict.status = CandidateResult::Status::Crashed;
      verdict.message = llvm::formatv("its compile or first call took more than {0} s; killed", options.probeSeconds);
      return verdict;
    }
    if (WIFSIGNALED(status)) {
      verdict.status = CandidateResult::Status::Crashed;
      verdict.message = llvm::formatv("its compile or first call killed the process: signal {0} ({1})",
                                      WTERMSIG(status), strsignal(WTERMSIG(status)));
      return verdict;
    }
    auto parsed = llvm::json::parse(reply);
    auto result = parsed ? CandidateResult::fromJSON(*parsed) : llvm::Expected<CandidateResult>(parsed.takeError());
    if (!result || (WIFEXITED(status) && WEXITSTATUS(status) != 0)) {
      if (!result)
        llvm::consumeError(result.takeError());
      verdict.status = CandidateResult::Status::Crashed;
      verdict.message = llvm::formatv("its compile or first call ended the process with exit code {0}",
                                      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
      return verdict;
    }
    result->index = index;
    return std::move(*result);
  }

  /// Scores the contenders call for call, round-robin, until the first had `measureMs` of wall time and each
  /// at least `minRuns` calls (after one unscored call each); a deterministic objective once each.
  std::vector<std::vector<double>> score(llvm::ArrayRef<Contender *> group) {
    std::vector<std::vector<double>> scores(group.size());
    double spent = 0;
    auto callOnce = [&](Contender &contender) {
      CallStats stats;
      auto begin = Clock::now();
      llvm::Error err = contender.runtime->call(*program, entry, inputs, contender.outputRefs, &stats);
      double ms = std::chrono::duration<double, std::milli>(Clock::now() - begin).count();
      // The first call of every contender succeeded, so a failure here is not the configuration's.
      llvm::consumeError(std::move(err));
      return std::make_pair(ms, options.objective.score ? options.objective.score(ms, stats) : ms);
    };
    for (Contender *contender : group)
      callOnce(*contender);
    for (unsigned run = 0; run < kMaxRuns; ++run) {
      bool enough = options.objective.noisy ? run >= options.minRuns && spent >= options.measureMs : run >= 1;
      if (enough)
        break;
      for (auto [i, contender] : llvm::enumerate(group)) {
        auto [ms, value] = callOnce(*contender);
        scores[i].push_back(value);
        if (i == 0)
          spent += ms;
      }
    }
    return scores;
  }

  const RuntimeOptions &runtimeOptions;
  std::string source, sourceName, entry;
  llvm::ArrayRef<TensorRef> inputs;
  const mlir::la::TuningSpace &space;
  const TunerOptions &options;

  std::shared_ptr<Program> program;
  /// The default's outputs in f64: what every candidate's outputs are compared with.
  std::vector<HostTensor> expected;
  /// Live contenders by candidate index: the default and those the search keeps.
  std::map<size_t, Contender> contenders;
  /// The figures of every candidate scored, by index (a candidate with the same code shares them).
  std::map<size_t, CandidateResult> scored;
  /// The first candidate scored for each object-code hash.
  llvm::DenseMap<uint64_t, size_t> codeOwners;
  uint64_t lastCodeHash = 0;
  /// The worker threads every contender's runtime runs its slices on: they are called in turn, never at
  /// once, and a team each would disturb one another's measurements (RuntimeOnTeam.h).
  std::shared_ptr<ForkJoinTeam> team;
};

} // namespace

std::unique_ptr<CandidateEvaluator> makeMeasuringEvaluator(const RuntimeOptions &runtimeOptions, llvm::StringRef source,
                                                           llvm::StringRef sourceName, llvm::StringRef entry,
                                                           llvm::ArrayRef<TensorRef> inputs,
                                                           const mlir::la::TuningSpace &space,
                                                           const TunerOptions &options) {
  return std::make_unique<MeasuringEvaluator>(runtimeOptions, source, sourceName, entry, inputs, space, options);
}

} // namespace la
