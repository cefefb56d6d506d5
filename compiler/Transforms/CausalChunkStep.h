//===- CausalChunkStep.h - one chunk of a tril-masked contraction -*- C++ -*-===//
//
// The chunked form of a causal contraction (SPEC §1): for a chunk of positions, the inter-chunk part reads
// the state carried from earlier chunks, the intra-chunk part is a C×C masked product, and the state then
// absorbs the chunk. `la-chunk-scans` builds a loop of these steps for one contraction (rewrite 2).
//
//===----------------------------------------------------------------------===//
#ifndef LA_TRANSFORMS_CAUSALCHUNKSTEP_H
#define LA_TRANSFORMS_CAUSALCHUNKSTEP_H

#include "LA/IR/LAOps.h"
#include "mlir/IR/Builders.h"

#include <optional>
#include <string>

namespace mlir::la {

/// The letters of a causal contraction in the form the chunked rewrites handle: batch letters B, then the
/// query position n (or key position m), then the feature letter d (contracted) or e (value).
struct CausalLayout {
  std::string batch;
  char n = 0, m = 0, d = 0, e = 0; // e == 0 for the two-input (normaliser) form.
};

/// Matches "Bnd,Bmd,Bme->Bne" or "Bnd,Bmd->Bn" with mask tril(n, m), or "Bnd,Bmd,Bme->Bne" with mask
/// prior_block(n, m, c) (FLASH's causal linear part: only chunks before n's).
std::optional<CausalLayout> matchCausalContract(ContractOp op);

/// The zero state of `op`'s chunked form: [B.., D, Dv] with values, [B.., D] without.
Value buildZeroCausalState(OpBuilder &b, Location loc, ContractOp op, const CausalLayout &layout);

/// The chunk of `size` positions of `op` (tril or prior_block, see matchCausalContract), from its operands
/// restricted to the chunk (`vc` null without values) and the state of the earlier chunks. With values:
/// q_c·S plus tril(q_c k_cᵀ)·v_c (q_c·S alone for prior_block); without: q_c dotted with the in-chunk
/// prefix sum of k_c seeded with S, O(C·D) where tril(q_c k_cᵀ) summed over s would be O(C²·D).
Value buildCausalChunk(OpBuilder &b, Location loc, ContractOp op, const CausalLayout &layout, Value qc, Value kc,
                       Value vc, Value state, int64_t size);

/// The state after the chunk: S + k_cᵀ v_c, or S + Σ k_c without values.
Value buildCausalStateUpdate(OpBuilder &b, Location loc, ContractOp op, const CausalLayout &layout, Value kc,
                             Value vc, Value state);

} // namespace mlir::la

#endif // LA_TRANSFORMS_CAUSALCHUNKSTEP_H
