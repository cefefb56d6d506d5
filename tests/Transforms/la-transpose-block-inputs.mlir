// RUN: la-opt %s -split-input-file -la-transpose-block-inputs | FileCheck %s

// q·kᵀ: the config lists k (operand 1), which reads the vector loop m with a stride. k is copied once into
// [d, m], the contraction reads the copy with m innermost, and the config forgets the list. Both moved
// dimensions are multiples of 16: the copy is tiled into 16×16 blocks, marked for vectorisation (one
// vector.transpose each).
// CHECK-LABEL: func.func @strided_input
// CHECK:       %[[KT:.*]] = scf.for {{.*}} to %c32 step %c16
// CHECK:         scf.for {{.*}} to %c64 step %c16
// CHECK:           linalg.transpose ins(%{{.*}} : tensor<16x16xf32>) outs(%{{.*}} : tensor<16x16xf32>) permutation = [1, 0]
// CHECK-SAME:        la.register_block = #la.register_block<tile = [16, 16], order = [0, 1], vector = 1>
// CHECK:       linalg.generic
// CHECK-SAME:    ins(%{{.*}}, %[[KT]] : tensor<64x32xf32>, tensor<32x64xf32>)
// CHECK-SAME:    la.register_block = #la.register_block<tile = [6, 64, 1], order = [0, 1, 2], vector = 1, rows = 0>}
#qn = affine_map<(n, m, d) -> (n, d)>
#km = affine_map<(n, m, d) -> (m, d)>
#nm = affine_map<(n, m, d) -> (n, m)>
func.func @strided_input(%q: tensor<64x32xf32>, %k: tensor<64x32xf32>, %init: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = linalg.generic {indexing_maps = [#qn, #km, #nm], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<64x32xf32>, tensor<64x32xf32>) outs(%init : tensor<64x64xf32>)
      attrs = {la.register_block = #la.register_block<tile = [6, 64, 1], order = [0, 1, 2], vector = 1, rows = 0, transpose = [1]>} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

// With a moved dimension that is not a multiple of vector-width (m = 20), the copy stays one linalg.transpose
// (scalar loops later).
// CHECK-LABEL: func.func @ragged
// CHECK-NOT:   scf.for
// CHECK:       %[[KT:.*]] = linalg.transpose ins(%{{.*}} : tensor<20x32xf32>) outs(%{{.*}} : tensor<32x20xf32>) permutation = [1, 0]
// CHECK-NOT:   la.register_block = #la.register_block<tile = [16, 16]
// CHECK:       ins(%{{.*}}, %[[KT]] : tensor<64x32xf32>, tensor<32x20xf32>)
#qn2 = affine_map<(n, m, d) -> (n, d)>
#km2 = affine_map<(n, m, d) -> (m, d)>
#nm2 = affine_map<(n, m, d) -> (n, m)>
func.func @ragged(%q: tensor<64x32xf32>, %k: tensor<20x32xf32>, %init: tensor<64x20xf32>) -> tensor<64x20xf32> {
  %r = linalg.generic {indexing_maps = [#qn2, #km2, #nm2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<64x32xf32>, tensor<20x32xf32>) outs(%init : tensor<64x20xf32>)
      attrs = {la.register_block = #la.register_block<tile = [8, 20, 1], order = [0, 1, 2], vector = 1, rows = 0, transpose = [1]>} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<64x20xf32>
  return %r : tensor<64x20xf32>
}
