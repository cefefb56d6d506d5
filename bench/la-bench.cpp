//===- la-bench.cpp - Times the generated attention kernels against baselines -===//
//
// A benchmark program, not a test: for B=2, H=8, D=Dv=64 and N in {1024, 4096, 16384} (all flags) it runs
// each compiled kernel of kernels/flow_attention.mlir and kernels/linear_attention.mlir through the public
// runtime API, then the AFT, GAU/FLASH and decay-scan kernels of kernels/aft.mlir, flash.mlir and
// retention.mlir at the shapes of `libraryCases` below (T = N), and prints, per kernel and N, the median
// time next to
//   - the unfused eager-style reference of the same SPEC formulas (bench/Reference.h), same thread count,
//   - PyTorch on the CPU, eager and under torch.compile (bench/torch_baseline.py, run in a child process) when
//     torch is installed (scripts/setup-torch),
//   - this machine's roofline bound, from a bandwidth and a peak-FLOP microbenchmark run before and after
//     the kernels (the better of the two runs is used).
// Every figure is measured in this run. Each generated output is also checked, against the unfused reference
// and against the float64 oracles of oracles/ on the subset OracleCheck.h describes, so that a wrong kernel
// cannot post a good time; the exit status is non-zero when a kernel fails or is wrong.
//
//===----------------------------------------------------------------------===//
#include "LibraryCost.h"
#include "LibraryKernels.h"
#include "LibraryReference.h"
#include "OptionNames.h"
#include "OracleCheck.h"
#include "Parity.h"
#include "Reference.h"
#include "Roofline.h"
#include "Stats.h"

#include "la/runtime/PipelineFlags.h"
#include "la/runtime/Runtime.h"
#include "la/runtime/Tensor.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#ifndef LA_KERNELS_DIR
#define LA_KERNELS_DIR "kernels"
#endif
#ifndef LA_BENCH_DIR
#define LA_BENCH_DIR "bench"
#endif

using namespace llvm;
using la::bench::KernelKind;
using la::bench::LibraryFamily;
using la::bench::LibraryKernel;
using la::bench::LibraryShape;
using la::bench::median;

namespace {

/// What `--only` selects: every family, or one (the names are the JSON `family` values).
enum class Family { All, Flow, Linear, Aft, Flash, Decay };

Family familyOf(LibraryFamily family) {
  switch (family) {
  case LibraryFamily::Aft:
    return Family::Aft;
  case LibraryFamily::Flash:
    return Family::Flash;
  case LibraryFamily::Decay:
    return Family::Decay;
  }
  return Family::All;
}

const char *familyName(Family family) {
  switch (family) {
  case Family::All:
    return "all";
  case Family::Flow:
    return "flow";
  case Family::Linear:
    return "linear";
  case Family::Aft:
    return "aft";
  case Family::Flash:
    return "flash";
  case Family::Decay:
    return "decay";
  }
  return "?";
}

/// Whether `--only` (empty: every family) selects `family`.
bool selected(const std::vector<Family> &only, Family family) {
  return only.empty() || std::find(only.begin(), only.end(), family) != only.end();
}

/// What the command line asks for; CommandLine below declares each option, its default and its meaning.
/// The interpreter of the torch baseline: scripts/setup-torch's virtual environment when it exists.
std::string defaultPython() {
  std::string venvPython = LA_BENCH_DIR "/../.venv-torch/bin/python";
  return sys::fs::can_execute(venvPython) ? venvPython : "python3";
}

struct BenchOptions {
  std::vector<unsigned> sizes;
  unsigned threads = 0;
  unsigned repeat = 0;
  unsigned referenceRepeat = 0;
  std::string kernelsDir;
  std::vector<Family> only; // empty: all
  std::string jsonPath;
  bool noReference = false;
  double referenceLimitGiB = 0;
  bool referenceFreshMemory = false;
  bool torch = false, noTorch = false;
  std::string python;
  std::string torchScript;
  std::string torchModes;
  std::string cacheDir;
  la::CompileOptions compile; // from the registry's flags (--chunk-size, --fuse, ...: la/runtime/PipelineFlags.h)
  int64_t batch = 0, heads = 0, dim = 0, dimV = 0;
  double tolerance = 0;
  bool parity = true;
};

/// cl::values' parser for --only, with an error that names the families rather than cl's "Cannot find option
/// named 'x'".
struct FamilyParser : cl::parser<Family> {
  using cl::parser<Family>::parser;
  bool parse(cl::Option &option, StringRef argName, StringRef arg, Family &value) {
    std::string names;
    for (const OptionInfo &info : Values) {
      if (info.Name == arg) {
        value = info.V.getValue();
        return false;
      }
      names += (names.empty() ? "" : ", ") + info.Name.str();
    }
    return option.error("takes " + names + "; not '" + arg + "'");
  }
};

/// The command line as llvm::cl options, stored into a BenchOptions. The options register themselves with
/// llvm::cl's process-wide parser, which keeps pointers to them: a CommandLine lives as long as the program,
/// and is created after takeOptionName("threads") (OptionNames.h).
class CommandLine {
public:
  CommandLine() { cl::HideUnrelatedOptions(category); }

  /// Parses the command line; false, after a message on errs(), when it is not a valid one.
  bool parse(int argc, char **argv);
  const BenchOptions &options() const { return values; }

private:
  template <typename T> using Opt = cl::opt<T, /*ExternalStorage=*/true>;

  BenchOptions values;
  cl::OptionCategory category{"la-bench options"};
  cl::alias shortHelp{"h", cl::desc("Alias for --help"), cl::aliasopt(*cl::getRegisteredOptions().lookup("help"))};
  cl::list<unsigned> sizes{"sizes",
                           cl::desc("Sequence lengths N (= M), and T of the library kernels [1024,4096,16384]"),
                           cl::value_desc("N1,N2,..."),
                           cl::CommaSeparated,
                           cl::list_init<unsigned>({1024, 4096, 16384}),
                           cl::cat(category)};
  Opt<unsigned> threads{"threads", cl::desc("Threads for the kernels and every baseline [2]"),
                        cl::location(values.threads), cl::init(2u), cl::cat(category)};
  Opt<unsigned> repeat{"repeat", cl::desc("Timed runs of each generated kernel [10]"), cl::location(values.repeat),
                       cl::init(10u), cl::cat(category)};
  Opt<unsigned> referenceRepeat{"reference-repeat", cl::desc("Timed runs of each unfused reference [3]"),
                                cl::location(values.referenceRepeat), cl::init(3u), cl::cat(category)};
  Opt<std::string> kernelsDir{"kernels",
                              cl::desc("Directory of the .mlir kernels [the source tree's kernels/]"),
                              cl::value_desc("dir"),
                              cl::location(values.kernelsDir),
                              cl::init(LA_KERNELS_DIR),
                              cl::cat(category)};
  cl::list<Family, bool, FamilyParser> only{
      "only", cl::desc("Kernel families to run (alias --family) [all]"), cl::CommaSeparated,
      cl::values(clEnumValN(Family::Flow, "flow", "Flow-Attention, normal and causal"),
                 clEnumValN(Family::Linear, "linear", "linear attention, normal and causal"),
                 clEnumValN(Family::Aft, "aft", "the AFT variants"),
                 clEnumValN(Family::Flash, "flash", "GAU and FLASH"),
                 clEnumValN(Family::Decay, "decay", "retention, simple GLA and GLA")),
      cl::cat(category)};
  cl::alias family{"family", cl::desc("Alias for --only"), cl::aliasopt(only), cl::CommaSeparated};
  Opt<std::string> jsonPath{"json", cl::desc("Write every figure as a JSON array to this file"), cl::value_desc("file"),
                            cl::location(values.jsonPath), cl::cat(category)};
  Opt<bool> noReference{"no-reference", cl::desc("Do not run the unfused reference"), cl::location(values.noReference),
                        cl::cat(category)};
  Opt<double> referenceLimitGiB{"reference-limit-gib",
                                cl::desc("Skip the reference when one materialised tensor exceeds this many GiB [2]"),
                                cl::location(values.referenceLimitGiB), cl::init(2.0), cl::cat(category)};
  Opt<bool> referenceFreshMemory{
      "reference-fresh-memory",
      cl::desc("Fresh memory for every reference intermediate, page faults included (default: freed blocks are "
               "reused, like a caching allocator)"),
      cl::location(values.referenceFreshMemory), cl::cat(category)};
  Opt<bool> torch{"torch", cl::desc("Run the PyTorch baseline (default: when `import torch` works)"),
                  cl::location(values.torch), cl::cat(category)};
  Opt<bool> noTorch{"no-torch", cl::desc("Never run the PyTorch baseline"), cl::location(values.noTorch),
                    cl::cat(category)};
  Opt<std::string> python{"python",
                          cl::desc("Interpreter for the torch baseline [the source tree's .venv-torch/bin/python "
                                   "(scripts/setup-torch) if it exists, else python3]"),
                          cl::value_desc("exe"),
                          cl::location(values.python),
                          cl::init(defaultPython()),
                          cl::cat(category)};
  Opt<std::string> torchModes{"torch-modes",
                              cl::desc("How the torch baseline runs each formula: eager, compile (torch.compile; "
                                       "adds seconds of compilation per kernel and size) [eager,compile]"),
                              cl::value_desc("list"),
                              cl::location(values.torchModes),
                              cl::init("eager,compile"),
                              cl::cat(category)};
  Opt<std::string> torchScript{"torch-script",
                               cl::desc("Path of torch_baseline.py [the source tree's bench/]"),
                               cl::value_desc("file"),
                               cl::location(values.torchScript),
                               cl::init(LA_BENCH_DIR "/torch_baseline.py"),
                               cl::cat(category)};
  Opt<std::string> cacheDir{"cache-dir",
                            cl::desc("Kernel cache directory, 'none' for no disk cache [$LA_CACHE_DIR or ~/.cache/la]"),
                            cl::value_desc("dir"), cl::location(values.cacheDir), cl::cat(category)};
  Opt<bool> parity{"parity",
                   cl::desc("With the decay family, also time each decay entry against its twin (gla_with_state "
                            "vs gla, retention vs simple_gla, ...) interleaved, and report the ratios [true]"),
                   cl::location(values.parity), cl::init(true), cl::cat(category)};
  // The compile options, as lac and la-opt spell them.
  cl::SubCommandGroup topLevel{&cl::SubCommand::getTopLevel()};
  la::PipelineFlags pipelineFlags{topLevel, category};
  Opt<int64_t> batch{"batch", cl::desc("B of the flow/linear kernels [2]"), cl::location(values.batch),
                     cl::init(int64_t(2)), cl::cat(category)};
  Opt<int64_t> heads{"heads", cl::desc("H of the flow/linear kernels [8]"), cl::location(values.heads),
                     cl::init(int64_t(8)), cl::cat(category)};
  Opt<int64_t> dim{"dim", cl::desc("D of the flow/linear kernels [64]"), cl::location(values.dim),
                   cl::init(int64_t(64)), cl::cat(category)};
  Opt<int64_t> dimV{"dim-v", cl::desc("Dv of the flow/linear kernels [64]"), cl::location(values.dimV),
                    cl::init(int64_t(64)), cl::cat(category)};
  Opt<double> tolerance{"tolerance", cl::desc("Largest relative RMS error accepted [1e-4, SPEC.md §7]"),
                        cl::location(values.tolerance), cl::init(1e-4), cl::cat(category)};
};

bool CommandLine::parse(int argc, char **argv) {
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "times the generated kernels of kernels/flow_attention.mlir, linear_attention.mlir, aft.mlir, flash.mlir "
          "and retention.mlir against an unfused eager-style reference, PyTorch eager (when installed) and this "
          "machine's roofline. The AFT, FLASH and decay kernels run at fixed shapes (see the table printed), T = "
          "each size.\n",
          &errs()))
    return false;
  values.sizes.assign(sizes.begin(), sizes.end());
  values.only.assign(only.begin(), only.end());
  if (values.sizes.empty() || llvm::is_contained(values.sizes, 0u)) {
    errs() << "la-bench: --sizes takes positive sequence lengths\n";
    return false;
  }
  if (values.batch < 1 || values.heads < 1 || values.dim < 1 || values.dimV < 1) {
    errs() << "la-bench: --batch, --heads, --dim and --dim-v must be positive\n";
    return false;
  }
  Expected<la::CompileOptions> compile = pipelineFlags.get();
  if (!compile) {
    errs() << "la-bench: " << toString(compile.takeError()) << "\n";
    return false;
  }
  values.compile = *compile;
  values.threads = std::max(1u, values.threads);
  values.repeat = std::max(1u, values.repeat);
  values.referenceRepeat = std::max(1u, values.referenceRepeat);
  return true;
}

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double minimum(const std::vector<double> &values) { return *std::min_element(values.begin(), values.end()); }

/// A 64-byte aligned float buffer; the kernels' vector loads like the alignment, and so do the baselines.
struct Buffer {
  explicit Buffer(size_t count)
      : data(static_cast<float *>(std::aligned_alloc(64, (count * sizeof(float) + 63) / 64 * 64))), count(count) {}
  ~Buffer() { std::free(data); }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  float *data;
  size_t count;
};

/// The inputs of one problem size, filled like torch.randn (normal, mean 0, std 1) from a fixed seed so that
/// runs are comparable; on such inputs the Flow competition clamp is active, as SPEC.md §2 requires.
struct Inputs {
  explicit Inputs(const la::bench::Shape &shape)
      : q(shape.slices() * shape.n * shape.d), k(shape.slices() * shape.m * shape.d),
        v(shape.slices() * shape.m * shape.dv) {
    std::mt19937_64 generator(20240611 + shape.n);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (Buffer *buffer : {&q, &k, &v})
      for (size_t i = 0; i < buffer->count; ++i)
        buffer->data[i] = normal(generator);
  }
  Buffer q, k, v;
};

la::TensorRef tensorRef(float *data, ArrayRef<int64_t> shape) {
  la::TensorRef ref;
  ref.data = data;
  ref.spec.dtype = la::DType::F32;
  ref.spec.shape.assign(shape.begin(), shape.end());
  return ref;
}

/// Everything measured for one (kernel, N).
/// One PyTorch figure of a row (eager or torch.compile): its median, or why there is none.
struct TorchFigure {
  std::optional<double> ms;
  std::string note;
};

struct Row {
  std::string entry;
  Family family = Family::All;
  bool causal = false;
  int64_t n = 0;
  /// The other dimensions, for the table ("B=2 d=512") and the JSON (merged into the row's object).
  std::string shapeText;
  json::Object shapeJson;
  /// Why the kernel was not run at this N (a quadratic kernel above its size cap); not a failure.
  std::string skipped;
  std::string oracleCoverage; // what the fp64 check covered, when not everything
  std::optional<std::string> error;
  double compileMs = 0;
  std::string cacheSource;
  std::vector<double> generatedMs;
  std::optional<double> referenceMs, referenceMinMs;
  std::string referenceNote; // why there is no reference figure
  TorchFigure torchEager, torchCompiled;
  /// The faster of the two PyTorch medians, if either ran.
  std::optional<double> fastestTorchMs() const {
    if (torchEager.ms && torchCompiled.ms)
      return std::min(*torchEager.ms, *torchCompiled.ms);
    return torchEager.ms ? torchEager.ms : torchCompiled.ms;
  }
  la::bench::KernelCost cost;
  double rooflineMs = 0;
  std::optional<double> errVsReference, errVsOracle;
  bool ok = true;
};

/// PyTorch figures per (entry name, N, mode: "eager" or "compile"); the note says why there are none.
struct TorchResults {
  std::map<std::tuple<std::string, int64_t, std::string>, double> medianMs;
  std::map<std::pair<std::string, int64_t>, std::string> skipped;
  /// The shape torch_baseline.py ran a library kernel at (its LIBRARY table mirrors `libraryCases`).
  std::map<std::pair<std::string, int64_t>, std::string> shapes;
  std::string note = "n/a";
};

/// Whether `python -c "import torch"` succeeds.
bool torchImportable(StringRef python) {
  ErrorOr<std::string> program = sys::findProgramByName(python);
  if (!program)
    return false;
  std::optional<StringRef> redirects[] = {StringRef(""), StringRef(""), StringRef("")};
  std::string errorMessage;
  int rc =
      sys::ExecuteAndWait(*program, {*program, "-c", "import torch"}, std::nullopt, redirects, 0, 0, &errorMessage);
  return rc == 0;
}

/// `text` as one word for /bin/sh: single-quoted, embedded quotes closed, escaped and reopened.
std::string shellQuote(StringRef text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'')
      quoted += "'\\''";
    else
      quoted += c;
  }
  return quoted + "'";
}

/// Runs torch_baseline.py in a child process (after the microbenchmarks, before the kernels, so that nothing
/// else of this program runs meanwhile) and parses its JSON lines.
TorchResults runTorchBaseline(const BenchOptions &opts) {
  TorchResults results;
  std::string sizeList;
  for (unsigned n : opts.sizes)
    sizeList += (sizeList.empty() ? "" : ",") + std::to_string(n);
  std::string command =
      formatv("{0} {1} --threads {2} --sizes {3} --batch {4} --heads {5} --dim {6} --dim-v {7} "
              "--repeat {8} --limit-gib {9} --modes {10}",
              shellQuote(opts.python), shellQuote(opts.torchScript), opts.threads, sizeList, opts.batch, opts.heads,
              opts.dim, opts.dimV, opts.repeat, opts.referenceLimitGiB, shellQuote(opts.torchModes))
          .str();
  if (!opts.only.empty()) {
    std::string families;
    for (Family family : opts.only)
      families += (families.empty() ? "" : ",") + std::string(familyName(family));
    command += " --only " + families;
  }
  errs() << "[torch] " << command << "\n";
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe) {
    results.note = "n/a (popen failed)";
    return results;
  }
  std::string line;
  char chunk[4096];
  std::vector<std::string> lines;
  while (fgets(chunk, sizeof(chunk), pipe)) {
    line += chunk;
    if (!line.empty() && line.back() == '\n') {
      lines.push_back(line);
      line.clear();
    }
  }
  if (!line.empty())
    lines.push_back(line);
  int status = pclose(pipe);
  for (const std::string &text : lines) {
    Expected<json::Value> value = json::parse(StringRef(text).trim());
    if (!value) {
      consumeError(value.takeError());
      continue;
    }
    const json::Object *object = value->getAsObject();
    if (!object)
      continue;
    if (object->get("torch") && object->get("torch")->kind() == json::Value::Null) {
      results.note = "n/a";
      return results;
    }
    std::optional<StringRef> kernel = object->getString("kernel");
    std::optional<int64_t> n = object->getInteger("N");
    if (!kernel || !n)
      continue;
    if (std::optional<StringRef> shape = object->getString("shape"))
      results.shapes[{kernel->str(), *n}] = shape->str();
    // Lines without a mode come from a torch_baseline.py that ran eagerly only.
    std::string mode = object->getString("mode").value_or("eager").str();
    if (std::optional<double> ms = object->getNumber("median_ms"))
      results.medianMs[{kernel->str(), *n, mode}] = *ms;
    else if (std::optional<StringRef> why = object->getString("skipped"))
      results.skipped[{kernel->str(), *n}] = why->str();
  }
  if (status != 0 && results.medianMs.empty())
    results.note = "n/a (torch_baseline.py failed)";
  return results;
}

std::string formatMs(std::optional<double> ms) {
  if (!ms)
    return "n/a";
  return formatv("{0:f3}", *ms).str();
}

std::string formatRatio(std::optional<double> ratio) {
  if (!ratio)
    return "-";
  return formatv("{0:f2}x", *ratio).str();
}

std::string formatErr(std::optional<double> err) {
  if (!err)
    return "-";
  return formatv("{0:e1}", *err).str();
}

json::Value optionalNumber(std::optional<double> value) { return value ? json::Value(*value) : json::Value(nullptr); }

/// One warm-up call compiles (or loads) `row.entry`, then `repeat` timed calls; fills the row's compile
/// figures and times, or its error.
void timeGenerated(la::Runtime &runtime, const la::Program &program, ArrayRef<la::TensorRef> inputs,
                   ArrayRef<la::TensorRef> outputs, unsigned repeat, Row &row) {
  la::CallStats stats;
  auto warmStart = Clock::now();
  Error err = runtime.call(program, row.entry, inputs, outputs, &stats);
  double warmMs = msSince(warmStart);
  if (err) {
    row.error = toString(std::move(err));
    row.ok = false;
    errs() << formatv("[N={0}] {1}: error: {2}\n", row.n, row.entry, *row.error);
    return;
  }
  row.compileMs = stats.compileMs;
  row.cacheSource = la::cacheSourceName(stats.cache).str();
  errs() << formatv("[N={0}] {1}: first call {2:f1} ms (code from {3} in {4:f1} ms)\n", row.n, row.entry, warmMs,
                    row.cacheSource, row.compileMs);
  for (unsigned r = 0; r < repeat; ++r) {
    auto start = Clock::now();
    if (Error callErr = runtime.call(program, row.entry, inputs, outputs)) {
      row.error = toString(std::move(callErr));
      row.ok = false;
      return;
    }
    row.generatedMs.push_back(msSince(start));
  }
  errs() << formatv("[N={0}] {1}: median {2:f3} ms, min {3:f3} ms over {4} runs\n", row.n, row.entry,
                    median(row.generatedMs), minimum(row.generatedMs), row.generatedMs.size());
}

/// Runs an unfused reference once as a warm-up (so that the cached allocator holds its blocks; with fresh
/// memory it only warms the code), then `repeat` timed runs; frees the cached blocks afterwards.
void timeReference(const std::function<void()> &run, unsigned repeat, Row &row) {
  errs() << formatv("[N={0}] {1}: unfused reference...\n", row.n, row.entry);
  run();
  std::vector<double> times;
  for (unsigned r = 0; r < repeat; ++r) {
    auto start = Clock::now();
    run();
    times.push_back(msSince(start));
  }
  la::bench::releaseReferenceMemory();
  row.referenceMs = median(times);
  row.referenceMinMs = minimum(times);
  errs() << formatv("[N={0}] {1}: reference median {2:f3} ms\n", row.n, row.entry, *row.referenceMs);
}

/// Records `check` in `row` next to its error against the unfused reference (if any), marks the row wrong
/// when either error is above `tolerance` or NaN, and logs both.
void recordOracleCheck(const la::bench::OracleCheck &check, double tolerance, Row &row) {
  row.errVsOracle = check.relRms;
  row.oracleCoverage = check.coverage;
  for (std::optional<double> e : {row.errVsReference, row.errVsOracle})
    if (e && !(*e <= tolerance)) // NaN fails too
      row.ok = false;
  errs() << formatv("[N={0}] {1}: rel RMS vs reference {2}, vs fp64 {3} ({4})\n", row.n, row.entry,
                    formatErr(row.errVsReference), formatErr(row.errVsOracle), check.coverage);
  if (!row.ok)
    errs() << formatv("[N={0}] {1}: WRONG OUTPUT (tolerance {2:e1})\n", row.n, row.entry, tolerance);
}

/// The PyTorch figures of `row` (eager and torch.compile), or why there are none.
void attachTorch(const TorchResults &torch, bool wantTorch, Row &row) {
  auto key = std::make_pair(row.entry, row.n);
  for (auto [mode, figure] : {std::pair<StringRef, TorchFigure *>{"eager", &row.torchEager},
                              std::pair<StringRef, TorchFigure *>{"compile", &row.torchCompiled}}) {
    if (auto it = torch.shapes.find(key); it != torch.shapes.end() && it->second != row.shapeText)
      figure->note = "n/a (torch_baseline.py ran " + it->second + ")";
    else if (auto it = torch.medianMs.find({row.entry, row.n, mode.str()}); it != torch.medianMs.end())
      figure->ms = it->second;
    else if (auto it = torch.skipped.find(key); it != torch.skipped.end())
      figure->note = it->second;
    else
      figure->note = wantTorch ? torch.note : "n/a";
  }
}

/// A library kernel at the benchmark's shape. `maxT` caps the sizes of the kernels that are quadratic by
/// definition (0: no cap), with the reason printed for the sizes it skips. Shapes are those of
/// docs/BENCHMARKS.md's first `lac run` figures; gau uses the narrower shape its [B,T,T] work allows.
struct LibraryCase {
  LibraryKernel kernel;
  LibraryShape shape; // t is set per size
  int64_t maxT = 0;
  const char *capReason = "";
};

const LibraryCase libraryCases[] = {
    {LibraryKernel::AftCausal, {2, 1, 0, 512, 512}},
    {LibraryKernel::AftSimple, {2, 1, 0, 512, 512}},
    {LibraryKernel::AftLocal, {2, 1, 0, 64, 64}},
    // O(T^2 d) by definition, but as two matrix products (la-factor-joint-softmax): 0.6 s of roofline at
    // T = 16384, where the unfused reference (B*T*T*d joint logits) is skipped for its memory.
    {LibraryKernel::AftFull, {2, 1, 0, 64, 64}},
    {LibraryKernel::AftFullCausal, {2, 1, 0, 64, 64}},
    {LibraryKernel::AftConv, {2, 8, 0, 64, 64}}, // T as an X×Y = 32×(T/32) image, h=8 heads of c=64
    {LibraryKernel::Gau,
     {2, 1, 0, 128, 256},
     4096,
     "quadratic by definition: B*N*N scores, and its fp64 oracle is O(N^2 (s+e))"},
    {LibraryKernel::Flash, {2, 1, 0, 128, 256}},
    {LibraryKernel::FlashCausal, {2, 1, 0, 128, 256}},
    {LibraryKernel::Retention, {2, 8, 0, 64, 64}},
    {LibraryKernel::SimpleGla, {2, 8, 0, 64, 64}},
    {LibraryKernel::Gla, {2, 8, 0, 64, 64}},
};

/// Times, checks and measures the baselines of every selected library kernel at every size.
void runLibraryCases(const BenchOptions &opts, la::Runtime &runtime,
                     const std::map<Family, std::shared_ptr<la::Program>> &programs, la::bench::ForkJoinPool &pool,
                     la::bench::ReferenceMemory referenceMemory, const TorchResults &torch, bool wantTorch,
                     std::vector<Row> &rows) {
  for (unsigned n : opts.sizes) {
    for (const LibraryCase &c : libraryCases) {
      Family family = familyOf(la::bench::libraryFamily(c.kernel));
      if (!selected(opts.only, family))
        continue;
      LibraryShape shape = c.shape;
      shape.t = n;
      Row row;
      row.entry = la::bench::libraryEntryName(c.kernel);
      row.family = family;
      row.causal = la::bench::libraryIsCausal(c.kernel);
      row.n = n;
      row.shapeText = la::bench::describeLibraryShape(c.kernel, shape);
      row.shapeJson = json::Object{{"B", shape.b}, {"T", shape.t}};
      if (family == Family::Decay || c.kernel == LibraryKernel::AftConv)
        row.shapeJson.insert({"H", shape.h});
      if (c.kernel == LibraryKernel::AftConv) {
        la::bench::AftConvImage img = la::bench::aftConvImage(shape.t);
        row.shapeJson.insert({"X", img.x});
        row.shapeJson.insert({"Y", img.y});
      }
      row.shapeJson.insert({family == Family::Decay ? "K" : (family == Family::Flash ? "s" : "d"), shape.d});
      if (family != Family::Aft)
        row.shapeJson.insert({family == Family::Decay ? "V" : "e", shape.e});
      row.cost = la::bench::libraryCost(c.kernel, shape);
      if (c.maxT && n > c.maxT) {
        row.skipped = formatv("skipped above T={0}: {1}", c.maxT, c.capReason).str();
        errs() << formatv("[N={0}] {1}: {2}\n", n, row.entry, row.skipped);
        attachTorch(torch, wantTorch, row);
        rows.push_back(std::move(row));
        continue;
      }

      // Inputs, seeded per kernel and size.
      std::vector<la::bench::LibraryArgument> arguments = la::bench::libraryArguments(c.kernel, shape);
      std::vector<std::unique_ptr<Buffer>> buffers;
      std::vector<la::TensorRef> inputs;
      std::vector<const float *> pointers;
      errs() << formatv("[N={0}] {1}: generating inputs {2}\n", n, row.entry, row.shapeText);
      for (size_t i = 0; i < arguments.size(); ++i) {
        buffers.push_back(std::make_unique<Buffer>(arguments[i].count()));
        la::bench::fillLibraryArgument(buffers.back()->data, buffers.back()->count, arguments[i].fill,
                                       20240611 + n * 31 + static_cast<uint64_t>(c.kernel) * 1009 + i);
        inputs.push_back(tensorRef(buffers.back()->data, arguments[i].shape));
        pointers.push_back(buffers.back()->data);
      }
      std::vector<int64_t> outShape = la::bench::libraryOutputShape(c.kernel, shape);
      size_t outCount = 1;
      for (int64_t size : outShape)
        outCount *= size;
      Buffer generated(outCount);
      std::fill(generated.data, generated.data + generated.count, std::nanf(""));
      la::TensorRef out = tensorRef(generated.data, outShape);

      timeGenerated(runtime, *programs.at(family), inputs, {out}, opts.repeat, row);

      // Unfused reference, unless one of its materialised tensors would not fit the limit.
      std::unique_ptr<Buffer> reference;
      double largest = la::bench::libraryReferenceLargestTensorBytes(c.kernel, shape);
      std::string unsupported = la::bench::libraryReferenceUnsupported(c.kernel, shape);
      if (opts.noReference) {
        row.referenceNote = "not run";
      } else if (!unsupported.empty()) {
        row.referenceNote = "skipped: " + unsupported;
      } else if (largest > opts.referenceLimitGiB * double(1ull << 30)) {
        row.referenceNote = formatv("skipped: needs {0:f1} GiB",
                                    la::bench::libraryReferencePeakBytes(c.kernel, shape) / double(1ull << 30))
                                .str();
        errs() << formatv("[N={0}] {1}: reference {2} (its largest tensor is {3:f1} GiB > "
                          "--reference-limit-gib={4})\n",
                          n, row.entry, row.referenceNote, largest / double(1ull << 30), opts.referenceLimitGiB);
      } else {
        reference = std::make_unique<Buffer>(outCount);
        timeReference(
            [&] { la::bench::runLibraryReference(c.kernel, shape, pointers, reference->data, pool, referenceMemory); },
            opts.referenceRepeat, row);
      }

      // Checks: against the unfused reference, and against the fp64 oracle on a subset.
      if (!row.error) {
        if (row.referenceMs)
          row.errVsReference = la::bench::relativeRms(generated.data, reference->data, generated.count);
        recordOracleCheck(la::bench::checkLibraryOracle(c.kernel, shape, pointers, generated.data), opts.tolerance,
                          row);
      }
      attachTorch(torch, wantTorch, row);
      rows.push_back(std::move(row));
    }
  }
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM initLLVM(argc, argv);
  la::bench::takeOptionName("threads");
  CommandLine commandLine;
  if (!commandLine.parse(argc, argv))
    return 2;
  const BenchOptions &opts = commandLine.options();
  const std::vector<unsigned> &sizes = opts.sizes;
  unsigned threads = opts.threads;
  unsigned repeat = opts.repeat;
  std::vector<KernelKind> kinds;
  if (selected(opts.only, Family::Flow))
    kinds.insert(kinds.end(), {KernelKind::FlowNormal, KernelKind::FlowCausal});
  if (selected(opts.only, Family::Linear))
    kinds.insert(kinds.end(), {KernelKind::LinearNormal, KernelKind::LinearCausal});

  // 1. This machine's roofline, measured with the same thread count now and again after the kernels; the
  //    better of the two is used, since anything else running on the machine can only lower them.
  errs() << "[roofline] measuring bandwidth and peak on " << threads << " threads...\n";
  double bandwidthStart = la::bench::measureBandwidthGBs(threads);
  double peakStart = la::bench::measurePeakGflops(threads);
  errs() << formatv("[roofline] triad bandwidth {0:f1} GB/s, fp32 FMA peak {1:f1} GFLOP/s\n", bandwidthStart,
                    peakStart);

  // 2. PyTorch eager, in a child process, before anything else of ours runs.
  bool wantTorch = !opts.noTorch && (opts.torch || torchImportable(opts.python));
  TorchResults torch;
  if (wantTorch)
    torch = runTorchBaseline(opts);
  else
    errs() << "[torch] not run (" << (opts.noTorch ? "--no-torch" : "torch is not importable") << ")\n";

  // 3. The runtime and the programs.
  la::RuntimeOptions options;
  options.numThreads = threads;
  options.cacheDir = opts.cacheDir;
  options.compile = opts.compile;
  Expected<std::unique_ptr<la::Runtime>> runtime = la::Runtime::create(options);
  if (!runtime) {
    errs() << "la-bench: cannot create the runtime: " << toString(runtime.takeError()) << "\n";
    return 1;
  }
  std::map<Family, std::shared_ptr<la::Program>> programs;
  for (Family family : {Family::Flow, Family::Linear, Family::Aft, Family::Flash, Family::Decay}) {
    if (!selected(opts.only, family))
      continue;
    SmallString<256> path(opts.kernelsDir);
    const char *file = family == Family::Flow     ? "flow_attention.mlir"
                       : family == Family::Linear ? "linear_attention.mlir"
                       : family == Family::Aft    ? la::bench::libraryKernelFile(LibraryFamily::Aft)
                       : family == Family::Flash  ? la::bench::libraryKernelFile(LibraryFamily::Flash)
                                                  : la::bench::libraryKernelFile(LibraryFamily::Decay);
    sys::path::append(path, file);
    Expected<std::shared_ptr<la::Program>> program = (*runtime)->loadFile(path);
    if (!program) {
      errs() << "la-bench: " << toString(program.takeError()) << "\n";
      return 1;
    }
    programs[family] = *program;
  }

  la::bench::ForkJoinPool pool(threads);
  la::bench::ReferenceMemory referenceMemory =
      opts.referenceFreshMemory ? la::bench::ReferenceMemory::Fresh : la::bench::ReferenceMemory::Cached;
  std::vector<Row> rows;

  // 4. Each N, each flow/linear kernel: generated, reference, checks; then the library kernels.
  for (unsigned n : kinds.empty() ? std::vector<unsigned>{} : sizes) {
    la::bench::Shape shape;
    shape.b = opts.batch;
    shape.h = opts.heads;
    shape.n = shape.m = n;
    shape.d = opts.dim;
    shape.dv = opts.dimV;
    errs() << formatv("[N={0}] generating inputs B={1} H={2} D={3} Dv={4}\n", n, shape.b, shape.h, shape.d, shape.dv);
    Inputs inputs(shape);
    Buffer generated(shape.slices() * shape.n * shape.dv);
    Buffer reference(shape.slices() * shape.n * shape.dv);
    la::TensorRef q = tensorRef(inputs.q.data, {shape.b, shape.h, shape.n, shape.d});
    la::TensorRef k = tensorRef(inputs.k.data, {shape.b, shape.h, shape.m, shape.d});
    la::TensorRef v = tensorRef(inputs.v.data, {shape.b, shape.h, shape.m, shape.dv});
    la::TensorRef out = tensorRef(generated.data, {shape.b, shape.h, shape.n, shape.dv});

    for (KernelKind kind : kinds) {
      Row row;
      row.entry = la::bench::kernelEntryName(kind);
      bool isFlow = kind == KernelKind::FlowNormal || kind == KernelKind::FlowCausal;
      row.family = isFlow ? Family::Flow : Family::Linear;
      row.causal = la::bench::isCausal(kind);
      row.n = n;
      row.shapeText = formatv("B={0} H={1} D={2} Dv={3}", shape.b, shape.h, shape.d, shape.dv).str();
      row.shapeJson = json::Object{{"M", shape.m}, {"B", shape.b}, {"H", shape.h}, {"D", shape.d}, {"Dv", shape.dv}};
      row.cost = la::bench::kernelCost(kind, shape);
      std::fill(generated.data, generated.data + generated.count, std::nanf(""));
      timeGenerated(**runtime, *programs[row.family], {q, k, v}, {out}, repeat, row);

      // Unfused reference, unless its materialised k ⊗ v cumsum would not fit the limit.
      double largest = la::bench::referenceLargestTensorBytes(kind, shape);
      if (opts.noReference) {
        row.referenceNote = "not run";
      } else if (largest > opts.referenceLimitGiB * double(1ull << 30)) {
        row.referenceNote =
            formatv("skipped: needs {0:f1} GiB", la::bench::referencePeakBytes(kind, shape) / double(1ull << 30)).str();
        errs() << formatv("[N={0}] {1}: reference {2} (one [B,H,N,D,Dv] tensor is {3:f1} GiB > "
                          "--reference-limit-gib={4})\n",
                          n, row.entry, row.referenceNote, largest / double(1ull << 30), opts.referenceLimitGiB);
      } else {
        timeReference(
            [&] {
              la::bench::runReference(kind, shape, inputs.q.data, inputs.k.data, inputs.v.data, reference.data, pool,
                                      referenceMemory);
            },
            opts.referenceRepeat, row);
      }

      // Checks: against the unfused reference, and against the fp64 oracle on a subset.
      if (!row.error) {
        if (row.referenceMs)
          row.errVsReference = la::bench::relativeRms(generated.data, reference.data, generated.count);
        recordOracleCheck(
            la::bench::checkOracle(kind, shape, inputs.q.data, inputs.k.data, inputs.v.data, generated.data),
            opts.tolerance, row);
      }
      attachTorch(torch, wantTorch, row);
      rows.push_back(std::move(row));
    }
  }
  runLibraryCases(opts, **runtime, programs, pool, referenceMemory, torch, wantTorch, rows);
  // Same math, same speed: the decay entries against their twins, at the decay cases' shape.
  std::vector<la::bench::ParityResult> parity;
  if (opts.parity && selected(opts.only, Family::Decay))
    for (unsigned n : sizes) {
      LibraryShape shape{2, 8, n, 64, 64};
      for (la::bench::ParityResult &result :
           la::bench::measureParity(**runtime, *programs[Family::Decay], shape, repeat))
        parity.push_back(std::move(result));
    }

  // 5. The roofline again, then the table.
  errs() << "[roofline] measuring again...\n";
  double bandwidthEnd = la::bench::measureBandwidthGBs(threads);
  double peakEnd = la::bench::measurePeakGflops(threads);
  double bandwidth = std::max(bandwidthStart, bandwidthEnd);
  double peak = std::max(peakStart, peakEnd);
  for (Row &row : rows)
    row.rooflineMs = la::bench::rooflineMs(row.cost.bytes, row.cost.flops, bandwidth, peak);
  outs() << formatv("machine: {0} threads, triad bandwidth {1:f1} GB/s (start {2:f1}, end {3:f1}), fp32 FMA peak "
                    "{4:f1} GFLOP/s (start {5:f1}, end {6:f1})\n",
                    threads, bandwidth, bandwidthStart, bandwidthEnd, peak, peakStart, peakEnd);
  outs() << formatv("f32, M=N (T=N); flow/linear B={0} H={1} D={2} Dv={3}, the others as in the shape column; "
                    "times in ms: median of {4} runs (generated), of {5} (reference, {6} memory); roofline = "
                    "max(bytes/bandwidth, flops/peak)\n",
                    opts.batch, opts.heads, opts.dim, opts.dimV, repeat, opts.referenceRepeat,
                    opts.referenceFreshMemory ? "fresh" : "cached");
  const char *rowFormat = "{0,-24} {1,6} {2,10} {3,10} {4,12} {5,10} {6,10} {7,10} {8,10} {9,9} {10,9} {11,9} "
                          "{12,8} {13,8} {14,-5} {15}\n";
  outs() << formatv(rowFormat, "kernel", "N", "gen med", "gen min", "compile", "reference", "torch", "t.compile",
                    "roofline", "gen/roof", "ref/gen", "torch/gen", "err ref", "err f64", "", "shape");
  bool allOk = true;
  for (const Row &row : rows) {
    allOk &= row.ok;
    std::optional<double> gen, genMin, genOverRoof, refOverGen;
    if (!row.generatedMs.empty()) {
      gen = median(row.generatedMs);
      genMin = minimum(row.generatedMs);
      genOverRoof = *gen / row.rooflineMs;
      if (row.referenceMs)
        refOverGen = *row.referenceMs / *gen;
    }
    std::string compile = row.error              ? "error"
                          : !row.skipped.empty() ? "skipped"
                                                 : formatv("{0:f0} {1}", row.compileMs, row.cacheSource).str();
    std::string ref =
        row.referenceMs ? formatMs(row.referenceMs) : (row.referenceNote.rfind("skipped", 0) == 0 ? "skipped" : "n/a");
    auto torchCell = [](const TorchFigure &figure) {
      return figure.ms ? formatMs(figure.ms) : (figure.note.rfind("skipped", 0) == 0 ? "skipped" : "n/a");
    };
    std::optional<double> fastestTorch = row.fastestTorchMs(), torchOverGen;
    if (gen && fastestTorch)
      torchOverGen = *fastestTorch / *gen;
    std::string status = row.error ? "ERROR" : (row.ok ? "" : "WRONG");
    outs() << formatv(rowFormat, row.entry, row.n, formatMs(gen), formatMs(genMin), compile, ref,
                      torchCell(row.torchEager), torchCell(row.torchCompiled), formatMs(row.rooflineMs),
                      formatRatio(genOverRoof), formatRatio(refOverGen), formatRatio(torchOverGen),
                      formatErr(row.errVsReference), formatErr(row.errVsOracle), status, row.shapeText);
  }
  // Notes for the cells that say only "skipped" or "error", and what the library checks covered.
  for (const Row &row : rows) {
    const std::string &entry = row.entry;
    if (row.error)
      outs() << formatv("note: {0} N={1}: {2}\n", entry, row.n, *row.error);
    if (!row.skipped.empty())
      outs() << formatv("note: {0} N={1}: {2}\n", entry, row.n, row.skipped);
    if (!row.referenceMs && row.referenceNote.rfind("skipped", 0) == 0)
      outs() << formatv("note: {0} N={1}: reference {2}\n", entry, row.n, row.referenceNote);
    if (!row.torchEager.ms && row.torchEager.note.rfind("skipped", 0) == 0)
      outs() << formatv("note: {0} N={1}: torch {2}\n", entry, row.n, row.torchEager.note);
    std::optional<double> fastestTorch = row.fastestTorchMs();
    if (fastestTorch && !row.generatedMs.empty() && median(row.generatedMs) >= *fastestTorch)
      outs() << formatv("note: {0} N={1}: slower than PyTorch ({2} ms eager, {3} ms torch.compile)\n", entry, row.n,
                        formatMs(row.torchEager.ms), formatMs(row.torchCompiled.ms));
    if (!row.oracleCoverage.empty())
      outs() << formatv("note: {0} N={1}: fp64 check on {2}\n", entry, row.n, row.oracleCoverage);
  }
  if (!parity.empty()) {
    outs() << formatv("same math, same speed: median of {0} interleaved runs each; ratio = entry/twin, "
                      "within {1:f2} is the same speed\n",
                      repeat, la::bench::kParityBound);
    const char *parityFormat = "{0,-24} {1,-12} {2,6} {3,10} {4,10} {5,8} {6,15} {7,9} {8}\n";
    outs() << formatv(parityFormat, "entry", "twin", "N", "entry ms", "twin ms", "ratio", "rounds min..max", "outputs",
                      "");
    for (const la::bench::ParityResult &result : parity) {
      if (result.error) {
        allOk = false;
        outs() << formatv(parityFormat, result.entry, result.twin, result.shape.t, "-", "-", "-", "-", "-",
                          "ERROR: " + *result.error);
        continue;
      }
      auto [low, high] = result.roundRatioRange();
      outs() << formatv(parityFormat, result.entry, result.twin, result.shape.t, formatMs(median(result.entryMs)),
                        formatMs(median(result.twinMs)), formatv("{0:f3}", result.ratio()),
                        formatv("{0:f2}..{1:f2}", low, high), formatErr(result.outputDifference),
                        result.ratio() <= la::bench::kParityBound ? "" : "SLOWER");
    }
  }
  outs().flush();

  // 6. JSON: one object per (kernel, N), each carrying the machine figures, so that plot.py needs nothing
  // else.
  if (!opts.jsonPath.empty()) {
    json::Array array;
    for (const Row &row : rows) {
      std::optional<double> gen, genMin;
      if (!row.generatedMs.empty()) {
        gen = median(row.generatedMs);
        genMin = minimum(row.generatedMs);
      }
      json::Array times;
      for (double t : row.generatedMs)
        times.push_back(t);
      json::Object object{
          {"kernel", row.entry},
          {"family", familyName(row.family)},
          {"causal", row.causal},
          {"N", row.n},
          {"shape", row.shapeText},
          {"skipped", row.skipped.empty() ? json::Value(nullptr) : json::Value(row.skipped)},
          {"oracle_coverage", row.oracleCoverage.empty() ? json::Value(nullptr) : json::Value(row.oracleCoverage)},
          {"threads", threads},
          {"repeat", repeat},
          {"options", opts.compile.str()},
          {"generated_median_ms", optionalNumber(gen)},
          {"generated_min_ms", optionalNumber(genMin)},
          {"generated_times_ms", std::move(times)},
          {"compile_ms", row.error ? json::Value(nullptr) : json::Value(row.compileMs)},
          {"cache", row.error ? json::Value(nullptr) : json::Value(row.cacheSource)},
          {"error", row.error ? json::Value(*row.error) : json::Value(nullptr)},
          {"reference_median_ms", optionalNumber(row.referenceMs)},
          {"reference_min_ms", optionalNumber(row.referenceMinMs)},
          {"reference_memory", opts.referenceFreshMemory ? "fresh" : "cached"},
          {"reference_note", row.referenceNote.empty() ? json::Value(nullptr) : json::Value(row.referenceNote)},
          {"torch_median_ms", optionalNumber(row.torchEager.ms)},
          {"torch_note", row.torchEager.note.empty() ? json::Value(nullptr) : json::Value(row.torchEager.note)},
          {"torch_compile_median_ms", optionalNumber(row.torchCompiled.ms)},
          {"torch_compile_note",
           row.torchCompiled.note.empty() ? json::Value(nullptr) : json::Value(row.torchCompiled.note)},
          {"roofline_ms", row.rooflineMs},
          {"bytes", row.cost.bytes},
          {"flops", row.cost.flops},
          {"bandwidth_gbs", bandwidth},
          {"peak_gflops", peak},
          {"bandwidth_gbs_start_end", json::Array{bandwidthStart, bandwidthEnd}},
          {"peak_gflops_start_end", json::Array{peakStart, peakEnd}},
          {"generated_over_roofline",
           optionalNumber(gen ? std::optional<double>(*gen / row.rooflineMs) : std::nullopt)},
          {"reference_over_generated",
           optionalNumber(gen && row.referenceMs ? std::optional<double>(*row.referenceMs / *gen) : std::nullopt)},
          {"torch_over_generated",
           optionalNumber(gen && row.torchEager.ms ? std::optional<double>(*row.torchEager.ms / *gen) : std::nullopt)},
          {"torch_compile_over_generated",
           optionalNumber(gen && row.torchCompiled.ms ? std::optional<double>(*row.torchCompiled.ms / *gen)
                                                      : std::nullopt)},
          {"rel_rms_vs_reference", optionalNumber(row.errVsReference)},
          {"rel_rms_vs_fp64", optionalNumber(row.errVsOracle)},
          {"ok", row.ok},
      };
      for (const auto &field : row.shapeJson)
        object.insert({field.first, field.second});
      array.push_back(std::move(object));
    }
    // Parity pairs: objects without "kernel", which plot.py skips.
    for (const la::bench::ParityResult &result : parity) {
      json::Array entryTimes(result.entryMs), twinTimes(result.twinMs);
      json::Object object{{"parity_entry", result.entry},
                          {"parity_twin", result.twin},
                          {"N", result.shape.t},
                          {"B", result.shape.b},
                          {"H", result.shape.h},
                          {"K", result.shape.d},
                          {"V", result.shape.e},
                          {"threads", threads},
                          {"entry_times_ms", std::move(entryTimes)},
                          {"twin_times_ms", std::move(twinTimes)},
                          {"error", result.error ? json::Value(*result.error) : json::Value(nullptr)},
                          {"outputs_rel_rms", result.outputDifference}};
      if (!result.error)
        object.insert({"ratio", result.ratio()});
      array.push_back(std::move(object));
    }
    std::error_code ec;
    raw_fd_ostream file(opts.jsonPath, ec);
    if (ec) {
      errs() << "la-bench: cannot write " << opts.jsonPath << ": " << ec.message() << "\n";
      return 1;
    }
    file << formatv("{0:2}", json::Value(std::move(array))) << "\n";
    errs() << "[json] wrote " << opts.jsonPath << "\n";
  }
  return allOk ? 0 : 1;
}
