//===- flow_demo.cpp - the main job: Flow-Attention compiled and run on the CPU -===//
//
// Compiles @flow_attention (and optionally @flow_attention_causal) from kernels/flow_attention.mlir through
// the runtime, runs it on seeded random inputs, checks the output against the fp64 quadratic oracle of
// SPEC §7, and prints the median time. `scripts/demo` runs this.
//
//   la-flow-demo [--causal] [B H N D] [KERNELS_DIR]
//
//===----------------------------------------------------------------------===//

#include "Oracles.h"

#include "la/runtime/Runtime.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

int main(int argc, char **argv) {
  bool causal = false;
  std::vector<int64_t> sizes;
  std::string kernels = LA_KERNELS_DIR;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--causal"))
      causal = true;
    else if (argv[i][0] >= '0' && argv[i][0] <= '9')
      sizes.push_back(std::atoll(argv[i]));
    else
      kernels = argv[i];
  }
  if (sizes.empty())
    sizes = {2, 8, 1024, 64};
  if (sizes.size() != 4) {
    llvm::errs() << "usage: la-flow-demo [--causal] [B H N D] [KERNELS_DIR]\n";
    return 2;
  }
  la::oracle::AttnDims dims{sizes[0], sizes[1], sizes[2], sizes[2], sizes[3], sizes[3]};
  const char *entry = causal ? "flow_attention_causal" : "flow_attention";

  std::vector<float> q = la::oracle::uniform(dims.qSize(), 1, -1, 1);
  std::vector<float> k = la::oracle::uniform(dims.kSize(), 2, -1, 1);
  std::vector<float> v = la::oracle::uniform(dims.vSize(), 3, -1, 1);
  std::vector<float> out(dims.outSize());
  auto spec = [&](int64_t last) {
    la::TensorSpec s;
    s.shape = {dims.batch, dims.heads, dims.n, last};
    return s;
  };
  std::vector<la::TensorRef> inputs = {{q.data(), spec(dims.d)}, {k.data(), spec(dims.d)}, {v.data(), spec(dims.dv)}};
  std::vector<la::TensorRef> outputs = {{out.data(), spec(dims.dv)}};

  auto fail = [](llvm::Error err) {
    llvm::errs() << "la-flow-demo: " << llvm::toString(std::move(err)) << "\n";
    return 1;
  };
  auto runtime = la::Runtime::create();
  if (!runtime)
    return fail(runtime.takeError());
  auto program = (*runtime)->loadFile(kernels + "/flow_attention.mlir");
  if (!program)
    return fail(program.takeError());
  la::CallStats stats;
  if (llvm::Error err = (*runtime)->call(**program, entry, inputs, outputs, &stats))
    return fail(std::move(err));
  llvm::outs() << llvm::formatv("{0} at B={1} H={2} N={3} D={4}: kernel {5} in {6:f1} ms\n", entry, dims.batch,
                                dims.heads, dims.n, dims.d, la::cacheSourceName(stats.cache), stats.compileMs);

  std::vector<double> times;
  for (int r = 0; r < 10; ++r) {
    auto start = std::chrono::steady_clock::now();
    if (llvm::Error err = (*runtime)->call(**program, entry, inputs, outputs))
      return fail(std::move(err));
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  llvm::outs() << llvm::formatv("time: median {0:f2} ms, min {1:f2} ms over 10 runs, {2} threads\n",
                                (times[4] + times[5]) / 2, times[0], (*runtime)->options().numThreads);

  std::vector<double> reference = la::oracle::flowAttention(dims, q.data(), k.data(), v.data(), causal);
  la::oracle::ErrorStats error = la::oracle::compare(reference.data(), out.data(), dims.outSize());
  double tolerance = dims.n <= 256 ? 1e-5 : 1e-4; // SPEC §7, fp32
  llvm::outs() << llvm::formatv("fp64 oracle (SPEC §7): relative RMS error {0:e2}, max abs error {1:e2} -> {2}\n",
                                error.relRms, error.maxAbs, error.relRms <= tolerance ? "ok" : "FAILED");
  return error.relRms <= tolerance ? 0 : 1;
}
