// RUN: la-opt %s -split-input-file -la-tile-independent-dim=cache-tile-bytes=8192 -canonicalize -cse | FileCheck %s --check-prefix=ONE
// RUN: la-opt %s -split-input-file -la-tile-independent-dim=cache-tile-bytes=16384 -canonicalize -cse | FileCheck %s --check-prefix=TWO
// RUN: la-opt %s -split-input-file -la-tile-independent-dim | FileCheck %s --check-prefix=WHOLE
// RUN: not la-opt %s -split-input-file -la-tile-independent-dim=cache-tile-bytes=0 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: la-tile-independent-dim: cache-tile-bytes must be positive

// AFT-conv in small, [h, x, c]: a max over x per (h, c), e^{k - max}, a zero pad along x and a 3-wide
// window sum along x (weights w[u]). x is read with an offset (x + u) and reduced, c is the innermost dimension, so the
// heads are the one independent dimension. The chain's intermediates (the max, e^k and its padded copy)
// take 17152 bytes: with an 8 KiB budget each head is its own tile, with 16 KiB two heads share one, and
// under the default 4 MiB nothing changes. Every producer is computed inside the loop, once.
// ONE-LABEL: func.func @heads
// ONE:         scf.for %[[H:.*]] = %c0 to %c4 step %c1 iter_args(%[[OUT:.*]] = %{{.*}})
// ONE:           %[[K:.*]] = tensor.extract_slice %arg0[%[[H]], 0, 0] [1, 32, 16]
// ONE-NOT:       linalg.generic
// ONE:           %[[MAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]{{.*}} ins(%[[K]] : tensor<1x32x16xf32>)
// ONE:           %[[E:.*]] = linalg.generic {{.*}} ins(%[[K]], %[[MAX]] : tensor<1x32x16xf32>, tensor<1x16xf32>)
// ONE-NOT:       linalg.generic
// ONE:           %[[PAD:.*]] = tensor.pad %[[E]] low[0, 1, 0] high[0, 1, 0]
// ONE-NOT:       linalg.generic
// ONE:           %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[PAD]], %arg1 : tensor<1x34x16xf32>, tensor<3xf32>)
// ONE:           tensor.insert_slice %[[SUM]] into %[[OUT]][%[[H]], 0, 0] [1, 32, 16]
// ONE-NOT:       linalg.generic
// ONE:         return
// TWO-LABEL: func.func @heads
// TWO:         scf.for %{{.*}} = %c0 to %c4 step %c2
// TWO:           tensor.pad %{{.*}} low[0, 1, 0] high[0, 1, 0]
// TWO:           } : tensor<2x32x16xf32> to tensor<2x34x16xf32>
// WHOLE-LABEL: func.func @heads
// WHOLE-NOT:   scf.for
#hxc = affine_map<(h, x, c) -> (h, x, c)>
#hc = affine_map<(h, x, c) -> (h, c)>
#window = affine_map<(h, x, u, c) -> (h, x + u, c)>
#tap = affine_map<(h, x, u, c) -> (u)>
#result = affine_map<(h, x, u, c) -> (h, x, c)>
func.func @heads(%k: tensor<4x32x16xf32>, %w: tensor<3xf32>) -> tensor<4x32x16xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %empty_hc = tensor.empty() : tensor<4x16xf32>
  %init_max = linalg.fill ins(%ninf : f32) outs(%empty_hc : tensor<4x16xf32>) -> tensor<4x16xf32>
  %max = linalg.generic {indexing_maps = [#hxc, #hc], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%k : tensor<4x32x16xf32>) outs(%init_max : tensor<4x16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  %empty = tensor.empty() : tensor<4x32x16xf32>
  %e = linalg.generic {indexing_maps = [#hxc, #hc, #hxc], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%k, %max : tensor<4x32x16xf32>, tensor<4x16xf32>) outs(%empty : tensor<4x32x16xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %s = arith.subf %in, %m : f32
    %r = math.exp %s : f32
    linalg.yield %r : f32
  } -> tensor<4x32x16xf32>
  %padded = tensor.pad %e low[0, 1, 0] high[0, 1, 0] {
  ^bb0(%i: index, %j: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<4x32x16xf32> to tensor<4x34x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x32x16xf32>) -> tensor<4x32x16xf32>
  %sum = linalg.generic {indexing_maps = [#window, #tap, #result], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%padded, %w : tensor<4x34x16xf32>, tensor<3xf32>) outs(%init : tensor<4x32x16xf32>) {
  ^bb0(%in: f32, %tw: f32, %acc: f32):
    %p = arith.mulf %in, %tw : f32
    %r = arith.addf %p, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4x32x16xf32>
  return %sum : tensor<4x32x16xf32>
}

// -----

// e^k normalised over the heads, y = e^k / Σ_h e^k: the heads are not independent (the sum needs every
// head), but the positions x are, the sum included. The intermediates (e^k and the sum, 10240 bytes) are cut
// into the largest tiles of x that fit 8 KiB: 16 of the 32 positions.
// ONE-LABEL: func.func @across_heads
// ONE:         scf.for %[[X:.*]] = %c0 to %c32 step %c16
// ONE:           tensor.extract_slice %arg0[0, %[[X]], 0] [4, 16, 16]
// ONE:           linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]
// ONE:           linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "parallel"]
// ONE:           linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]
// ONE-NOT:       linalg.generic
// ONE:         return
#hxc = affine_map<(h, x, c) -> (h, x, c)>
#xc = affine_map<(h, x, c) -> (x, c)>
func.func @across_heads(%k: tensor<4x32x16xf32>) -> tensor<4x32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x32x16xf32>
  %e = linalg.generic {indexing_maps = [#hxc, #hxc], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%k : tensor<4x32x16xf32>) outs(%empty : tensor<4x32x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<4x32x16xf32>
  %empty_xc = tensor.empty() : tensor<32x16xf32>
  %init_xc = linalg.fill ins(%zero : f32) outs(%empty_xc : tensor<32x16xf32>) -> tensor<32x16xf32>
  %across = linalg.generic {indexing_maps = [#hxc, #xc], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%e : tensor<4x32x16xf32>) outs(%init_xc : tensor<32x16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<32x16xf32>
  %y = linalg.generic {indexing_maps = [#hxc, #xc, #hxc], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %across : tensor<4x32x16xf32>, tensor<32x16xf32>) outs(%empty : tensor<4x32x16xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %r = arith.divf %in, %s : f32
    linalg.yield %r : f32
  } -> tensor<4x32x16xf32>
  return %y : tensor<4x32x16xf32>
}

// -----

// e^k normalised over heads and positions alike: no dimension but the innermost is independent, and nothing
// is tiled however large the intermediates.
// ONE-LABEL: func.func @across_heads_and_positions
// ONE-NOT:     scf.for
#hxc = affine_map<(h, x, c) -> (h, x, c)>
#c = affine_map<(h, x, c) -> (c)>
func.func @across_heads_and_positions(%k: tensor<4x32x16xf32>) -> tensor<4x32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x32x16xf32>
  %e = linalg.generic {indexing_maps = [#hxc, #hxc], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%k : tensor<4x32x16xf32>) outs(%empty : tensor<4x32x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<4x32x16xf32>
  %empty_c = tensor.empty() : tensor<16xf32>
  %init_c = linalg.fill ins(%zero : f32) outs(%empty_c : tensor<16xf32>) -> tensor<16xf32>
  %across = linalg.generic {indexing_maps = [#hxc, #c], iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%e : tensor<4x32x16xf32>) outs(%init_c : tensor<16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %y = linalg.generic {indexing_maps = [#hxc, #c, #hxc], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %across : tensor<4x32x16xf32>, tensor<16xf32>) outs(%empty : tensor<4x32x16xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %r = arith.divf %in, %s : f32
    linalg.yield %r : f32
  } -> tensor<4x32x16xf32>
  return %y : tensor<4x32x16xf32>
}
