//===- Launch.cpp - Blocks on a thread pool, findings and counters merged -===//
#include "la/emulator/Launch.h"

#include "Block.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"

#include <algorithm>
#include <mutex>

using namespace la::emu;

static llvm::Error invalid(const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "GPU emulator launch: " + why);
}

llvm::Expected<LaunchReport> la::emu::launch(const Kernel &kernel, const LaunchConfig &config) {
  if (!kernel)
    return invalid("no kernel");
  if (config.grid.count() == 0 || config.block.count() == 0)
    return invalid("empty grid or block");
  if (config.block.count() > 1024)
    return invalid(llvm::formatv("{0} threads per block; a block has at most 1024", config.block.count()));
  if (config.stackBytes < 16 * 1024)
    return invalid("fiber stacks need at least 16 KiB");

  LaunchContext context{kernel, config, config.buffers};
  llvm::sort(context.buffers, [](const Buffer &a, const Buffer &b) { return a.data < b.data; });

  LaunchReport report;
  report.seed = config.seed;
  std::mutex mutex;
  FindingSink findings;
  // Findings reach the report in block order whatever order the pool ran the blocks in.
  std::vector<FindingSink> perBlock(config.grid.count());
  auto runBlock = [&](uint64_t linear) {
    Dim3 id{uint32_t(linear % config.grid.x), uint32_t(linear / config.grid.x % config.grid.y),
            uint32_t(linear / (uint64_t(config.grid.x) * config.grid.y))};
    // Each block draws its own schedule from the seed, so a block's order does not depend on the pool's.
    uint64_t seed = config.seed ? config.seed * 0x9e3779b97f4a7c15ull + linear : 0;
    Block block(context, id, seed);
    block.run();
    std::lock_guard<std::mutex> lock(mutex);
    perBlock[linear] = std::move(block.findings);
    report.counters += block.counters;
  };
  uint64_t blocks = config.grid.count();
  if (config.numThreads == 1 || blocks == 1) {
    for (uint64_t b = 0; b < blocks; ++b)
      runBlock(b);
  } else {
    llvm::StdThreadPool pool(llvm::hardware_concurrency(config.numThreads));
    for (uint64_t b = 0; b < blocks; ++b)
      pool.async([&, b] { runBlock(b); });
    pool.wait();
  }
  for (FindingSink &sink : perBlock)
    findings.merge(std::move(sink));
  report.findings = findings.take();
  return report;
}
