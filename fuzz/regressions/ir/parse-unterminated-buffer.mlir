!qk = tensor<4x4x4x4xf32>
!vo = tensor<5x4x4x4xf32>
!vec = tensor<4x4x4xf32>
func.func @linear_attention_causal(%q: !qk, %k: !qk, %v: !vo) -> !vo {
  %qf = la.map elu1 %q : !qk -> !qk
  %kf = la.map elu1 %k : !qk -> !qk
  %kv = la.contract "bhnd,bhne->bhnde" %kf, %v : !qk, !vo -> tensor<4x4x4x4x4xf32>
  %s = la.scan add %kv along 2 inclusive : tensor<4x4x4x4x4xf32> -> tensor<4x4x4x4x4xf32>
  %z = la.scan add %kf along 2 inclusive : !qk -> !qk
  %num = la.contract "bhnd,bhnde->bhne" %qf, %s : !qk, tensor<4x4x4x4x4xf32> -> !vo
  %den = la.contract "bhnd,bhnd->bhn" %qf, %z : !qk, !qk -> !vec
  %o = la.normalize sum %num by %den along 3 eps(1.0e-6) : !vo, !vec -> !vo
  return %o : !vo
}m