// Flow-Attention (Flowformer, seed 000), SPEC.md §2, following thuml/Flowformer `Flow_Attention.py`.
//
// Attention as a flow network: queries are sinks, keys are sources, φ = sigmoid. Incoming flow I_i and
// outgoing flow O_j are conserved by normalising with each other's aggregate (steps 3-4); sinks compete
// for flow through a softmax over sources (comp), and sources are gated by their allocation (alloc).
// eps = 1e-6 and the competition clamp [-1, 1] are attributes of the ops that use them.

!x = tensor<?x?x?x?xf32>     // [B, H, N|M, D|Dv]
!vec = tensor<?x?x?xf32>     // [B, H, D] or [B, H, N|M]
!state = tensor<?x?x?x?xf32> // [B, H, D, Dv]
!scan = tensor<?x?x?x?x?xf32> // [B, H, N, D, Dv], the naive causal state; the compiler chunks it away
!scalar = tensor<f32>

// Normal (non-causal): q: [B,H,N,D], k: [B,H,M,D], v: [B,H,M,Dv] -> [B,H,N,Dv].
func.func @flow_attention(%q: !x, %k: !x, %v: !x) -> !x {
  // 1. Non-negative feature map.
  %qs = la.map sigmoid %q : !x -> !x
  %ks = la.map sigmoid %k : !x -> !x
  %qe = la.map add_const(1.0e-6) %qs : !x -> !x
  %ke = la.map add_const(1.0e-6) %ks : !x -> !x
  // 2. Aggregate sink and source vectors.
  %sq = la.reduce add %qs along [2] : !x -> !vec
  %sk = la.reduce add %ks along [2] : !x -> !vec
  %sqe = la.map add_const(1.0e-6) %sq : !vec -> !vec
  %ske = la.map add_const(1.0e-6) %sk : !vec -> !vec
  // 3. a = 1/I (incoming flow of each sink), b = 1/O (outgoing flow of each source).
  %in = la.contract "bhnd,bhd->bhn" %qe, %ske : !x, !vec -> !vec
  %out = la.contract "bhmd,bhd->bhm" %ke, %sqe : !x, !vec -> !vec
  %a = la.map reciprocal %in : !vec -> !vec
  %b = la.map reciprocal %out : !vec -> !vec
  // 4. Conserved flows: Î_i = (q_i + eps)·(Σ_j k_j b_j + eps), Ô_j = (k_j + eps)·(Σ_i q_i a_i + eps).
  %kb = la.contract "bhmd,bhm->bhd" %ks, %b : !x, !vec -> !vec
  %qa = la.contract "bhnd,bhn->bhd" %qs, %a : !x, !vec -> !vec
  %kbe = la.map add_const(1.0e-6) %kb : !vec -> !vec
  %qae = la.map add_const(1.0e-6) %qa : !vec -> !vec
  %cin = la.contract "bhnd,bhd->bhn" %qe, %kbe : !x, !vec -> !vec
  %cout = la.contract "bhmd,bhd->bhm" %ke, %qae : !x, !vec -> !vec
  // 5. Competition input is clamped (active on ordinary inputs).
  %coutc = la.map clamp(-1.0, 1.0) %cout : !vec -> !vec
  // 6. alloc = σ(Î · N/M); comp = softmax over sources of Ô, times M.
  %n = la.size %q along 2 : !x -> !scalar
  %m = la.size %k along 2 : !x -> !scalar
  %ratio = la.map div %n, %m : !scalar, !scalar -> !scalar
  %cins = la.map mul "bhn,->bhn" %cin, %ratio : !vec, !scalar -> !vec
  %alloc = la.map sigmoid %cins : !vec -> !vec
  %soft = la.normalize softmax %coutc along 2 : !vec -> !vec
  %comp = la.map mul "bhm,->bhm" %soft, %m : !vec, !scalar -> !vec
  // 7. R_i = alloc_i · a_i · (q_i · Σ_j k_j ⊗ (V_j comp_j)).
  %vc = la.map mul "bhme,bhm->bhme" %v, %comp : !x, !vec -> !x
  %kv = la.contract "bhmd,bhme->bhde" %ks, %vc : !x, !x -> !state
  %qkv = la.contract "bhnd,bhde->bhne" %qs, %kv : !x, !state -> !x
  %w = la.map mul %alloc, %a : !vec, !vec -> !vec
  %r = la.gate identity %w, %qkv : !vec, !x -> !x
  return %r : !x
}

// Causal (N = M): q, k: [B,H,N,D], v: [B,H,N,Dv] -> [B,H,N,Dv]. Every aggregate becomes a prefix scan and
// each position t is normalised by its prefix length n_t = t + 1.
func.func @flow_attention_causal(%q: !x, %k: !x, %v: !x) -> !x {
  // 1. Feature map and prefix aggregates Cq_t = Σ_{s≤t} q_s, Ck_t = Σ_{s≤t} k_s.
  %qs = la.map sigmoid %q : !x -> !x
  %ks = la.map sigmoid %k : !x -> !x
  %qe = la.map add_const(1.0e-6) %qs : !x -> !x
  %ke = la.map add_const(1.0e-6) %ks : !x -> !x
  %cq = la.scan add %qs along 2 inclusive : !x -> !x
  %ck = la.scan add %ks along 2 inclusive : !x -> !x
  %cqe = la.map add_const(1.0e-6) %cq : !x -> !x
  %cke = la.map add_const(1.0e-6) %ck : !x -> !x
  // 2. a_t = n_t / ((q_t + eps)·(Ck_t + eps)), b_t = n_t / ((k_t + eps)·(Cq_t + eps)).
  %in = la.contract "bhnd,bhnd->bhn" %qe, %cke : !x, !x -> !vec
  %out = la.contract "bhnd,bhnd->bhn" %ke, %cqe : !x, !x -> !vec
  %count = la.map "bhn->bhn" %in : !vec -> !vec {
  ^bb0(%unused: f32):
    %t = la.index 2 : f32
    %one = arith.constant 1.0 : f32
    %nt = arith.addf %t, %one : f32
    la.yield %nt : f32
  }
  %a = la.map div %count, %in : !vec, !vec -> !vec
  %b = la.map div %count, %out : !vec, !vec -> !vec
  // 3. Î_t = (q_t + eps)·(Σ_{s≤t} k_s b_s + eps) / n_t, Ô_t = (k_t + eps)·(Σ_{s≤t} q_s a_s + eps) / n_t.
  %kb = la.map mul "bhnd,bhn->bhnd" %ks, %b : !x, !vec -> !x
  %qa = la.map mul "bhnd,bhn->bhnd" %qs, %a : !x, !vec -> !x
  %ckb = la.scan add %kb along 2 inclusive : !x -> !x
  %cqa = la.scan add %qa along 2 inclusive : !x -> !x
  %ckbe = la.map add_const(1.0e-6) %ckb : !x -> !x
  %cqae = la.map add_const(1.0e-6) %cqa : !x -> !x
  %cin_sum = la.contract "bhnd,bhnd->bhn" %qe, %ckbe : !x, !x -> !vec
  %cout_sum = la.contract "bhnd,bhnd->bhn" %ke, %cqae : !x, !x -> !vec
  %cin = la.map div %cin_sum, %count : !vec, !vec -> !vec
  %cout = la.map div %cout_sum, %count : !vec, !vec -> !vec
  // 4. Clamped competition input, allocation without the N/M factor.
  %coutc = la.map clamp(-1.0, 1.0) %cout : !vec -> !vec
  %alloc = la.map sigmoid %cin : !vec -> !vec
  // 5. comp_t = n_t · e_t / Σ_{s≤t} e_s: each source normalised by its own prefix (e ≤ e^1, no overflow).
  %e = la.map exp %coutc : !vec -> !vec
  %ce = la.scan add %e along 2 inclusive : !vec -> !vec
  %share = la.map div %e, %ce : !vec, !vec -> !vec
  %comp = la.map mul %share, %count : !vec, !vec -> !vec
  // 6. R_t = alloc_t · (a_t / n_t) · Σ_{s≤t} (q_t·k_s) V_s comp_s, as a prefix scan of k_s ⊗ V_s comp_s.
  %vc = la.map mul "bhne,bhn->bhne" %v, %comp : !x, !vec -> !x
  %kv = la.contract "bhnd,bhne->bhnde" %ks, %vc : !x, !x -> !scan
  %s = la.scan add %kv along 2 inclusive : !scan -> !scan
  %num = la.contract "bhnd,bhnde->bhne" %qs, %s : !x, !scan -> !x
  %aw = la.map div %a, %count : !vec, !vec -> !vec
  %w = la.map mul %alloc, %aw : !vec, !vec -> !vec
  %r = la.gate identity %w, %num : !vec, !x -> !x
  return %r : !x
}
