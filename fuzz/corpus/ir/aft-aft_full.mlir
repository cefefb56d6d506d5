!x = tensor<4x4x4xf32>
!bias = tensor<4x4xf32>
!joint = tensor<4x4x4x4xf32>
func.func @aft_full(%q: !x, %k: !x, %v: !x, %w: !bias) -> !x {
  %logits = la.map add "ts,bsd->btsd" %w, %k : !bias, !x -> !joint
  %weights = la.normalize softmax %logits along 2 : !joint -> !joint
  %avg = la.contract "btsd,bsd->btd" %weights, %v : !joint, !x -> !x
  %y = la.gate sigmoid %q, %avg : !x, !x -> !x
  return %y : !x
}
