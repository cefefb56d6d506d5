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
func.func private @relu2_causal_prefill(%q: !x, %k: !x, %v: !x) -> (!x, !x, tensor<?x?x?xf32>)
    attributes {la.prefill_of = @relu2_causal}
func.func private @relu2_causal_resume(%q: !x, %k: !x, %v: !x, %state: !x, %norm: tensor<?x?x?xf32>)
    -> (!x, !x, tensor<?x?x?xf32>) attributes {la.resume_of = @relu2_causal}
