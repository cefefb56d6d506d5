!qk = tensor<4x4x4x4xf32>
!vo = tensor<4x4x4x4xf32>
!state = tensor<4x4x4x4xf32>
!vec = tensor<4x4x4xf32>
func.func @linear_attention(%q: !qk, %k: !qk, %v: !vo) -> !vo {
  %qf = la.map elu1 %q : !qk -> !qk
  %kf = la.map elu1 %k : !qk -> !qk
  %s = la.contract "bhmd,bhme->bhde" %kf, %v : !qk, !vo -> !state
  %z = la.reduce add %kf along [2] : !qk -> !vec
  %num = la.contract "bhnd,bhde->bhne" %qf, %s : !qk, !state -> !vo
  %den = la.contract "bhnd,bhd->bhn" %qf, %z : !qk, !vec -> !vec
  %o = la.normalize sum %num by %den along 3 eps(1.0e-6) : !vo, !vec -> !vo
  return %o : !vo
}
