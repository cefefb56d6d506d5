!x = tensor<4x4x4xf32>
!pooled = tensor<4x4xf32>
!bias = tensor<4x4xf32>
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
