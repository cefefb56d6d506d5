//===- Oracles.h - fp64 reference oracles for the attention kernels -------===//
//
// Double-precision reference implementations of linear attention (SPEC §1)
// and Flow-Attention (SPEC §2), written from /work/shared/SPEC.md and not from
// the project's kernels, so that a kernel bug cannot be copied into its own
// oracle.
//
// Each mechanism has two independent implementations:
//   * the naive QUADRATIC form of SPEC §7 (dense N×M attention / flow
//     matrices, every sequence sum taken as a row or column sum of that
//     matrix). These are the oracles the numerics tests compare kernels
//     against.
//   * a RECURRENT / linear form following the formulas of §1 and §2
//     literally (global sums, prefix-sum recurrences). They cross-check the
//     quadratic oracles (tests/numerics/OracleSelfTest.cpp), and la-bench
//     compares kernels with them at N up to 16K, where the quadratic forms'
//     N×M matrices per head would not fit in memory (the recurrent forms
//     take O(N·D·Dv) time and O(N·D) memory per head).
//
// Layouts are head-major (SPEC notation): q [B,H,N,D], k [B,H,M,D],
// v [B,H,M,Dv], output [B,H,N,Dv], all dense row-major. Causal forms need
// N == M. Inputs are fp32 (what the kernels consume) and are widened to fp64
// before any arithmetic; outputs are fp64.
//
// No LLVM dependency: this file is linked into plain gtest executables, the
// demo and the benchmark (library LAOracles, oracles/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#ifndef LA_ORACLES_ORACLES_H
#define LA_ORACLES_ORACLES_H

#include <cstdint>
#include <limits>
#include <vector>

namespace la {
namespace oracle {

/// Problem sizes shared by every oracle. `n` is the number of queries
/// (sinks), `m` the number of keys/values (sources); causal forms require
/// n == m. Aggregate so a call site can write `{B, H, N, M, D, Dv}`.
struct AttnDims {
  int64_t batch = 1;
  int64_t heads = 1;
  int64_t n = 1;
  int64_t m = 1;
  int64_t d = 1;
  int64_t dv = 1;

  int64_t qSize() const { return batch * heads * n * d; }
  int64_t kSize() const { return batch * heads * m * d; }
  int64_t vSize() const { return batch * heads * m * dv; }
  int64_t outSize() const { return batch * heads * n * dv; }
};

/// Feature maps of SPEC §1 (elu+1 is the default).
enum class FeatureMap { Elu1, Relu, Sigmoid, Identity };

/// Applies one feature map to one scalar (exposed for tests).
double applyFeatureMap(FeatureMap phi, double x);

//===----------------------------------------------------------------------===//
// Linear attention (SPEC §1, oracle form §7)
//===----------------------------------------------------------------------===//

/// Quadratic oracle of SPEC §7:
///   O = rownorm(mask ⊙ (φ(Q) φ(K)ᵀ)) V,  den = rowsum + eps,
/// mask = ones (non-causal) or tril (causal, t sees s <= t).
/// `keyMask` (optional, [B, M], nonzero = keep) is the key padding mask of
/// §1, applied after φ: a padded key contributes to neither numerator nor
/// denominator.
std::vector<double> linearAttention(const AttnDims &dims, const float *q, const float *k, const float *v, bool causal,
                                    FeatureMap phi = FeatureMap::Elu1, double eps = 1e-6,
                                    const uint8_t *keyMask = nullptr);

/// Recurrent form of SPEC §1 (S = Σ φ(K_j) ⊗ V_j, z = Σ φ(K_j); causal: the
/// prefix recurrences S_t, z_t). Same contract as linearAttention; used to
/// cross-check it.
std::vector<double> linearAttentionRecurrent(const AttnDims &dims, const float *q, const float *k, const float *v,
                                             bool causal, FeatureMap phi = FeatureMap::Elu1, double eps = 1e-6,
                                             const uint8_t *keyMask = nullptr);

//===----------------------------------------------------------------------===//
// Flow-Attention (SPEC §2, oracle form §7)
//===----------------------------------------------------------------------===//

/// Intermediate quantities of Flow-Attention, per (b, h, position), laid out
/// [B, H, N] for sink quantities and [B, H, M] for source quantities. Handy
/// for debugging a kernel stage by stage and for the clamp self-test.
struct FlowIntermediates {
  std::vector<double> sinkIncoming;      ///< a   [B,H,N] (§2 normal 3 / causal 2)
  std::vector<double> sourceOutgoing;    ///< b   [B,H,M]
  std::vector<double> conservedSink;     ///< Î   [B,H,N]
  std::vector<double> conservedSource;   ///< Ô   [B,H,M], BEFORE the clamp
  std::vector<double> sinkAllocation;    ///< alloc [B,H,N]
  std::vector<double> sourceCompetition; ///< comp [B,H,M] (uses clamped Ô)
};

/// Quadratic oracle of SPEC §7 for Flow-Attention:
///   A = q kᵀ,  R = diag(σ(Î·N/M)) diag(a) A diag(comp) V
/// with the eps placements of §2 (eps added to every element of both vectors
/// in each dot product), Ô clamped to [clampLo, clampHi] (default [-1, 1]),
/// comp = softmax(Ô)·M. Causal (N == M): the same over s <= t with the causal
/// definitions of §2 (n_t = t+1, alloc = σ(Î) with no N/M factor,
/// comp_t = n_t e_t / Σ_{s<=t} e_s, and the a_t / n_t factor).
/// Pass clampLo = -inf, clampHi = +inf to disable the clamp. If `inter` is
/// non-null it receives the intermediates.
std::vector<double> flowAttention(const AttnDims &dims, const float *q, const float *k, const float *v, bool causal,
                                  double eps = 1e-6, double clampLo = -1.0, double clampHi = 1.0,
                                  FlowIntermediates *inter = nullptr);

/// Linear-time form following SPEC §2 step by step (global sums for the
/// normal form, prefix sums for the causal form, Σ_j k_j ⊗ (V_j comp_j)
/// state). Same contract as flowAttention; used to cross-check it.
std::vector<double> flowAttentionRecurrent(const AttnDims &dims, const float *q, const float *k, const float *v,
                                           bool causal, double eps = 1e-6, double clampLo = -1.0, double clampHi = 1.0,
                                           FlowIntermediates *inter = nullptr);

//===----------------------------------------------------------------------===//
// Error metrics (SPEC §7) and deterministic inputs
//===----------------------------------------------------------------------===//

/// Error of `got` against the fp64 reference `ref` (SPEC §7).
struct ErrorStats {
  /// ‖got − ref‖₂ / ‖ref‖₂ (0 when both are zero; +inf when only ref is
  /// zero, or when got has a non-finite element).
  double relRms = 0.0;
  /// max_i |got_i − ref_i| (+inf when got has a non-finite element).
  double maxAbs = 0.0;
  /// Index of the first non-finite element of `got`, -1 if none.
  int64_t firstNonFinite = -1;
};

ErrorStats compare(const double *ref, const float *got, int64_t n);
ErrorStats compare(const double *ref, const double *got, int64_t n);
/// Vector forms; a size mismatch is reported as relRms = maxAbs = +inf.
ErrorStats compare(const std::vector<double> &ref, const std::vector<float> &got);
ErrorStats compare(const std::vector<double> &ref, const std::vector<double> &got);

/// Fills `out` (keeping its size) with values uniform in [lo, hi) drawn from
/// splitmix64 seeded with `seed`. The generator is spelled out in Oracles.cpp
/// so that inputs are bit-identical across standard libraries and machines.
void fillUniform(std::vector<float> &out, uint64_t seed, float lo, float hi);

/// Convenience: a fresh vector of `n` such values.
std::vector<float> uniform(int64_t n, uint64_t seed, float lo, float hi);

} // namespace oracle
} // namespace la

#endif // LA_ORACLES_ORACLES_H
