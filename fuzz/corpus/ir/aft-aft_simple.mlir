!x = tensor<4x4x4xf32>
!pooled = tensor<4x4xf32>
func.func @aft_simple(%q: !x, %k: !x, %v: !x) -> !x {
  %weights = la.normalize softmax %k along 1 : !x -> !x
  %wv = la.map mul %weights, %v : !x, !x -> !x
  %pool = la.reduce add %wv along [1] : !x -> !pooled
  %qs = la.map sigmoid %q : !x -> !x
  %y = la.map mul "btd,bd->btd" %qs, %pool : !x, !pooled -> !x
  return %y : !x
}
