//===- LibraryOracles.h - fp64 oracles for AFT, GAU/FLASH and decay scans -===//
//
// Double-precision reference implementations of the remaining kernel
// families of /work/shared/SPEC.md, written from the SPEC (sections 3, 4, 5
// and 7) and not from the project's kernels, so that a kernel bug cannot be
// copied into its own oracle:
//   * AFT, Attention Free Transformer (SPEC §3): causal, simple, full,
//     local and conv variants;
//   * GAU and FLASH mixed-chunk attention (SPEC §4);
//   * decay scans (SPEC §5): retention (RetNet), simple GLA (one log-gate per
//     head and step) and GLA (one log-gate per key dimension), each as the
//     recurrent loop and as the parallel (masked decay matrix) form.
//
// Layouts (all dense row-major, innermost dimension last):
//   AFT          q, k, v, out [B, T, d]; w [T, T] (row t = query position);
//   AFT-conv     q, k, v, out [B, X, Y, h, c] (spatial X×Y, h heads, c
//                channels per head); w [h, s, s], s odd;
//   GAU / FLASH  u, v, out [B, N, e]; q, k, qq, kq, ql, kl [B, N, s];
//   decay scans  q, k [B, H, T, K]; v, out [B, H, T, V]; state [B, H, K, V];
//                log-gate [B, H, T] (per head) or [B, H, T, K] (per key).
//
// Every oracle is a naive loop over the SPEC's defining formula (O(T²) where
// the formula is a sum over positions). Exponentials are stabilised in fp64:
// softmax-style sums subtract the maximum logit before exp, decay factors are
// exponentials of partial sums of log-gates (never of differences of large
// cumulative sums), so logits of ±80 and far beyond give finite, accurate
// results. Inputs are fp32 (what the kernels consume) and are widened to fp64
// before any arithmetic; outputs are fp64. The decay-scan core functions take
// the log-gate and the initial state in fp64 (see decayRecurrent) so that
// the retention constant and a state handed from one run to the next are
// not rounded to fp32.
//
// Misuse (a dimension < 1, a null required input, an even AFT-conv kernel,
// ...) throws std::invalid_argument. Comparison metrics and the
// deterministic input generator are the ones of Oracles.h.
//
// No LLVM dependency: this file is linked into plain gtest executables and
// the benchmark (library LAOracles, oracles/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#ifndef LA_ORACLES_LIBRARYORACLES_H
#define LA_ORACLES_LIBRARYORACLES_H

#include "Oracles.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace la {
namespace oracle {

//===----------------------------------------------------------------------===//
// AFT (SPEC §3, oracle form §7)
//===----------------------------------------------------------------------===//
//
// No heads (except AFT-conv): every channel is independent. σ is the logistic
// sigmoid. Every variant is, per channel,
//   Y_t = σ(q_t) · Σ_{t'} softmax_{t'}(k_{t'} + w_{t,t'}) · v_{t'}
// with a variant-specific bias w and set of visible t'.

/// Causal AFT-softmax (SPEC §3, seed Eq. 4). q, k, v, out: [B, T, d].
///   Y_t = σ(q_t) ⊙ Σ_{t'≤t} e^{k_t'} ⊙ v_t' / Σ_{t'≤t} e^{k_t'}
/// per channel, computed per (t, channel) with the prefix maximum of k
/// subtracted before exp.
std::vector<double> aftCausal(int64_t batch, int64_t t, int64_t d, const float *q, const float *k, const float *v);

/// AFT-simple (SPEC §3). q, k, v, out: [B, T, d].
///   Y_t = σ(q_t) ⊙ Σ_{t'} softmax_{t'}(k)_{t'} ⊙ v_t'
/// (softmax over all positions, per channel: one pooled vector per channel,
/// gated by each position's σ(q_t)).
std::vector<double> aftSimple(int64_t batch, int64_t t, int64_t d, const float *q, const float *k, const float *v);

/// AFT-full (SPEC §3). q, k, v, out: [B, T, d]; w: [T, T], w[t][t'] the bias
/// of query position t for key position t', shared by all batches/channels.
///   Y_t = σ(q_t) ⊙ Σ_{t'} e^{k_t'+w_{t,t'}} ⊙ v_t' / Σ_{t'} e^{k_t'+w_{t,t'}}
/// Causal: only t' ≤ t are summed (w_{t,t'} = −∞ for t' > t; the upper
/// triangle of w is never read). Entries of w may be −∞ (masked), but every
/// (t, channel) must keep at least one finite logit, else it throws.
std::vector<double> aftFull(int64_t batch, int64_t t, int64_t d, const float *q, const float *k, const float *v,
                            const float *w, bool causal);

/// AFT-local with window s = `window` >= 0 (SPEC §3). q, k, v, out:
/// [B, T, d]; w: [T, T] (only the band |t−t'| < s is read). As aftFull
/// (non-causal) with the effective bias
///   w_eff(t, t') = w[t][t'] if |t−t'| < s, else 0 (NOT −∞),
/// i.e. Y_t = σ(q_t) ⊙ Σ_{t'} softmax_{t'}(k_t' + w_eff(t,t')) v_t' over all
/// t'. Computed directly as that softmax (not via the SPEC's expm1
/// decomposition, which the self-test uses as an independent check).
/// window = 0 gives aftSimple; window >= T gives aftFull(w, non-causal).
std::vector<double> aftLocal(int64_t batch, int64_t t, int64_t d, const float *q, const float *k, const float *v,
                             const float *w, int64_t window);

/// AFT-conv (SPEC §3), 2-D. q, k, v, out: [B, X, Y, h, c] (spatial X×Y, h
/// heads, c channels per head); w: [h, s, s] with s = `kernel` odd >= 1,
/// p = (s−1)/2. For every channel of head i, with the effective bias
///   w_eff((x,y),(x',y')) = w[i][x'−x+p][y'−y+p]  if |x'−x| <= p and
///                                                   |y'−y| <= p,
///                        = 0                     otherwise,
///   Y(x,y) = σ(q(x,y)) ⊙ Σ_{x',y'} e^{k(x',y')+w_eff} v(x',y')
///                       / Σ_{x',y'} e^{k(x',y')+w_eff}
/// over ALL spatial positions (x', y'). This equals the SPEC's conv2d form
/// (zero padding, cross-correlation orientation, kernel e^{w} − 1).
std::vector<double> aftConv(int64_t batch, int64_t x, int64_t y, int64_t heads, int64_t c, const float *q,
                            const float *k, const float *v, const float *w, int64_t kernel);

//===----------------------------------------------------------------------===//
// GAU and FLASH (SPEC §4, oracle form §7)
//===----------------------------------------------------------------------===//
//
// relu2(x) = max(x, 0)². Single head; the projections, norms, RoPE and the
// offset-scale producing the Q/K pairs are outside the kernels, so the
// oracles take U, V and the Q/K pairs directly.

/// GAU / FLASH-Quad (SPEC §4). u, v, out: [B, N, e]; q, k: [B, N, s].
///   A = relu(q kᵀ)² / (N·s)  [⊙ tril, diagonal included, if causal]
///   O = u ⊙ (A v)
std::vector<double> gau(int64_t batch, int64_t n, int64_t s, int64_t e, const float *u, const float *v, const float *q,
                        const float *k, bool causal);

/// The two branches of flash() before the U gate, each [B, N, e].
struct FlashParts {
  std::vector<double> quad;   ///< Vq: the block-diagonal relu² term
  std::vector<double> linear; ///< Vl: the linear (global / block-lower) term
};

/// FLASH mixed-chunk attention (SPEC §4). u, v, out: [B, N, e]; qq, kq, ql,
/// kl: [B, N, s]; chunk size c = `chunk` >= 1. Chunk g covers rows
/// [g·c, min((g+1)·c, N)); the last chunk may be partial (its padded keys
/// contribute nothing; the quad divisor stays c·s). For t in chunk g:
///   Vq_t = Σ_{m ∈ chunk g [, m <= t if causal]} relu(qq_t·kq_m)² / (c·s) v_m
///   Vl_t = ql_t · (Σ_{all m} kl_m ⊗ v_m) / N                   (non-causal)
///   Vl_t = ql_t · (Σ_{m < g·c} kl_m ⊗ v_m) / (g·c), 0 for g = 0  (causal)
///   O_t  = u_t ⊙ (Vq_t + Vl_t)
/// If `parts` is non-null it receives Vq and Vl.
std::vector<double> flash(int64_t batch, int64_t n, int64_t s, int64_t e, const float *u, const float *v,
                          const float *qq, const float *kq, const float *ql, const float *kl, int64_t chunk,
                          bool causal, FlashParts *parts = nullptr);

//===----------------------------------------------------------------------===//
// Decay scans: retention, simple GLA, GLA (SPEC §5, oracle form §7)
//===----------------------------------------------------------------------===//

/// Problem sizes of a decay scan. `k` is the key (state row) dimension,
/// `v` the value (state column) dimension. Aggregate: `{B, H, T, K, V}`.
struct DecayDims {
  int64_t batch = 1;
  int64_t heads = 1;
  int64_t t = 1;
  int64_t k = 1;
  int64_t v = 1;

  int64_t qkSize() const { return batch * heads * t * k; }    ///< q, k
  int64_t vSize() const { return batch * heads * t * v; }     ///< v, out
  int64_t stateSize() const { return batch * heads * k * v; } ///< h0, S_T
  /// Number of log-gate values for a gate kind: [B,H,T] or [B,H,T,K].
  int64_t gateSize(bool perKey) const { return batch * heads * t * (perKey ? k : 1); }
};

/// How the log-gate is laid out (SPEC §5).
enum class DecayGate {
  PerHead, ///< g [B, H, T]: one scalar per head and step (retention, simple
           ///< GLA); S_t = e^{g_t} S_{t−1} + k_t ⊗ v_t
  PerKey,  ///< g [B, H, T, K]: one per key dimension (GLA);
           ///< S_t = diag(e^{g_t}) S_{t−1} + k_t ⊗ v_t
};

/// Result of a decay scan.
struct DecayResult {
  std::vector<double> o;          ///< [B, H, T, V]
  std::vector<double> finalState; ///< S_{T−1} after the last step [B,H,K,V]
};

/// Recurrent decay scan (SPEC §5), the defining loop. q, k: [B,H,T,K];
/// v: [B,H,T,V]; g: log-gates in fp64, laid out per `gate`; h0: optional
/// initial state [B,H,K,V] in fp64 (nullptr = zeros). For t = 0..T−1:
///   S_t = diag(e^{g_t}) S_{t−1} + k_t ⊗ v_t      (S_{−1} = h0)
///   o_t = (scale · q_t) S_t
/// with scale = K^{−1/2} unless `scale` is given. The SPEC's gates are
/// <= 0; any finite g is computed literally. Returns o and S_{T−1}.
DecayResult decayRecurrent(const DecayDims &dims, const float *q, const float *k, const float *v, const double *g,
                           DecayGate gate, const double *h0 = nullptr, std::optional<double> scale = std::nullopt);

/// Parallel form of the same scan (SPEC §5/§7), for cross-checking
/// decayRecurrent. Same contract and layouts. With G the inclusive cumsum of
/// g over time (per key dimension for DecayGate::PerKey):
///   o_t = Σ_{s<=t} Σ_k scale q_tk k_sk exp(G_tk − G_sk) v_s
///         + Σ_k scale q_tk exp(G_tk) h0_k
///   S_{T−1} = Σ_s diag(exp(G_{T−1} − G_s)) k_s ⊗ v_s
///             + diag(exp(G_{T−1})) h0
/// (per-head gates: the same with G broadcast over k). Every exponent
/// G_t − G_s is accumulated directly as the partial sum Σ_{s<r<=t} g_r (and
/// G_t as Σ_{r<=t} g_r), so strongly negative gates never produce a
/// cancelling difference of huge cumulative sums or an overflowing exp.
DecayResult decayParallel(const DecayDims &dims, const float *q, const float *k, const float *v, const double *g,
                          DecayGate gate, const double *h0 = nullptr, std::optional<double> scale = std::nullopt);

/// Simple GLA (SPEC §5): decayRecurrent with per-head gates. q, k:
/// [B,H,T,K]; v: [B,H,T,V]; g: [B,H,T] fp32 log-gates; h0: optional fp32
/// initial state [B,H,K,V]. Returns o [B,H,T,V] and the final state.
DecayResult simpleGla(const DecayDims &dims, const float *q, const float *k, const float *v, const float *g,
                      const float *h0 = nullptr, std::optional<double> scale = std::nullopt);

/// GLA (SPEC §5): decayRecurrent with per-key gates. q, k: [B,H,T,K];
/// v: [B,H,T,V]; g: [B,H,T,K] fp32 log-gates; h0: optional fp32 initial
/// state [B,H,K,V]. Returns o [B,H,T,V] and the final state.
DecayResult gla(const DecayDims &dims, const float *q, const float *k, const float *v, const float *g,
                const float *h0 = nullptr, std::optional<double> scale = std::nullopt);

/// Retention's constant log-decay of head `head` (SPEC §5):
///   log γ_h = log(1 − 2^{−5−h}), computed as log1p(−2^{−5−h}) in fp64.
double retentionLogDecay(int64_t head);

/// The retention gates as a per-head fp64 log-gate tensor [B, H, T]
/// (entry (b, h, t) = retentionLogDecay(h)), for decayRecurrent /
/// decayParallel.
std::vector<double> retentionGates(const DecayDims &dims);

/// Retention (RetNet, SPEC §5): decayRecurrent with per-head gates
/// retentionGates(dims) kept in fp64. q, k: [B,H,T,K]; v: [B,H,T,V]; h0:
/// optional fp32 initial state [B,H,K,V]. Returns o [B,H,T,V] and the final
/// state.
DecayResult retention(const DecayDims &dims, const float *q, const float *k, const float *v, const float *h0 = nullptr,
                      std::optional<double> scale = std::nullopt);

} // namespace oracle
} // namespace la

#endif // LA_ORACLES_LIBRARYORACLES_H
