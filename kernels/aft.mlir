// Attention Free Transformer (seed 002, arXiv 2105.14103 v2), SPEC.md §3.
//
// No heads and no dot products: every channel c of Q, K, V: [B, T, d] is independent. The output is
// σ(Q) gating a softmax-weighted average of V over positions, the weights built from the keys (and, for
// AFT-full/local, a learned pairwise position bias w: [T, T]).

!x = tensor<?x?x?xf32>     // [B, T, d]
!pooled = tensor<?x?xf32>  // [B, d]
!bias = tensor<?x?xf32>    // [T, T]
!joint = tensor<?x?x?x?xf32> // [B, T, T, d], joint logits of AFT-full
!img = tensor<?x?x?x?x?xf32>         // [B, X, Y, h, c]: AFT-conv's 2-D inputs, h heads of c channels
!img_pooled = tensor<?x?x?xf32>      // [B, h, c]
!img_win = tensor<?x?x7x?x7x?x?xf32> // [B, X, u, Y, v, h, c]: 7×7 windows around each position
!conv_kernel = tensor<?x7x7xf32>     // [h, s, s]: one learned 7×7 kernel per head

// Causal AFT-softmax (seed Eq. 4): Y_t = σ(Q_t) ⊙ Σ_{t'≤t} e^{K_t'} V_t' / Σ_{t'≤t} e^{K_t'}.
// One online-softmax scan (running max, weighted sum, normaliser): finite for any finite logits.
func.func @aft_causal(%q: !x, %k: !x, %v: !x) -> !x {
  %avg = la.scan online_softmax %k, %v along 1 inclusive : !x, !x -> !x
  %y = la.gate sigmoid %q, %avg : !x, !x -> !x
  return %y : !x
}

// AFT-simple: Y_t = σ(Q_t) ⊙ Σ_{t'} softmax_{t'}(K)_{t'} ⊙ V_{t'}, one pooled vector per channel.
func.func @aft_simple(%q: !x, %k: !x, %v: !x) -> !x {
  %weights = la.normalize softmax %k along 1 : !x -> !x
  %wv = la.map mul %weights, %v : !x, !x -> !x
  %pool = la.reduce add %wv along [1] : !x -> !pooled
  %qs = la.map sigmoid %q : !x -> !x
  %y = la.map mul "btd,bd->btd" %qs, %pool : !x, !pooled -> !x
  return %y : !x
}

// AFT-full: Y_t = σ(Q_t) ⊙ Σ_{t'} softmax_{t'}(K_t' + w_{t,t'}) V_t', a softmax per output position and
// channel over the joint logits K + w. Normalising the joint logits (not K and w separately, which cancels
// only in exact arithmetic) keeps every row finite for logits of ±80: the largest weight of a row is 1.
// Quadratic by definition ([B, T, T, d] logits); the compiler is free to stream them.
func.func @aft_full(%q: !x, %k: !x, %v: !x, %w: !bias) -> !x {
  %logits = la.map add "ts,bsd->btsd" %w, %k : !bias, !x -> !joint
  %weights = la.normalize softmax %logits along 2 : !joint -> !joint
  %avg = la.contract "btsd,bsd->btd" %weights, %v : !joint, !x -> !x
  %y = la.gate sigmoid %q, %avg : !x, !x -> !x
  return %y : !x
}

// Causal AFT-full: as @aft_full with w_{t,t'} = -inf for t' > t. Position t always sees itself, so no row
// of the softmax is empty.
func.func @aft_full_causal(%q: !x, %k: !x, %v: !x, %w: !bias) -> !x {
  %wc = la.map "ts->ts" %w : !bias -> !bias {
  ^bb0(%wv: f32):
    %t = la.index 0 : index
    %s = la.index 1 : index
    %visible = arith.cmpi ule, %s, %t : index
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %visible, %wv, %ninf : f32
    la.yield %r : f32
  }
  %logits = la.map add "ts,bsd->btsd" %wc, %k : !bias, !x -> !joint
  %weights = la.normalize softmax %logits along 2 : !joint -> !joint
  %avg = la.contract "btsd,bsd->btd" %weights, %v mask tril(t, s) : !joint, !x -> !x
  %y = la.gate sigmoid %q, %avg : !x, !x -> !x
  return %y : !x
}

// AFT-local, window s = 64 (the band size of the masks): w_{t,t'} applies where |t - t'| < s and is 0 (not
// -inf) outside, so num_t = Σ_{t'} e^{K_t'} V_t' + Σ_{|t-t'|<s} (e^{w_{t,t'}} - 1) e^{K_t'} V_t' and likewise
// the denominator: a global pooled term plus a banded correction, O(T·s·d). This is SPEC §3's formula; it
// cancels badly for strongly negative w and overflows for w ≳ 88 (see docs/design-notes.md).
func.func @aft_local(%q: !x, %k: !x, %v: !x, %w: !bias) -> !x {
  %kmax = la.reduce max %k along [1] : !x -> !pooled
  %ek = la.map "btd,bd->btd" %k, %kmax : !x, !pooled -> !x {
  ^bb0(%kv: f32, %m: f32):
    %shifted = arith.subf %kv, %m : f32
    %e = math.exp %shifted : f32
    la.yield %e : f32
  }
  %ekv = la.map mul %ek, %v : !x, !x -> !x
  %gnum = la.reduce add %ekv along [1] : !x -> !pooled
  %gden = la.reduce add %ek along [1] : !x -> !pooled
  %wm1 = la.map "ts->ts" %w : !bias -> !bias {
  ^bb0(%wv: f32):
    %e = math.expm1 %wv : f32
    la.yield %e : f32
  }
  %lnum = la.contract "ts,bsd->btd" %wm1, %ekv mask band(t, s, 64) : !bias, !x -> !x
  %lden = la.contract "ts,bsd->btd" %wm1, %ek mask band(t, s, 64) : !bias, !x -> !x
  %num = la.map add "btd,bd->btd" %lnum, %gnum : !x, !pooled -> !x
  %den = la.map add "btd,bd->btd" %lden, %gden : !x, !pooled -> !x
  %avg = la.map div %num, %den : !x, !x -> !x
  %y = la.gate sigmoid %q, %avg : !x, !x -> !x
  return %y : !x
}

// AFT-conv (2-D inputs X×Y, h heads, a learned s×s kernel w^i per head; s = 7, the window size of the
// la.window ops): the AFT-local decomposition with the band replaced by a convolution,
//   Y = σ(Q) ⊙ [conv2d(e^K ⊙ V, e^w − 1) + Σ e^K ⊙ V] / [conv2d(e^K, e^w − 1) + Σ e^K]   (SPEC §3),
// conv2d zero-padded ('same') in correlation orientation: w^i[p + dx, p + dy] weighs the key at offset
// (dx, dy). The keys are shifted by their per-channel maximum over the image, which cancels in the ratio.
// O(B·X·Y·h·c·s²); the 49× larger windows are read through shifted indices, not built.
func.func @aft_conv(%q: !img, %k: !img, %v: !img, %w: !conv_kernel) -> !img {
  %kmax = la.reduce max %k along [1, 2] : !img -> !img_pooled
  %ek = la.map "bxyic,bic->bxyic" %k, %kmax : !img, !img_pooled -> !img {
  ^bb0(%kv: f32, %m: f32):
    %shifted = arith.subf %kv, %m : f32
    %e = math.exp %shifted : f32
    la.yield %e : f32
  }
  %ekv = la.map mul %ek, %v : !img, !img -> !img
  %gnum = la.reduce add %ekv along [1, 2] : !img -> !img_pooled
  %gden = la.reduce add %ek along [1, 2] : !img -> !img_pooled
  %wm1 = la.map "iuv->iuv" %w : !conv_kernel -> !conv_kernel {
  ^bb0(%wv: f32):
    %e = math.expm1 %wv : f32
    la.yield %e : f32
  }
  %ekv_win = la.window %ekv along [1, 2] size [7, 7] : !img -> !img_win
  %ek_win = la.window %ek along [1, 2] size [7, 7] : !img -> !img_win
  %lnum = la.contract "bxuyvic,iuv->bxyic" %ekv_win, %wm1 : !img_win, !conv_kernel -> !img
  %lden = la.contract "bxuyvic,iuv->bxyic" %ek_win, %wm1 : !img_win, !conv_kernel -> !img
  %num = la.map add "bxyic,bic->bxyic" %lnum, %gnum : !img, !img_pooled -> !img
  %den = la.map add "bxyic,bic->bxyic" %lden, %gden : !img, !img_pooled -> !img
  %avg = la.map div %num, %den : !img, !img -> !img
  %y = la.gate sigmoid %q, %avg : !img, !img -> !img
  return %y : !img
}
