// RUN: la-opt %s -split-input-file -la-tile-register-blocks | FileCheck %s

// A contraction is tiled as its #la.register_block says: 8 rows × 32 lanes, the reduction stepped one at a
// time innermost. 37 rows = 4·8 + 5: the ragged last row block is peeled, so every block has a static shape.
// The blocks keep the config, which marks them for vectorisation.
// CHECK-LABEL: func.func @matmul_ragged_rows
// CHECK:       scf.for %[[N:.*]] = %c0 to %c32 step %c8
// CHECK:         scf.for %[[D:.*]] = %c0 to %c16 step %c1
// CHECK:           linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x1xf32>, tensor<1x32xf32>) outs(%{{.*}} : tensor<8x32xf32>)
// CHECK-SAME:        la.register_block = #la.register_block<tile = [8, 32, 1], order = [0, 1, 2], vector = 1, rows = 0>
// CHECK:       scf.for {{.*}} = %c0 to %c16 step %c1
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<5x32xf32>)
// CHECK-SAME:      la.register_block
#a = affine_map<(n, e, d) -> (n, d)>
#b = affine_map<(n, e, d) -> (d, e)>
#c = affine_map<(n, e, d) -> (n, e)>
func.func @matmul_ragged_rows(%q: tensor<37x16xf32>, %s: tensor<16x32xf32>, %init: tensor<37x32xf32>) -> tensor<37x32xf32> {
  %r = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %s : tensor<37x16xf32>, tensor<16x32xf32>) outs(%init : tensor<37x32xf32>)
      attrs = {la.register_block = #la.register_block<tile = [8, 32, 1], order = [0, 1, 2], vector = 1, rows = 0>} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<37x32xf32>
  return %r : tensor<37x32xf32>
}

// -----

// The loop order of the config is the order of the block loops: here the lanes (loop 1, 64 = 2·32) outside
// the rows (loop 0, 16 = 2·8).
// CHECK-LABEL: func.func @lanes_outside
// CHECK:       scf.for {{.*}} = %c0 to %c64 step %c32
// CHECK:         scf.for {{.*}} = %c0 to %c16 step %c8
// CHECK:           scf.for {{.*}} = %c0 to %c16 step %c1
// CHECK:             linalg.generic {{.*}} outs(%{{.*}} : tensor<8x32xf32>)
#a2 = affine_map<(n, e, d) -> (n, d)>
#b2 = affine_map<(n, e, d) -> (d, e)>
#c2 = affine_map<(n, e, d) -> (n, e)>
func.func @lanes_outside(%q: tensor<16x16xf32>, %s: tensor<16x64xf32>, %init: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %r = linalg.generic {indexing_maps = [#a2, #b2, #c2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %s : tensor<16x16xf32>, tensor<16x64xf32>) outs(%init : tensor<16x64xf32>)
      attrs = {la.register_block = #la.register_block<tile = [8, 32, 1], order = [1, 0, 2], vector = 1, rows = 0>} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

// An op that fits in one block of its config (a fused epilogue's tile) is a block already: not tiled.
// Ops without a config are not touched.
// CHECK-LABEL: func.func @blocks_left_alone
// CHECK-NOT:   scf.for
// CHECK:       linalg.generic {{.*}}la.register_block = #la.register_block<tile = [8, 32], order = [0, 1], vector = 1>
// CHECK:       linalg.generic
// CHECK-NOT:   la.register_block
#id = affine_map<(n, e) -> (n, e)>
func.func @blocks_left_alone(%x: tensor<8x32xf32>, %y: tensor<64x64xf32>) -> (tensor<8x32xf32>, tensor<64x64xf32>) {
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x32xf32>) outs(%x : tensor<8x32xf32>)
      attrs = {la.register_block = #la.register_block<tile = [8, 32], order = [0, 1], vector = 1>} {
  ^bb0(%a: f32, %o: f32):
    %sq = arith.mulf %a, %a : f32
    linalg.yield %sq : f32
  } -> tensor<8x32xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<64x64xf32>) outs(%y : tensor<64x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %sq = arith.mulf %a, %a : f32
    linalg.yield %sq : f32
  } -> tensor<64x64xf32>
  return %r, %s : tensor<8x32xf32>, tensor<64x64xf32>
}
