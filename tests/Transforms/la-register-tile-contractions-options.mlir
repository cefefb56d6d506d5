// RUN: la-opt %s -la-register-tile-contractions="max-rows=4" -canonicalize | FileCheck %s --check-prefix=ROWS
// RUN: la-opt %s -la-register-tile-contractions="vector-tile=16" -canonicalize | FileCheck %s --check-prefix=LANES
// RUN: not la-opt %s -la-register-tile-contractions="register-budget=0" 2>&1 | FileCheck %s --check-prefix=BAD

// max-rows caps the block rows (8 would fit the budget for 2 registers per row); vector-tile caps the lanes
// (32 output lanes become two 16-lane blocks per row block).
// ROWS: scf.for {{.*}} step %c4
// ROWS: vector.fma {{.*}} : vector<4x32xf32>
// LANES: vector.fma {{.*}} : vector<8x16xf32>
// BAD: every option must be positive
#a = affine_map<(n, e, d) -> (n, d)>
#b = affine_map<(n, e, d) -> (d, e)>
#c = affine_map<(n, e, d) -> (n, e)>
func.func @matmul(%q: tensor<16x16xf32>, %s: tensor<16x32xf32>, %init: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %r = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %s : tensor<16x16xf32>, tensor<16x32xf32>) outs(%init : tensor<16x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}
