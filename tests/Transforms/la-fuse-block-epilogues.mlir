// RUN: la-opt %s -split-input-file -la-fuse-block-epilogues | FileCheck %s

// A gate w[n]·(q·s)[n,e], the only user of a product planned in 8×32 blocks: the gate is tiled by the block
// (37 rows = 4·8 + 5, the last block peeled), and the product and the zero fill of its accumulator are fused
// into each tile. The gate and fill tiles get a config of their own (one 8×32 block: vectorise); the fused
// product, a new contraction, has none until the strategy plans it.
// CHECK-LABEL: func.func @gated_product
// CHECK:       scf.for %[[N:.*]] = %c0 to %c32 step %c8 iter_args(%[[OUT:.*]] = %{{.*}}) -> (tensor<37x32xf32>)
// CHECK:         %[[FILL:.*]] = linalg.fill {la.register_block = #la.register_block<tile = [8, 32], order = [0, 1], vector = 1>} {{.*}} -> tensor<8x32xf32>
// CHECK:         %[[PRODUCT:.*]] = linalg.generic {{.*}} outs(%[[FILL]] : tensor<8x32xf32>) {
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[PRODUCT]] : tensor<8xf32>, tensor<8x32xf32>)
// CHECK-SAME:      la.register_block = #la.register_block<tile = [8, 32], order = [0, 1], vector = 1>
// CHECK:       linalg.fill {la.register_block = {{.*}} -> tensor<5x32xf32>
// CHECK:       linalg.generic {{.*}} outs(%{{.*}} : tensor<5x32xf32>) {
// CHECK:       linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<5xf32>, tensor<5x32xf32>)
// CHECK-SAME:    la.register_block
#q3 = affine_map<(n, e, d) -> (n, d)>
#s3 = affine_map<(n, e, d) -> (d, e)>
#r3 = affine_map<(n, e, d) -> (n, e)>
#row = affine_map<(n, e) -> (n)>
#id = affine_map<(n, e) -> (n, e)>
func.func @gated_product(%q: tensor<37x16xf32>, %s: tensor<16x32xf32>, %w: tensor<37xf32>) -> tensor<37x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<37x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<37x32xf32>) -> tensor<37x32xf32>
  %p = linalg.generic {indexing_maps = [#q3, #s3, #r3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %s : tensor<37x16xf32>, tensor<16x32xf32>) outs(%init : tensor<37x32xf32>)
      attrs = {la.register_block = #la.register_block<tile = [8, 32, 1], order = [0, 1, 2], vector = 1, rows = 0>} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %m fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<37x32xf32>
  %r = linalg.generic {indexing_maps = [#row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w, %p : tensor<37xf32>, tensor<37x32xf32>) outs(%empty : tensor<37x32xf32>) {
  ^bb0(%ww: f32, %pp: f32, %out: f32):
    %g = arith.mulf %ww, %pp : f32
    linalg.yield %g : f32
  } -> tensor<37x32xf32>
  return %r : tensor<37x32xf32>
}

// -----

// A chunk loop writes its 32×16 output 8 rows at a time; the gate that consumes it runs on each chunk in the
// loop, as an 8×16 block, and the loop no longer builds the ungated result. No config is needed for this.
// CHECK-LABEL: func.func @gated_chunk_loop
// CHECK:       scf.for %[[C:.*]] = %c0 to %c32 step %c8 iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<32x16xf32>) {
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8xf32>, tensor<8x16xf32>)
// CHECK-SAME:      la.register_block = #la.register_block<tile = [8, 16], order = [0, 1], vector = 1>
// CHECK:         tensor.insert_slice {{.*}} into %[[ACC]][%[[C]], 0] [8, 16] [1, 1]
// CHECK-NOT:     tensor.insert_slice
// CHECK:         scf.yield
#chunk = affine_map<(n, e) -> (n, e)>
#gate_row = affine_map<(n, e) -> (n)>
func.func @gated_chunk_loop(%x: tensor<32x16xf32>, %w: tensor<32xf32>) -> tensor<32x16xf32> {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %empty = tensor.empty() : tensor<32x16xf32>
  %num = scf.for %c = %c0 to %c32 step %c8 iter_args(%acc = %empty) -> (tensor<32x16xf32>) {
    %in = tensor.extract_slice %x[%c, 0] [8, 16] [1, 1] : tensor<32x16xf32> to tensor<8x16xf32>
    %tile_init = tensor.empty() : tensor<8x16xf32>
    %tile = linalg.generic {indexing_maps = [#chunk, #chunk], iterator_types = ["parallel", "parallel"]}
        ins(%in : tensor<8x16xf32>) outs(%tile_init : tensor<8x16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %sq = arith.mulf %a, %a : f32
      linalg.yield %sq : f32
    } -> tensor<8x16xf32>
    %next = tensor.insert_slice %tile into %acc[%c, 0] [8, 16] [1, 1] : tensor<8x16xf32> into tensor<32x16xf32>
    scf.yield %next : tensor<32x16xf32>
  }
  %r = linalg.generic {indexing_maps = [#gate_row, #chunk, #chunk], iterator_types = ["parallel", "parallel"]}
      ins(%w, %num : tensor<32xf32>, tensor<32x16xf32>) outs(%empty : tensor<32x16xf32>) {
  ^bb0(%ww: f32, %nn: f32, %o: f32):
    %g = arith.mulf %ww, %nn : f32
    linalg.yield %g : f32
  } -> tensor<32x16xf32>
  return %r : tensor<32x16xf32>
}

// -----

// A ratio of two products with different plans (8-row and 4-row blocks): the ratio runs on the first's
// blocks, which compute their tile of the numerator; the denominator stays one whole op, read by slices.
// (With one plan both would be computed in each block: la-register-tile-contractions.mlir.)
// CHECK-LABEL: func.func @ratio_of_differently_planned_products
// CHECK:       %[[DEN:.*]] = linalg.generic {{.*}} ins(%arg0, %arg2 : tensor<37x16xf32>, tensor<16x32xf32>)
// CHECK:       scf.for %[[N:.*]] = %c0 to %c32 step %c8
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %arg1 : tensor<8x16xf32>, tensor<16x32xf32>)
// CHECK:         tensor.extract_slice %[[DEN]][%[[N]], 0] [8, 32] [1, 1]
#q5 = affine_map<(n, e, d) -> (n, d)>
#s5 = affine_map<(n, e, d) -> (d, e)>
#r5 = affine_map<(n, e, d) -> (n, e)>
#id5 = affine_map<(n, e) -> (n, e)>
func.func @ratio_of_differently_planned_products(%q: tensor<37x16xf32>, %s: tensor<16x32xf32>,
                                                 %t: tensor<16x32xf32>) -> tensor<37x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<37x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<37x32xf32>) -> tensor<37x32xf32>
  %num = linalg.generic {indexing_maps = [#q5, #s5, #r5], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %s : tensor<37x16xf32>, tensor<16x32xf32>) outs(%init : tensor<37x32xf32>)
      attrs = {la.register_block = #la.register_block<tile = [8, 32, 1], order = [0, 1, 2], vector = 1, rows = 0>} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %m fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<37x32xf32>
  %den = linalg.generic {indexing_maps = [#q5, #s5, #r5], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %t : tensor<37x16xf32>, tensor<16x32xf32>) outs(%init : tensor<37x32xf32>)
      attrs = {la.register_block = #la.register_block<tile = [4, 32, 1], order = [0, 1, 2], vector = 1, rows = 0>} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %m fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<37x32xf32>
  %r = linalg.generic {indexing_maps = [#id5, #id5, #id5], iterator_types = ["parallel", "parallel"]}
      ins(%num, %den : tensor<37x32xf32>, tensor<37x32xf32>) outs(%empty : tensor<37x32xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %g = arith.divf %a, %b : f32
    linalg.yield %g : f32
  } -> tensor<37x32xf32>
  return %r : tensor<37x32xf32>
}
