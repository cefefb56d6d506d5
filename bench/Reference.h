//===- Reference.h - Unfused eager-style flow/linear baselines -*- C++ -*-===//
//
// What the generated flow/linear kernels are timed against: `runReference`, the SPEC.md §1-§2 formulas run
// the way an eager framework (PyTorch) runs the official code: one parallel loop nest per tensor op, every
// intermediate materialised as a full tensor in freshly allocated memory, the causal forms building the
// [B,H,N,D,Dv] cumsum of k ⊗ v exactly like thuml/Flowformer's `Flow_Attention_Causal.causal_dot_product`.
// Float32, like the kernels. Each op spreads the B*H slices over a persistent thread pool, as an eager
// framework's intra-op pool would, so the comparison runs on the same number of threads as the kernels.
// It is a baseline, not an oracle: the fp64 checks are OracleCheck.h's.
//
// No MLIR or LLVM dependency: this file is part of the `LABenchSupport` library.
//
//===----------------------------------------------------------------------===//
#ifndef LA_BENCH_REFERENCE_H
#define LA_BENCH_REFERENCE_H

#include "Roofline.h"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace la::bench {

/// A fork/join pool with a fixed number of threads (the caller's included). `parallelFor(n, body)` splits
/// [0, n) into one contiguous block per thread and returns when all blocks are done.
class ThreadPool {
public:
  explicit ThreadPool(unsigned threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  unsigned size() const { return numThreads; }
  void parallelFor(int64_t n, const std::function<void(int64_t begin, int64_t end)> &body);

private:
  void workerLoop(unsigned index);

  unsigned numThreads;
  std::vector<std::thread> workers;
  std::mutex mutex;
  std::condition_variable wake, done;
  const std::function<void(int64_t, int64_t)> *task = nullptr;
  int64_t taskSize = 0;
  uint64_t generation = 0;
  unsigned pending = 0;
  bool stopping = false;
};

/// Kernel parameters with the SPEC defaults.
struct ReferenceParams {
  float eps = 1e-6f;
  float clampLow = -1.0f, clampHigh = 1.0f;
};

/// Bytes of the largest single tensor the unfused reference materialises: the [B,H,N,D,Dv] outer-product
/// cumsum for the causal forms, a [B,H,N,max(D,Dv)] tensor otherwise.
double referenceLargestTensorBytes(KernelKind kind, const Shape &shape);
/// About the most memory the unfused reference holds at once (the causal forms keep k ⊗ v and its cumsum
/// alive together, as eager `kv = torch.cumsum(kv, dim=2)` does).
double referencePeakBytes(KernelKind kind, const Shape &shape);

/// How the unfused reference allocates its intermediates.
enum class ReferenceMemory {
  /// Freed intermediates are kept and reused by later calls (a caching allocator): after a warm-up call the
  /// time is the ops and their memory traffic, not the OS mapping fresh pages. The default, because it is
  /// the faster baseline, so a speedup over it is not inflated by page faults.
  Cached,
  /// Every intermediate is fresh memory from the C library (what PyTorch's default CPU allocator does):
  /// large tensors are mapped anew on every call and page-faulted in by the op that writes them.
  Fresh,
};

/// Runs the unfused reference of `kind`: q [B,H,N,D], k [B,H,M,D], v [B,H,M,Dv] -> out [B,H,N,Dv].
/// Not reentrant: run one reference call at a time.
void runReference(KernelKind kind, const Shape &shape, const float *q, const float *k, const float *v,
                  float *out, ThreadPool &pool, ReferenceMemory memory = ReferenceMemory::Cached,
                  const ReferenceParams &params = {});

/// Frees the blocks `ReferenceMemory::Cached` keeps (call it between problem sizes).
void releaseReferenceMemory();

/// Relative RMS error ‖x − y‖₂ / ‖y‖₂ of `x` against `y` (accumulated in double); NaN anywhere gives NaN.
double relativeRms(const float *x, const float *y, size_t count);

} // namespace la::bench

#endif // LA_BENCH_REFERENCE_H
