// Linear attention (Katharopoulos et al. 2020), SPEC.md §1.
//
// Feature map φ = elu + 1. Per batch b and head h, with Q: N×D, K: M×D, V: M×Dv:
//   non-causal  O_i = φ(Q_i) S / (φ(Q_i)·z + eps),      S = Σ_j φ(K_j) ⊗ V_j,   z = Σ_j φ(K_j)
//   causal      O_t = φ(Q_t) S_t / (φ(Q_t)·z_t + eps),  S_t, z_t the same sums over j ≤ t
// eps = 1e-6. Another feature map is a one-word change (relu, sigmoid, identity).

!qk = tensor<?x?x?x?xf32>    // [B, H, N, D] and [B, H, M, D]
!vo = tensor<?x?x?x?xf32>    // [B, H, M, Dv] and [B, H, N, Dv]
!state = tensor<?x?x?x?xf32> // [B, H, D, Dv]
!vec = tensor<?x?x?xf32>     // [B, H, D] or [B, H, N]

// q: [B,H,N,D], k: [B,H,M,D], v: [B,H,M,Dv] -> [B,H,N,Dv]
func.func @linear_attention(%q: !qk, %k: !qk, %v: !vo) -> !vo {
  %qf = la.map elu1 %q : !qk -> !qk
  %kf = la.map elu1 %k : !qk -> !qk
  // Global state: one sweep over the keys.
  %s = la.contract "bhmd,bhme->bhde" %kf, %v : !qk, !vo -> !state
  %z = la.reduce add %kf along [2] : !qk -> !vec
  // Read-out: one sweep over the queries.
  %num = la.contract "bhnd,bhde->bhne" %qf, %s : !qk, !state -> !vo
  %den = la.contract "bhnd,bhd->bhn" %qf, %z : !qk, !vec -> !vec
  %o = la.normalize sum %num by %den along 3 eps(1.0e-6) : !vo, !vec -> !vo
  return %o : !vo
}

// Causal (N = M): q, k: [B,H,N,D], v: [B,H,N,Dv] -> [B,H,N,Dv]. Written as the prefix scan of outer
// products; the compiler turns it into chunks and never materialises the [B,H,N,D,Dv] scan.
func.func @linear_attention_causal(%q: !qk, %k: !qk, %v: !vo) -> !vo {
  %qf = la.map elu1 %q : !qk -> !qk
  %kf = la.map elu1 %k : !qk -> !qk
  %kv = la.contract "bhnd,bhne->bhnde" %kf, %v : !qk, !vo -> tensor<?x?x?x?x?xf32>
  %s = la.scan add %kv along 2 inclusive : tensor<?x?x?x?x?xf32> -> tensor<?x?x?x?x?xf32>
  %z = la.scan add %kf along 2 inclusive : !qk -> !qk
  %num = la.contract "bhnd,bhnde->bhne" %qf, %s : !qk, tensor<?x?x?x?x?xf32> -> !vo
  %den = la.contract "bhnd,bhnd->bhn" %qf, %z : !qk, !qk -> !vec
  %o = la.normalize sum %num by %den along 3 eps(1.0e-6) : !vo, !vec -> !vo
  return %o : !vo
}
