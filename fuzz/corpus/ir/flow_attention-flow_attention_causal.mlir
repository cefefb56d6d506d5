!x = tensor<4x4x4x4xf32>
!vec = tensor<4x4x4xf32>
!scan = tensor<4x4x4x4x4xf32>
func.func @flow_attention_causal(%q: !x, %k: !x, %v: !x) -> !x {
  %qs = la.map sigmoid %q : !x -> !x
  %ks = la.map sigmoid %k : !x -> !x
  %qe = la.map add_const(1.0e-6) %qs : !x -> !x
  %ke = la.map add_const(1.0e-6) %ks : !x -> !x
  %cq = la.scan add %qs along 2 inclusive : !x -> !x
  %ck = la.scan add %ks along 2 inclusive : !x -> !x
  %cqe = la.map add_const(1.0e-6) %cq : !x -> !x
  %cke = la.map add_const(1.0e-6) %ck : !x -> !x
  %in = la.contract "bhnd,bhnd->bhn" %qe, %cke : !x, !x -> !vec
  %out = la.contract "bhnd,bhnd->bhn" %ke, %cqe : !x, !x -> !vec
  %count = la.map "bhn->bhn" %in : !vec -> !vec {
  ^bb0(%unused: f32):
    %t = la.index 2 : f32
    %one = arith.constant 1.0 : f32
    %nt = arith.addf %t, %one : f32
    la.yield %nt : f32
  }
  %a = la.map div %count, %in : !vec, !vec -> !vec
  %b = la.map div %count, %out : !vec, !vec -> !vec
  %kb = la.map mul "bhnd,bhn->bhnd" %ks, %b : !x, !vec -> !x
  %qa = la.map mul "bhnd,bhn->bhnd" %qs, %a : !x, !vec -> !x
  %ckb = la.scan add %kb along 2 inclusive : !x -> !x
  %cqa = la.scan add %qa along 2 inclusive : !x -> !x
  %ckbe = la.map add_const(1.0e-6) %ckb : !x -> !x
  %cqae = la.map add_const(1.0e-6) %cqa : !x -> !x
  %cin_sum = la.contract "bhnd,bhnd->bhn" %qe, %ckbe : !x, !x -> !vec
  %cout_sum = la.contract "bhnd,bhnd->bhn" %ke, %cqae : !x, !x -> !vec
  %cin = la.map div %cin_sum, %count : !vec, !vec -> !vec
  %cout = la.map div %cout_sum, %count : !vec, !vec -> !vec
  %coutc = la.map clamp(-1.0, 1.0) %cout : !vec -> !vec
  %alloc = la.map sigmoid %cin : !vec -> !vec
  %e = la.map exp %coutc : !vec -> !vec
  %ce = la.scan add %e along 2 inclusive : !vec -> !vec
  %share = la.map div %e, %ce : !vec, !vec -> !vec
  %comp = la.map mul %share, %count : !vec, !vec -> !vec
  %vc = la.map mul "bhne,bhn->bhne" %v, %comp : !x, !vec -> !x
  %kv = la.contract "bhnd,bhne->bhnde" %ks, %vc : !x, !x -> !scan
  %s = la.scan add %kv along 2 inclusive : !scan -> !scan
  %num = la.contract "bhnd,bhnde->bhne" %qs, %s : !x, !scan -> !x
  %aw = la.map div %a, %count : !vec, !vec -> !vec
  %w = la.map mul %alloc, %aw : !vec, !vec -> !vec
  %r = la.gate identity %w, %num : !vec, !x -> !x
  return %r : !x
}
