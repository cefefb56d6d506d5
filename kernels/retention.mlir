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

// The state after the last position of a state sequence [B,H,T,K,V]. The compiler never builds the sequence:
// it recognises this slice of a decay scan as the state its chunk loop ends with.
func.func private @final_state(%st: !s) -> !h {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %b = tensor.dim %st, %c0 : !s
  %h = tensor.dim %st, %c1 : !s
  %t = tensor.dim %st, %c2 : !s
  %kd = tensor.dim %st, %c3 : !s
  %vd = tensor.dim %st, %c4 : !s
  %last = arith.subi %t, %c1 : index
  // Not a rank-reducing slice: which unit dimension it drops would be ambiguous once B or H is 1.
  %slice = tensor.extract_slice %st[0, 0, %last, 0, 0] [%b, %h, 1, %kd, %vd] [1, 1, 1, 1, 1]
      : !s to tensor<?x?x1x?x?xf32>
  %final = tensor.collapse_shape %slice [[0], [1], [2, 3], [4]] : tensor<?x?x1x?x?xf32> into !h
  return %final : !h
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
// halves with the state passed between them equals one run).
func.func @retention_with_state(%q: !x, %k: !x, %v: !x, %h0: !h) -> (!x, !h) {
  %g = func.call @retention_gates(%q) : (!x) -> !g
  %o, %final = func.call @simple_gla_with_state(%q, %k, %v, %g, %h0) : (!x, !x, !x, !g, !h) -> (!x, !h)
  return %o, %final : !x, !h
}

func.func @simple_gla_with_state(%q: !x, %k: !x, %v: !x, %g: !g {la.domain = #la.domain<max = 0.0>}, %h0: !h)
    -> (!x, !h) {
  %qs = func.call @scale_queries(%q) : (!x) -> !x
  %kv = la.contract "bhtk,bhtv->bhtkv" %k, %v : !x, !x -> !s
  %st = la.scan decay %kv, %g init(%h0 : !h) along 2 inclusive : !s, !g -> !s
  %o = la.contract "bhtk,bhtkv->bhtv" %qs, %st : !x, !s -> !x
  %final = func.call @final_state(%st) : (!s) -> !h
  return %o, %final : !x, !h
}

func.func @gla_with_state(%q: !x, %k: !x, %v: !x, %g: !x {la.domain = #la.domain<max = 0.0>}, %h0: !h)
    -> (!x, !h) {
  %qs = func.call @scale_queries(%q) : (!x) -> !x
  %kv = la.contract "bhtk,bhtv->bhtkv" %k, %v : !x, !x -> !s
  %st = la.scan decay %kv, %g init(%h0 : !h) along 2 inclusive : !s, !x -> !s
  %o = la.contract "bhtk,bhtkv->bhtv" %qs, %st : !x, !s -> !x
  %final = func.call @final_state(%st) : (!s) -> !h
  return %o, %final : !x, !h
}
