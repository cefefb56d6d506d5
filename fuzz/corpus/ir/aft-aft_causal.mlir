!x = tensor<4x4x4xf32>
func.func @aft_causal(%q: !x, %k: !x, %v: !x) -> !x {
  %avg = la.scan online_softmax %k, %v along 1 inclusive : !x, !x -> !x
  %y = la.gate sigmoid %q, %avg : !x, !x -> !x
  return %y : !x
}
