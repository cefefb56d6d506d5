// A user-written causal kernel: linear attention with squared-ReLU features, φ(x) = relu(x)² (+ 1e-3 on the
// keys, so that every prefix has a positive normaliser). Nothing here mentions prefill or decode: the compiler
// derives both from the two running sums (docs/writing-a-kernel.md, section 7; docs/prefill-decode.md).
//
//   lac signature examples/relu2_causal.mlir --entry relu2_causal --variant resume --shape 1x8x1x64
//   lac run examples/relu2_causal.mlir --entry relu2_causal --variant prefill --random 2,8,512,64 --check

!x = tensor<?x?x?x?xf32>       // [B, H, N, D]
!s = tensor<?x?x?x?x?xf32>     // [B, H, N, D, Dv], the naive causal state; the compiler chunks it away
!vec = tensor<?x?x?xf32>       // [B, H, N]

func.func @relu2_causal(%q: !x, %k: !x, %v: !x) -> !x {
  %qf = la.map relu2 %q : !x -> !x
  %kr = la.map relu2 %k : !x -> !x
  %kf = la.map add_const(1.0e-3) %kr : !x -> !x
  %kv = la.contract "bhnd,bhne->bhnde" %kf, %v : !x, !x -> !s
  %state = la.scan add %kv along 2 inclusive : !s -> !s
  %norm = la.scan add %kf along 2 inclusive : !x -> !x
  %num = la.contract "bhnd,bhnde->bhne" %qf, %state : !x, !s -> !x
  %den = la.contract "bhnd,bhnd->bhn" %qf, %norm : !x, !x -> !vec
  %o = la.normalize sum %num by %den along 3 eps(1.0e-6) : !x, !vec -> !x
  return %o : !x
}
