//===- Roofline.h - This machine's roofline and per-kernel costs -*- C++ -*-===//
//
// The lower-bound time of a kernel on this machine: max(bytes / bandwidth, flops / peak). Bandwidth and peak
// are measured in the same process as the kernels (a STREAM-triad-like sweep and a register-resident FMA
// loop), so the bound reflects the machine the figures were taken on, including whatever else shares it.
// `KernelCost` gives the compulsory bytes and the minimal arithmetic of each linear-attention kernel.
//
// No MLIR or LLVM dependency: this file is part of the `LABenchSupport` library.
//
//===----------------------------------------------------------------------===//
#ifndef LA_BENCH_ROOFLINE_H
#define LA_BENCH_ROOFLINE_H

#include <cstdint>
#include <string>

namespace la::bench {

/// Sustained main-memory bandwidth in GB/s (1e9 bytes/s) over `threads` threads: a triad a = b + s*c over
/// three arrays far larger than the last-level cache, best of several repetitions. Bytes are counted the
/// STREAM way (two reads and one write per element, no write-allocate traffic).
double measureBandwidthGBs(unsigned threads);

/// Peak fp32 arithmetic in GFLOP/s over `threads` threads: independent fused multiply-add chains held in
/// vector registers (AVX-512, else AVX2+FMA, else scalar), one FMA counted as 2 flops, best of several reps.
double measurePeakGflops(unsigned threads);

/// The roofline lower bound in milliseconds: max(bytes / bandwidth, flops / peak).
double rooflineMs(double bytes, double flops, double bandwidthGBs, double peakGflops);

/// The kernels the benchmark knows, named like the `func.func` entries in `kernels/`.
enum class KernelKind { FlowNormal, FlowCausal, LinearNormal, LinearCausal };

/// "flow_attention", "flow_attention_causal", "linear_attention", "linear_attention_causal".
const char *kernelEntryName(KernelKind kind);
/// True for the causal forms (N = M).
bool isCausal(KernelKind kind);

/// Problem shape: q [B,H,N,D], k [B,H,M,D], v [B,H,M,Dv], output [B,H,N,Dv]. The benchmark uses M = N.
struct Shape {
  int64_t b = 2, h = 8, n = 1024, m = 1024, d = 64, dv = 64;
  int64_t slices() const { return b * h; }
};

/// Compulsory memory traffic and minimal arithmetic of one kernel call.
struct KernelCost {
  /// Read q, k and v once and write the output once, 4-byte floats. Intermediates are not counted: a fused
  /// kernel keeps them in cache or registers, so anything above this is the kernel's own overhead.
  double bytes = 0;
  /// Flops of the linear (state) form, multiply-add counted as 2; see `kernelCost` for what is counted.
  double flops = 0;
};

/// The cost model of `kind` at `shape`.
KernelCost kernelCost(KernelKind kind, const Shape &shape);

} // namespace la::bench

#endif // LA_BENCH_ROOFLINE_H
