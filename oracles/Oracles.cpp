//===- Oracles.cpp - fp64 reference oracles for the attention kernels -----===//
//
// Implementation of Oracles.h. Every formula cites the SPEC section it comes
// from (/work/shared/SPEC.md). The quadratic oracles deliberately take every
// sequence sum as a row/column sum of a dense N×M matrix, while the recurrent
// forms use the D-dimensional global/prefix sums of §1/§2: the two then share
// no summation order, so their agreement is evidence that both transcribe
// the spec correctly rather than that they share a bug.
//
//===----------------------------------------------------------------------===//

#include "Oracles.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace la {
namespace oracle {

namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// Validates dims once per public entry point so a mis-sized call fails
/// loudly instead of reading out of bounds.
void checkDims(const AttnDims &dims, bool causal, const char *who) {
  if (dims.batch < 1 || dims.heads < 1 || dims.n < 1 || dims.m < 1 || dims.d < 1 || dims.dv < 1)
    throw std::invalid_argument(std::string(who) + ": every dimension must be >= 1");
  // SPEC notation: "Causal ⇒ N = M".
  if (causal && dims.n != dims.m)
    throw std::invalid_argument(std::string(who) + ": causal needs N == M");
}

/// Per-(b, h) views into the head-major buffers [B, H, L, X].
struct HeadSlices {
  int64_t qOff, kOff, vOff, oOff, nOff, mOff;
};

HeadSlices slicesFor(const AttnDims &dims, int64_t b, int64_t h) {
  int64_t bh = b * dims.heads + h;
  return {bh * dims.n * dims.d,  bh * dims.m * dims.d, bh * dims.m * dims.dv,
          bh * dims.n * dims.dv, bh * dims.n,          bh * dims.m};
}

/// Widens `count` floats starting at `src` to fp64, applying `f`.
template <typename F> std::vector<double> widen(const float *src, int64_t count, F f) {
  std::vector<double> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    out[i] = f(static_cast<double>(src[i]));
  return out;
}

double clampTo(double x, double lo, double hi) { return std::min(std::max(x, lo), hi); }

void allocateIntermediates(FlowIntermediates *inter, const AttnDims &dims) {
  if (!inter)
    return;
  size_t nSize = static_cast<size_t>(dims.batch * dims.heads * dims.n);
  size_t mSize = static_cast<size_t>(dims.batch * dims.heads * dims.m);
  inter->sinkIncoming.assign(nSize, 0.0);
  inter->sourceOutgoing.assign(mSize, 0.0);
  inter->conservedSink.assign(nSize, 0.0);
  inter->conservedSource.assign(mSize, 0.0);
  inter->sinkAllocation.assign(nSize, 0.0);
  inter->sourceCompetition.assign(mSize, 0.0);
}

/// Stores one head's intermediates (each vector indexed by position).
void storeIntermediates(FlowIntermediates *inter, const HeadSlices &s, const std::vector<double> &a,
                        const std::vector<double> &bOut, const std::vector<double> &iHat,
                        const std::vector<double> &oHat, const std::vector<double> &alloc,
                        const std::vector<double> &comp) {
  if (!inter)
    return;
  std::copy(a.begin(), a.end(), inter->sinkIncoming.begin() + s.nOff);
  std::copy(bOut.begin(), bOut.end(), inter->sourceOutgoing.begin() + s.mOff);
  std::copy(iHat.begin(), iHat.end(), inter->conservedSink.begin() + s.nOff);
  std::copy(oHat.begin(), oHat.end(), inter->conservedSource.begin() + s.mOff);
  std::copy(alloc.begin(), alloc.end(), inter->sinkAllocation.begin() + s.nOff);
  std::copy(comp.begin(), comp.end(), inter->sourceCompetition.begin() + s.mOff);
}

uint64_t splitmix64(uint64_t &state) {
  // Steele, Lea, Flood 2014 (the reference splitmix64): fixed here so inputs
  // never depend on the standard library's distributions.
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

template <typename T> ErrorStats compareImpl(const double *ref, const T *got, int64_t n) {
  ErrorStats stats;
  double diffSq = 0.0, refSq = 0.0, maxAbs = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double g = static_cast<double>(got[i]);
    if (!std::isfinite(g)) {
      if (stats.firstNonFinite < 0)
        stats.firstNonFinite = i;
      continue;
    }
    double e = g - ref[i];
    diffSq += e * e;
    refSq += ref[i] * ref[i];
    maxAbs = std::max(maxAbs, std::fabs(e));
  }
  if (stats.firstNonFinite >= 0) {
    // A non-finite output must fail any tolerance check.
    stats.relRms = stats.maxAbs = std::numeric_limits<double>::infinity();
    return stats;
  }
  // SPEC §7: relative RMS error ‖x−y‖₂/‖y‖₂ with y the fp64 reference.
  if (refSq == 0.0)
    stats.relRms = diffSq == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
  else
    stats.relRms = std::sqrt(diffSq / refSq);
  stats.maxAbs = maxAbs;
  return stats;
}

template <typename T> ErrorStats compareVectors(const std::vector<double> &ref, const std::vector<T> &got) {
  if (ref.size() != got.size()) {
    ErrorStats stats;
    stats.relRms = stats.maxAbs = std::numeric_limits<double>::infinity();
    return stats;
  }
  return compareImpl(ref.data(), got.data(), static_cast<int64_t>(ref.size()));
}

} // namespace

double applyFeatureMap(FeatureMap phi, double x) {
  // SPEC §1: φ ∈ {elu+1, relu, sigmoid, identity}.
  switch (phi) {
  case FeatureMap::Elu1:
    return x > 0.0 ? x + 1.0 : std::exp(x); // elu(x) + 1
  case FeatureMap::Relu:
    return x > 0.0 ? x : 0.0;
  case FeatureMap::Sigmoid:
    return sigmoid(x);
  case FeatureMap::Identity:
    return x;
  }
  return x;
}

//===----------------------------------------------------------------------===//
// Linear attention
//===----------------------------------------------------------------------===//

std::vector<double> linearAttention(const AttnDims &dims, const float *q, const float *k, const float *v, bool causal,
                                    FeatureMap phi, double eps, const uint8_t *keyMask) {
  checkDims(dims, causal, "linearAttention");
  const int64_t n = dims.n, m = dims.m, d = dims.d, dv = dims.dv;
  auto fmap = [phi](double x) { return applyFeatureMap(phi, x); };
  std::vector<double> out(static_cast<size_t>(dims.outSize()), 0.0);
  std::vector<double> w(static_cast<size_t>(n * m));

  for (int64_t b = 0; b < dims.batch; ++b) {
    for (int64_t h = 0; h < dims.heads; ++h) {
      HeadSlices s = slicesFor(dims, b, h);
      std::vector<double> fq = widen(q + s.qOff, n * d, fmap);
      std::vector<double> fk = widen(k + s.kOff, m * d, fmap);
      std::vector<double> vv = widen(v + s.vOff, m * dv, [](double x) { return x; });
      // SPEC §7: W = mask ⊙ (φ(Q) φ(K)ᵀ); mask = ones or tril (s <= t). The
      // key padding mask of §1 zeroes φ(K_j), i.e. column j of W.
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < m; ++j) {
          bool keep = (!causal || j <= i) && (!keyMask || keyMask[b * m + j]);
          double dot = 0.0;
          if (keep)
            for (int64_t c = 0; c < d; ++c)
              dot += fq[i * d + c] * fk[j * d + c];
          w[i * m + j] = dot;
        }
      }
      // SPEC §7: O = rownorm(W) V with den = rowsum + eps.
      for (int64_t i = 0; i < n; ++i) {
        double den = eps;
        for (int64_t j = 0; j < m; ++j)
          den += w[i * m + j];
        double *o = out.data() + s.oOff + i * dv;
        for (int64_t j = 0; j < m; ++j) {
          double wij = w[i * m + j] / den;
          for (int64_t e = 0; e < dv; ++e)
            o[e] += wij * vv[j * dv + e];
        }
      }
    }
  }
  return out;
}

std::vector<double> linearAttentionRecurrent(const AttnDims &dims, const float *q, const float *k, const float *v,
                                             bool causal, FeatureMap phi, double eps, const uint8_t *keyMask) {
  checkDims(dims, causal, "linearAttentionRecurrent");
  const int64_t n = dims.n, m = dims.m, d = dims.d, dv = dims.dv;
  std::vector<double> out(static_cast<size_t>(dims.outSize()), 0.0);
  std::vector<double> state(static_cast<size_t>(d * dv)); // S [D×Dv]
  std::vector<double> z(static_cast<size_t>(d));          // z [D]
  std::vector<double> fk(static_cast<size_t>(d)), fq(static_cast<size_t>(d));

  for (int64_t b = 0; b < dims.batch; ++b) {
    for (int64_t h = 0; h < dims.heads; ++h) {
      HeadSlices s = slicesFor(dims, b, h);
      std::fill(state.begin(), state.end(), 0.0);
      std::fill(z.begin(), z.end(), 0.0);
      // S += φ(K_j) ⊗ V_j and z += φ(K_j) (SPEC §1); padded keys skipped
      // because the key padding mask multiplies φ(K_j) by 0.
      auto accumulateKey = [&](int64_t j) {
        if (keyMask && !keyMask[b * m + j])
          return;
        for (int64_t c = 0; c < d; ++c)
          fk[c] = applyFeatureMap(phi, k[s.kOff + j * d + c]);
        for (int64_t c = 0; c < d; ++c) {
          z[c] += fk[c];
          for (int64_t e = 0; e < dv; ++e)
            state[c * dv + e] += fk[c] * v[s.vOff + j * dv + e];
        }
      };
      // O_i = φ(Q_i) S / (φ(Q_i)·z + eps) (SPEC §1).
      auto readOut = [&](int64_t i) {
        for (int64_t c = 0; c < d; ++c)
          fq[c] = applyFeatureMap(phi, q[s.qOff + i * d + c]);
        double den = 0.0;
        for (int64_t c = 0; c < d; ++c)
          den += fq[c] * z[c];
        den += eps;
        double *o = out.data() + s.oOff + i * dv;
        for (int64_t e = 0; e < dv; ++e) {
          double num = 0.0;
          for (int64_t c = 0; c < d; ++c)
            num += fq[c] * state[c * dv + e];
          o[e] = num / den;
        }
      };
      if (causal) {
        // SPEC §1 causal: S_t = S_{t−1} + φ(K_t)⊗V_t, then read out at t.
        for (int64_t t = 0; t < n; ++t) {
          accumulateKey(t);
          readOut(t);
        }
      } else {
        for (int64_t j = 0; j < m; ++j)
          accumulateKey(j);
        for (int64_t i = 0; i < n; ++i)
          readOut(i);
      }
    }
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Flow-Attention
//===----------------------------------------------------------------------===//

std::vector<double> flowAttention(const AttnDims &dims, const float *q, const float *k, const float *v, bool causal,
                                  double eps, double clampLo, double clampHi, FlowIntermediates *inter) {
  checkDims(dims, causal, "flowAttention");
  const int64_t n = dims.n, m = dims.m, d = dims.d, dv = dims.dv;
  std::vector<double> out(static_cast<size_t>(dims.outSize()), 0.0);
  allocateIntermediates(inter, dims);

  // Dense flow matrices, rows = sinks i (queries), columns = sources j (keys):
  //   A_ij  = q_i·k_j               (SPEC §7, the attention matrix)
  //   P_ij  = (q_i + eps)·k_j       (sink side: eps on the query vector)
  //   Qp_ij = q_i·(k_j + eps)       (source side: eps on the key vector)
  // With ‖x + eps‖₁ = Σ_c (x_c + eps), every eps-placed dot product of §2 is a
  // row/column sum of these matrices plus an eps·‖·‖₁ term, e.g.
  //   (q_i + eps)·(sk + eps) = Σ_j P_ij + eps·‖q_i + eps‖₁.
  std::vector<double> mA(static_cast<size_t>(n * m)), mP(static_cast<size_t>(n * m)), mQp(static_cast<size_t>(n * m));
  std::vector<double> l1q(static_cast<size_t>(n)), l1k(static_cast<size_t>(m));
  std::vector<double> a(static_cast<size_t>(n)), bOut(static_cast<size_t>(m)), iHat(static_cast<size_t>(n)),
      oHat(static_cast<size_t>(m)), oHatC(static_cast<size_t>(m)), alloc(static_cast<size_t>(n)),
      comp(static_cast<size_t>(m));

  for (int64_t b = 0; b < dims.batch; ++b) {
    for (int64_t h = 0; h < dims.heads; ++h) {
      HeadSlices s = slicesFor(dims, b, h);
      // SPEC §2 step 1: φ = σ on both queries and keys.
      std::vector<double> sq = widen(q + s.qOff, n * d, sigmoid);
      std::vector<double> sk = widen(k + s.kOff, m * d, sigmoid);
      std::vector<double> vv = widen(v + s.vOff, m * dv, [](double x) { return x; });

      for (int64_t i = 0; i < n; ++i) {
        l1q[i] = 0.0;
        for (int64_t c = 0; c < d; ++c)
          l1q[i] += sq[i * d + c] + eps;
      }
      for (int64_t j = 0; j < m; ++j) {
        l1k[j] = 0.0;
        for (int64_t c = 0; c < d; ++c)
          l1k[j] += sk[j * d + c] + eps;
      }
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < m; ++j) {
          double dotA = 0.0, dotP = 0.0, dotQp = 0.0;
          for (int64_t c = 0; c < d; ++c) {
            double qc = sq[i * d + c], kc = sk[j * d + c];
            dotA += qc * kc;
            dotP += (qc + eps) * kc;
            dotQp += qc * (kc + eps);
          }
          mA[i * m + j] = dotA;
          mP[i * m + j] = dotP;
          mQp[i * m + j] = dotQp;
        }
      }

      if (!causal) {
        // SPEC §2 normal, step 3: a_i = 1/((q_i+eps)·(sk+eps)),
        // b_j = 1/((k_j+eps)·(sq+eps)); sk = Σ_j k_j is the row sum of P.
        for (int64_t i = 0; i < n; ++i) {
          double incoming = eps * l1q[i];
          for (int64_t j = 0; j < m; ++j)
            incoming += mP[i * m + j];
          a[i] = 1.0 / incoming;
        }
        for (int64_t j = 0; j < m; ++j) {
          double outgoing = eps * l1k[j];
          for (int64_t i = 0; i < n; ++i)
            outgoing += mQp[i * m + j];
          bOut[j] = 1.0 / outgoing;
        }
        // Step 4: Î_i = (q_i+eps)·(Σ_j k_j b_j + eps),
        //         Ô_j = (k_j+eps)·(Σ_i q_i a_i + eps).
        for (int64_t i = 0; i < n; ++i) {
          double acc = eps * l1q[i];
          for (int64_t j = 0; j < m; ++j)
            acc += mP[i * m + j] * bOut[j];
          iHat[i] = acc;
        }
        for (int64_t j = 0; j < m; ++j) {
          double acc = eps * l1k[j];
          for (int64_t i = 0; i < n; ++i)
            acc += mQp[i * m + j] * a[i];
          oHat[j] = acc;
        }
        // Step 5: Ô ← clamp(Ô, −1, 1). Step 6: alloc_i = σ(Î_i·N/M),
        // comp = softmax_j(Ô)·M, written as M / Σ_j' exp(Ô_j' − Ô_j) so no
        // exponential can overflow even with the clamp disabled.
        for (int64_t j = 0; j < m; ++j)
          oHatC[j] = clampTo(oHat[j], clampLo, clampHi);
        for (int64_t i = 0; i < n; ++i)
          alloc[i] = sigmoid(iHat[i] * static_cast<double>(n) / static_cast<double>(m));
        for (int64_t j = 0; j < m; ++j) {
          double z = 0.0;
          for (int64_t jj = 0; jj < m; ++jj)
            z += std::exp(oHatC[jj] - oHatC[j]);
          comp[j] = static_cast<double>(m) / z;
        }
        // SPEC §7: R = diag(alloc) diag(a) A diag(comp) V.
        for (int64_t i = 0; i < n; ++i) {
          double *o = out.data() + s.oOff + i * dv;
          double rowScale = alloc[i] * a[i];
          for (int64_t j = 0; j < m; ++j) {
            double wij = rowScale * mA[i * m + j] * comp[j];
            for (int64_t e = 0; e < dv; ++e)
              o[e] += wij * vv[j * dv + e];
          }
        }
      } else {
        // SPEC §2 causal, step 2: with Ck_t = Σ_{s<=t} k_s, Cq_t = Σ_{s<=t} q_s,
        //   a_t = n_t / ((q_t+eps)·(Ck_t+eps)) = n_t / (Σ_{s<=t} P_ts + eps‖q_t+eps‖₁)
        //   b_t = n_t / ((k_t+eps)·(Cq_t+eps)) = n_t / (Σ_{s<=t} Qp_st + eps‖k_t+eps‖₁)
        // (the source side sums column t of Qp over rows s <= t, as the
        // reference code's queries.cumsum does).
        for (int64_t t = 0; t < n; ++t) {
          double nt = static_cast<double>(t + 1);
          double incoming = eps * l1q[t], outgoing = eps * l1k[t];
          for (int64_t u = 0; u <= t; ++u) {
            incoming += mP[t * m + u];
            outgoing += mQp[u * m + t];
          }
          a[t] = nt / incoming;
          bOut[t] = nt / outgoing;
        }
        // Step 3: Î_t = (q_t+eps)·(Σ_{s<=t} k_s b_s + eps) / n_t,
        //         Ô_t = (k_t+eps)·(Σ_{s<=t} q_s a_s + eps) / n_t.
        for (int64_t t = 0; t < n; ++t) {
          double nt = static_cast<double>(t + 1);
          double accI = eps * l1q[t], accO = eps * l1k[t];
          for (int64_t u = 0; u <= t; ++u) {
            accI += mP[t * m + u] * bOut[u];
            accO += mQp[u * m + t] * a[u];
          }
          iHat[t] = accI / nt;
          oHat[t] = accO / nt;
        }
        // Step 4: clamp Ô, alloc_t = σ(Î_t) (no N/M factor).
        // Step 5: comp_t = n_t e_t / Σ_{s<=t} e_s = n_t / Σ_{s<=t} e^{Ô_s − Ô_t}.
        for (int64_t t = 0; t < n; ++t) {
          oHatC[t] = clampTo(oHat[t], clampLo, clampHi);
          alloc[t] = sigmoid(iHat[t]);
        }
        for (int64_t t = 0; t < n; ++t) {
          double z = 0.0;
          for (int64_t u = 0; u <= t; ++u)
            z += std::exp(oHatC[u] - oHatC[t]);
          comp[t] = static_cast<double>(t + 1) / z;
        }
        // Step 6: R_t = alloc_t (a_t/n_t) Σ_{s<=t} A_ts comp_s V_s
        // (SPEC §7 "causal likewise over s <= t").
        for (int64_t t = 0; t < n; ++t) {
          double *o = out.data() + s.oOff + t * dv;
          double rowScale = alloc[t] * a[t] / static_cast<double>(t + 1);
          for (int64_t u = 0; u <= t; ++u) {
            double w = rowScale * mA[t * m + u] * comp[u];
            for (int64_t e = 0; e < dv; ++e)
              o[e] += w * vv[u * dv + e];
          }
        }
      }
      storeIntermediates(inter, s, a, bOut, iHat, oHat, alloc, comp);
    }
  }
  return out;
}

std::vector<double> flowAttentionRecurrent(const AttnDims &dims, const float *q, const float *k, const float *v,
                                           bool causal, double eps, double clampLo, double clampHi,
                                           FlowIntermediates *inter) {
  checkDims(dims, causal, "flowAttentionRecurrent");
  const int64_t n = dims.n, m = dims.m, d = dims.d, dv = dims.dv;
  std::vector<double> out(static_cast<size_t>(dims.outSize()), 0.0);
  allocateIntermediates(inter, dims);

  std::vector<double> a(static_cast<size_t>(n)), bOut(static_cast<size_t>(m)), iHat(static_cast<size_t>(n)),
      oHat(static_cast<size_t>(m)), alloc(static_cast<size_t>(n)), comp(static_cast<size_t>(m));
  std::vector<double> sumQ(static_cast<size_t>(d)), sumK(static_cast<size_t>(d)), sumKB(static_cast<size_t>(d)),
      sumQA(static_cast<size_t>(d));
  std::vector<double> kv(static_cast<size_t>(d * dv));

  // x·(y + eps) for D-vectors, with eps added elementwise to y (SPEC §2).
  auto dotEps = [d](const double *x, const double *y, double e) {
    double acc = 0.0;
    for (int64_t c = 0; c < d; ++c)
      acc += (x[c] + e) * (y[c] + e);
    return acc;
  };

  for (int64_t b = 0; b < dims.batch; ++b) {
    for (int64_t h = 0; h < dims.heads; ++h) {
      HeadSlices s = slicesFor(dims, b, h);
      std::vector<double> sq = widen(q + s.qOff, n * d, sigmoid);
      std::vector<double> sk = widen(k + s.kOff, m * d, sigmoid);
      std::fill(sumQ.begin(), sumQ.end(), 0.0);
      std::fill(sumK.begin(), sumK.end(), 0.0);
      std::fill(sumKB.begin(), sumKB.end(), 0.0);
      std::fill(sumQA.begin(), sumQA.end(), 0.0);
      std::fill(kv.begin(), kv.end(), 0.0);

      if (!causal) {
        // SPEC §2 normal, step 2: sq = Σ_i q_i, sk = Σ_j k_j.
        for (int64_t i = 0; i < n; ++i)
          for (int64_t c = 0; c < d; ++c)
            sumQ[c] += sq[i * d + c];
        for (int64_t j = 0; j < m; ++j)
          for (int64_t c = 0; c < d; ++c)
            sumK[c] += sk[j * d + c];
        // Step 3.
        for (int64_t i = 0; i < n; ++i)
          a[i] = 1.0 / dotEps(&sq[i * d], sumK.data(), eps);
        for (int64_t j = 0; j < m; ++j)
          bOut[j] = 1.0 / dotEps(&sk[j * d], sumQ.data(), eps);
        // Step 4: Σ_j k_j b_j and Σ_i q_i a_i, then the conserved flows.
        for (int64_t j = 0; j < m; ++j)
          for (int64_t c = 0; c < d; ++c)
            sumKB[c] += sk[j * d + c] * bOut[j];
        for (int64_t i = 0; i < n; ++i)
          for (int64_t c = 0; c < d; ++c)
            sumQA[c] += sq[i * d + c] * a[i];
        for (int64_t i = 0; i < n; ++i)
          iHat[i] = dotEps(&sq[i * d], sumKB.data(), eps);
        for (int64_t j = 0; j < m; ++j)
          oHat[j] = dotEps(&sk[j * d], sumQA.data(), eps);
        // Steps 5-6: clamp, allocation σ(Î·N/M), competition softmax(Ô)·M
        // (max-subtracted softmax, the usual stable form).
        double maxO = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < m; ++j)
          maxO = std::max(maxO, clampTo(oHat[j], clampLo, clampHi));
        double z = 0.0;
        for (int64_t j = 0; j < m; ++j) {
          comp[j] = std::exp(clampTo(oHat[j], clampLo, clampHi) - maxO);
          z += comp[j];
        }
        for (int64_t j = 0; j < m; ++j)
          comp[j] = comp[j] / z * static_cast<double>(m);
        for (int64_t i = 0; i < n; ++i)
          alloc[i] = sigmoid(iHat[i] * static_cast<double>(n) / static_cast<double>(m));
        // Step 7: R_i = alloc_i · a_i · (q_i · Σ_j k_j ⊗ (V_j comp_j)).
        for (int64_t j = 0; j < m; ++j)
          for (int64_t c = 0; c < d; ++c) {
            double kc = sk[j * d + c] * comp[j];
            for (int64_t e = 0; e < dv; ++e)
              kv[c * dv + e] += kc * v[s.vOff + j * dv + e];
          }
        for (int64_t i = 0; i < n; ++i) {
          double *o = out.data() + s.oOff + i * dv;
          double scale = alloc[i] * a[i];
          for (int64_t e = 0; e < dv; ++e) {
            double acc = 0.0;
            for (int64_t c = 0; c < d; ++c)
              acc += sq[i * d + c] * kv[c * dv + e];
            o[e] = scale * acc;
          }
        }
      } else {
        // SPEC §2 causal: one forward sweep of prefix states. Everything
        // position t needs (Ck_t, Cq_t, Σ_{s<=t} k_s b_s, Σ_{s<=t} q_s a_s,
        // Σ_{s<=t} e_s, Σ_{s<=t} k_s ⊗ V_s comp_s) is a prefix ending at t.
        double runMax = -std::numeric_limits<double>::infinity();
        double runSum = 0.0; // Σ_{s<=t} e^{Ô_s − runMax}
        for (int64_t t = 0; t < n; ++t) {
          double nt = static_cast<double>(t + 1);
          const double *qt = &sq[t * d], *kt = &sk[t * d];
          // Step 1: prefix sums Ck_t, Cq_t.
          for (int64_t c = 0; c < d; ++c) {
            sumK[c] += kt[c];
            sumQ[c] += qt[c];
          }
          // Step 2.
          a[t] = nt / dotEps(qt, sumK.data(), eps);
          bOut[t] = nt / dotEps(kt, sumQ.data(), eps);
          // Step 3.
          for (int64_t c = 0; c < d; ++c) {
            sumKB[c] += kt[c] * bOut[t];
            sumQA[c] += qt[c] * a[t];
          }
          iHat[t] = dotEps(qt, sumKB.data(), eps) / nt;
          oHat[t] = dotEps(kt, sumQA.data(), eps) / nt;
          // Step 4.
          double oc = clampTo(oHat[t], clampLo, clampHi);
          alloc[t] = sigmoid(iHat[t]);
          // Step 5: comp_t = n_t e_t / Σ_{s<=t} e_s, with the prefix sum kept
          // relative to a running maximum (online softmax) for stability.
          double newMax = std::max(runMax, oc);
          runSum = runSum * std::exp(runMax - newMax) + std::exp(oc - newMax);
          runMax = newMax;
          comp[t] = nt * std::exp(oc - runMax) / runSum;
          // Step 6: state += k_t ⊗ (V_t comp_t); R_t = alloc_t (a_t/n_t) q_t·state.
          for (int64_t c = 0; c < d; ++c) {
            double kc = kt[c] * comp[t];
            for (int64_t e = 0; e < dv; ++e)
              kv[c * dv + e] += kc * v[s.vOff + t * dv + e];
          }
          double *o = out.data() + s.oOff + t * dv;
          double scale = alloc[t] * a[t] / nt;
          for (int64_t e = 0; e < dv; ++e) {
            double acc = 0.0;
            for (int64_t c = 0; c < d; ++c)
              acc += qt[c] * kv[c * dv + e];
            o[e] = scale * acc;
          }
        }
      }
      storeIntermediates(inter, s, a, bOut, iHat, oHat, alloc, comp);
    }
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Error metrics and inputs
//===----------------------------------------------------------------------===//

ErrorStats compare(const double *ref, const float *got, int64_t n) { return compareImpl(ref, got, n); }

ErrorStats compare(const double *ref, const double *got, int64_t n) { return compareImpl(ref, got, n); }

ErrorStats compare(const std::vector<double> &ref, const std::vector<float> &got) { return compareVectors(ref, got); }

ErrorStats compare(const std::vector<double> &ref, const std::vector<double> &got) { return compareVectors(ref, got); }

void fillUniform(std::vector<float> &out, uint64_t seed, float lo, float hi) {
  uint64_t state = seed;
  for (float &x : out) {
    // 53 random bits → a double in [0, 1).
    double u = static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;
    float f = static_cast<float>(static_cast<double>(lo) + (static_cast<double>(hi) - lo) * u);
    // Rounding to float may land on hi; keep the interval half-open.
    if (f >= hi && hi > lo)
      f = std::nextafter(hi, lo);
    x = f;
  }
}

std::vector<float> uniform(int64_t n, uint64_t seed, float lo, float hi) {
  std::vector<float> out(static_cast<size_t>(n));
  fillUniform(out, seed, lo, hi);
  return out;
}

} // namespace oracle
} // namespace la
