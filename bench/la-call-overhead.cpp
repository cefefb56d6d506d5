//===- la-call-overhead.cpp - what a memory-cache hit adds to a call ------===//
//
// Times `Runtime::call` on a kernel that is already in the memory cache, at a shape so small (B=H=1, N=1,
// D=Dv=4) that the kernel itself takes well under a microsecond: the per-call time is then the runtime's
// own cost (cache key, lookup, argument checks, slicing, dispatch). It also prints the lookup alone, as the
// runtime reports it in CallStats::compileMs. Medians of batches of calls; a benchmark, not a test.
//
//   la-call-overhead [--calls 2000] [--batches 25] [--threads 1]
//
//===----------------------------------------------------------------------===//

#include "OptionNames.h"
#include "Stats.h"
#include "la/runtime/Runtime.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using la::bench::median;
using Clock = std::chrono::steady_clock;

int fail(const std::string &message) {
  llvm::errs() << "la-call-overhead: " << message << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  la::bench::takeOptionName("threads");
  llvm::cl::OptionCategory category("la-call-overhead options");
  llvm::cl::opt<unsigned> callsFlag("calls", llvm::cl::desc("Calls per batch [2000]"), llvm::cl::init(2000),
                                    llvm::cl::cat(category));
  llvm::cl::opt<unsigned> batchesFlag("batches", llvm::cl::desc("Batches, the median of which is printed [25]"),
                                      llvm::cl::init(25), llvm::cl::cat(category));
  llvm::cl::opt<unsigned> threadsFlag("threads", llvm::cl::desc("Runtime threads [1]"), llvm::cl::init(1),
                                      llvm::cl::cat(category));
  llvm::cl::HideUnrelatedOptions(category);
  if (!llvm::cl::ParseCommandLineOptions(argc, argv, "what a memory-cache hit adds to a runtime call\n", &llvm::errs()))
    return 1;
  const unsigned calls = callsFlag, batches = batchesFlag, threads = threadsFlag;
  if (calls < 1 || batches < 1 || threads < 1)
    return fail("--calls, --batches and --threads must be positive");

  la::RuntimeOptions options;
  options.cacheDir = "none";
  options.numThreads = threads;
  auto runtime = la::Runtime::create(options);
  if (!runtime)
    return fail(llvm::toString(runtime.takeError()));
  auto program = (*runtime)->loadFile(std::string(LA_KERNELS_DIR) + "/linear_attention.mlir");
  if (!program)
    return fail(llvm::toString(program.takeError()));

  std::vector<float> q(4, 0.5f), k(4, 0.25f), v(4, 1.0f), out(4);
  la::TensorSpec spec;
  spec.shape = {1, 1, 1, 4};
  std::vector<la::TensorRef> inputs = {{q.data(), spec}, {k.data(), spec}, {v.data(), spec}};
  std::vector<la::TensorRef> outputs = {{out.data(), spec}};
  la::CallStats first;
  if (llvm::Error error = (*runtime)->call(**program, "linear_attention", inputs, outputs, &first))
    return fail(llvm::toString(std::move(error)));

  std::vector<double> perCallUs, lookupUs;
  for (unsigned batch = 0; batch < batches; ++batch) {
    double lookupMs = 0;
    auto start = Clock::now();
    for (unsigned call = 0; call < calls; ++call) {
      la::CallStats stats;
      if (llvm::Error error = (*runtime)->call(**program, "linear_attention", inputs, outputs, &stats))
        return fail(llvm::toString(std::move(error)));
      if (stats.cache != la::CacheSource::Memory)
        return fail("a repeated call missed the memory cache");
      lookupMs += stats.compileMs;
    }
    double totalUs = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    perCallUs.push_back(totalUs / calls);
    lookupUs.push_back(lookupMs * 1e3 / calls);
  }
  llvm::outs() << llvm::formatv("linear_attention at B=H=N=1, D=Dv=4, {0} thread(s), medians of {1} batches of "
                                "{2} calls:\n",
                                threads, batches, calls)
               << llvm::formatv("  first call (compile):        {0:F1} ms\n", first.compileMs)
               << llvm::formatv("  memory-cache lookup:         {0:F3} us\n", median(lookupUs))
               << llvm::formatv("  whole call, kernel included: {0:F3} us\n", median(perCallUs));
  return 0;
}
