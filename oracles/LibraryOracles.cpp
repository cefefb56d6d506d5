//===- LibraryOracles.cpp - fp64 oracles for AFT, GAU/FLASH and decays ----===//
//
// Implementation of LibraryOracles.h. Every formula cites the SPEC section it
// comes from (/work/shared/SPEC.md). Each oracle is a direct transcription of
// the defining sum, in naive loops: AFT as a softmax over key positions of
// k + bias (the [T, T, d] form of §7), GAU/FLASH as dense relu² matrices,
// decay scans as the recurrent loop and as the masked decay matrix.
//
// Stability, all in fp64: every softmax subtracts the maximum visible logit
// before exp (so logits far beyond fp64's exp range still work), and every
// decay factor is exp of a partial sum of log-gates over the steps it spans.
//
//===----------------------------------------------------------------------===//

#include "LibraryOracles.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace la {
namespace oracle {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

double relu2(double x) { return x > 0.0 ? x * x : 0.0; }

[[noreturn]] void fail(const char *who, const std::string &what) {
  throw std::invalid_argument(std::string(who) + ": " + what);
}

void requirePositive(const char *who, const char *name, int64_t value) {
  if (value < 1)
    fail(who, std::string(name) + " must be >= 1");
}

void requireInput(const char *who, const char *name, const void *ptr) {
  if (!ptr)
    fail(who, std::string(name) + " must not be null");
}

/// Softmax-weighted average Σ_j e^{l_j} x_j / Σ_j e^{l_j} over `count`
/// logits, with the maximum logit subtracted first. Logits may be −∞
/// (masked), but at least one must be finite.
double softmaxAverage(const std::vector<double> &logits, const std::vector<double> &values, size_t count,
                      const char *who) {
  double mx = kNegInf;
  for (size_t j = 0; j < count; ++j)
    mx = std::max(mx, logits[j]);
  if (!(mx > kNegInf) || std::isinf(mx))
    fail(who, "every softmax row needs a finite maximum logit");
  double num = 0.0, den = 0.0;
  for (size_t j = 0; j < count; ++j) {
    double e = std::exp(logits[j] - mx);
    num += e * values[j];
    den += e;
  }
  return num / den;
}

void checkAft(const char *who, int64_t batch, int64_t t, int64_t d, const float *q, const float *k, const float *v) {
  requirePositive(who, "batch", batch);
  requirePositive(who, "T", t);
  requirePositive(who, "d", d);
  requireInput(who, "q", q);
  requireInput(who, "k", k);
  requireInput(who, "v", v);
}

/// Shared body of aftFull / aftLocal: per (b, t, channel) a softmax over the
/// visible key positions t' of k_t' + bias(t, t'). `bias` returns the
/// effective bias; `visible(t, t')` selects the summed positions.
template <typename Bias, typename Visible>
std::vector<double> aftWithBias(int64_t batch, int64_t tLen, int64_t d, const float *q, const float *k, const float *v,
                                Bias bias, Visible visible, const char *who) {
  std::vector<double> out(static_cast<size_t>(batch * tLen * d));
  std::vector<double> logits(static_cast<size_t>(tLen));
  std::vector<double> vals(static_cast<size_t>(tLen));
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t base = b * tLen * d;
    for (int64_t t = 0; t < tLen; ++t) {
      for (int64_t c = 0; c < d; ++c) {
        size_t count = 0;
        for (int64_t tp = 0; tp < tLen; ++tp) {
          if (!visible(t, tp))
            continue;
          logits[count] = static_cast<double>(k[base + tp * d + c]) + bias(t, tp);
          vals[count] = static_cast<double>(v[base + tp * d + c]);
          ++count;
        }
        double avg = softmaxAverage(logits, vals, count, who);
        out[base + t * d + c] = sigmoid(static_cast<double>(q[base + t * d + c])) * avg;
      }
    }
  }
  return out;
}

void checkDecay(const char *who, const DecayDims &dims, const float *q, const float *k, const float *v, const void *g) {
  requirePositive(who, "batch", dims.batch);
  requirePositive(who, "heads", dims.heads);
  requirePositive(who, "T", dims.t);
  requirePositive(who, "K", dims.k);
  requirePositive(who, "V", dims.v);
  requireInput(who, "q", q);
  requireInput(who, "k", k);
  requireInput(who, "v", v);
  requireInput(who, "g", g);
}

double decayScale(const DecayDims &dims, std::optional<double> scale) {
  // SPEC §5: scale = K^{-1/2} on q (a parameter with that default).
  return scale ? *scale : 1.0 / std::sqrt(static_cast<double>(dims.k));
}

std::vector<double> widenAll(const float *src, int64_t count) {
  std::vector<double> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    out[i] = static_cast<double>(src[i]);
  return out;
}

} // namespace

//===----------------------------------------------------------------------===//
// AFT (SPEC §3)
//===----------------------------------------------------------------------===//

std::vector<double> aftCausal(int64_t batch, int64_t tLen, int64_t d, const float *q, const float *k, const float *v) {
  checkAft("aftCausal", batch, tLen, d, q, k, v);
  std::vector<double> out(static_cast<size_t>(batch * tLen * d));
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t base = b * tLen * d;
    for (int64_t c = 0; c < d; ++c) {
      for (int64_t t = 0; t < tLen; ++t) {
        // SPEC §3: Y_t = σ(q_t) Σ_{t'<=t} e^{k_t'} v_t' / Σ_{t'<=t} e^{k_t'},
        // with the prefix maximum subtracted (it cancels).
        double mx = kNegInf;
        for (int64_t tp = 0; tp <= t; ++tp)
          mx = std::max(mx, static_cast<double>(k[base + tp * d + c]));
        double num = 0.0, den = 0.0;
        for (int64_t tp = 0; tp <= t; ++tp) {
          double e = std::exp(static_cast<double>(k[base + tp * d + c]) - mx);
          num += e * static_cast<double>(v[base + tp * d + c]);
          den += e;
        }
        out[base + t * d + c] = sigmoid(static_cast<double>(q[base + t * d + c])) * num / den;
      }
    }
  }
  return out;
}

std::vector<double> aftSimple(int64_t batch, int64_t tLen, int64_t d, const float *q, const float *k, const float *v) {
  checkAft("aftSimple", batch, tLen, d, q, k, v);
  std::vector<double> out(static_cast<size_t>(batch * tLen * d));
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t base = b * tLen * d;
    for (int64_t c = 0; c < d; ++c) {
      // SPEC §3: one pooled vector per channel, softmax over all positions.
      double mx = kNegInf;
      for (int64_t tp = 0; tp < tLen; ++tp)
        mx = std::max(mx, static_cast<double>(k[base + tp * d + c]));
      double num = 0.0, den = 0.0;
      for (int64_t tp = 0; tp < tLen; ++tp) {
        double e = std::exp(static_cast<double>(k[base + tp * d + c]) - mx);
        num += e * static_cast<double>(v[base + tp * d + c]);
        den += e;
      }
      double pooled = num / den;
      for (int64_t t = 0; t < tLen; ++t)
        out[base + t * d + c] = sigmoid(static_cast<double>(q[base + t * d + c])) * pooled;
    }
  }
  return out;
}

std::vector<double> aftFull(int64_t batch, int64_t tLen, int64_t d, const float *q, const float *k, const float *v,
                            const float *w, bool causal) {
  checkAft("aftFull", batch, tLen, d, q, k, v);
  requireInput("aftFull", "w", w);
  // SPEC §3/§7: softmax_{t'}(k_t' + w_{t,t'} [+ −∞ for t' > t if causal]).
  return aftWithBias(
      batch, tLen, d, q, k, v, [&](int64_t t, int64_t tp) { return static_cast<double>(w[t * tLen + tp]); },
      [&](int64_t t, int64_t tp) { return !causal || tp <= t; }, "aftFull");
}

std::vector<double> aftLocal(int64_t batch, int64_t tLen, int64_t d, const float *q, const float *k, const float *v,
                             const float *w, int64_t window) {
  checkAft("aftLocal", batch, tLen, d, q, k, v);
  requireInput("aftLocal", "w", w);
  if (window < 0)
    fail("aftLocal", "window must be >= 0");
  // SPEC §3: w_{t,t'} where |t − t'| < s, and 0 (not −∞) outside; every t'
  // is visible.
  return aftWithBias(
      batch, tLen, d, q, k, v,
      [&](int64_t t, int64_t tp) {
        int64_t dist = t > tp ? t - tp : tp - t;
        return dist < window ? static_cast<double>(w[t * tLen + tp]) : 0.0;
      },
      [](int64_t, int64_t) { return true; }, "aftLocal");
}

std::vector<double> aftConv(int64_t batch, int64_t xLen, int64_t yLen, int64_t heads, int64_t c, const float *q,
                            const float *k, const float *v, const float *w, int64_t kernel) {
  const char *who = "aftConv";
  requirePositive(who, "batch", batch);
  requirePositive(who, "X", xLen);
  requirePositive(who, "Y", yLen);
  requirePositive(who, "heads", heads);
  requirePositive(who, "c", c);
  requireInput(who, "q", q);
  requireInput(who, "k", k);
  requireInput(who, "v", v);
  requireInput(who, "w", w);
  if (kernel < 1 || kernel % 2 == 0)
    fail(who, "kernel size s must be odd and >= 1");
  const int64_t p = (kernel - 1) / 2;
  const int64_t hc = heads * c;
  const int64_t positions = xLen * yLen;
  std::vector<double> out(static_cast<size_t>(batch * positions * hc));
  std::vector<double> logits(static_cast<size_t>(positions));
  std::vector<double> vals(static_cast<size_t>(positions));
  // Flat index of element (b, x, y, head, ch) in [B, X, Y, h, c].
  auto at = [&](int64_t b, int64_t x, int64_t y, int64_t i, int64_t ch) {
    return (((b * xLen + x) * yLen + y) * heads + i) * c + ch;
  };
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t x = 0; x < xLen; ++x)
      for (int64_t y = 0; y < yLen; ++y)
        for (int64_t i = 0; i < heads; ++i)
          for (int64_t ch = 0; ch < c; ++ch) {
            // Softmax over all (x', y') of k + w_eff (SPEC §3, AFT-conv).
            size_t count = 0;
            for (int64_t xp = 0; xp < xLen; ++xp)
              for (int64_t yp = 0; yp < yLen; ++yp) {
                int64_t dx = xp - x, dy = yp - y;
                double bias = 0.0;
                if (dx >= -p && dx <= p && dy >= -p && dy <= p)
                  bias = static_cast<double>(w[(i * kernel + (dx + p)) * kernel + (dy + p)]);
                logits[count] = static_cast<double>(k[at(b, xp, yp, i, ch)]) + bias;
                vals[count] = static_cast<double>(v[at(b, xp, yp, i, ch)]);
                ++count;
              }
            double avg = softmaxAverage(logits, vals, count, who);
            out[at(b, x, y, i, ch)] = sigmoid(static_cast<double>(q[at(b, x, y, i, ch)])) * avg;
          }
  return out;
}

//===----------------------------------------------------------------------===//
// GAU and FLASH (SPEC §4)
//===----------------------------------------------------------------------===//

std::vector<double> gau(int64_t batch, int64_t n, int64_t s, int64_t e, const float *u, const float *v, const float *q,
                        const float *k, bool causal) {
  const char *who = "gau";
  requirePositive(who, "batch", batch);
  requirePositive(who, "N", n);
  requirePositive(who, "s", s);
  requirePositive(who, "e", e);
  requireInput(who, "u", u);
  requireInput(who, "v", v);
  requireInput(who, "q", q);
  requireInput(who, "k", k);
  const double norm = static_cast<double>(n) * static_cast<double>(s);
  std::vector<double> out(static_cast<size_t>(batch * n * e), 0.0);
  std::vector<double> acc(static_cast<size_t>(e));
  for (int64_t b = 0; b < batch; ++b) {
    const float *qb = q + b * n * s, *kb = k + b * n * s;
    const float *vb = v + b * n * e, *ub = u + b * n * e;
    for (int64_t t = 0; t < n; ++t) {
      // SPEC §4: A = relu(Q Kᵀ)² / (N·s) [⊙ tril incl. diagonal]; O = U⊙(A V).
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t m = 0; m < n; ++m) {
        if (causal && m > t)
          continue;
        double dot = 0.0;
        for (int64_t j = 0; j < s; ++j)
          dot += static_cast<double>(qb[t * s + j]) * static_cast<double>(kb[m * s + j]);
        double a = relu2(dot) / norm;
        for (int64_t j = 0; j < e; ++j)
          acc[j] += a * static_cast<double>(vb[m * e + j]);
      }
      for (int64_t j = 0; j < e; ++j)
        out[(b * n + t) * e + j] = static_cast<double>(ub[t * e + j]) * acc[j];
    }
  }
  return out;
}

std::vector<double> flash(int64_t batch, int64_t n, int64_t s, int64_t e, const float *u, const float *v,
                          const float *qq, const float *kq, const float *ql, const float *kl, int64_t chunk,
                          bool causal, FlashParts *parts) {
  const char *who = "flash";
  requirePositive(who, "batch", batch);
  requirePositive(who, "N", n);
  requirePositive(who, "s", s);
  requirePositive(who, "e", e);
  requirePositive(who, "chunk", chunk);
  requireInput(who, "u", u);
  requireInput(who, "v", v);
  requireInput(who, "qq", qq);
  requireInput(who, "kq", kq);
  requireInput(who, "ql", ql);
  requireInput(who, "kl", kl);
  const size_t outSize = static_cast<size_t>(batch * n * e);
  std::vector<double> quad(outSize, 0.0), lin(outSize, 0.0);
  const double quadNorm = static_cast<double>(chunk) * static_cast<double>(s); // c·s, SPEC §4
  auto dot = [s](const float *a, const float *b) {
    double acc = 0.0;
    for (int64_t j = 0; j < s; ++j)
      acc += static_cast<double>(a[j]) * static_cast<double>(b[j]);
    return acc;
  };

  for (int64_t b = 0; b < batch; ++b) {
    const int64_t rowS = b * n * s, rowE = b * n * e;
    // Non-causal linear state Σ_{all m} kl_m ⊗ v_m, [s × e].
    std::vector<double> state(static_cast<size_t>(s * e), 0.0);
    if (!causal)
      for (int64_t m = 0; m < n; ++m)
        for (int64_t i = 0; i < s; ++i)
          for (int64_t j = 0; j < e; ++j)
            state[i * e + j] += static_cast<double>(kl[rowS + m * s + i]) * static_cast<double>(v[rowE + m * e + j]);

    for (int64_t t = 0; t < n; ++t) {
      const int64_t g = t / chunk;
      const int64_t start = g * chunk, end = std::min(start + chunk, n);
      double *vq = quad.data() + rowE + t * e;
      double *vl = lin.data() + rowE + t * e;
      // Quad part: keys of t's own chunk (rows past N are padding and
      // contribute nothing), divisor c·s even for a partial chunk.
      for (int64_t m = start; m < end; ++m) {
        if (causal && m > t)
          continue;
        double a = relu2(dot(qq + rowS + t * s, kq + rowS + m * s)) / quadNorm;
        for (int64_t j = 0; j < e; ++j)
          vq[j] += a * static_cast<double>(v[rowE + m * e + j]);
      }
      if (!causal) {
        // Vl_t = ql_t · (Σ_m kl_mᵀ v_m) / N.
        for (int64_t i = 0; i < s; ++i) {
          double qi = static_cast<double>(ql[rowS + t * s + i]);
          for (int64_t j = 0; j < e; ++j)
            vl[j] += qi * state[i * e + j] / static_cast<double>(n);
        }
      } else if (g > 0) {
        // Vl_t = ql_t · (Σ_{m < g·c} kl_mᵀ v_m) / (g·c): every earlier chunk
        // is full, so g·c is the number of previous tokens.
        const double prev = static_cast<double>(start);
        for (int64_t m = 0; m < start; ++m) {
          double a = dot(ql + rowS + t * s, kl + rowS + m * s) / prev;
          for (int64_t j = 0; j < e; ++j)
            vl[j] += a * static_cast<double>(v[rowE + m * e + j]);
        }
      }
    }
  }

  // Gated combine: O = U ⊙ (Vq + Vl).
  std::vector<double> out(outSize);
  for (size_t i = 0; i < outSize; ++i)
    out[i] = static_cast<double>(u[i]) * (quad[i] + lin[i]);
  if (parts) {
    parts->quad = std::move(quad);
    parts->linear = std::move(lin);
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Decay scans (SPEC §5)
//===----------------------------------------------------------------------===//

DecayResult decayRecurrent(const DecayDims &dims, const float *q, const float *k, const float *v, const double *g,
                           DecayGate gate, const double *h0, std::optional<double> scale) {
  checkDecay("decayRecurrent", dims, q, k, v, g);
  const int64_t T = dims.t, K = dims.k, V = dims.v;
  const bool perKey = gate == DecayGate::PerKey;
  const int64_t gStride = perKey ? K : 1;
  const double sc = decayScale(dims, scale);
  DecayResult res;
  res.o.assign(static_cast<size_t>(dims.vSize()), 0.0);
  res.finalState.assign(static_cast<size_t>(dims.stateSize()), 0.0);

  for (int64_t bh = 0; bh < dims.batch * dims.heads; ++bh) {
    double *S = res.finalState.data() + bh * K * V; // S [K × V], in place
    if (h0)
      std::copy(h0 + bh * K * V, h0 + (bh + 1) * K * V, S);
    for (int64_t t = 0; t < T; ++t) {
      const float *qt = q + (bh * T + t) * K;
      const float *kt = k + (bh * T + t) * K;
      const float *vt = v + (bh * T + t) * V;
      const double *gt = g + (bh * T + t) * gStride;
      // S_t = diag(e^{g_t}) S_{t−1} + k_t ⊗ v_t.
      for (int64_t i = 0; i < K; ++i) {
        double decay = std::exp(perKey ? gt[i] : gt[0]);
        for (int64_t j = 0; j < V; ++j)
          S[i * V + j] = decay * S[i * V + j] + static_cast<double>(kt[i]) * static_cast<double>(vt[j]);
      }
      // o_t = (scale · q_t) S_t.
      double *ot = res.o.data() + (bh * T + t) * V;
      for (int64_t i = 0; i < K; ++i) {
        double qi = sc * static_cast<double>(qt[i]);
        for (int64_t j = 0; j < V; ++j)
          ot[j] += qi * S[i * V + j];
      }
    }
  }
  return res;
}

DecayResult decayParallel(const DecayDims &dims, const float *q, const float *k, const float *v, const double *g,
                          DecayGate gate, const double *h0, std::optional<double> scale) {
  checkDecay("decayParallel", dims, q, k, v, g);
  const int64_t T = dims.t, K = dims.k, V = dims.v;
  const bool perKey = gate == DecayGate::PerKey;
  const int64_t gStride = perKey ? K : 1;
  const double sc = decayScale(dims, scale);
  DecayResult res;
  res.o.assign(static_cast<size_t>(dims.vSize()), 0.0);
  res.finalState.assign(static_cast<size_t>(dims.stateSize()), 0.0);
  // partial[i] = Σ_{s<r<=t} g_{r,i} (i ranges over gStride entries).
  std::vector<double> partial(static_cast<size_t>(gStride));
  auto logDecay = [&](int64_t i) { return partial[perKey ? i : 0]; };

  for (int64_t bh = 0; bh < dims.batch * dims.heads; ++bh) {
    const float *qb = q + bh * T * K, *kb = k + bh * T * K;
    const float *vb = v + bh * T * V;
    const double *gb = g + bh * T * gStride;
    const double *hb = h0 ? h0 + bh * K * V : nullptr;
    double *Sb = res.finalState.data() + bh * K * V;
    for (int64_t t = 0; t < T; ++t) {
      double *ot = res.o.data() + (bh * T + t) * V;
      const bool last = t == T - 1;
      std::fill(partial.begin(), partial.end(), 0.0);
      // Walk s = t, t−1, ..., 0; before step s, partial = Σ_{s<r<=t} g_r,
      // so exp(partial) = D_ts = exp(G_t − G_s).
      for (int64_t s = t; s >= 0; --s) {
        // o_t += Σ_k scale q_tk k_sk D_ts,k v_s.
        double coef = 0.0;
        for (int64_t i = 0; i < K; ++i)
          coef += sc * static_cast<double>(qb[t * K + i]) * static_cast<double>(kb[s * K + i]) * std::exp(logDecay(i));
        for (int64_t j = 0; j < V; ++j)
          ot[j] += coef * static_cast<double>(vb[s * V + j]);
        // S_{T−1} += diag(D_{T−1,s}) k_s ⊗ v_s.
        if (last)
          for (int64_t i = 0; i < K; ++i) {
            double ki = static_cast<double>(kb[s * K + i]) * std::exp(logDecay(i));
            for (int64_t j = 0; j < V; ++j)
              Sb[i * V + j] += ki * static_cast<double>(vb[s * V + j]);
          }
        for (int64_t i = 0; i < gStride; ++i)
          partial[i] += gb[s * gStride + i];
      }
      // Now partial = Σ_{r<=t} g_r = G_t: the h0 contributions
      // o_t += (scale q_t ⊙ e^{G_t}) h0 and S_{T−1} += diag(e^{G_{T−1}}) h0.
      if (hb)
        for (int64_t i = 0; i < K; ++i) {
          double decay = std::exp(logDecay(i));
          double qi = sc * static_cast<double>(qb[t * K + i]) * decay;
          for (int64_t j = 0; j < V; ++j) {
            ot[j] += qi * hb[i * V + j];
            if (last)
              Sb[i * V + j] += decay * hb[i * V + j];
          }
        }
    }
  }
  return res;
}

DecayResult simpleGla(const DecayDims &dims, const float *q, const float *k, const float *v, const float *g,
                      const float *h0, std::optional<double> scale) {
  checkDecay("simpleGla", dims, q, k, v, g);
  std::vector<double> gd = widenAll(g, dims.gateSize(false));
  std::vector<double> hd;
  if (h0)
    hd = widenAll(h0, dims.stateSize());
  return decayRecurrent(dims, q, k, v, gd.data(), DecayGate::PerHead, h0 ? hd.data() : nullptr, scale);
}

DecayResult gla(const DecayDims &dims, const float *q, const float *k, const float *v, const float *g, const float *h0,
                std::optional<double> scale) {
  checkDecay("gla", dims, q, k, v, g);
  std::vector<double> gd = widenAll(g, dims.gateSize(true));
  std::vector<double> hd;
  if (h0)
    hd = widenAll(h0, dims.stateSize());
  return decayRecurrent(dims, q, k, v, gd.data(), DecayGate::PerKey, h0 ? hd.data() : nullptr, scale);
}

double retentionLogDecay(int64_t head) {
  if (head < 0)
    fail("retentionLogDecay", "head must be >= 0");
  // SPEC §5: γ_h = 1 − 2^{−5−h}; log γ_h = log1p(−2^{−5−h}) (accurate for
  // γ_h close to 1).
  return std::log1p(-std::ldexp(1.0, static_cast<int>(-5 - head)));
}

std::vector<double> retentionGates(const DecayDims &dims) {
  requirePositive("retentionGates", "batch", dims.batch);
  requirePositive("retentionGates", "heads", dims.heads);
  requirePositive("retentionGates", "T", dims.t);
  std::vector<double> g(static_cast<size_t>(dims.gateSize(false)));
  for (int64_t b = 0; b < dims.batch; ++b)
    for (int64_t h = 0; h < dims.heads; ++h)
      std::fill_n(g.begin() + (b * dims.heads + h) * dims.t, dims.t, retentionLogDecay(h));
  return g;
}

DecayResult retention(const DecayDims &dims, const float *q, const float *k, const float *v, const float *h0,
                      std::optional<double> scale) {
  std::vector<double> gd = retentionGates(dims);
  std::vector<double> hd;
  if (h0)
    hd = widenAll(h0, dims.stateSize());
  return decayRecurrent(dims, q, k, v, gd.data(), DecayGate::PerHead, h0 ? hd.data() : nullptr, scale);
}

} // namespace oracle
} // namespace la
