//===- la-bench.cpp - Times the generated attention kernels against baselines -===//
//
// A benchmark program, not a test: for B=2, H=8, D=Dv=64 and N in {1024, 4096, 16384} (all flags) it runs
// each compiled kernel of kernels/flow_attention.mlir and kernels/linear_attention.mlir through the public
// runtime API and prints, per kernel and N, the median time next to
//   - the unfused eager-style reference of the same SPEC formulas (bench/Reference.h), same thread count,
//   - PyTorch eager on the CPU (bench/torch_baseline.py, run in a child process) when torch is installed,
//   - this machine's roofline bound, from a bandwidth and a peak-FLOP microbenchmark run before and after
//     the kernels (the better of the two runs is used).
// Every figure is measured in this run. Each generated output is also checked, against the unfused reference
// and against a float64 oracle on two (b, h) slices, so that a wrong kernel cannot post a good time; the exit
// status is non-zero when a kernel fails or is wrong.
//
//===----------------------------------------------------------------------===//
#include "Reference.h"
#include "Roofline.h"
#include "Stats.h"

#include "la/runtime/Runtime.h"
#include "la/runtime/Tensor.h"

#include "llvm/ADT/StringExtras.h"
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
using la::bench::median;

namespace {

enum class Family { All, Flow, Linear };

/// The command line. Parsed by hand rather than with llvm::cl: the options live in the process-wide
/// llvm::cl registry, which libLLVM/libMLIR (linked through LARuntime) already fill with names like
/// `threads`, and a second registration aborts at start-up.
struct BenchOptions {
  std::vector<unsigned> sizes = {1024, 4096, 16384};
  unsigned threads = 2;
  unsigned repeat = 10;
  unsigned referenceRepeat = 3;
  std::string kernelsDir = LA_KERNELS_DIR;
  Family only = Family::All;
  std::string jsonPath;
  bool noReference = false;
  double referenceLimitGiB = 2.0;
  bool referenceFreshMemory = false;
  bool torch = false, noTorch = false;
  std::string python = "python3";
  std::string torchScript = LA_BENCH_DIR "/torch_baseline.py";
  std::string cacheDir;
  bool noFuse = false;
  bool groupSweeps = false;
  bool noRegisterTile = false;
  int64_t chunkSize = 64;
  int64_t batch = 2, heads = 8, dim = 64, dimV = 64;
  double tolerance = 1e-4;
};

const char *const usageText = R"(usage: la-bench [options]

Times the generated kernels of kernels/flow_attention.mlir and kernels/linear_attention.mlir against an
unfused eager-style reference, PyTorch eager (when installed) and this machine's roofline.

  --sizes N1,N2,...          sequence lengths N (= M)                        [1024,4096,16384]
  --threads T                threads for the kernels and every baseline     [2]
  --repeat R                 timed runs of each generated kernel            [10]
  --reference-repeat R       timed runs of each unfused reference           [3]
  --kernels DIR              directory of the .mlir kernels                 [source tree's kernels/]
  --only flow|linear         one kernel family
  --json FILE                write every figure as a JSON array
  --no-reference             do not run the unfused reference
  --reference-limit-gib X    skip the reference when one materialised tensor exceeds X GiB   [2]
  --reference-fresh-memory   fresh memory for every reference intermediate, page faults included
                             (default: freed blocks are reused, like a caching allocator)
  --torch / --no-torch       force / never run the PyTorch baseline (default: when `import torch` works)
  --python EXE               interpreter for the torch baseline             [python3]
  --torch-script FILE        path of torch_baseline.py                      [source tree's bench/]
  --cache-dir DIR            kernel cache directory ("none": no disk cache) [$LA_CACHE_DIR or ~/.cache/la]
  --no-fuse                  compile without the fusion passes
  --group-sweeps             group the ops that read the sequence into shared loops (la-group-sweeps)
  --no-register-tile         leave contractions to LLVM's loop vectoriser (no register blocks)
  --chunk-size C             chunk length of the causal scans               [64]
  --batch B --heads H --dim D --dim-v Dv                                    [2 8 64 64]
  --tolerance X              largest relative RMS error accepted            [1e-4, SPEC.md §7]
)";

/// Parses `--name value` and `--name=value`; returns false (after a message) on anything unknown.
bool parseOptions(int argc, char **argv, BenchOptions &options) {
  for (int i = 1; i < argc; ++i) {
    StringRef arg = argv[i];
    if (arg == "-h" || arg == "--help" || arg == "-help") {
      outs() << usageText;
      std::exit(0);
    }
    if (!arg.consume_front("--") && !arg.consume_front("-")) {
      errs() << "la-bench: unexpected argument '" << arg << "'\n";
      return false;
    }
    auto [name, inlineValue] = arg.split('=');
    bool hasInline = arg.contains('=');
    auto value = [&](StringRef &out) {
      if (hasInline) {
        out = inlineValue;
        return true;
      }
      if (i + 1 >= argc) {
        errs() << "la-bench: --" << name << " needs a value\n";
        return false;
      }
      out = argv[++i];
      return true;
    };
    auto number = [&](auto &out) {
      StringRef text;
      if (!value(text))
        return false;
      using T = std::remove_reference_t<decltype(out)>;
      if constexpr (std::is_floating_point_v<T>) {
        double parsed;
        if (text.getAsDouble(parsed)) {
          errs() << "la-bench: --" << name << ": not a number: '" << text << "'\n";
          return false;
        }
        out = parsed;
      } else {
        long long parsed;
        if (text.getAsInteger(10, parsed) || parsed < 0) {
          errs() << "la-bench: --" << name << ": not a non-negative integer: '" << text << "'\n";
          return false;
        }
        out = static_cast<T>(parsed);
      }
      return true;
    };
    auto string = [&](std::string &out) {
      StringRef text;
      if (!value(text))
        return false;
      out = text.str();
      return true;
    };
    bool ok = true;
    if (name == "sizes") {
      StringRef text;
      ok = value(text);
      options.sizes.clear();
      SmallVector<StringRef> parts;
      text.split(parts, ',', -1, /*KeepEmpty=*/false);
      for (StringRef part : parts) {
        unsigned n;
        if (part.trim().getAsInteger(10, n) || n == 0) {
          errs() << "la-bench: --sizes: not a positive integer: '" << part << "'\n";
          return false;
        }
        options.sizes.push_back(n);
      }
      ok = ok && !options.sizes.empty();
    } else if (name == "threads") {
      ok = number(options.threads);
    } else if (name == "repeat") {
      ok = number(options.repeat);
    } else if (name == "reference-repeat") {
      ok = number(options.referenceRepeat);
    } else if (name == "kernels") {
      ok = string(options.kernelsDir);
    } else if (name == "only") {
      std::string family;
      ok = string(family);
      if (family == "flow")
        options.only = Family::Flow;
      else if (family == "linear")
        options.only = Family::Linear;
      else if (ok) {
        errs() << "la-bench: --only takes flow or linear, not '" << family << "'\n";
        return false;
      }
    } else if (name == "json") {
      ok = string(options.jsonPath);
    } else if (name == "no-reference") {
      options.noReference = true;
    } else if (name == "reference-limit-gib") {
      ok = number(options.referenceLimitGiB);
    } else if (name == "reference-fresh-memory") {
      options.referenceFreshMemory = true;
    } else if (name == "torch") {
      options.torch = true;
    } else if (name == "no-torch") {
      options.noTorch = true;
    } else if (name == "python") {
      ok = string(options.python);
    } else if (name == "torch-script") {
      ok = string(options.torchScript);
    } else if (name == "cache-dir") {
      ok = string(options.cacheDir);
    } else if (name == "no-fuse") {
      options.noFuse = true;
    } else if (name == "group-sweeps") {
      options.groupSweeps = true;
    } else if (name == "no-register-tile") {
      options.noRegisterTile = true;
    } else if (name == "chunk-size") {
      ok = number(options.chunkSize);
    } else if (name == "batch") {
      ok = number(options.batch);
    } else if (name == "heads") {
      ok = number(options.heads);
    } else if (name == "dim") {
      ok = number(options.dim);
    } else if (name == "dim-v") {
      ok = number(options.dimV);
    } else if (name == "tolerance") {
      ok = number(options.tolerance);
    } else {
      errs() << "la-bench: unknown option '" << argv[i] << "' (see --help)\n";
      return false;
    }
    if (!ok)
      return false;
  }
  options.threads = std::max(1u, options.threads);
  options.repeat = std::max(1u, options.repeat);
  options.referenceRepeat = std::max(1u, options.referenceRepeat);
  if (options.batch < 1 || options.heads < 1 || options.dim < 1 || options.dimV < 1 ||
      options.chunkSize < 1) {
    errs() << "la-bench: --batch, --heads, --dim, --dim-v and --chunk-size must be positive\n";
    return false;
  }
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
      : data(static_cast<float *>(std::aligned_alloc(64, (count * sizeof(float) + 63) / 64 * 64))),
        count(count) {}
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

la::TensorRef tensorRef(float *data, std::initializer_list<int64_t> shape) {
  la::TensorRef ref;
  ref.data = data;
  ref.spec.dtype = la::DType::F32;
  ref.spec.shape.assign(shape.begin(), shape.end());
  return ref;
}

/// Everything measured for one (kernel, N).
struct Row {
  KernelKind kind;
  la::bench::Shape shape;
  std::optional<std::string> error;
  double compileMs = 0;
  std::string cacheSource;
  std::vector<double> generatedMs;
  std::optional<double> referenceMs, referenceMinMs;
  std::string referenceNote; // why there is no reference figure
  std::optional<double> torchMs;
  std::string torchNote;
  la::bench::KernelCost cost;
  double rooflineMs = 0;
  std::optional<double> errVsReference, errVsOracle;
  bool ok = true;
};

/// PyTorch figures per (entry name, N); the note says why there are none.
struct TorchResults {
  std::map<std::pair<std::string, int64_t>, double> medianMs;
  std::map<std::pair<std::string, int64_t>, std::string> skipped;
  std::string note = "n/a";
};

/// Whether `python -c "import torch"` succeeds.
bool torchImportable(StringRef python) {
  ErrorOr<std::string> program = sys::findProgramByName(python);
  if (!program)
    return false;
  std::optional<StringRef> redirects[] = {StringRef(""), StringRef(""), StringRef("")};
  std::string errorMessage;
  int rc = sys::ExecuteAndWait(*program, {*program, "-c", "import torch"}, std::nullopt, redirects, 0, 0,
                               &errorMessage);
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
              "--repeat {8} --limit-gib {9}",
              shellQuote(opts.python), shellQuote(opts.torchScript), opts.threads, sizeList, opts.batch,
              opts.heads, opts.dim, opts.dimV, opts.repeat, opts.referenceLimitGiB)
          .str();
  if (opts.only == Family::Flow)
    command += " --only flow";
  else if (opts.only == Family::Linear)
    command += " --only linear";
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
    if (std::optional<double> ms = object->getNumber("median_ms"))
      results.medianMs[{kernel->str(), *n}] = *ms;
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

json::Value optionalNumber(std::optional<double> value) {
  return value ? json::Value(*value) : json::Value(nullptr);
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM initLLVM(argc, argv);
  BenchOptions opts;
  if (!parseOptions(argc, argv, opts))
    return 2;
  const std::vector<unsigned> &sizes = opts.sizes;
  unsigned threads = opts.threads;
  unsigned repeat = opts.repeat;
  std::vector<KernelKind> kinds;
  if (opts.only != Family::Linear)
    kinds.insert(kinds.end(), {KernelKind::FlowNormal, KernelKind::FlowCausal});
  if (opts.only != Family::Flow)
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
  options.compile.fuse = !opts.noFuse;
  options.compile.groupSweeps = opts.groupSweeps;
  options.compile.registerTile = !opts.noRegisterTile;
  options.compile.chunkSize = opts.chunkSize;
  Expected<std::unique_ptr<la::Runtime>> runtime = la::Runtime::create(options);
  if (!runtime) {
    errs() << "la-bench: cannot create the runtime: " << toString(runtime.takeError()) << "\n";
    return 1;
  }
  std::map<Family, std::shared_ptr<la::Program>> programs;
  for (Family family : {Family::Flow, Family::Linear}) {
    if (opts.only != Family::All && opts.only != family)
      continue;
    SmallString<256> path(opts.kernelsDir);
    sys::path::append(path, family == Family::Flow ? "flow_attention.mlir" : "linear_attention.mlir");
    Expected<std::shared_ptr<la::Program>> program = (*runtime)->loadFile(path);
    if (!program) {
      errs() << "la-bench: " << toString(program.takeError()) << "\n";
      return 1;
    }
    programs[family] = *program;
  }

  la::bench::ThreadPool pool(threads);
  la::bench::ReferenceMemory referenceMemory =
      opts.referenceFreshMemory ? la::bench::ReferenceMemory::Fresh : la::bench::ReferenceMemory::Cached;
  std::vector<Row> rows;

  // 4. Each N, each kernel: generated, reference, checks.
  for (unsigned n : sizes) {
    la::bench::Shape shape;
    shape.b = opts.batch;
    shape.h = opts.heads;
    shape.n = shape.m = n;
    shape.d = opts.dim;
    shape.dv = opts.dimV;
    errs() << formatv("[N={0}] generating inputs B={1} H={2} D={3} Dv={4}\n", n, shape.b, shape.h, shape.d,
                      shape.dv);
    Inputs inputs(shape);
    Buffer generated(shape.slices() * shape.n * shape.dv);
    Buffer reference(shape.slices() * shape.n * shape.dv);
    la::TensorRef q = tensorRef(inputs.q.data, {shape.b, shape.h, shape.n, shape.d});
    la::TensorRef k = tensorRef(inputs.k.data, {shape.b, shape.h, shape.m, shape.d});
    la::TensorRef v = tensorRef(inputs.v.data, {shape.b, shape.h, shape.m, shape.dv});
    la::TensorRef out = tensorRef(generated.data, {shape.b, shape.h, shape.n, shape.dv});

    for (KernelKind kind : kinds) {
      Row row;
      row.kind = kind;
      row.shape = shape;
      row.cost = la::bench::kernelCost(kind, shape);
      const char *entry = la::bench::kernelEntryName(kind);
      const la::Program &program =
          *programs[kind == KernelKind::FlowNormal || kind == KernelKind::FlowCausal ? Family::Flow
                                                                                     : Family::Linear];

      // Generated kernel: one warm-up call compiles (or loads) it, then `repeat` timed calls.
      std::fill(generated.data, generated.data + generated.count, std::nanf(""));
      la::CallStats stats;
      auto warmStart = Clock::now();
      Error err = (*runtime)->call(program, entry, {q, k, v}, {out}, &stats);
      double warmMs = msSince(warmStart);
      if (err) {
        row.error = toString(std::move(err));
        row.ok = false;
        errs() << formatv("[N={0}] {1}: error: {2}\n", n, entry, *row.error);
      } else {
        row.compileMs = stats.compileMs;
        row.cacheSource = la::cacheSourceName(stats.cache).str();
        errs() << formatv("[N={0}] {1}: first call {2:f1} ms (code from {3} in {4:f1} ms)\n", n, entry,
                          warmMs, row.cacheSource, row.compileMs);
        for (unsigned r = 0; r < repeat && !row.error; ++r) {
          auto start = Clock::now();
          if (Error callErr = (*runtime)->call(program, entry, {q, k, v}, {out})) {
            row.error = toString(std::move(callErr));
            row.ok = false;
            break;
          }
          row.generatedMs.push_back(msSince(start));
        }
        if (!row.generatedMs.empty())
          errs() << formatv("[N={0}] {1}: median {2:f3} ms, min {3:f3} ms over {4} runs\n", n, entry,
                            median(row.generatedMs), minimum(row.generatedMs), row.generatedMs.size());
      }

      // Unfused reference, unless its materialised k ⊗ v cumsum would not fit the limit.
      double largest = la::bench::referenceLargestTensorBytes(kind, shape);
      if (opts.noReference) {
        row.referenceNote = "not run";
      } else if (largest > opts.referenceLimitGiB * double(1ull << 30)) {
        row.referenceNote = formatv("skipped: needs {0:f1} GiB",
                                    la::bench::referencePeakBytes(kind, shape) / double(1ull << 30))
                                .str();
        errs() << formatv("[N={0}] {1}: reference {2} (one [B,H,N,D,Dv] tensor is {3:f1} GiB > "
                          "--reference-limit-gib={4})\n",
                          n, entry, row.referenceNote, largest / double(1ull << 30), opts.referenceLimitGiB);
      } else {
        errs() << formatv("[N={0}] {1}: unfused reference...\n", n, entry);
        // A warm-up call first, so that the cached allocator holds its blocks; with fresh memory it only
        // warms the code.
        la::bench::runReference(kind, shape, inputs.q.data, inputs.k.data, inputs.v.data, reference.data,
                                pool, referenceMemory);
        std::vector<double> times;
        for (unsigned r = 0; r < opts.referenceRepeat; ++r) {
          auto start = Clock::now();
          la::bench::runReference(kind, shape, inputs.q.data, inputs.k.data, inputs.v.data, reference.data,
                                  pool, referenceMemory);
          times.push_back(msSince(start));
        }
        la::bench::releaseReferenceMemory();
        row.referenceMs = median(times);
        row.referenceMinMs = minimum(times);
        errs() << formatv("[N={0}] {1}: reference median {2:f3} ms\n", n, entry, *row.referenceMs);
      }

      // Checks: against the unfused reference, and against the fp64 oracle on the first and last slice.
      if (!row.error) {
        if (row.referenceMs)
          row.errVsReference = la::bench::relativeRms(generated.data, reference.data, generated.count);
        row.errVsOracle =
            la::bench::oracleRelativeRms(kind, shape, inputs.q.data, inputs.k.data, inputs.v.data,
                                         generated.data, {0, shape.slices() - 1});
        for (std::optional<double> e : {row.errVsReference, row.errVsOracle})
          if (e && !(*e <= opts.tolerance)) // NaN fails too
            row.ok = false;
        if (!row.ok)
          errs() << formatv(
              "[N={0}] {1}: WRONG OUTPUT: rel RMS vs reference {2}, vs fp64 {3} (tolerance {4})\n", n, entry,
              formatErr(row.errVsReference), formatErr(row.errVsOracle), opts.tolerance);
      }

      auto key = std::make_pair(std::string(entry), int64_t(n));
      if (auto it = torch.medianMs.find(key); it != torch.medianMs.end())
        row.torchMs = it->second;
      else if (auto it = torch.skipped.find(key); it != torch.skipped.end())
        row.torchNote = it->second;
      else
        row.torchNote = wantTorch ? torch.note : "n/a";
      rows.push_back(std::move(row));
    }
  }

  // 5. The roofline again, then the table.
  errs() << "[roofline] measuring again...\n";
  double bandwidthEnd = la::bench::measureBandwidthGBs(threads);
  double peakEnd = la::bench::measurePeakGflops(threads);
  double bandwidth = std::max(bandwidthStart, bandwidthEnd);
  double peak = std::max(peakStart, peakEnd);
  for (Row &row : rows)
    row.rooflineMs = la::bench::rooflineMs(row.cost.bytes, row.cost.flops, bandwidth, peak);
  outs() << formatv(
      "machine: {0} threads, triad bandwidth {1:f1} GB/s (start {2:f1}, end {3:f1}), fp32 FMA peak "
      "{4:f1} GFLOP/s (start {5:f1}, end {6:f1})\n",
      threads, bandwidth, bandwidthStart, bandwidthEnd, peak, peakStart, peakEnd);
  outs() << formatv("B={0} H={1} D={2} Dv={3}, M=N, f32; times in ms: median of {4} runs (generated), of {5} "
                    "(reference, {6} memory); roofline = max(bytes/bandwidth, flops/peak)\n",
                    opts.batch, opts.heads, opts.dim, opts.dimV, repeat, opts.referenceRepeat,
                    opts.referenceFreshMemory ? "fresh" : "cached");
  outs() << formatv(
      "{0,-24} {1,6} {2,10} {3,10} {4,12} {5,10} {6,10} {7,10} {8,9} {9,9} {10,8} {11,8} {12}\n", "kernel",
      "N", "gen med", "gen min", "compile", "reference", "torch", "roofline", "gen/roof", "ref/gen",
      "err ref", "err f64", "");
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
    std::string compile = row.error ? "error" : formatv("{0:f0} {1}", row.compileMs, row.cacheSource).str();
    std::string ref = row.referenceMs ? formatMs(row.referenceMs)
                                      : (row.referenceNote.rfind("skipped", 0) == 0 ? "skipped" : "n/a");
    std::string torchCell =
        row.torchMs ? formatMs(row.torchMs) : (row.torchNote.rfind("skipped", 0) == 0 ? "skipped" : "n/a");
    std::string status = row.error ? "ERROR" : (row.ok ? "" : "WRONG");
    outs() << formatv(
        "{0,-24} {1,6} {2,10} {3,10} {4,12} {5,10} {6,10} {7,10} {8,9} {9,9} {10,8} {11,8} {12}\n",
        la::bench::kernelEntryName(row.kind), row.shape.n, formatMs(gen), formatMs(genMin), compile, ref,
        torchCell, formatMs(row.rooflineMs), formatRatio(genOverRoof), formatRatio(refOverGen),
        formatErr(row.errVsReference), formatErr(row.errVsOracle), status);
  }
  // Notes for the cells that say only "skipped" or "error".
  for (const Row &row : rows) {
    const char *entry = la::bench::kernelEntryName(row.kind);
    if (row.error)
      outs() << formatv("note: {0} N={1}: {2}\n", entry, row.shape.n, *row.error);
    if (!row.referenceMs && row.referenceNote.rfind("skipped", 0) == 0)
      outs() << formatv("note: {0} N={1}: reference {2}\n", entry, row.shape.n, row.referenceNote);
    if (!row.torchMs && row.torchNote.rfind("skipped", 0) == 0)
      outs() << formatv("note: {0} N={1}: torch {2}\n", entry, row.shape.n, row.torchNote);
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
          {"kernel", la::bench::kernelEntryName(row.kind)},
          {"causal", la::bench::isCausal(row.kind)},
          {"N", row.shape.n},
          {"M", row.shape.m},
          {"B", row.shape.b},
          {"H", row.shape.h},
          {"D", row.shape.d},
          {"Dv", row.shape.dv},
          {"threads", threads},
          {"repeat", repeat},
          {"fuse", !opts.noFuse},
          {"group_sweeps", opts.groupSweeps},
          {"register_tile", !opts.noRegisterTile},
          {"chunk_size", opts.chunkSize},
          {"generated_median_ms", optionalNumber(gen)},
          {"generated_min_ms", optionalNumber(genMin)},
          {"generated_times_ms", std::move(times)},
          {"compile_ms", row.error ? json::Value(nullptr) : json::Value(row.compileMs)},
          {"cache", row.error ? json::Value(nullptr) : json::Value(row.cacheSource)},
          {"error", row.error ? json::Value(*row.error) : json::Value(nullptr)},
          {"reference_median_ms", optionalNumber(row.referenceMs)},
          {"reference_min_ms", optionalNumber(row.referenceMinMs)},
          {"reference_memory", opts.referenceFreshMemory ? "fresh" : "cached"},
          {"reference_note",
           row.referenceNote.empty() ? json::Value(nullptr) : json::Value(row.referenceNote)},
          {"torch_median_ms", optionalNumber(row.torchMs)},
          {"torch_note", row.torchNote.empty() ? json::Value(nullptr) : json::Value(row.torchNote)},
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
           optionalNumber(gen && row.referenceMs ? std::optional<double>(*row.referenceMs / *gen)
                                                 : std::nullopt)},
          {"torch_over_generated",
           optionalNumber(gen && row.torchMs ? std::optional<double>(*row.torchMs / *gen) : std::nullopt)},
          {"rel_rms_vs_reference", optionalNumber(row.errVsReference)},
          {"rel_rms_vs_fp64", optionalNumber(row.errVsOracle)},
          {"ok", row.ok},
      };
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
