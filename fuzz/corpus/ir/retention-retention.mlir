!x = tensor<?x?x?x?xf32>
!g = tensor<?x?x?xf32>
!s = tensor<?x?x?x?x?xf32>
!scalar = tensor<f32>
func.func @retention(%q: !x, %k: !x, %v: !x) -> !x {
  %g = func.call @retention_gates(%q) : (!x) -> !g
  %o = func.call @simple_gla(%q, %k, %v, %g) : (!x, !x, !x, !g) -> !x
  return %o : !x
}
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
    %lg = math.log1p %minus_p : f32
    la.yield %lg : f32
  }
  return %g : !g
}
func.func @simple_gla(%q: !x, %k: !x, %v: !x, %g: !g) -> !x {
  %qs = func.call @scale_queries(%q) : (!x) -> !x
  %kv = la.contract "bhtk,bhtv->bhtkv" %k, %v : !x, !x -> !s
  %st = la.scan decay %kv, %g along 2 inclusive : !s, !g -> !s
  %o = la.contract "bhtk,bhtkv->bhtv" %qs, %st : !x, !s -> !x
  return %o : !x
}
