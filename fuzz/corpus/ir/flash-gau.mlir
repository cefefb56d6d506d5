!uv = tensor<4x4x4xf32>
!qk = tensor<4x4x4xf32>
!att = tensor<4x4x4xf32>
!scalar = tensor<f32>
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
