//===- la-decode-bench.cpp - one decode step against the memory bound -----===//
//
// Times la::Decoder::step on one position for every causal kernel the compiler derives prefill/resume variants
// for, at B ∈ {1, 8}, H = 32, K = V ∈ {64, 128} (issue 23); AFT, which has no heads ([B, T, d]), at the model
// width d = H·K. A step must read the state and write the new one,
// so its bound is that traffic at the bandwidth a plain copy of state-sized buffers reaches in the same run,
// on the same threads (the buffers stay where a decode loop keeps its state: in cache when they fit). The
// "K=V=4" column is the same step where the kernels have almost nothing to do: an upper bound on the
// runtime's own cost per step (argument checks, cache hit, fork and join over the threads), which also holds
// the B·H slice calls of the kernel and their fixed cost.
// Every figure is the median of `--steps` single steps after `--warmup`; before timing, each kernel's steps
// are checked against the whole-sequence entry (relative RMS ≤ 1e-5).
//
//   la-decode-bench [--threads 2] [--steps 400] [--warmup 50] [--batches 1,8] [--widths 64,128] [--json FILE]
//
//===----------------------------------------------------------------------===//

#include "OptionNames.h"
#include "Stats.h"
#include "la/runtime/Decoder.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <thread>

namespace {

using la::bench::median;
using Clock = std::chrono::steady_clock;

struct KernelCase {
  const char *file, *entry;
  /// The sequence dimension: [B, H, T, K] kernels, or AFT's [B, T, d].
  size_t seq = 2;
};
const KernelCase kCases[] = {{"linear_attention.mlir", "linear_attention_causal"},
                             {"flow_attention.mlir", "flow_attention_causal"},
                             {"retention.mlir", "retention"},
                             {"retention.mlir", "simple_gla"},
                             {"retention.mlir", "gla"},
                             {"aft.mlir", "aft_causal", 1}};
const int64_t kHeads = 32, kPrompt = 16;

int fail(const std::string &message) {
  llvm::errs() << "la-decode-bench: " << message << "\n";
  return 1;
}

/// Seconds per copy of `bytes` from one buffer into another on `threads` threads, each copying its share
/// back and forth `rounds` times: the bandwidth a step could reach on a state of that size.
double copySeconds(size_t bytes, unsigned threads, unsigned rounds) {
  std::vector<char> a(bytes, 1), b(bytes, 2);
  std::atomic<unsigned> ready{0};
  std::vector<double> seconds(threads);
  auto copy = [&](unsigned t) {
    size_t begin = bytes * t / threads, end = bytes * (t + 1) / threads;
    ready.fetch_add(1);
    while (ready.load() < threads) {
    }
    auto start = Clock::now();
    for (unsigned r = 0; r < rounds; ++r) {
      if (r % 2)
        std::memcpy(a.data() + begin, b.data() + begin, end - begin);
      else
        std::memcpy(b.data() + begin, a.data() + begin, end - begin);
    }
    seconds[t] = std::chrono::duration<double>(Clock::now() - start).count() / rounds;
  };
  std::vector<std::thread> workers;
  for (unsigned t = 1; t < threads; ++t)
    workers.emplace_back(copy, t);
  copy(0);
  for (std::thread &worker : workers)
    worker.join();
  return *std::max_element(seconds.begin(), seconds.end());
}

struct Inputs {
  std::vector<la::HostTensor> prompt, token;
  std::vector<la::HostTensor> promptOut, tokenOut;
};

/// The entry's arguments for the prompt and for one token, inside their domains, and result buffers.
llvm::Expected<Inputs> makeInputs(la::Runtime &runtime, const la::Program &program, const KernelCase &kernel,
                                  int64_t batch, int64_t width) {
  const char *entry = kernel.entry;
  auto signature = runtime.signature(program, entry);
  if (!signature)
    return signature.takeError();
  Inputs inputs;
  std::mt19937_64 generator(3);
  for (int64_t length : {kPrompt, int64_t(1)}) {
    auto &args = length == kPrompt ? inputs.prompt : inputs.token;
    std::vector<la::TensorSpec> specs;
    for (auto [i, declared] : llvm::enumerate(signature->arguments)) {
      la::TensorSpec spec = declared;
      // [B, H, T, K, ...] or [B, T, H·K].
      llvm::SmallVector<int64_t, 4> sizes = kernel.seq == 1
                                                ? llvm::SmallVector<int64_t, 4>{batch, length, kHeads * width}
                                                : llvm::SmallVector<int64_t, 4>{batch, kHeads, length};
      for (size_t d = 0; d < spec.shape.size(); ++d)
        spec.shape[d] = d < sizes.size() ? sizes[d] : width;
      auto [low, high] = la::samplingInterval(signature->argumentDomains[i]);
      std::uniform_real_distribution<double> uniform(low, high);
      la::HostTensor &tensor = args.emplace_back(spec);
      for (int64_t e = 0; e < tensor.numElements(); ++e)
        tensor.set(e, uniform(generator));
      specs.push_back(spec);
    }
    auto results = runtime.resultSpecs(program, entry, specs);
    if (!results)
      return results.takeError();
    for (const la::TensorSpec &spec : *results)
      (length == kPrompt ? inputs.promptOut : inputs.tokenOut).emplace_back(spec);
  }
  return inputs;
}

std::vector<la::TensorRef> refs(std::vector<la::HostTensor> &tensors) {
  std::vector<la::TensorRef> result;
  for (la::HostTensor &tensor : tensors)
    result.push_back(tensor.ref());
  return result;
}

/// Checks a decoder's step against the whole entry on prompt + one token: relative RMS of the token's output.
llvm::Expected<double> stepError(la::Runtime &runtime, const la::Program &program, const KernelCase &kernel,
                                 la::Decoder &decoder, Inputs &inputs) {
  // Elements before the sequence dimension (the slices) of `spec`.
  auto outerOf = [&](const la::TensorSpec &spec) {
    int64_t outer = 1;
    for (size_t d = 0; d < kernel.seq; ++d)
      outer *= spec.shape[d];
    return outer;
  };
  std::vector<la::HostTensor> joined;
  for (auto [p, t] : llvm::zip(inputs.prompt, inputs.token)) {
    la::TensorSpec spec = p.spec();
    spec.shape[kernel.seq] += 1;
    la::HostTensor &whole = joined.emplace_back(spec);
    int64_t outer = outerOf(spec), inner = p.numElements() / (outer * kPrompt);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t s = 0; s <= kPrompt; ++s)
        for (int64_t i = 0; i < inner; ++i)
          whole.set((o * (kPrompt + 1) + s) * inner + i,
                    s < kPrompt ? p.get((o * kPrompt + s) * inner + i) : t.get(o * inner + i));
  }
  auto expected = runtime.run(program, kernel.entry, refs(joined));
  if (!expected)
    return expected.takeError();
  if (llvm::Error err = decoder.prefill(refs(inputs.prompt), refs(inputs.promptOut)))
    return std::move(err);
  if (llvm::Error err = decoder.step(refs(inputs.token), refs(inputs.tokenOut)))
    return std::move(err);
  const la::HostTensor &want = (*expected)[0], &got = inputs.tokenOut[0];
  int64_t outer = outerOf(want.spec()), inner = got.numElements() / outer;
  double error = 0, norm = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double w = want.get((o * (kPrompt + 1) + kPrompt) * inner + i), g = got.get(o * inner + i);
      error += (g - w) * (g - w);
      norm += w * w;
    }
  return std::sqrt(error / norm);
}

/// Median microseconds of one step over `steps` steps after `warmup`.
llvm::Expected<double> stepMicroseconds(la::Decoder &decoder, Inputs &inputs, unsigned warmup, unsigned steps) {
  if (llvm::Error err = decoder.prefill(refs(inputs.prompt), refs(inputs.promptOut)))
    return std::move(err);
  std::vector<la::TensorRef> in = refs(inputs.token), out = refs(inputs.tokenOut);
  std::vector<double> times;
  for (unsigned s = 0; s < warmup + steps; ++s) {
    auto start = Clock::now();
    if (llvm::Error err = decoder.step(in, out))
      return std::move(err);
    if (s >= warmup)
      times.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  return median(times);
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  la::bench::takeOptionName("threads");
  llvm::cl::OptionCategory category("la-decode-bench options");
  llvm::cl::opt<unsigned> threadsFlag("threads", llvm::cl::desc("Runtime threads [2]"), llvm::cl::init(2),
                                      llvm::cl::cat(category));
  llvm::cl::opt<unsigned> stepsFlag("steps", llvm::cl::desc("Timed steps per configuration [400]"), llvm::cl::init(400),
                                    llvm::cl::cat(category));
  llvm::cl::opt<unsigned> warmupFlag("warmup", llvm::cl::desc("Untimed steps first [50]"), llvm::cl::init(50),
                                     llvm::cl::cat(category));
  llvm::cl::list<int64_t> batchesFlag("batches", llvm::cl::desc("Batch sizes [1,8]"), llvm::cl::CommaSeparated,
                                      llvm::cl::cat(category));
  llvm::cl::list<int64_t> widthsFlag("widths", llvm::cl::desc("Key = value widths [64,128]"), llvm::cl::CommaSeparated,
                                     llvm::cl::cat(category));
  llvm::cl::list<std::string> onlyFlag("only", llvm::cl::desc("Entries to run [all]"), llvm::cl::CommaSeparated,
                                       llvm::cl::cat(category));
  llvm::cl::opt<std::string> jsonFlag("json", llvm::cl::desc("Write the results as JSON to this file"),
                                      llvm::cl::cat(category));
  llvm::cl::HideUnrelatedOptions(category);
  if (!llvm::cl::ParseCommandLineOptions(argc, argv, "one decode step against the memory bound\n", &llvm::errs()))
    return 1;
  const unsigned threads = threadsFlag, steps = stepsFlag, warmup = warmupFlag;
  if (threads < 1 || steps < 1)
    return fail("--threads and --steps must be positive");
  std::vector<int64_t> batches(batchesFlag.begin(), batchesFlag.end()), widths(widthsFlag.begin(), widthsFlag.end());
  if (batches.empty())
    batches = {1, 8};
  if (widths.empty())
    widths = {64, 128};

  la::RuntimeOptions options;
  options.cacheDir = "none";
  options.numThreads = threads;
  auto runtime = la::Runtime::create(options);
  if (!runtime)
    return fail(llvm::toString(runtime.takeError()));

  llvm::outs() << llvm::formatv("One decode step, H = {0}, {1} thread(s), medians of {2} steps; bound = the states "
                                "read and written once at the copy bandwidth of state-sized buffers\n",
                                kHeads, threads, steps);
  llvm::outs() << llvm::formatv("{0,-24} {1,3} {2,4} {3,10} {4,9} {5,9} {6,8} {7,9} {8,9}\n", "entry", "B", "K=V",
                                "state KiB", "step us", "bound us", "ratio", "GB/s", "K=V=4 us");
  llvm::json::Array rows;
  for (const KernelCase &kernel : kCases) {
    if (!onlyFlag.empty() && llvm::find(onlyFlag, kernel.entry) == onlyFlag.end())
      continue;
    auto program = (*runtime)->loadFile(std::string(LA_KERNELS_DIR) + "/" + kernel.file);
    if (!program)
      return fail(llvm::toString(program.takeError()));
    auto decoder = la::Decoder::create(**runtime, **program, kernel.entry);
    if (!decoder)
      return fail(llvm::toString(decoder.takeError()));
    for (int64_t batch : batches) {
      // An upper bound on the runtime's own cost: the same step where the kernel has (almost) nothing to do.
      auto tiny = makeInputs(**runtime, **program, kernel, batch, 4);
      if (!tiny)
        return fail(llvm::toString(tiny.takeError()));
      auto runtimeUs = stepMicroseconds(**decoder, *tiny, warmup, steps);
      if (!runtimeUs)
        return fail(llvm::toString(runtimeUs.takeError()));
      for (int64_t width : widths) {
        auto inputs = makeInputs(**runtime, **program, kernel, batch, width);
        if (!inputs)
          return fail(llvm::toString(inputs.takeError()));
        auto error = stepError(**runtime, **program, kernel, **decoder, *inputs);
        if (!error)
          return fail(llvm::toString(error.takeError()));
        if (!(*error <= 1e-5))
          return fail(llvm::formatv("{0} B={1} K=V={2}: a step differs from the whole entry (relative RMS {3:e})",
                                    kernel.entry, batch, width, *error)
                          .str());
        auto us = stepMicroseconds(**decoder, *inputs, warmup, steps);
        if (!us)
          return fail(llvm::toString(us.takeError()));
        size_t stateBytes = 0;
        for (const la::HostTensor &state : (*decoder)->state())
          stateBytes += state.numBytes();
        double boundUs = copySeconds(stateBytes, threads, 200) * 1e6;
        double gbPerS = 2.0 * stateBytes / (boundUs * 1e-6) / 1e9;
        llvm::outs() << llvm::formatv("{0,-24} {1,3} {2,4} {3,10:F0} {4,9:F1} {5,9:F1} {6,8:F2} {7,9:F0} {8,9:F1}\n",
                                      kernel.entry, batch, width, stateBytes / 1024.0, *us, boundUs, *us / boundUs,
                                      gbPerS, *runtimeUs);
        rows.push_back(llvm::json::Object{{"entry", kernel.entry},
                                          {"batch", batch},
                                          {"heads", kHeads},
                                          {"width", width},
                                          {"state_bytes", static_cast<int64_t>(stateBytes)},
                                          {"step_us", *us},
                                          {"bound_us", boundUs},
                                          {"ratio", *us / boundUs},
                                          {"copy_gb_per_s", gbPerS},
                                          {"tiny_step_us", *runtimeUs},
                                          {"relative_rms", *error}});
      }
    }
  }
  if (!jsonFlag.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream out(jsonFlag, ec);
    if (ec)
      return fail(jsonFlag + ": " + ec.message());
    out << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                      {"threads", threads}, {"steps", steps}, {"rows", std::move(rows)}}))
        << "\n";
  }
  return 0;
}
