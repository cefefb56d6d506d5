// RUN: la-opt %s -la-reduction-panels | FileCheck %s
// RUN: la-opt %s -la-reduction-panels -la-register-block-strategy | FileCheck %s --check-prefix=REPLANNED

// kᵀ·(v·c) whose config asks for panels of 64 steps of reduction loop 0 (200 = 3·64 + 8): the panel loop
// runs 3 panels, the ragged last one is peeled. v·c, which does not depend on the row loop, is split off
// and computed once per panel into a 64×64 tile that the panel contraction reads.
// CHECK-LABEL: func.func @long_reduction
// CHECK:       scf.for %[[P:.*]] = %c0 to %c192 step %c64 iter_args(%{{.*}} = %{{.*}}) -> (tensor<16x64xf32>)
// CHECK-DAG:     %[[C:.*]] = tensor.extract_slice %{{.*}}[%[[P]]] [64] [1]
// CHECK-DAG:     %[[V:.*]] = tensor.extract_slice %{{.*}}[%[[P]], 0] [64, 64] [1, 1]
// CHECK:         %[[VC:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[V]], %[[C]] : tensor<64x64xf32>, tensor<64xf32>)
// CHECK:         linalg.generic {{.*}} ins({{.*}}, %[[VC]] : tensor<64x16xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>) outs(%{{.*}} : tensor<16x64xf32>)
// CHECK:       linalg.generic {{.*}} ins({{.*}} : tensor<8x64xf32>, tensor<8xf32>)
// CHECK:       linalg.generic {{.*}} ins({{.*}} : tensor<8x16xf32>, tensor<8x64xf32>, tensor<8xf32>, tensor<8x64xf32>)

// The panel contractions were cloned with the whole contraction's config; the strategy, run again, plans
// them as what they are: one panel long, so no panel of their own.
// REPLANNED-LABEL: func.func @long_reduction
// REPLANNED:       la.register_block = #la.register_block<tile = [1, 6, 64], order = [1, 2, 0], vector = 2, rows = 1>}
// REPLANNED:       la.register_block = #la.register_block<tile = [1, 6, 64], order = [1, 2, 0], vector = 2, rows = 1>}
#k2 = affine_map<(m, d, e) -> (m, d)>
#v2 = affine_map<(m, d, e) -> (m, e)>
#c2 = affine_map<(m, d, e) -> (m)>
#s2 = affine_map<(m, d, e) -> (d, e)>
func.func @long_reduction(%k: tensor<200x16xf32>, %v: tensor<200x64xf32>, %c: tensor<200xf32>,
                          %init: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %r = linalg.generic {indexing_maps = [#k2, #v2, #c2, #s2], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%k, %v, %c : tensor<200x16xf32>, tensor<200x64xf32>, tensor<200xf32>) outs(%init : tensor<16x64xf32>)
      attrs = {la.register_block = #la.register_block<tile = [1, 6, 64], order = [1, 2, 0], vector = 2, rows = 1, panel_loop = 0, panel_size = 64>} {
  ^bb0(%kk: f32, %vv: f32, %cc: f32, %acc: f32):
    %vc = arith.mulf %vv, %cc : f32
    %p = arith.mulf %kk, %vc fastmath<contract> : f32
    %sum = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}


// A grouped sweep's step of kᵀ·(v·c): the reduction is one panel long (64 steps), so there is no panel
// loop, but the 16 output rows still run in 6-row blocks that would each recompute v·c. It is split off
// and computed once, and the contraction reads it.
// CHECK-LABEL: func.func @short_reduction
// CHECK-NOT:   scf.for
// CHECK:       %[[VC:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%arg1, %arg2 : tensor<64x64xf32>, tensor<64xf32>)
// CHECK:       linalg.generic {{.*}} ins(%arg0, %arg1, %arg2, %[[VC]] : tensor<64x16xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>) outs(%arg3 : tensor<16x64xf32>)
// CHECK-NEXT:    ^bb0(%[[K:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32, %[[VCIN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[K]], %[[VCIN]] fastmath<contract> : f32
// CHECK-NEXT:      arith.addf %[[ACC]], %[[P]]
// CHECK-NEXT:      linalg.yield
func.func @short_reduction(%k: tensor<64x16xf32>, %v: tensor<64x64xf32>, %c: tensor<64xf32>,
                           %init: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %r = linalg.generic {indexing_maps = [#k2, #v2, #c2, #s2], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%k, %v, %c : tensor<64x16xf32>, tensor<64x64xf32>, tensor<64xf32>) outs(%init : tensor<16x64xf32>)
      attrs = {la.register_block = #la.register_block<tile = [1, 6, 64], order = [1, 2, 0], vector = 2, rows = 1>} {
  ^bb0(%kk: f32, %vv: f32, %cc: f32, %acc: f32):
    %vc = arith.mulf %vv, %cc : f32
    %p = arith.mulf %kk, %vc fastmath<contract> : f32
    %sum = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}


// One row block (6 rows, tile 6): v·c is computed once either way and stays fused.
// CHECK-LABEL: func.func @one_row_block
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT:     linalg.generic
func.func @one_row_block(%k: tensor<64x6xf32>, %v: tensor<64x64xf32>, %c: tensor<64xf32>,
                         %init: tensor<6x64xf32>) -> tensor<6x64xf32> {
  %r = linalg.generic {indexing_maps = [#k2, #v2, #c2, #s2], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%k, %v, %c : tensor<64x6xf32>, tensor<64x64xf32>, tensor<64xf32>) outs(%init : tensor<6x64xf32>)
      attrs = {la.register_block = #la.register_block<tile = [1, 6, 64], order = [1, 2, 0], vector = 2, rows = 1>} {
  ^bb0(%kk: f32, %vv: f32, %cc: f32, %acc: f32):
    %vc = arith.mulf %vv, %cc : f32
    %p = arith.mulf %kk, %vc fastmath<contract> : f32
    %sum = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<6x64xf32>
  return %r : tensor<6x64xf32>
}
