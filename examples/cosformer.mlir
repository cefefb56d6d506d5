// cosFormer (Qin et al. 2022, "cosFormer: Rethinking Softmax in Attention"), written by a user of the
// library: linear attention with relu features re-weighted by cos(π(i - j) / 2N), which favours nearby
// positions. The walkthrough is docs/writing-a-kernel.md.
//
// Per batch b and head h, with Q, K: N×D and V: N×Dv:
//   O_i = Σ_j w_ij V_j / (Σ_j w_ij + eps),   w_ij = (relu(Q_i) · relu(K_j)) cos(π(i - j) / 2N)
// The quadratic weight splits with cos(a - b) = cos a cos b + sin a sin b into two linear attentions: the
// features are relu(x_i) cos(πi/2N) and relu(x_i) sin(πi/2N), and each one's state is a D×Dv sum.

!x = tensor<?x?x?x?xf32>     // q, k: [B, H, N, D]; v, o: [B, H, N, Dv]
!state = tensor<?x?x?x?xf32> // [B, H, D, Dv]
!vec = tensor<?x?x?xf32>     // [B, H, D] or [B, H, N]
!scalar = tensor<f32>

// relu(x_i) cos(πi/2N): `la.index 2` is the position i; %n the sequence length N.
func.func private @cos_features(%x: !x, %n: !scalar) -> !x {
  %f = la.map "bhnd,->bhnd" %x, %n : !x, !scalar -> !x {
  ^bb0(%xv: f32, %len: f32):
    %i = la.index 2 : f32
    %zero = arith.constant 0.0 : f32
    %relu = arith.maximumf %xv, %zero : f32
    %half_pi = arith.constant 1.57079632679 : f32
    %scaled = arith.mulf %i, %half_pi : f32
    %angle = arith.divf %scaled, %len : f32
    %weight = math.cos %angle : f32
    %y = arith.mulf %relu, %weight : f32
    la.yield %y : f32
  }
  return %f : !x
}

// relu(x_i) sin(πi/2N).
func.func private @sin_features(%x: !x, %n: !scalar) -> !x {
  %f = la.map "bhnd,->bhnd" %x, %n : !x, !scalar -> !x {
  ^bb0(%xv: f32, %len: f32):
    %i = la.index 2 : f32
    %zero = arith.constant 0.0 : f32
    %relu = arith.maximumf %xv, %zero : f32
    %half_pi = arith.constant 1.57079632679 : f32
    %scaled = arith.mulf %i, %half_pi : f32
    %angle = arith.divf %scaled, %len : f32
    %weight = math.sin %angle : f32
    %y = arith.mulf %relu, %weight : f32
    la.yield %y : f32
  }
  return %f : !x
}

// q, k: [B,H,N,D], v: [B,H,N,Dv] -> [B,H,N,Dv]
func.func @cosformer(%q: !x, %k: !x, %v: !x) -> !x {
  %n = la.size %q along 2 : !x -> !scalar
  %qc = func.call @cos_features(%q, %n) : (!x, !scalar) -> !x
  %qs = func.call @sin_features(%q, %n) : (!x, !scalar) -> !x
  %kc = func.call @cos_features(%k, %n) : (!x, !scalar) -> !x
  %ks = func.call @sin_features(%k, %n) : (!x, !scalar) -> !x
  // Two states, one sweep over the keys.
  %sc = la.contract "bhmd,bhme->bhde" %kc, %v : !x, !x -> !state
  %ss = la.contract "bhmd,bhme->bhde" %ks, %v : !x, !x -> !state
  %zc = la.reduce add %kc along [2] : !x -> !vec
  %zs = la.reduce add %ks along [2] : !x -> !vec
  // Read-out: Q_cos S_cos + Q_sin S_sin over Q_cos z_cos + Q_sin z_sin.
  %numc = la.contract "bhnd,bhde->bhne" %qc, %sc : !x, !state -> !x
  %nums = la.contract "bhnd,bhde->bhne" %qs, %ss : !x, !state -> !x
  %num = la.map add %numc, %nums : !x, !x -> !x
  %denc = la.contract "bhnd,bhd->bhn" %qc, %zc : !x, !vec -> !vec
  %dens = la.contract "bhnd,bhd->bhn" %qs, %zs : !x, !vec -> !vec
  %den = la.map add %denc, %dens : !vec, !vec -> !vec
  %o = la.normalize sum %num by %den along 3 eps(1.0e-6) : !x, !vec -> !x
  return %o : !x
}
