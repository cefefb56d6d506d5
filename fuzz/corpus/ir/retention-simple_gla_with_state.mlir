!x = tensor<?x?x?x?xf32>
!g = tensor<?x?x?xf32>
!s = tensor<?x?x?x?x?xf32>
!h = tensor<?x?x?x?xf32>
!scalar = tensor<f32>
func.func @simple_gla_with_state(%q: !x, %k: !x, %v: !x, %g: !g, %h0: !h) -> (!x, !h) {
  %qs = func.call @scale_queries(%q) : (!x) -> !x
  %kv = la.contract "bhtk,bhtv->bhtkv" %k, %v : !x, !x -> !s
  %st = la.scan decay %kv, %g init(%h0 : !h) along 2 inclusive : !s, !g -> !s
  %o = la.contract "bhtk,bhtkv->bhtv" %qs, %st : !x, !s -> !x
  %final = func.call @final_state(%st) : (!s) -> !h
  return %o, %final : !x, !h
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
  %slice = tensor.extract_slice %st[0, 0, %last, 0, 0] [%b, %h, 1, %kd, %vd] [1, 1, 1, 1, 1]
      : !s to tensor<?x?x1x?x?xf32>
  %final = tensor.collapse_shape %slice [[0], [1], [2, 3], [4]] : tensor<?x?x1x?x?xf32> into !h
  return %final : !h
}
