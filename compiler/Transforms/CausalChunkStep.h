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
  char n = 0, m = 0, d = 0, e = 0;
};

/// Matches "Bnd,Bmd,Bme->Bne" with mask tril(n, m) or prior_block(n, m, c) (FLASH's causal linear part:
/// only chunks before n's). The normaliser form "Bnd,Bmd->Bn" is not matched: a normaliser is chunked as
/// a dot with a prefix sum (ChunkScanReaders.cpp).
std::optional<CausalLayout> matchCausalContract(ContractOp op);

/// The zero state of `op`'s chunked form: [B.., D, Dv].
/// The carried state of a tril-masked contraction: its batch dims, then [D, Dv].
RankedTensorType getCausalStateType(ContractOp op, const CausalLayout &layout);

Value buildZeroCausalState(OpBuilder &b, Location loc, ContractOp op, const CausalLayout &layout);

/// The chunk of `size` positions of `op` (tril or prior_block, see matchCausalContract), from its operands
/// restricted to the chunk and the state of the earlier chunks: q_c·S plus tril(q_c k_cᵀ)·v_c (q_c·S
/// alone for prior_block).
Value buildCausalChunk(OpBuilder &b, Location loc, ContractOp op, const CausalLayout &layout, Value qc, Value kc,
                       Value vc, Value state, int64_t size);

/// The state after the chunk: S + k_cᵀ v_c.
Value buildCausalStateUpdate(OpBuilder &b, Location loc, ContractOp op, const CausalLayout &layout, Value kc, Value vc,
                             Value state);

} // namespace mlir::la

#endif // LA_TRANSFORMS_CAUSALCHUNKSTEP_H
