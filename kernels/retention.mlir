// Decay scans: retention (RetNet), simple gated linear attention and GLA, SPEC.md §5, following fla
// `fla/ops/{retention,simple_gla,gla}/naive.py`.
//
// Per batch b and head h, with log-gates g ≤ 0 and q scaled by K^{-1/2}:
//   S_t = exp(g_t) S_{t-1} + k_t ⊗ v_t      (GLA: diag(exp(g_t)) S_{t-1}, one gate per key dimension)
//   o_t = (scale·q_t) S_t
// Written as the recurrent scan; the compiler produces the chunked form (intra-chunk decay-masked products
// plus an inter-chunk state scan) without materialising the [B,H,T,K,V] states.

!x = tensor<?x?x?x?xf32>       // q, k: [B, H, T, K]; v, o: [B, H, T, V]
!g = tensor<?x?x?xf32>         // per-head log-gate [B, H, T]
!s = tensor<?x?x?x?x?xf32>     // [B, H, T, K, V]
!h = tensor<?x?x?x?xf32>       // a state [B, H, K, V]
!scalar = tensor<f32>

// Scales q by K^{-1/2}.
// Shared by the three kernels below through inlining; kept as a function so the scale is stated once.
func.func private @scale_queries(%q: !x) -> !x {
  %dk = la.size %q along 3 : !x -> !scalar
  %qs = la.map ",bhtk->bhtk" %dk, %q : !scalar, !x -> !x {
  ^bb0(%d: f32, %qv: f32):
    %r = math.rsqrt %d : f32
    %y = arith.mulf %qv, %r : f32
    la.yield %y : f32
  }
  return %qs : !x
}

// The log-gates of retention, log γ_h with γ_h = 1 - 2^{-5-h}, shaped like q's [B, H, T].
func.func private @retention_gates(%q: !x) -> !g {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : !x
  %h = tensor.dim %q, %c1 : !x
  %t = tensor.dim %q, %c2 : !x
  %shape = tensor.empty(%b, %h, %t) : !g
  %g = la.map "bht->bht" %shape : !g -> !g {
  ^bb0(%unused: f32):
    %head = la.index 1 : f32
    %minus5 = arith.constant -5.0 : f32
    %e = arith.subf %minus5, %head : f32
    %p = math.exp2 %e : f32
    %minus_p = arith.negf %p : f32
    // log1p keeps log γ_h = log(1 - 2^{-5-h}) accurate where γ_h rounds to 1 in f32 (h ≥ 19).
    %lg = math.log1p %minus_p : f32
    la.yield %lg : f32
  }
  return %g : !g
}

// Retention: q, k: [B,H,T,K], v: [B,H,T,V] -> [B,H,T,V]; the decay of head h is γ_h = 1 - 2^{-5-h}.
func.func @retention(%q: !x, %k: !x, %v: !x) -> !x {
  %g = func.call @retention_gates(%q) : (!x) -> !g
  %o = func.call @simple_gla(%q, %k, %v, %g) : (!x, !x, !x, !g) -> !x
  return %o : !x
}

// Simple GLA: q, k: [B,H,T,K], v: [B,H,T,V], g: [B,H,T] (log-gate ≤ 0) -> [B,H,T,V].
func.func @simple_gla(%q: !x, %k: !x, %v: !x, %g: !g {la.domain = #la.domain<max = 0.0>}) -> !x {
  %qs = func.call @scale_queries(%q) : (!x) -> !x
  %kv = la.contract "bhtk,bhtv->bhtkv" %k, %v : !x, !x -> !s
  %st = la.scan decay %kv, %g along 2 inclusive : !s, !g -> !s
  %o = la.contract "bhtk,bhtkv->bhtv" %qs, %st : !x, !s -> !x
  return %o : !x
}

// GLA: q, k: [B,H,T,K], v: [B,H,T,V], g: [B,H,T,K] (log-gate per key dimension, ≤ 0) -> [B,H,T,V].
func.func @gla(%q: !x, %k: !x, %v: !x, %g: !x {la.domain = #la.domain<max = 0.0>}) -> !x {
  %qs = func.call @scale_queries(%q) : (!x) -> !x
  %kv = la.contract "bhtk,bhtv->bhtkv" %k, %v : !x, !x -> !s
  %st = la.scan decay %kv, %g along 2 inclusive : !s, !x -> !s
  %o = la.contract "bhtk,bhtkv->bhtv" %qs, %st : !x, !s -> !x
  return %o : !x
}

// The same three kernels continuing from a state: h0 [B,H,K,V] is the state before the first position and the
// second result is the state after the last one, so a long sequence can be processed in pieces (running two
// halves with the state passed between them equals one run). The compiler derives each from its kernel above
// (la-derive-state-variants, SPEC §8): the decay scan starts from h0, and its last position is returned.
// Declarations are private in MLIR's syntax; the derived functions are public entries.
func.func private @retention_with_state(%q: !x, %k: !x, %v: !x, %h0: !h) -> (!x, !h)
    attributes {la.resume_of = @retention}
func.func private @simple_gla_with_state(%q: !x, %k: !x, %v: !x, %g: !g {la.domain = #la.domain<max = 0.0>}, %h0: !h)
    -> (!x, !h) attributes {la.resume_of = @simple_gla}
func.func private @gla_with_state(%q: !x, %k: !x, %v: !x, %g: !x {la.domain = #la.domain<max = 0.0>}, %h0: !h)
    -> (!x, !h) attributes {la.resume_of = @gla}
