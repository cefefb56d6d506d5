// RUN: la-opt %s -split-input-file -la-group-sweeps -canonicalize -cse | FileCheck %s
// RUN: not la-opt %s -split-input-file -la-group-sweeps=sweep-tile=0 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: la-group-sweeps: sweep-tile must be positive

// Flow-style chain: `in = q·s`, `a = 1/in`, `qa = Σ_n q_n a_n`, and a later reader of `in`. One sweep
// computes all of it tile by tile; `in` is yielded whole for nobody outside because the later reader
// (a sibling of `a` over `in`) joins the sweep as a consumer.
// CHECK-LABEL: func.func @flows
// CHECK:         %[[SWEEP:.*]]:2 = scf.for %[[N:.*]] = %c0 to %c256 step %c64 iter_args
// CHECK:           tensor.extract_slice %{{.*}}[%[[N]], 0] [64, 16]
// CHECK:           %[[IN:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK:           %[[A:.*]] = linalg.generic {{.*}} ins(%[[IN]] : tensor<64xf32>)
// CHECK:             arith.divf
// CHECK:           %[[QA:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]{{.*}} ins(%{{.*}}, %[[A]] :
// CHECK:           %[[LATER:.*]] = linalg.generic {{.*}} ins(%[[IN]] : tensor<64xf32>)
// CHECK:           tensor.insert_slice %[[LATER]]
// CHECK:           scf.yield %[[QA]],
// CHECK-NOT:     scf.for
// CHECK:         return %[[SWEEP]]#0, %[[SWEEP]]#1
#nd = affine_map<(n, d) -> (n, d)>
#d = affine_map<(n, d) -> (d)>
#n = affine_map<(n, d) -> (n)>
#v = affine_map<(n) -> (n)>
func.func @flows(%q: tensor<256x16xf32>, %s: tensor<16xf32>) -> (tensor<16xf32>, tensor<256xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %en = tensor.empty() : tensor<256xf32>
  %fn = linalg.fill ins(%zero : f32) outs(%en : tensor<256xf32>) -> tensor<256xf32>
  %in = linalg.generic {indexing_maps = [#nd, #d, #n], iterator_types = ["parallel", "reduction"]}
      ins(%q, %s : tensor<256x16xf32>, tensor<16xf32>) outs(%fn : tensor<256xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<256xf32>
  %a = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%in : tensor<256xf32>) outs(%en : tensor<256xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.divf %one, %x : f32
    linalg.yield %r : f32
  } -> tensor<256xf32>
  %ed = tensor.empty() : tensor<16xf32>
  %fd = linalg.fill ins(%zero : f32) outs(%ed : tensor<16xf32>) -> tensor<16xf32>
  %qa = linalg.generic {indexing_maps = [#nd, #n, #d], iterator_types = ["reduction", "parallel"]}
      ins(%q, %a : tensor<256x16xf32>, tensor<256xf32>) outs(%fd : tensor<16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %later = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%in : tensor<256xf32>) outs(%en : tensor<256xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.addf %x, %x : f32
    linalg.yield %r : f32
  } -> tensor<256xf32>
  return %qa, %later : tensor<16xf32>, tensor<256xf32>
}

// -----

// Two sums over the same exp(k): the second waits for the first's sweep and joins it, so exp(k) is
// computed once per tile and never written out.
// CHECK-LABEL: func.func @siblings
// CHECK:         %[[SWEEP:.*]]:2 = scf.for
// CHECK:           %[[E:.*]] = linalg.generic
// CHECK:             math.exp
// CHECK:           %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[E]] :
// CHECK:           %[[SQ:.*]] = linalg.generic {{.*}} ins(%[[E]] :
// CHECK:           scf.yield %[[SUM]], %[[SQ]] : tensor<16xf32>, tensor<16xf32>
// CHECK-NOT:     scf.for
// CHECK:         return %[[SWEEP]]#0, %[[SWEEP]]#1
#nd = affine_map<(n, d) -> (n, d)>
#d = affine_map<(n, d) -> (d)>
func.func @siblings(%k: tensor<512x16xf32>, %s: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x16xf32>
  %kf = linalg.generic {indexing_maps = [#nd, #nd], iterator_types = ["parallel", "parallel"]}
      ins(%k : tensor<512x16xf32>) outs(%e : tensor<512x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = math.exp %x : f32
    linalg.yield %r : f32
  } -> tensor<512x16xf32>
  %ed = tensor.empty() : tensor<16xf32>
  %fd = linalg.fill ins(%zero : f32) outs(%ed : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.generic {indexing_maps = [#nd, #d], iterator_types = ["reduction", "parallel"]}
      ins(%kf : tensor<512x16xf32>) outs(%fd : tensor<16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %sq = linalg.generic {indexing_maps = [#nd, #d], iterator_types = ["reduction", "parallel"]}
      ins(%kf : tensor<512x16xf32>) outs(%fd : tensor<16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %p = arith.mulf %x, %x : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  return %sum, %sq : tensor<16xf32>, tensor<16xf32>
}

// -----

// Softmax: `e / Σ e` needs the whole sum, so the normalisation cannot join the sweep that sums; it reads
// the yielded `e` in a second sweep, after the sum is complete.
// CHECK-LABEL: func.func @normalise
// CHECK:         %[[SUM:.*]]:2 = scf.for
// CHECK:           math.exp
// CHECK:           iterator_types = ["reduction"]
// CHECK:         %[[OUT:.*]] = scf.for
// CHECK:           tensor.extract_slice %[[SUM]]#1
// CHECK:           linalg.generic {{.*}} ins(%{{.*}}, %[[SUM]]#0 : tensor<64xf32>, tensor<f32>)
// CHECK:             arith.divf
// CHECK:         return %[[OUT]]
#v = affine_map<(n) -> (n)>
#s = affine_map<(n) -> ()>
func.func @normalise(%c: tensor<512xf32>) -> tensor<512xf32> {
  %zero = arith.constant 0.0 : f32
  %en = tensor.empty() : tensor<512xf32>
  %e = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%c : tensor<512xf32>) outs(%en : tensor<512xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = math.exp %x : f32
    linalg.yield %r : f32
  } -> tensor<512xf32>
  %es = tensor.empty() : tensor<f32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %z = linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]}
      ins(%e : tensor<512xf32>) outs(%fs : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %p = linalg.generic {indexing_maps = [#v, #s, #v], iterator_types = ["parallel"]}
      ins(%e, %z : tensor<512xf32>, tensor<f32>) outs(%en : tensor<512xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  } -> tensor<512xf32>
  return %p : tensor<512xf32>
}

// -----

// A loop shorter than four tiles is left alone.
// CHECK-LABEL: func.func @short
// CHECK-NOT:     scf.for
// CHECK:         linalg.generic
#v = affine_map<(n) -> (n)>
func.func @short(%x: tensor<200xf32>) -> tensor<200xf32> {
  %e = tensor.empty() : tensor<200xf32>
  %r = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%x : tensor<200xf32>) outs(%e : tensor<200xf32>) {
  ^bb0(%a: f32, %o: f32):
    %y = math.exp %a : f32
    linalg.yield %y : f32
  } -> tensor<200xf32>
  return %r : tensor<200xf32>
}
