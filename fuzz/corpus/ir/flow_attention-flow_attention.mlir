!x = tensor<4x4x4x4xf32>
!vec = tensor<4x4x4xf32>
!state = tensor<4x4x4x4xf32>
!scalar = tensor<f32>
func.func @flow_attention(%q: !x, %k: !x, %v: !x) -> !x {
  %qs = la.map sigmoid %q : !x -> !x
  %ks = la.map sigmoid %k : !x -> !x
  %qe = la.map add_const(1.0e-6) %qs : !x -> !x
  %ke = la.map add_const(1.0e-6) %ks : !x -> !x
  %sq = la.reduce add %qs along [2] : !x -> !vec
  %sk = la.reduce add %ks along [2] : !x -> !vec
  %sqe = la.map add_const(1.0e-6) %sq : !vec -> !vec
  %ske = la.map add_const(1.0e-6) %sk : !vec -> !vec
  %in = la.contract "bhnd,bhd->bhn" %qe, %ske : !x, !vec -> !vec
  %out = la.contract "bhmd,bhd->bhm" %ke, %sqe : !x, !vec -> !vec
  %a = la.map reciprocal %in : !vec -> !vec
  %b = la.map reciprocal %out : !vec -> !vec
  %kb = la.contract "bhmd,bhm->bhd" %ks, %b : !x, !vec -> !vec
  %qa = la.contract "bhnd,bhn->bhd" %qs, %a : !x, !vec -> !vec
  %kbe = la.map add_const(1.0e-6) %kb : !vec -> !vec
  %qae = la.map add_const(1.0e-6) %qa : !vec -> !vec
  %cin = la.contract "bhnd,bhd->bhn" %qe, %kbe : !x, !vec -> !vec
  %cout = la.contract "bhmd,bhd->bhm" %ke, %qae : !x, !vec -> !vec
  %coutc = la.map clamp(-1.0, 1.0) %cout : !vec -> !vec
  %n = la.size %q along 2 : !x -> !scalar
  %m = la.size %k along 2 : !x -> !scalar
  %ratio = la.map div %n, %m : !scalar, !scalar -> !scalar
  %cins = la.map mul "bhn,->bhn" %cin, %ratio : !vec, !scalar -> !vec
  %alloc = la.map sigmoid %cins : !vec -> !vec
  %soft = la.normalize softmax %coutc along 2 : !vec -> !vec
  %comp = la.map mul "bhm,->bhm" %soft, %m : !vec, !scalar -> !vec
  %vc = la.map mul "bhme,bhm->bhme" %v, %comp : !x, !vec -> !x
  %kv = la.contract "bhmd,bhme->bhde" %ks, %vc : !x, !x -> !state
  %qkv = la.contract "bhnd,bhde->bhne" %qs, %kv : !x, !state -> !x
  %w = la.map mul %alloc, %a : !vec, !vec -> !vec
  %r = la.gate identity %w, %qkv : !vec, !x -> !x
  return %r : !x
}
