//===- Launch.h - Run a GPU kernel on the CPU emulator --------------------===//
//
// launch() runs a kernel over a grid of blocks: each CUDA thread of a block is a fiber (boost.context) on one
// OS thread, scheduled cooperatively at barriers, warp collectives, atomics and fences; blocks run in
// parallel on a thread pool. The kernel is a host function that calls the C ABI of la/emulator/ABI.h (for
// the thread ids, barriers, collectives and every checked memory access). See docs/gpu-emulator.md.
//
//===----------------------------------------------------------------------===//
#ifndef LA_EMULATOR_LAUNCH_H
#define LA_EMULATOR_LAUNCH_H

#include "la/emulator/LaunchReport.h"

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace la::emu {

/// A global-memory buffer the kernel may access; accesses outside every buffer are out of bounds.
struct Buffer {
  std::string name;
  void *data = nullptr;
  size_t bytes = 0;
};

/// The body of every CUDA thread. Called concurrently from several OS threads (one per block in flight).
using Kernel = std::function<void()>;

struct LaunchConfig {
  Dim3 grid, block;
  /// Bytes of the per-block shared-memory arena (offsets 0..sharedBytes-1).
  uint32_t sharedBytes = 0;
  std::vector<Buffer> buffers;
  /// Sets the order in which a block's runnable threads are resumed (0: thread order, round robin), so an
  /// order-dependent result can be reproduced.
  uint64_t seed = 0;
  /// OS threads running blocks (0: one per hardware thread).
  unsigned numThreads = 0;
  /// Bytes of each fiber's stack.
  size_t stackBytes = 256 * 1024;
};

/// Runs the kernel on every thread of the grid. Fails only for an invalid configuration; what the kernel did
/// wrong is in the report's findings (report.takeError()).
llvm::Expected<LaunchReport> launch(const Kernel &kernel, const LaunchConfig &config);

} // namespace la::emu

#endif // LA_EMULATOR_LAUNCH_H
