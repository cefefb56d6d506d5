//===- LibraryReference.cpp - Unfused eager-style AFT, GAU/FLASH and decay baselines ----===//
//
// Each kernel is the op sequence an eager PyTorch program of the SPEC formula runs, one EagerOps call per
// tensor op (the torch expression is in the comment above it). The few ops below that EagerOps.h does not
// have are the ones these programs add: reductions and softmax along the sequence, batched matrix products,
// and the masks.
//
//===----------------------------------------------------------------------===//
#include "LibraryReference.h"
#include "EagerOps.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

using namespace la::bench;
using namespace la::bench::eager;

namespace {

//===----------------------------------------------------------------------===//
// Ops of these programs, each parallel over its S slices
//===----------------------------------------------------------------------===//

/// x.amax(dim=1): [S, L, W] -> [S, W].
Tensor maxSeq(ForkJoinPool &pool, const float *x, int64_t slices, int64_t len, int64_t width) {
  Tensor out = allocate(slices * width);
  float *__restrict o = out.data();
  pool.parallelFor(slices, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s) {
      float *dst = o + s * width;
      std::fill(dst, dst + width, -std::numeric_limits<float>::infinity());
      for (int64_t l = 0; l < len; ++l)
        for (int64_t w = 0; w < width; ++w)
          dst[w] = std::max(dst[w], x[(s * len + l) * width + w]);
    }
  });
  return out;
}

/// out[s, l, w] = f(x[s, l, w], c[s, w]): a per-slice row broadcast over the sequence (`x - m[:, None]`).
template <typename F>
Tensor broadcastCols(ForkJoinPool &pool, const float *x, const float *c, int64_t slices, int64_t len, int64_t width,
                     F f, float *into = nullptr) {
  Tensor out = allocate(slices * len * width, into);
  float *__restrict o = out.data();
  pool.parallelFor(slices, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s)
      for (int64_t l = 0; l < len; ++l)
        for (int64_t w = 0; w < width; ++w)
          o[(s * len + l) * width + w] = f(x[(s * len + l) * width + w], c[s * width + w]);
  });
  return out;
}

/// torch.softmax(x, dim=1) on [S, L, W]: one fused op in eager frameworks too (max, exp-sum, divide).
Tensor softmaxSeq(ForkJoinPool &pool, const float *x, int64_t slices, int64_t len, int64_t width) {
  Tensor out = allocate(slices * len * width);
  float *__restrict o = out.data();
  pool.parallelFor(slices, [&](int64_t begin, int64_t end) {
    std::vector<float> maxValue(width), sum(width);
    for (int64_t s = begin; s < end; ++s) {
      const float *src = x + s * len * width;
      float *dst = o + s * len * width;
      std::fill(maxValue.begin(), maxValue.end(), -std::numeric_limits<float>::infinity());
      std::fill(sum.begin(), sum.end(), 0.0f);
      for (int64_t l = 0; l < len; ++l)
        for (int64_t w = 0; w < width; ++w)
          maxValue[w] = std::max(maxValue[w], src[l * width + w]);
      for (int64_t l = 0; l < len; ++l)
        for (int64_t w = 0; w < width; ++w) {
          dst[l * width + w] = expApprox(src[l * width + w] - maxValue[w]);
          sum[w] += dst[l * width + w];
        }
      for (int64_t w = 0; w < width; ++w)
        sum[w] = 1.0f / sum[w];
      for (int64_t l = 0; l < len; ++l)
        for (int64_t w = 0; w < width; ++w)
          dst[l * width + w] *= sum[w];
    }
  });
  return out;
}

/// torch.matmul(q, k.transpose(-1, -2)): [S, N, D] x [S, M, D] -> [S, N, M]. k is transposed per slice into
/// a scratch block first (what a BLAS does with a transposed operand), so the inner loop runs over M.
Tensor scoresNT(ForkJoinPool &pool, const float *q, const float *k, int64_t slices, int64_t n, int64_t m, int64_t d) {
  Tensor out = allocate(slices * n * m);
  float *__restrict o = out.data();
  pool.parallelFor(slices, [&](int64_t begin, int64_t end) {
    std::vector<float> kt(d * m);
    for (int64_t s = begin; s < end; ++s) {
      for (int64_t j = 0; j < m; ++j)
        for (int64_t c = 0; c < d; ++c)
          kt[c * m + j] = k[(s * m + j) * d + c];
      for (int64_t i = 0; i < n; ++i) {
        float *__restrict row = o + (s * n + i) * m;
        std::fill(row, row + m, 0.0f);
        for (int64_t c = 0; c < d; ++c) {
          float qc = q[(s * n + i) * d + c];
          const float *ktc = kt.data() + c * m;
          for (int64_t j = 0; j < m; ++j)
            row[j] += qc * ktc[j];
        }
      }
    }
  });
  return out;
}

/// torch.matmul(w, x) with one [L, M] matrix for every slice: [L, M] x [S, M, E] -> [S, L, E]. Parallel over
/// S·L rows, since S is the batch (2) here.
Tensor sharedMatmul(ForkJoinPool &pool, const float *w, const float *x, int64_t slices, int64_t len, int64_t m,
                    int64_t e) {
  Tensor out = allocate(slices * len * e);
  float *__restrict o = out.data();
  pool.parallelFor(slices * len, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      int64_t s = row / len, l = row % len;
      float *__restrict dst = o + row * e;
      std::fill(dst, dst + e, 0.0f);
      for (int64_t j = 0; j < m; ++j) {
        float wj = w[l * m + j];
        const float *src = x + (s * m + j) * e;
        for (int64_t c = 0; c < e; ++c)
          dst[c] += wj * src[c];
      }
    }
  });
  return out;
}

/// w[None, :, :, None] + k[:, None, :, :]: [T, T] and [B, T, d] -> [B, T, T, d], parallel over B·T rows.
Tensor jointLogits(ForkJoinPool &pool, const float *w, const float *k, int64_t batch, int64_t t, int64_t d,
                   bool causal) {
  Tensor out = allocate(static_cast<size_t>(batch) * t * t * d);
  float *__restrict o = out.data();
  const float hidden = -std::numeric_limits<float>::infinity();
  pool.parallelFor(batch * t, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      int64_t b = row / t, i = row % t;
      for (int64_t j = 0; j < t; ++j)
        for (int64_t c = 0; c < d; ++c)
          o[(static_cast<size_t>(row) * t + j) * d + c] =
              causal && j > i ? hidden : w[i * t + j] + k[(b * t + j) * d + c];
    }
  });
  return out;
}

/// weights * v[:, None, :, :]: [B, T, T, d] and [B, T, d] -> [B, T, T, d], parallel over B·T rows.
Tensor mulValuesJoint(ForkJoinPool &pool, const float *weights, const float *v, int64_t batch, int64_t t, int64_t d) {
  Tensor out = allocate(static_cast<size_t>(batch) * t * t * d);
  float *__restrict o = out.data();
  pool.parallelFor(batch * t, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      int64_t b = row / t;
      for (int64_t j = 0; j < t; ++j)
        for (int64_t c = 0; c < d; ++c) {
          size_t index = (static_cast<size_t>(row) * t + j) * d + c;
          o[index] = weights[index] * v[(b * t + j) * d + c];
        }
    }
  });
  return out;
}

/// x.masked_fill(~mask, fill) on [S, N, N] tiles with mask = keep(i, j).
template <typename Keep>
Tensor maskTiles(ForkJoinPool &pool, const float *x, int64_t slices, int64_t n, float fill, Keep keep) {
  Tensor out = allocate(slices * n * n);
  float *__restrict o = out.data();
  pool.parallelFor(slices * n, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      int64_t i = row % n;
      for (int64_t j = 0; j < n; ++j)
        o[row * n + j] = keep(i, j) ? x[row * n + j] : fill;
    }
  });
  return out;
}

/// (b[..., :, None] - b[..., None, :]): [S, C] -> [S, C, C], the exponents of the decay mask.
Tensor pairwiseDiff(ForkJoinPool &pool, const float *b, int64_t slices, int64_t c) {
  Tensor out = allocate(slices * c * c);
  float *__restrict o = out.data();
  pool.parallelFor(slices, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s)
      for (int64_t i = 0; i < c; ++i)
        for (int64_t j = 0; j < c; ++j)
          o[(s * c + i) * c + j] = b[s * c + i] - b[s * c + j];
  });
  return out;
}

/// b[:, :, -1:] - b over chunks: [S, C, W] -> [S, C, W], the decay from each position to its chunk's end.
Tensor decayToEnd(ForkJoinPool &pool, const float *b, int64_t slices, int64_t c, int64_t width) {
  Tensor out = allocate(slices * c * width);
  float *__restrict o = out.data();
  pool.parallelFor(slices, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s)
      for (int64_t i = 0; i < c; ++i)
        for (int64_t w = 0; w < width; ++w)
          o[(s * c + i) * width + w] = b[(s * c + c - 1) * width + w] - b[(s * c + i) * width + w];
  });
  return out;
}

/// The chunk loop of fla's chunked torch form: S_prev[0] = 0, S_prev[g+1] = decay_g ⊙ S_prev[g] + kv[g]
/// with decay_g = e^{b_last of chunk g}, a scalar (width 1) or one per state row (width K). kv: [S, G, K, V],
/// bLast: [S, G, width] -> [S, G, K, V], the state each chunk starts from. The sequential loop over chunks
/// is one op here; in eager Python it is G iterations of a few small ops.
Tensor chunkStates(ForkJoinPool &pool, const float *kv, const float *bLast, int64_t slices, int64_t chunks, int64_t kd,
                   int64_t vd, int64_t width) {
  Tensor out = allocate(static_cast<size_t>(slices) * chunks * kd * vd);
  float *__restrict o = out.data();
  pool.parallelFor(slices, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s) {
      float *first = o + s * chunks * kd * vd;
      std::fill(first, first + kd * vd, 0.0f);
      for (int64_t g = 0; g + 1 < chunks; ++g) {
        const float *prev = o + (s * chunks + g) * kd * vd;
        const float *add = kv + (s * chunks + g) * kd * vd;
        float *next = o + (s * chunks + g + 1) * kd * vd;
        for (int64_t i = 0; i < kd; ++i) {
          float decay = expApprox(bLast[(s * chunks + g) * width + (width == 1 ? 0 : i)]);
          for (int64_t j = 0; j < vd; ++j)
            next[i * vd + j] = decay * prev[i * vd + j] + add[i * vd + j];
        }
      }
    }
  });
  return out;
}

/// F.conv2d(x, weight, padding=p, groups=C) with weight [C, 1, s, s], on an image held channels-last: x is
/// [B, X, Y, C] (the [B, C, X, Y] view `x.permute(0, 3, 1, 2)` of an [B, X, Y, C] tensor has channels_last
/// strides, so PyTorch runs its channels-last depthwise kernel and returns a channels_last [B, C, X, Y],
/// which permutes back to [B, X, Y, C] as a view). Zero padding, cross-correlation orientation:
/// out[b, x, y, c] = Σ_{u,v} weight[c, u, v] · x[b, x + u − p, y + v − p, c]. The weight is packed to
/// [s·s, C] first (what the depthwise kernel does per call), so the inner loop runs over the channels.
/// Parallel over the B·X output rows.
Tensor depthwiseConv2d(ForkJoinPool &pool, const float *x, const float *weight, int64_t batch, int64_t xLen,
                       int64_t yLen, int64_t channels, int64_t size) {
  const int64_t taps = size * size, p = (size - 1) / 2;
  std::vector<float> packed(taps * channels);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t tap = 0; tap < taps; ++tap)
      packed[tap * channels + c] = weight[c * taps + tap];
  Tensor out = allocate(static_cast<size_t>(batch) * xLen * yLen * channels);
  float *__restrict o = out.data();
  pool.parallelFor(batch * xLen, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t b = row / xLen, xi = row % xLen;
      for (int64_t yi = 0; yi < yLen; ++yi) {
        float *__restrict acc = o + (row * yLen + yi) * channels;
        std::fill(acc, acc + channels, 0.0f);
        for (int64_t u = 0; u < size; ++u) {
          const int64_t xs = xi + u - p;
          if (xs < 0 || xs >= xLen)
            continue;
          for (int64_t v = 0; v < size; ++v) {
            const int64_t ys = yi + v - p;
            if (ys < 0 || ys >= yLen)
              continue;
            const float *src = x + ((b * xLen + xs) * yLen + ys) * channels;
            const float *kw = packed.data() + (u * size + v) * channels;
            for (int64_t c = 0; c < channels; ++c)
              acc[c] += src[c] * kw[c];
          }
        }
      }
    }
  });
  return out;
}

const auto add = [](float x, float y) { return x + y; };
const auto sub = [](float x, float y) { return x - y; };
const auto expOp = [](float x) { return expApprox(x); };
const auto relu = [](float x) { return std::max(x, 0.0f); };
const auto square = [](float x) { return x * x; };

//===----------------------------------------------------------------------===//
// AFT (SPEC §3): q, k, v [B, T, d], w [T, T]
//===----------------------------------------------------------------------===//

/// y = σ(q) * cumsum(e^{k−max} v, 1) / cumsum(e^{k−max}, 1).
void aftCausal(const LibraryShape &sh, const float *q, const float *k, const float *v, float *out, ForkJoinPool &pool) {
  const int64_t b = sh.b, t = sh.t, d = sh.d;
  Tensor kMax = maxSeq(pool, k, b, t, d);                             // k.amax(dim=1, keepdim=True)
  Tensor shifted = broadcastCols(pool, k, kMax.data(), b, t, d, sub); // k - kmax
  Tensor ek = map(pool, shifted.data(), b, t * d, expOp);             // torch.exp(.)
  Tensor ekv = zip(pool, ek.data(), v, b, t * d, mul);                // ek * v
  Tensor num = cumsumSeq(pool, ekv.data(), b, t, d);                  // .cumsum(dim=1)
  Tensor den = cumsumSeq(pool, ek.data(), b, t, d);
  Tensor avg = zip(pool, num.data(), den.data(), b, t * d, divide);
  Tensor sq = map(pool, q, b, t * d, sigmoid);
  zip(pool, sq.data(), avg.data(), b, t * d, mul, out);
}

/// y = σ(q) * (softmax(k, 1) * v).sum(1, keepdim=True).
void aftSimple(const LibraryShape &sh, const float *q, const float *k, const float *v, float *out, ForkJoinPool &pool) {
  const int64_t b = sh.b, t = sh.t, d = sh.d;
  Tensor weights = softmaxSeq(pool, k, b, t, d);
  Tensor wv = zip(pool, weights.data(), v, b, t * d, mul);
  Tensor pooled = sumSeq(pool, wv.data(), b, t, d);
  Tensor sq = map(pool, q, b, t * d, sigmoid);
  broadcastCols(pool, sq.data(), pooled.data(), b, t, d, mul, out);
}

/// SPEC §3's form: global sums plus (e^{w} − 1) ⊙ band as a dense [T, T] matrix product.
void aftLocal(const LibraryShape &sh, const float *q, const float *k, const float *v, const float *w, float *out,
              ForkJoinPool &pool) {
  const int64_t b = sh.b, t = sh.t, d = sh.d, window = kAftLocalWindow;
  Tensor kMax = maxSeq(pool, k, b, t, d);
  Tensor shifted = broadcastCols(pool, k, kMax.data(), b, t, d, sub);
  Tensor ek = map(pool, shifted.data(), b, t * d, expOp);
  Tensor ekv = zip(pool, ek.data(), v, b, t * d, mul);
  Tensor gNum = sumSeq(pool, ekv.data(), b, t, d);
  Tensor gDen = sumSeq(pool, ek.data(), b, t, d);
  // torch.expm1(w) * band, band a precomputed [T, T] 0/1 buffer; one row of w per slice.
  Tensor wm1 = map(pool, w, t, t, [](float x) { return std::expm1(x); });
  Tensor banded =
      maskTiles(pool, wm1.data(), 1, t, 0.0f, [window](int64_t i, int64_t j) { return std::abs(i - j) < window; });
  Tensor lNum = sharedMatmul(pool, banded.data(), ekv.data(), b, t, t, d); // banded @ ekv
  Tensor lDen = sharedMatmul(pool, banded.data(), ek.data(), b, t, t, d);
  Tensor num = broadcastCols(pool, lNum.data(), gNum.data(), b, t, d, add);
  Tensor den = broadcastCols(pool, lDen.data(), gDen.data(), b, t, d, add);
  Tensor avg = zip(pool, num.data(), den.data(), b, t * d, divide);
  Tensor sq = map(pool, q, b, t * d, sigmoid);
  zip(pool, sq.data(), avg.data(), b, t * d, mul, out);
}

/// SPEC §3's conv form on [B, X, Y, h, c] (X·Y = T, viewed as [B, T, h·c]): global sums over the image plus
/// two depthwise F.conv2d's (groups = h·c, padding 3) with the per-head kernel e^{w} − 1 repeated over the
/// head's channels.
void aftConv(const LibraryShape &sh, const float *q, const float *k, const float *v, const float *w, float *out,
             ForkJoinPool &pool) {
  const AftConvImage img = aftConvImage(sh.t);
  const int64_t b = sh.b, t = sh.t, h = sh.h, c = sh.d, hc = h * c, s = kAftConvKernel, taps = s * s;
  Tensor kMax = maxSeq(pool, k, b, t, hc);                             // k.amax(dim=(1, 2), keepdim=True)
  Tensor shifted = broadcastCols(pool, k, kMax.data(), b, t, hc, sub); // k - kmax
  Tensor ek = map(pool, shifted.data(), b, t * hc, expOp);             // torch.exp(.)
  Tensor ekv = zip(pool, ek.data(), v, b, t * hc, mul);                // ek * v
  Tensor gNum = sumSeq(pool, ekv.data(), b, t, hc);                    // ekv.sum(dim=(1, 2), keepdim=True)
  Tensor gDen = sumSeq(pool, ek.data(), b, t, hc);
  // torch.expm1(w).repeat_interleave(c, dim=0)[:, None]: the [h·c, 1, 7, 7] depthwise weight.
  Tensor wm1 = map(pool, w, 1, h * taps, [](float x) { return std::expm1(x); });
  Tensor weight = allocate(hc * taps);
  for (int64_t i = 0; i < h; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      std::copy(wm1.data() + i * taps, wm1.data() + (i + 1) * taps, weight.data() + (i * c + ch) * taps);
  // F.conv2d(ekv.view(B, X, Y, h·c).permute(0, 3, 1, 2), weight, padding=3, groups=h·c), and of ek.
  Tensor lNum = depthwiseConv2d(pool, ekv.data(), weight.data(), b, img.x, img.y, hc, s);
  Tensor lDen = depthwiseConv2d(pool, ek.data(), weight.data(), b, img.x, img.y, hc, s);
  Tensor num = broadcastCols(pool, lNum.data(), gNum.data(), b, t, hc, add); // + gnum
  Tensor den = broadcastCols(pool, lDen.data(), gDen.data(), b, t, hc, add);
  Tensor avg = zip(pool, num.data(), den.data(), b, t * hc, divide);
  Tensor sq = map(pool, q, b, t * hc, sigmoid);
  zip(pool, sq.data(), avg.data(), b, t * hc, mul, out);
}

/// SPEC §7's form: softmax over t' of the [B, T, T, d] joint logits k + w, times v, summed over t'.
void aftFull(const LibraryShape &sh, bool causal, const float *q, const float *k, const float *v, const float *w,
             float *out, ForkJoinPool &pool) {
  const int64_t b = sh.b, t = sh.t, d = sh.d;
  Tensor logits = jointLogits(pool, w, k, b, t, d, causal);      // w[None, :, :, None] + k[:, None], −inf at t' > t
  Tensor weights = softmaxSeq(pool, logits.data(), b * t, t, d); // torch.softmax(., dim=2)
  logits.reset();
  Tensor wv = mulValuesJoint(pool, weights.data(), v, b, t, d); // weights * v[:, None]
  weights.reset();
  Tensor avg = sumSeq(pool, wv.data(), b * t, t, d); // .sum(dim=2)
  wv.reset();
  Tensor sq = map(pool, q, b, t * d, sigmoid);
  zip(pool, sq.data(), avg.data(), b, t * d, mul, out);
}

//===----------------------------------------------------------------------===//
// GAU / FLASH (SPEC §4): u, v [B, N, e]; q/k pairs [B, N, s]
//===----------------------------------------------------------------------===//

/// lucidrains GAU: sim = q kᵀ; attn = relu(sim) ** 2 / (N·s); out = (attn @ v) * u.
void gau(const LibraryShape &sh, const float *u, const float *v, const float *q, const float *k, float *out,
         ForkJoinPool &pool) {
  const int64_t b = sh.b, n = sh.t, s = sh.d, e = sh.e;
  Tensor sim = scoresNT(pool, q, k, b, n, n, s);
  Tensor r = map(pool, sim.data(), b, n * n, relu);
  Tensor sq = map(pool, r.data(), b, n * n, square);
  Tensor attn = map(pool, sq.data(), b, n * n, mulConst(1.0f / (float(n) * float(s))));
  Tensor av = readOut(pool, attn.data(), v, b, n, n, e); // attn @ v
  zip(pool, av.data(), u, b, n * e, mul, out);
}

/// lucidrains FLASH after the projections, groups of c = 256 as a [B·G, c, ·] reshape (a view).
void flash(const LibraryShape &sh, bool causal, const float *u, const float *v, const float *qq, const float *kq,
           const float *ql, const float *kl, float *out, ForkJoinPool &pool) {
  const int64_t b = sh.b, n = sh.t, s = sh.d, e = sh.e, c = kFlashChunk, g = n / c, groups = b * g;
  // Quadratic part: sim = einsum('... i d, ... j d -> ... i j', quad_q, quad_k); relu² / (c·s) [⊙ tril].
  Tensor sim = scoresNT(pool, qq, kq, groups, c, c, s);
  Tensor r = map(pool, sim.data(), groups, c * c, relu);
  Tensor sq = map(pool, r.data(), groups, c * c, square);
  Tensor attn = map(pool, sq.data(), groups, c * c, mulConst(1.0f / (float(c) * float(s))));
  if (causal)
    attn = maskTiles(pool, attn.data(), groups, c, 0.0f, [](int64_t i, int64_t j) { return j <= i; });
  Tensor quad = readOut(pool, attn.data(), v, groups, c, c, e); // einsum('... i j, ... j d', attn, v)
  Tensor lin;
  if (!causal) {
    // lin_kv = einsum('b n d, b n e -> b d e', lin_k, v) / n; lin_out = einsum(lin_q, lin_kv)
    Tensor kv = contractSeq(pool, kl, v, b, n, s, e);
    Tensor kvScaled = map(pool, kv.data(), b, s * e, mulConst(1.0f / float(n)));
    lin = readOut(pool, ql, kvScaled.data(), b, n, s, e);
  } else {
    // lin_kv = einsum('b g n d, b g n e -> b g d e', lin_k, v); cumsum over g; shift by one group
    // (F.pad(lin_kv, (0, 0, 0, 0, 1, -1))); lin_out = einsum(lin_q, lin_kv) / (g·c).
    Tensor kv = contractSeq(pool, kl, v, groups, c, s, e);
    Tensor kvCum = cumsumSeq(pool, kv.data(), b, g, s * e);
    Tensor shifted = allocate(static_cast<size_t>(groups) * s * e);
    {
      float *dst = shifted.data();
      const float *src = kvCum.data();
      pool.parallelFor(b, [&](int64_t begin, int64_t end) {
        for (int64_t bi = begin; bi < end; ++bi) {
          std::fill(dst + bi * g * s * e, dst + (bi * g + 1) * s * e, 0.0f);
          std::copy(src + bi * g * s * e, src + (bi * g + g - 1) * s * e, dst + (bi * g + 1) * s * e);
        }
      });
    }
    Tensor linRaw = readOut(pool, ql, shifted.data(), groups, c, s, e);
    std::vector<float> inverseCount(groups);
    for (int64_t i = 0; i < groups; ++i)
      inverseCount[i] = 1.0f / float(std::max<int64_t>((i % g) * c, 1)); // count.clamp(min=1)
    lin = broadcastRows(pool, linRaw.data(), inverseCount.data(), groups, 1, c * e, mul);
  }
  Tensor sum = zip(pool, quad.data(), lin.data(), b, n * e, add);
  zip(pool, u, sum.data(), b, n * e, mul, out);
}

//===----------------------------------------------------------------------===//
// Decay scans (SPEC §5): q, k [B, H, T, K], v [B, H, T, V], g [B, H, T] or [B, H, T, K]
//===----------------------------------------------------------------------===//

/// fla's chunked torch form with chunk C = 64. `g` is null for retention, whose gates are built first (the
/// torch code builds them with `torch.full` per head). `perKey`: GLA's [B, H, T, K] gates.
void decayChunked(const LibraryShape &sh, const float *q, const float *k, const float *v, const float *g, bool perKey,
                  float *out, ForkJoinPool &pool) {
  const int64_t slices = sh.b * sh.h, t = sh.t, kd = sh.d, vd = sh.e, c = kDecayChunk, chunks = t / c,
                tiles = slices * chunks, gw = perKey ? kd : 1;
  Tensor retentionGates;
  if (!g) {
    retentionGates = allocate(slices * t);
    float *dst = retentionGates.data();
    const int64_t heads = sh.h;
    pool.parallelFor(slices, [&](int64_t begin, int64_t end) {
      for (int64_t s = begin; s < end; ++s)
        std::fill(dst + s * t, dst + (s + 1) * t, float(std::log1p(-std::exp2(-5.0 - double(s % heads)))));
    });
    g = retentionGates.data();
  }
  Tensor qs = map(pool, q, slices, t * kd, mulConst(1.0f / std::sqrt(float(kd)))); // q * K ** -0.5
  Tensor b = cumsumSeq(pool, g, tiles, c, gw); // g.view(.., G, C, .).cumsum(-2): in-chunk cumsum
  Tensor eb = map(pool, b.data(), tiles, c * gw, expOp);
  Tensor intraScores;
  Tensor qe; // q ⊙ e^{b}, the read-out of the previous state
  if (!perKey) {
    // A = (q kᵀ) ⊙ exp(b_i − b_j) masked before exp (i ≥ j).
    Tensor qk = scoresNT(pool, qs.data(), k, tiles, c, c, kd);
    Tensor diff = pairwiseDiff(pool, b.data(), tiles, c);
    Tensor masked = maskTiles(pool, diff.data(), tiles, c, -std::numeric_limits<float>::infinity(),
                              [](int64_t i, int64_t j) { return j <= i; });
    Tensor decay = map(pool, masked.data(), tiles, c * c, expOp);
    intraScores = zip(pool, qk.data(), decay.data(), tiles, c * c, mul);
    qe = broadcastRows(pool, qs.data(), eb.data(), tiles, c, kd, mul);
  } else {
    // A = ((q ⊙ e^{b}) (k ⊙ e^{−b})ᵀ) ⊙ tril.
    qe = zip(pool, qs.data(), eb.data(), tiles, c * kd, mul);
    Tensor negB = map(pool, b.data(), tiles, c * kd, [](float x) { return -x; });
    Tensor ebNeg = map(pool, negB.data(), tiles, c * kd, expOp);
    Tensor ke = zip(pool, k, ebNeg.data(), tiles, c * kd, mul);
    Tensor qk = scoresNT(pool, qe.data(), ke.data(), tiles, c, c, kd);
    intraScores = maskTiles(pool, qk.data(), tiles, c, 0.0f, [](int64_t i, int64_t j) { return j <= i; });
  }
  Tensor intra = readOut(pool, intraScores.data(), v, tiles, c, c, vd); // A @ v
  // States: kv_g = (k ⊙ e^{b_last − b})ᵀ v per chunk, then the scan over chunks.
  Tensor toEnd = decayToEnd(pool, b.data(), tiles, c, gw);
  Tensor eToEnd = map(pool, toEnd.data(), tiles, c * gw, expOp);
  Tensor kDecayed = perKey ? zip(pool, k, eToEnd.data(), tiles, c * kd, mul)
                           : broadcastRows(pool, k, eToEnd.data(), tiles, c, kd, mul);
  Tensor kv = contractSeq(pool, kDecayed.data(), v, tiles, c, kd, vd);
  // b[:, :, -1]: the whole chunk's log-decay, [S, G, gw].
  Tensor bLast = allocate(tiles * gw);
  {
    float *dst = bLast.data();
    const float *src = b.data();
    pool.parallelFor(tiles, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        std::copy(src + (i * c + c - 1) * gw, src + (i * c + c) * gw, dst + i * gw);
    });
  }
  Tensor states = chunkStates(pool, kv.data(), bLast.data(), slices, chunks, kd, vd, gw);
  Tensor inter = readOut(pool, qe.data(), states.data(), tiles, c, kd, vd); // (q ⊙ e^{b}) @ S_prev
  zip(pool, intra.data(), inter.data(), slices, t * vd, add, out);
}

} // namespace

double la::bench::libraryReferenceLargestTensorBytes(LibraryKernel kernel, const LibraryShape &sh) {
  const double b = sh.b, t = sh.t, d = sh.d, e = sh.e;
  switch (kernel) {
  case LibraryKernel::AftCausal:
  case LibraryKernel::AftSimple:
    return 4.0 * b * t * d;
  case LibraryKernel::AftLocal:
    return 4.0 * std::max(t * t, b * t * d); // e^{w} − 1 and its banded copy
  case LibraryKernel::AftFull:
  case LibraryKernel::AftFullCausal:
    return 4.0 * b * t * t * d; // the joint logits, their softmax, times v
  case LibraryKernel::AftConv:
    return 4.0 * b * t * sh.h * d; // every intermediate is [B, X, Y, h, c]
  case LibraryKernel::Gau:
    return 4.0 * b * t * t; // the scores
  case LibraryKernel::Flash:
  case LibraryKernel::FlashCausal:
    return 4.0 * b * t * std::max<double>(kFlashChunk, e);
  case LibraryKernel::Retention:
  case LibraryKernel::SimpleGla:
  case LibraryKernel::Gla:
    return 4.0 * sh.b * sh.h * t * std::max<double>(kDecayChunk, std::max(d, e));
  }
  return 0;
}

double la::bench::libraryReferencePeakBytes(LibraryKernel kernel, const LibraryShape &sh) {
  // aft_full keeps two [B, T, T, d] tensors alive at a time (each op's input and output); the others hold
  // about a dozen tensors of the largest size until they return (an upper estimate).
  double largest = libraryReferenceLargestTensorBytes(kernel, sh);
  bool joint = kernel == LibraryKernel::AftFull || kernel == LibraryKernel::AftFullCausal;
  return joint ? 2 * largest : 12 * largest;
}

std::string la::bench::libraryReferenceUnsupported(LibraryKernel kernel, const LibraryShape &sh) {
  switch (libraryFamily(kernel)) {
  case LibraryFamily::Flash:
    if (kernel != LibraryKernel::Gau && sh.t % kFlashChunk != 0)
      return "T is not a multiple of the chunk " + std::to_string(kFlashChunk);
    break;
  case LibraryFamily::Decay:
    if (sh.t % kDecayChunk != 0)
      return "T is not a multiple of the chunk " + std::to_string(kDecayChunk);
    break;
  case LibraryFamily::Aft:
    break;
  }
  return "";
}

void la::bench::runLibraryReference(LibraryKernel kernel, const LibraryShape &sh, const std::vector<const float *> &a,
                                    float *out, ForkJoinPool &pool, ReferenceMemory memory) {
  setMemory(memory);
  switch (kernel) {
  case LibraryKernel::AftCausal:
    return aftCausal(sh, a[0], a[1], a[2], out, pool);
  case LibraryKernel::AftSimple:
    return aftSimple(sh, a[0], a[1], a[2], out, pool);
  case LibraryKernel::AftLocal:
    return aftLocal(sh, a[0], a[1], a[2], a[3], out, pool);
  case LibraryKernel::AftFull:
  case LibraryKernel::AftFullCausal:
    return aftFull(sh, kernel == LibraryKernel::AftFullCausal, a[0], a[1], a[2], a[3], out, pool);
  case LibraryKernel::AftConv:
    return aftConv(sh, a[0], a[1], a[2], a[3], out, pool);
  case LibraryKernel::Gau:
    return gau(sh, a[0], a[1], a[2], a[3], out, pool);
  case LibraryKernel::Flash:
  case LibraryKernel::FlashCausal:
    return flash(sh, kernel == LibraryKernel::FlashCausal, a[0], a[1], a[2], a[3], a[4], a[5], out, pool);
  case LibraryKernel::Retention:
    return decayChunked(sh, a[0], a[1], a[2], nullptr, false, out, pool);
  case LibraryKernel::SimpleGla:
    return decayChunked(sh, a[0], a[1], a[2], a[3], false, out, pool);
  case LibraryKernel::Gla:
    return decayChunked(sh, a[0], a[1], a[2], a[3], true, out, pool);
  }
}
