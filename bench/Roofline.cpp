//===- Roofline.cpp - Bandwidth and peak-FLOP microbenchmarks, cost model -===//
//
// Compiled with -march=native (see bench/CMakeLists.txt) so that the peak loop uses the widest FMA this
// machine has; the intrinsics are chosen by the __AVX512F__ / __AVX2__ macros that flag defines.
//
//===----------------------------------------------------------------------===//
#include "Roofline.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

using namespace la::bench;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

/// Runs `body(threadIndex)` on `threads` threads (the caller's thread is one of them) and returns the wall
/// time of the slowest, measured from a common start.
template <typename Fn> double timeOnThreads(unsigned threads, Fn body) {
  std::vector<std::thread> workers;
  workers.reserve(threads);
  auto start = Clock::now();
  for (unsigned t = 1; t < threads; ++t)
    workers.emplace_back(body, t);
  body(0u);
  for (std::thread &worker : workers)
    worker.join();
  return secondsSince(start);
}

/// 64-byte aligned float storage that is not touched on allocation, so that each thread can first-touch
/// its own part (its pages then live on that thread's memory node on a NUMA machine).
struct AlignedFloats {
  explicit AlignedFloats(size_t count)
      : data(static_cast<float *>(std::aligned_alloc(64, (count * sizeof(float) + 63) / 64 * 64))), count(count) {}
  ~AlignedFloats() { std::free(data); }
  AlignedFloats(const AlignedFloats &) = delete;
  AlignedFloats &operator=(const AlignedFloats &) = delete;
  float *data;
  size_t count;
};

} // namespace

double la::bench::measureBandwidthGBs(unsigned threads) {
  threads = std::max(1u, threads);
  // 3 x 64 MiB: twice the 32 MiB L3 of this EPYC per array, so every repetition streams from DRAM.
  constexpr size_t kCount = size_t(64) << 20 >> 2;
  constexpr int kReps = 7;
  AlignedFloats a(kCount), b(kCount), c(kCount);
  auto range = [&](unsigned t) {
    size_t per = (kCount + threads - 1) / threads;
    size_t begin = std::min(kCount, per * t);
    return std::make_pair(begin, std::min(kCount, begin + per));
  };
  // First touch by the thread that will stream the range later.
  timeOnThreads(threads, [&](unsigned t) {
    auto [begin, end] = range(t);
    for (size_t i = begin; i < end; ++i) {
      a.data[i] = 0.0f;
      b.data[i] = 1.0f;
      c.data[i] = 2.0f;
    }
  });
  float scalar = 3.0f;
  double best = 0;
  for (int rep = 0; rep < kReps; ++rep) {
    double seconds = timeOnThreads(threads, [&](unsigned t) {
      auto [begin, end] = range(t);
      float *__restrict out = a.data;
      const float *__restrict x = b.data;
      const float *__restrict y = c.data;
      const float s = scalar; // a local, so the loop does not reload it through the reference
      for (size_t i = begin; i < end; ++i)
        out[i] = x[i] + s * y[i];
    });
    // Best, not median: the roofline is a lower bound, so it takes the most the machine delivered.
    best = std::max(best, 3.0 * kCount * sizeof(float) / seconds / 1e9);
    // Feed the result back so the sweeps cannot be merged or dropped.
    scalar = a.data[rep * 4099 % kCount] > 0 ? 3.0f : 2.5f;
  }
  return best;
}

namespace {

/// One thread's FMA loop: `iterations` rounds of kChains independent multiply-adds, returns flops done.
/// acc = acc * m + c with m just below 1 converges to c / (1 - m) without denormals or overflow.
double fmaLoop(long iterations, float *sink) {
#if defined(__AVX512F__)
  constexpr int kChains = 16; // 16 of the 32 zmm registers: enough to cover latency x pipes on Zen 4/5.
  constexpr int kLanes = 16;
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i)
    acc[i] = _mm512_set1_ps(1.0f + 0.01f * i);
  const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  for (long it = 0; it < iterations; ++it)
    for (int i = 0; i < kChains; ++i)
      acc[i] = _mm512_fmadd_ps(acc[i], m, c);
  __m512 total = acc[0];
  for (int i = 1; i < kChains; ++i)
    total = _mm512_add_ps(total, acc[i]);
  // Through memory rather than _mm512_reduce_add_ps, which trips a false -Wuninitialized in GCC 12.
  float lanes[16];
  _mm512_storeu_ps(lanes, total);
  for (float lane : lanes)
    *sink += lane;
#elif defined(__AVX2__) && defined(__FMA__)
  constexpr int kChains = 12; // 12 of the 16 ymm registers, two more hold the constants.
  constexpr int kLanes = 8;
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i)
    acc[i] = _mm256_set1_ps(1.0f + 0.01f * i);
  const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  for (long it = 0; it < iterations; ++it)
    for (int i = 0; i < kChains; ++i)
      acc[i] = _mm256_fmadd_ps(acc[i], m, c);
  __m256 total = acc[0];
  for (int i = 1; i < kChains; ++i)
    total = _mm256_add_ps(total, acc[i]);
  float lanes[8];
  _mm256_storeu_ps(lanes, total);
  for (float lane : lanes)
    *sink += lane;
#else
  // Scalar fallback: the compiler may vectorise it; either way it is what this build can reach.
  constexpr int kChains = 16;
  constexpr int kLanes = 1;
  float acc[kChains];
  for (int i = 0; i < kChains; ++i)
    acc[i] = 1.0f + 0.01f * i;
  for (long it = 0; it < iterations; ++it)
    for (int i = 0; i < kChains; ++i)
      acc[i] = acc[i] * 0.999999f + 1e-7f;
  for (float value : acc)
    *sink += value;
#endif
  return 2.0 * kChains * kLanes * static_cast<double>(iterations);
}

} // namespace

double la::bench::measurePeakGflops(unsigned threads) {
  threads = std::max(1u, threads);
  constexpr long kIterations = 20'000'000; // ~0.1 s per thread at 100+ GFLOP/s per core.
  constexpr int kReps = 3;
  std::vector<float> sinks(threads * 16, 0.0f); // one cache line apart: no false sharing.
  std::vector<double> flops(threads, 0.0);
  double best = 0;
  for (int rep = 0; rep < kReps; ++rep) {
    double seconds = timeOnThreads(threads, [&](unsigned t) { flops[t] = fmaLoop(kIterations, &sinks[t * 16]); });
    double total = 0;
    for (double f : flops)
      total += f;
    best = std::max(best, total / seconds / 1e9);
  }
  volatile float keep = sinks[0]; // the results are observable, so the loops stay.
  (void)keep;
  return best;
}

double la::bench::rooflineMs(double bytes, double flops, double bandwidthGBs, double peakGflops) {
  // bytes / (GB/s * 1e9) seconds = bytes / GB/s / 1e6 milliseconds; likewise for flops.
  return std::max(bytes / bandwidthGBs / 1e6, flops / peakGflops / 1e6);
}

const char *la::bench::kernelEntryName(KernelKind kind) {
  switch (kind) {
  case KernelKind::FlowNormal:
    return "flow_attention";
  case KernelKind::FlowCausal:
    return "flow_attention_causal";
  case KernelKind::LinearNormal:
    return "linear_attention";
  case KernelKind::LinearCausal:
    return "linear_attention_causal";
  }
  return "?";
}

bool la::bench::isCausal(KernelKind kind) { return kind == KernelKind::FlowCausal || kind == KernelKind::LinearCausal; }

// Counting rules, per (b, h) slice, N queries and M keys (M = N for the causal forms):
// - a multiply-add is 2 flops; any other elementwise operation (add, mul, div, reciprocal, clamp, exp,
//   sigmoid, elu+1) is 1 flop per element. Counting a transcendental as 1 keeps the model a lower bound.
// - `+ eps` on a whole [N, D] operand is not counted: (q + eps)·s = q·s + eps·Σs, so it is not needed.
// - the causal forms are counted in their recurrent form (state update 2·D·Dv and read-out 2·D·Dv per
//   position), the least arithmetic of any linear form; a chunked kernel does more (the intra-chunk
//   products), which is why its target is 2x rather than 1.5x.
KernelCost la::bench::kernelCost(KernelKind kind, const Shape &s) {
  double n = s.n, m = s.m, d = s.d, dv = s.dv;
  double perSlice = 0;
  switch (kind) {
  case KernelKind::FlowNormal:
    perSlice = 2 * m * d * dv    // Σ_j k_j ⊗ (V_j comp_j)
               + 2 * n * d * dv  // q_i · S
               + 8 * n * d       // σ(q), Σ_i q_i, (q_i+eps)·(sk+eps), Σ_i q_i a_i, Î_i dot
               + 8 * m * d       // the same five for k on the source side
               + m * dv + n * dv // V_j comp_j, the final row scale
               + 4 * n           // a = 1/I, ·N/M, σ (alloc), alloc·a
               + 6 * m;          // b = 1/O, clamp, exp, Σ exp, divide, ·M (softmax times M)
    break;
  case KernelKind::FlowCausal:
    perSlice = 2 * n * d * dv   // S_t = S_{t-1} + k_t ⊗ (V_t comp_t)
               + 2 * n * d * dv // q_t · S_t
               + 16 * n * d     // σ(q), σ(k), Cq, Ck, the a/b dots (2), q a, k b, their prefix sums (2),
                                // the Î/Ô dots (2), each 1 or 2 flops per element as above
               + 2 * n * dv     // V_t comp_t, the final row scale
               + 14 * n;        // ·n_t and reciprocal (a, b), /n_t (Î, Ô), clamp, σ, exp, Σ e, divide,
                                // ·n_t (comp), a/n_t, ·alloc
    break;
  case KernelKind::LinearNormal:
    perSlice = 2 * m * d * dv   // S = Σ_j φ(K_j) ⊗ V_j
               + 2 * n * d * dv // φ(Q_i) S
               + n * d + m * d  // φ = elu+1 on q and k
               + m * d          // z = Σ_j φ(K_j)
               + 2 * n * d      // φ(Q_i)·z
               + n * dv + n;    // divide by (den + eps)
    break;
  case KernelKind::LinearCausal:
    perSlice = 4 * n * d * dv // state update and read-out, as for flow causal
               + 2 * n * d    // φ on q and k
               + n * d        // z_t = z_{t-1} + φ(K_t)
               + 2 * n * d    // φ(Q_t)·z_t
               + n * dv + n;  // divide by (den + eps)
    break;
  }
  KernelCost cost;
  cost.flops = perSlice * s.slices();
  cost.bytes = 4.0 * s.slices() * (s.n * s.d + s.m * s.d + s.m * s.dv + s.n * s.dv);
  return cost;
}
