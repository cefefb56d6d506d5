//===- Reference.h - Unfused eager-style flow/linear baselines -*- C++ -*-===//
//
// What the generated flow/linear kernels are timed against: `runReference`, the SPEC.md §1-§2 formulas run
// the way an eager framework (PyTorch) runs the official code: one parallel loop nest per tensor op, every
// intermediate materialised as a full tensor in freshly allocated memory, the causal forms building the
// [B,H,N,D,Dv] cumsum of k ⊗ v exactly like thuml/Flowformer's `Flow_Attention_Causal.causal_dot_product`.
// Float32, like the kernels. Each op spreads the B*H slices over a persistent thread pool, as an eager
// framework's intra-op pool would (ForkJoinPool.h), so the comparison runs on the same number of threads as
// the kernels. It is a baseline, not an oracle: the fp64 checks are OracleCheck.h's.
//
// No MLIR dependency (LLVM only for ForkJoinPool.h's threads): this file is part of the `LABenchSupport`
// library.
//
//===----------------------------------------------------------------------===//
#ifndef LA_BENCH_REFERENCE_H
#define LA_BENCH_REFERENCE_H

#include "ForkJoinPool.h"
#include "Roofline.h"

#include <cstddef>
#include <cstdint>

namespace la::bench {

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
void runReference(KernelKind kind, const Shape &shape, const float *q, const float *k, const float *v, float *out,
                  ForkJoinPool &pool, ReferenceMemory memory = ReferenceMemory::Cached,
                  const ReferenceParams &params = {});

/// Frees the blocks `ReferenceMemory::Cached` keeps (call it between problem sizes).
void releaseReferenceMemory();

/// Relative RMS error ‖x − y‖₂ / ‖y‖₂ of `x` against `y` (accumulated in double); NaN anywhere gives NaN.
double relativeRms(const float *x, const float *y, size_t count);

} // namespace la::bench

#endif // LA_BENCH_REFERENCE_H
