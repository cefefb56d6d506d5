//===- la-emulator-bench.cpp - how fast the GPU emulator runs two kernels ---===//
//
// Times the SIMT emulator (runtime/emulator) on two kernels written against its C ABI, each checked on every
// run: a tensor-core GEMM (runtime/emulator/kernels/TiledGemm.h: cp.async, ldmatrix, mma.sync m16n8k16, f16
// inputs, f32 accumulators; the kernel EmulatorGemmTest checks) and a block reduction
// (kernels/BlockReduction.h: a shared-memory tree with a barrier per step, then shfl.sync.down). The time
// is the wall time of la::emu::launch, fibers and checks included; the median of --repeat runs is printed
// with what the launch did (threads, blocks, barriers, mma.sync, bytes moved, from its counters) and the
// rates these give. Instructions are not counted (the arithmetic between ABI calls runs natively), so the
// rates are per fiber, barrier, mma.sync and byte. It exits 1 if a run had findings or a wrong output. A
// benchmark, not a test: the ctest entries only check that it runs, that its checks hold, and that they fail
// a racy GEMM (the hidden --gemm-barrier=false); never a time.
//
//   la-emulator-bench [--repeat 5] [--threads 0] [--gemm-size 256] [--reduce-size 1048576] [--json out.json]
//
//===----------------------------------------------------------------------===//

#include "OptionNames.h"
#include "Stats.h"

#include "BlockReduction.h"
#include "TiledGemm.h"

#include "la/emulator/Launch.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace {

using la::bench::median;
using Clock = std::chrono::steady_clock;
namespace emu = la::emu;

/// A run's output against the reference: the largest error, and whether every element is within its
/// tolerance (one bound for the GEMM, one per block for the reduction).
struct Check {
  double maxError = 0;
  bool ok = false;
};

/// What one kernel's runs gave.
struct Result {
  std::string name, shape;
  std::vector<double> timesMs;
  bool launched = false;  // a launch returned a report (else the configuration was invalid)
  bool compared = false;  // an output was compared with the reference (else the emulator had findings)
  emu::Counters counters; // of the last run (every run does the same work)
  uint64_t blocks = 0, threads = 0;
  double maxError = 0, tolerance = 0;
  std::string failure; // empty when every run was clean and matched its reference

  bool ok() const { return failure.empty(); }
};

/// Launches the kernel `repeat` times, checking each run: a run fails if the emulator reported findings or
/// `check` says its output is wrong. `tolerance` is what is printed next to the largest error.
Result measure(std::string name, std::string shape, unsigned repeat, unsigned threads,
               const std::function<emu::LaunchConfig()> &config, const emu::Kernel &kernel,
               const std::function<Check()> &check, double tolerance) {
  Result result;
  result.name = std::move(name);
  result.shape = std::move(shape);
  result.tolerance = tolerance;
  for (unsigned r = 0; r < repeat; ++r) {
    emu::LaunchConfig launchConfig = config();
    launchConfig.numThreads = threads;
    result.blocks = launchConfig.grid.count();
    result.threads = result.blocks * launchConfig.block.count();
    auto start = Clock::now();
    llvm::Expected<emu::LaunchReport> report = emu::launch(kernel, launchConfig);
    result.timesMs.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (!report) {
      result.failure = llvm::toString(report.takeError());
      return result;
    }
    result.launched = true;
    result.counters = report->counters;
    if (llvm::Error findings = report->takeError()) {
      result.failure = "the emulator reported findings:\n" + llvm::toString(std::move(findings));
      return result;
    }
    Check run = check();
    result.compared = true;
    result.maxError = std::max(result.maxError, run.maxError);
    if (!run.ok) {
      result.failure = llvm::formatv("wrong result in run {0}: error {1:e2}", r + 1, run.maxError);
      return result;
    }
  }
  return result;
}

Result benchGemm(uint32_t size, unsigned repeat, unsigned threads, bool barrier) {
  emu::kernels::TiledGemm gemm(size, size, size);
  gemm.barrier = barrier;
  // The reference once; the kernel's output is compared with it after every run.
  std::vector<double> reference(size_t(size) * size);
  for (uint32_t i = 0; i < size; ++i)
    for (uint32_t j = 0; j < size; ++j)
      reference[size_t(i) * size + j] = gemm.reference(i, j);
  auto check = [&] {
    Check result;
    for (size_t i = 0; i < reference.size(); ++i)
      result.maxError = std::max(result.maxError, std::fabs(gemm.c[i] - reference[i]));
    result.ok = result.maxError <= gemm.tolerance();
    return result;
  };
  std::string shape = llvm::formatv("{0}x{0}x{0} f16 -> f32, cp.async + ldmatrix + mma.sync m16n8k16", size);
  return measure("gemm", shape, repeat, threads, [&] { return gemm.config(); }, gemm.kernel(), check, gemm.tolerance());
}

Result benchReduction(uint32_t size, unsigned repeat, unsigned threads) {
  emu::kernels::BlockReduction reduction(size);
  std::vector<double> reference(reduction.blocks()), bound(reduction.blocks());
  double worstBound = 0;
  for (uint32_t b = 0; b < reduction.blocks(); ++b) {
    reference[b] = reduction.reference(b, &bound[b]);
    worstBound = std::max(worstBound, bound[b]);
  }
  // Each block's sum within its own bound; the largest error and the largest bound are what is printed.
  auto check = [&] {
    Check result{0, true};
    for (uint32_t b = 0; b < reduction.blocks(); ++b) {
      double error = std::fabs(reduction.sums[b] - reference[b]);
      result.maxError = std::max(result.maxError, error);
      result.ok &= error <= bound[b];
    }
    return result;
  };
  std::string shape = llvm::formatv("{0} f32, {1} threads per block, shared-memory tree + shfl.sync.down", size,
                                    emu::kernels::BlockReduction::kThreads);
  return measure(
      "reduce", shape, repeat, threads, [&] { return reduction.config(); }, reduction.kernel(), check, worstBound);
}

/// Per second of the median run.
double rate(uint64_t count, double ms) { return ms > 0 ? double(count) / (ms * 1e-3) : 0; }

void printFailure(const Result &r) {
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(r.failure).rtrim().split(lines, '\n');
  for (size_t i = 0; i < lines.size(); ++i)
    llvm::outs() << (i == 0 ? "  FAILED: " : "    ") << lines[i] << "\n";
}

void print(const Result &r) {
  llvm::raw_ostream &os = llvm::outs();
  os << llvm::formatv("{0}: {1}\n", r.name, r.shape);
  if (!r.launched) {
    printFailure(r);
    return;
  }
  const emu::Counters &c = r.counters;
  double ms = median(r.timesMs), minMs = *std::min_element(r.timesMs.begin(), r.timesMs.end());
  uint64_t globalBytes = c.globalBytesLoaded + c.globalBytesStored;
  uint64_t sharedBytes = c.sharedBytesLoaded + c.sharedBytesStored;
  os << llvm::formatv("  time      {0:F2} ms median of {1} (min {2:F2} ms)\n", ms, r.timesMs.size(), minMs);
  os << llvm::formatv("  launch    {0} blocks, {1} threads (fibers), {2} barriers, {3} mma.sync, {4} ldmatrix, "
                      "{5} shfl\n",
                      r.blocks, r.threads, c.barriers, c.mmaSync, c.ldmatrix, c.shuffles);
  os << llvm::formatv("  bytes     {0} global ({1} by cp.async), {2} shared\n", globalBytes, c.cpAsyncBytes,
                      sharedBytes);
  uint64_t arrivals = c.barriers * (r.threads / std::max<uint64_t>(r.blocks, 1));
  os << llvm::formatv("  rates     {0:e2} fibers/s, {1:e2} barriers/s ({2:e2} thread arrivals/s), {3:e2} "
                      "mma.sync/s ({4:F3} GFLOP/s)\n",
                      rate(r.threads, ms), rate(c.barriers, ms), rate(arrivals, ms), rate(c.mmaSync, ms),
                      rate(c.mmaFlops, ms) * 1e-9);
  os << llvm::formatv("  bandwidth {0:F2} MB/s global, {1:F2} MB/s shared\n", rate(globalBytes, ms) * 1e-6,
                      rate(sharedBytes, ms) * 1e-6);
  if (r.compared)
    os << llvm::formatv("  check     max error {0:e2} (tolerance {1:e2}): {2}\n", r.maxError, r.tolerance,
                        r.ok() ? "ok" : "FAILED");
  if (!r.ok())
    printFailure(r);
}

llvm::json::Value toJSON(const Result &r, unsigned repeat, unsigned threads) {
  double ms = r.timesMs.empty() ? 0 : median(r.timesMs);
  const emu::Counters &c = r.counters;
  uint64_t globalBytes = c.globalBytesLoaded + c.globalBytesStored;
  uint64_t sharedBytes = c.sharedBytesLoaded + c.sharedBytesStored;
  return llvm::json::Object{
      {"kernel", r.name},
      {"shape", r.shape},
      {"repeat", repeat},
      {"threads", threads},
      {"median_ms", ms},
      {"times_ms", llvm::json::Array(r.timesMs)},
      {"blocks", r.blocks},
      {"emulated_threads", r.threads},
      {"counters", c.toJSON()},
      {"fibers_per_s", rate(r.threads, ms)},
      {"barriers_per_s", rate(c.barriers, ms)},
      {"barrier_arrivals_per_s", rate(c.barriers * (r.threads / std::max<uint64_t>(r.blocks, 1)), ms)},
      {"mma_sync_per_s", rate(c.mmaSync, ms)},
      {"global_bytes_per_s", rate(globalBytes, ms)},
      {"shared_bytes_per_s", rate(sharedBytes, ms)},
      {"max_error", r.maxError},
      {"tolerance", r.tolerance},
      {"ok", r.ok()},
      {"failure", r.ok() ? llvm::json::Value(nullptr) : llvm::json::Value(r.failure)},
  };
}

int fail(const llvm::Twine &message) {
  llvm::errs() << "la-emulator-bench: " << message << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  la::bench::takeOptionName("threads");
  llvm::cl::OptionCategory category("la-emulator-bench options");
  llvm::cl::opt<unsigned> repeatFlag("repeat", llvm::cl::desc("Runs per kernel, the median of which is printed [5]"),
                                     llvm::cl::init(5), llvm::cl::cat(category));
  llvm::cl::opt<unsigned> threadsFlag("threads",
                                      llvm::cl::desc("OS threads running blocks (0: one per hardware thread) [0]"),
                                      llvm::cl::init(0), llvm::cl::cat(category));
  llvm::cl::opt<unsigned> gemmSizeFlag("gemm-size", llvm::cl::desc("M = N = K of the GEMM, a multiple of 64 [256]"),
                                       llvm::cl::init(256), llvm::cl::cat(category));
  llvm::cl::opt<unsigned> reduceSizeFlag("reduce-size",
                                         llvm::cl::desc("Floats the reduction sums, a multiple of 1024 [1048576]"),
                                         llvm::cl::init(1u << 20), llvm::cl::cat(category));
  llvm::cl::opt<bool> gemmBarrierFlag(
      "gemm-barrier",
      llvm::cl::desc("=false drops the GEMM's barrier after its tile copies: a racy kernel, to check "
                     "that the benchmark fails it"),
      llvm::cl::init(true), llvm::cl::Hidden, llvm::cl::cat(category));
  llvm::cl::opt<std::string> jsonFlag("json", llvm::cl::desc("Also write the results to this JSON file"),
                                      llvm::cl::value_desc("path"), llvm::cl::cat(category));
  llvm::cl::HideUnrelatedOptions(category);
  if (!llvm::cl::ParseCommandLineOptions(argc, argv, "times the GPU emulator on a GEMM and a reduction\n",
                                         &llvm::errs()))
    return 1;
  const unsigned repeat = repeatFlag, threads = threadsFlag, gemmSize = gemmSizeFlag, reduceSize = reduceSizeFlag;
  if (repeat < 1)
    return fail("--repeat must be positive");
  if (gemmSize < 64 || gemmSize % 64)
    return fail("--gemm-size must be a positive multiple of 64, not " + llvm::Twine(gemmSize));
  if (reduceSize < emu::kernels::BlockReduction::kPerBlock || reduceSize % emu::kernels::BlockReduction::kPerBlock)
    return fail("--reduce-size must be a positive multiple of 1024, not " + llvm::Twine(reduceSize));

  unsigned osThreads = llvm::hardware_concurrency(threads).compute_thread_count();
  llvm::outs() << llvm::formatv("la-emulator-bench: {0} OS thread(s) running blocks, median of {1} run(s)\n", osThreads,
                                repeat);
  std::vector<Result> results = {benchGemm(gemmSize, repeat, threads, gemmBarrierFlag),
                                 benchReduction(reduceSize, repeat, threads)};
  bool allOk = true;
  for (const Result &r : results) {
    print(r);
    allOk &= r.ok();
  }

  if (!jsonFlag.empty()) {
    llvm::json::Array array;
    for (const Result &r : results)
      array.push_back(toJSON(r, repeat, osThreads));
    std::error_code ec;
    llvm::raw_fd_ostream file(jsonFlag, ec);
    if (ec)
      return fail("cannot write " + jsonFlag + ": " + ec.message());
    file << llvm::formatv("{0:2}", llvm::json::Value(std::move(array))) << "\n";
    llvm::errs() << "[json] wrote " << jsonFlag << "\n";
  }
  return allOk ? 0 : 1;
}
