// GAU and FLASH (seed 001, "Transformer Quality in Linear Time"), SPEC.md §4.
//
// Single head. The kernels take the gate U and value V ([B, N, e]) and the query/key pairs ([B, N, s])
// that the offset-scale projections of the shared Z produce; projections and output W_o stay outside.
// Attention weights are relu(q·k)², unbounded and accumulated in f32.

!uv = tensor<?x?x?xf32>   // [B, N, e]
!qk = tensor<?x?x?xf32>   // [B, N, s]
!att = tensor<?x?x?xf32>  // [B, N, N]
!kv = tensor<?x?x?xf32>   // [B, s, e]
!scalar = tensor<f32>

// GAU / FLASH-Quad: O = U ⊙ ((relu(Q Kᵀ)² / (N·s)) V). Quadratic by definition.
func.func @gau(%u: !uv, %v: !uv, %q: !qk, %k: !qk) -> !uv {
  %n = la.size %q along 1 : !qk -> !scalar
  %s = la.size %q along 2 : !qk -> !scalar
  %ns = la.map mul %n, %s : !scalar, !scalar -> !scalar
  %qk = la.contract "bns,bms->bnm" %q, %k : !qk, !qk -> !att
  %sq = la.map relu2 %qk : !att -> !att
  %a = la.map div "bnm,->bnm" %sq, %ns : !att, !scalar -> !att
  %av = la.contract "bnm,bme->bne" %a, %v : !att, !uv -> !uv
  %o = la.gate identity %u, %av : !uv, !uv -> !uv
  return %o : !uv
}

// FLASH mixed-chunk attention, chunk c = 256 (the block size of the masks; the last chunk may be partial).
// Quadratic within a chunk, linear across the whole sequence:
//   Vq = (relu(Qq Kqᵀ)² / (c·s) ⊙ block) V,   Vl = Ql (Σ_m Kl_mᵀ V_m) / N,   O = U ⊙ (Vq + Vl).
func.func @flash(%u: !uv, %v: !uv, %qq: !qk, %kq: !qk, %ql: !qk, %kl: !qk) -> !uv {
  %n = la.size %ql along 1 : !qk -> !scalar
  %s = la.size %qq along 2 : !qk -> !scalar
  // Quadratic part, block-diagonal.
  %qk = la.contract "bns,bms->bnm" %qq, %kq mask block(n, m, 256) : !qk, !qk -> !att
  %sq = la.map relu2 %qk : !att -> !att
  %sqc = la.map mul_const(3.90625e-3) %sq : !att -> !att
  %a = la.map div "bnm,->bnm" %sqc, %s : !att, !scalar -> !att
  %vq = la.contract "bnm,bme->bne" %a, %v mask block(n, m, 256) : !att, !uv -> !uv
  // Linear part over all positions.
  %state = la.contract "bms,bme->bse" %kl, %v : !qk, !uv -> !kv
  %lin = la.contract "bns,bse->bne" %ql, %state : !qk, !kv -> !uv
  %vl = la.map div "bne,->bne" %lin, %n : !uv, !scalar -> !uv
  %o = la.gate identity %u, %vq, %vl : !uv, !uv, !uv -> !uv
  return %o : !uv
}

// Causal FLASH: the quadratic part is lower-triangular inside each chunk; the linear part of chunk g sees
// only earlier chunks (an exclusive scan over chunk states), normalised by their token count g·c:
//   Vl_g = Ql_g (Σ_{h<g} Kl_hᵀ V_h) / (g·c) for g ≥ 1, and 0 for the first chunk.
func.func @flash_causal(%u: !uv, %v: !uv, %qq: !qk, %kq: !qk, %ql: !qk, %kl: !qk) -> !uv {
  %s = la.size %qq along 2 : !qk -> !scalar
  %qk = la.contract "bns,bms->bnm" %qq, %kq mask causal_block(n, m, 256) : !qk, !qk -> !att
  %sq = la.map relu2 %qk : !att -> !att
  %sqc = la.map mul_const(3.90625e-3) %sq : !att -> !att
  %a = la.map div "bnm,->bnm" %sqc, %s : !att, !scalar -> !att
  %vq = la.contract "bnm,bme->bne" %a, %v mask causal_block(n, m, 256) : !att, !uv -> !uv
  %lin = la.contract "bns,bms,bme->bne" %ql, %kl, %v mask prior_block(n, m, 256) : !qk, !qk, !uv -> !uv
  // Divide chunk g by g·c, the number of tokens before it (max(., 1) keeps chunk 0 at 0 / 1 = 0).
  %vl = la.map "bne->bne" %lin : !uv -> !uv {
  ^bb0(%x: f32):
    %t = la.index 1 : index
    %c = arith.constant 256 : index
    %g = arith.divui %t, %c : index
    %prior = arith.muli %g, %c : index
    %one = arith.constant 1 : index
    %count = arith.maxui %prior, %one : index
    %counti = arith.index_cast %count : index to i64
    %countf = arith.uitofp %counti : i64 to f32
    %r = arith.divf %x, %countf : f32
    la.yield %r : f32
  }
  %o = la.gate identity %u, %vq, %vl : !uv, !uv, !uv -> !uv
  return %o : !uv
}
