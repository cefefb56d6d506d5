//===- LibraryCost.cpp - Roofline cost model of the AFT, GAU/FLASH and decay kernels ----===//
//
// Counting rules, as for flow/linear attention in Roofline.cpp: a multiply-add is 2 flops; any other
// elementwise operation (add, max, mul, div, exp, expm1, sigmoid) is 1 flop per element, a transcendental
// included, which keeps the model a lower bound. Bytes are the inputs read once and the output written once
// (4-byte floats); intermediates are not counted. Where a kernel receives more than the minimal algorithm
// needs (aft_local's whole [T, T] bias of which only the band is used), only what is needed is counted.
// aft_conv's conv taps that fall in the zero padding are not counted either.
//
//===----------------------------------------------------------------------===//
#include "LibraryCost.h"

#include <algorithm>

using namespace la::bench;

namespace {

/// Σ over the chunks of [0, t) of the number of (query, key) pairs a chunk-local product visits: c² per full
/// chunk, or c(c+1)/2 with the causal (diagonal included) mask.
double chunkPairs(int64_t t, int64_t chunk, bool causal) {
  double pairs = 0;
  for (int64_t start = 0; start < t; start += chunk) {
    double c = double(std::min(chunk, t - start));
    pairs += causal ? c * (c + 1) / 2 : c * c;
  }
  return pairs;
}

/// Number of (t, t') with |t − t'| < window, both in [0, t).
double bandPairs(int64_t t, int64_t window) {
  double pairs = 0;
  for (int64_t i = 0; i < t; ++i)
    pairs += double(std::min(t - 1, i + window - 1) - std::max<int64_t>(0, i - window + 1) + 1);
  return pairs;
}

} // namespace

KernelCost la::bench::libraryCost(LibraryKernel kernel, const LibraryShape &s) {
  const double b = s.b, t = s.t, d = s.d, e = s.e, slices = double(s.b) * s.h;
  const double elems = b * t * d; // AFT: elements of one [B, T, d] tensor
  KernelCost cost;
  switch (kernel) {
  case LibraryKernel::AftCausal:
    // One online-softmax sweep per channel: running max (1), e^{k−m} (2: sub, exp), n += e·v (2),
    // z += e (1), n / z (1), σ(q) (1), gate (1). The rescale by e^{m−m'} is not counted: a two-pass form
    // (global max first) avoids it.
    cost.flops = 9 * elems;
    cost.bytes = 4.0 * 4 * elems;
    break;
  case LibraryKernel::AftSimple:
    // max over T (1), e^{k−max} (2), Σ e (1), Σ e·v (2), σ(q) (1), gate (1); the per-channel divide of the
    // pooled vector (B·d) is negligible but counted.
    cost.flops = 8 * elems + b * d;
    cost.bytes = 4.0 * 4 * elems;
    break;
  case LibraryKernel::AftLocal: {
    // SPEC §3's O(T·s·d) form: per element max (1), e^{k−max} (2), e·v (1), the two global sums (2), adding
    // them to the band terms (2), divide (1), σ(q) (1), gate (1) = 11; per (t, t') in the band and channel
    // two multiply-adds (numerator and denominator) = 4; e^{w} − 1 once per band entry (shared by batches
    // and channels). Bytes: q, k, v, out and the band of w, the only part of w the formula reads.
    double band = bandPairs(s.t, kAftLocalWindow);
    cost.flops = 11 * elems + 4 * b * band * d + band;
    cost.bytes = 4.0 * (4 * elems + band);
    break;
  }
  case LibraryKernel::AftConv: {
    // SPEC §3's conv form on E = B·X·Y·h·c elements (X·Y = T): per element the same 11 as aft_local (max,
    // e^{k−max}, e·v, the two global sums over the image, adding them to the conv terms, divide, σ(q), gate);
    // the two depthwise 7×7 convolutions (of e^K ⊙ V and of e^K with e^{w} − 1) cost two multiply-adds = 4
    // per (output position, kernel tap inside the image) and channel: zero padding, so taps that fall outside
    // the image are not counted, which is bandPairs along X times along Y with window p + 1 = 4; e^{w} − 1
    // once per kernel entry (h·49, shared by batches and channels). Bytes: q, k, v, out and w.
    AftConvImage img = aftConvImage(s.t);
    const double channels = double(s.h) * d, convElems = b * t * channels;
    const double kernelEntries = double(s.h) * kAftConvKernel * kAftConvKernel;
    const int64_t reach = (kAftConvKernel - 1) / 2 + 1;
    double taps = bandPairs(img.x, reach) * bandPairs(img.y, reach); // (position, tap) pairs of one image
    cost.flops = 11 * convElems + 4 * b * taps * channels + kernelEntries;
    cost.bytes = 4.0 * (4 * convElems + kernelEntries);
    break;
  }
  case LibraryKernel::AftFull:
    // The stable matrix form: (e^{w − rowmax(w)}) @ (e^{k − max k} ⊙ v) and @ e^{k − max k}, two
    // multiply-adds per (b, t, t', c) = 4·B·T²·d; e^{w − rowmax} with its row max (3 per entry of the
    // shared [T, T] bias); per element max k (1), e^{k−max} (2), e·v (1), divide (1), σ(q) (1), gate (1).
    // Quadratic by definition.
    cost.flops = 4 * b * t * t * d + 3 * t * t + 7 * elems;
    cost.bytes = 4.0 * (4 * elems + t * t);
    break;
  case LibraryKernel::AftFullCausal: {
    // aft_full over the pairs t' ≤ t only, T(T+1)/2 of them: the products' multiply-adds, e^{w − rowmax} and
    // the row max on the lower triangle of w, which is all the formula reads of it.
    const double pairs = t * (t + 1) / 2;
    cost.flops = 4 * b * pairs * d + 3 * pairs + 7 * elems;
    cost.bytes = 4.0 * (4 * elems + pairs);
    break;
  }
  case LibraryKernel::Gau:
    // Per batch: Q Kᵀ (2·N²·s), relu, square and the 1/(N·s) scale (3·N²), A V (2·N²·e), gate (N·e).
    // Quadratic by definition. Bytes: u, v, out [B, N, e], q, k [B, N, s].
    cost.flops = b * (2 * t * t * d + 3 * t * t + 2 * t * t * e + t * e);
    cost.bytes = 4.0 * b * t * (3 * e + 2 * d);
    break;
  case LibraryKernel::Flash:
  case LibraryKernel::FlashCausal: {
    // Mixed chunk form, chunk c = 256 (the kernels' masks). Quadratic part: per (query, key) pair of a
    // chunk (c² per chunk, or c(c+1)/2 causal) a q·k dot (2s), relu, square, scale (3) and a row of A V
    // (2e). Linear part: the state Σ kl ⊗ v (2·N·s·e), its read-out by ql (2·N·s·e) and the 1/N (or
    // 1/(g·c)) scale (N·e); causal adds the exclusive prefix over chunk states ((N/c)·s·e adds). Combine
    // U ⊙ (Vq + Vl): 2·N·e. Bytes: u, v, out [B, N, e], qq, kq, ql, kl [B, N, s].
    bool causal = kernel == LibraryKernel::FlashCausal;
    double pairs = chunkPairs(s.t, kFlashChunk, causal);
    double chunks = double((s.t + kFlashChunk - 1) / kFlashChunk);
    double perBatch = pairs * (2 * d + 3 + 2 * e) + 4 * t * d * e + t * e + 2 * t * e;
    if (causal)
      perBatch += chunks * d * e;
    cost.flops = b * perBatch;
    cost.bytes = 4.0 * b * t * (3 * e + 4 * d);
    break;
  }
  case LibraryKernel::Retention:
  case LibraryKernel::SimpleGla:
  case LibraryKernel::Gla: {
    // The chunked form of SPEC §5, chunk C = 64, per (b, h) slice with K = d, V = e:
    //   intra-chunk: per (i, j ≤ i) pair of a chunk (C(C+1)/2 per chunk, the causal mask) the score q·k
    //     (2K) and a row of the product with V (2V); for per-head gates the decay factor e^{b_i − b_j}
    //     and its product (3); GLA's per-key decay costs no per-pair work with the secondary-chunking trick
    //     (q ⊙ e^{b}, k ⊙ e^{−b}), only per-position work below;
    //   inter-chunk: read-out (q ⊙ e^{b}) S_prev (2·T·K·V), state update (k ⊙ e^{b_last − b})ᵀ V (2·T·K·V)
    //     and the decay of the state per chunk ((T/C)·K·V);
    //   per position: q·K^{-1/2} (K), the gates' local cumsum, exponentials and the products with q and k:
    //     per-head gates 2K + 4, per-key gates 7K.
    // The recurrent form has the same 4·T·K·V; the pairs term is what chunking adds. The triangle, not the
    // full C×C block, is counted, so a kernel that multiplies whole blocks is at best 1 + (C−1)/(C+1) above
    // the bound on that term.
    bool perKey = kernel == LibraryKernel::Gla;
    double pairs = chunkPairs(s.t, kDecayChunk, /*causal=*/true);
    double chunks = double((s.t + kDecayChunk - 1) / kDecayChunk);
    double perSlice = pairs * (2 * d + 2 * e + (perKey ? 0 : 3)) + 4 * t * d * e + chunks * d * e + t * d +
                      (perKey ? 7 * t * d : 2 * t * d + 4 * t);
    cost.flops = slices * perSlice;
    double gateBytes = kernel == LibraryKernel::Retention ? 0 : (perKey ? t * d : t);
    cost.bytes = 4.0 * slices * (2 * t * d + 2 * t * e + gateBytes);
    break;
  }
  }
  return cost;
}
