!uv = tensor<4x4x4xf32>
!qk = tensor<4x4x4xf32>
!att = tensor<4x4x4xf32>
!scalar = tensor<f32>
func.func @flash_causal(%u: !uv, %v: !uv, %qq: !qk, %kq: !qk, %ql: !qk, %kl: !qk) -> !uv {
  %s = la.size %qq along 2 : !qk -> !scalar
  %qk = la.contract "bns,bms->bnm" %qq, %kq mask causal_block(n, m, 256) : !qk, !qk -> !att
  %sq = la.map relu2 %qk : !att -> !att
  %sqc = la.map mul_const(3.90625e-3) %sq : !att -> !att
  %a = la.map div "bnm,->bnm" %sqc, %s : !att, !scalar -> !att
  %vq = la.contract "bnm,bme->bne" %a, %v mask causal_block(n, m, 256) : !att, !uv -> !uv
  %lin = la.contract "bns,bms,bme->bne" %ql, %kl, %v mask prior_block(n, m, 256) : !qk, !qk, !uv -> !uv
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
