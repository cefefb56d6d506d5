!x = tensor<4x4x4x4xf32>
!s = tensor<4x4x4x4x4xf32>
!scalar = tensor<f32>
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
func.func @gla(%q: !x, %k: !x, %v: !x, %g: !x) -> !x {
  %qs = func.call @scale_queries(%q) : (!x) -> !x
  %kv = la.contract "bhtk,bhtv->bhtkv" %k, %v : !x, !x -> !s
  %st = la.scan decay %kv, %g along 2 inclusive : !s, !x -> !s
  %o = la.contract "bhtk,bhtkv->bhtv" %qs, %st : !x, !s -> !x
  return %o : !x
}
