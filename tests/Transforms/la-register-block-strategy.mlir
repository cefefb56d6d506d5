// RUN: la-opt %s -split-input-file -la-register-block-strategy | FileCheck %s
// RUN: la-opt %s -split-input-file -la-register-block-strategy="max-rows=4 reduction-panel=0" | FileCheck %s --check-prefix=OPTIONS
// RUN: not la-opt %s -la-register-block-strategy="vector-width=0" 2>&1 | FileCheck %s --check-prefix=BAD

// The strategy only plans: each contraction worth blocking gets a #la.register_block, nothing else changes.

// q·s, 37 rows of 32 lanes: 2 registers a row, so 12 rows fit the 24-register budget, capped at max-rows (8).
// The loops go rows, lanes, then the reduction.
// CHECK-LABEL: func.func @matmul
// CHECK: la.register_block = #la.register_block<tile = [8, 32, 1], order = [0, 1, 2], vector = 1, rows = 0>
// OPTIONS-LABEL: func.func @matmul
// OPTIONS: la.register_block = #la.register_block<tile = [4, 32, 1], order = [0, 1, 2], vector = 1, rows = 0>
// BAD: la-register-block-strategy: every option must be positive
#a = affine_map<(n, e, d) -> (n, d)>
#b = affine_map<(n, e, d) -> (d, e)>
#c = affine_map<(n, e, d) -> (n, e)>
func.func @matmul(%q: tensor<37x16xf32>, %s: tensor<16x32xf32>, %init: tensor<37x32xf32>) -> tensor<37x32xf32> {
  %r = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %s : tensor<37x16xf32>, tensor<16x32xf32>) outs(%init : tensor<37x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<37x32xf32>
  return %r : tensor<37x32xf32>
}

// -----

// 48 lanes (D = 48): the block takes 32, a power of two, and the tiling peels a 16-lane remainder block. A
// 48-lane vector would reach LLVM as <48 x float>, which it widens to 64 lanes and loads lane by lane.
// CHECK-LABEL: func.func @matmul_48_lanes
// CHECK: la.register_block = #la.register_block<tile = [8, 32, 1], order = [0, 1, 2], vector = 1, rows = 0>
#a48 = affine_map<(n, e, d) -> (n, d)>
#b48 = affine_map<(n, e, d) -> (d, e)>
#c48 = affine_map<(n, e, d) -> (n, e)>
func.func @matmul_48_lanes(%q: tensor<37x16xf32>, %s: tensor<16x48xf32>, %init: tensor<37x48xf32>) -> tensor<37x48xf32> {
  %r = linalg.generic {indexing_maps = [#a48, #b48, #c48], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %s : tensor<37x16xf32>, tensor<16x48xf32>) outs(%init : tensor<37x48xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<37x48xf32>
  return %r : tensor<37x48xf32>
}

// -----

// q·kᵀ reads its vector loop m with a stride in k[m, d] (operand 1), and reuses each element of k 64 times:
// k is planned for a transposed copy. 64 lanes are 4 registers a row: 6 rows.
// CHECK-LABEL: func.func @strided_input
// CHECK: la.register_block = #la.register_block<tile = [6, 64, 1], order = [0, 1, 2], vector = 1, rows = 0, transpose = [1]>
#qn = affine_map<(n, m, d) -> (n, d)>
#km = affine_map<(n, m, d) -> (m, d)>
#nm = affine_map<(n, m, d) -> (n, m)>
func.func @strided_input(%q: tensor<64x32xf32>, %k: tensor<64x32xf32>, %init: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = linalg.generic {indexing_maps = [#qn, #km, #nm], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<64x32xf32>, tensor<64x32xf32>) outs(%init : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

// kᵀ·(v·c) with 3 row blocks (16 rows = 6 + 6 + 4) and a 200-step reduction, over two 64-step panels long:
// the reduction loop 0 is planned in panels of reduction-panel (64) steps.
// CHECK-LABEL: func.func @long_reduction
// CHECK: la.register_block = #la.register_block<tile = [1, 6, 64], order = [1, 2, 0], vector = 2, rows = 1, panel_loop = 0, panel_size = 64>
// OPTIONS-LABEL: func.func @long_reduction
// OPTIONS: la.register_block = #la.register_block<tile = [1, 4, 64], order = [1, 2, 0], vector = 2, rows = 1>
#k2 = affine_map<(m, d, e) -> (m, d)>
#v2 = affine_map<(m, d, e) -> (m, e)>
#c2 = affine_map<(m, d, e) -> (m)>
#s2 = affine_map<(m, d, e) -> (d, e)>
func.func @long_reduction(%k: tensor<200x16xf32>, %v: tensor<200x64xf32>, %c: tensor<200xf32>,
                          %init: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %r = linalg.generic {indexing_maps = [#k2, #v2, #c2, #s2], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%k, %v, %c : tensor<200x16xf32>, tensor<200x64xf32>, tensor<200xf32>) outs(%init : tensor<16x64xf32>) {
  ^bb0(%kk: f32, %vv: f32, %cc: f32, %acc: f32):
    %vc = arith.mulf %vv, %cc : f32
    %p = arith.mulf %kk, %vc fastmath<contract> : f32
    %sum = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

// Left alone: a dot product per output element (no row loop, q read once, so no transposed copy pays off),
// and a contraction with a transcendental function of the output position in every summand (GLA's decay
// e^{g[n] - g[m]}), which that function bounds, not the FMAs. A stale config is dropped.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: la.register_block
#qd = affine_map<(n, d) -> (n, d)>
#zd = affine_map<(n, d) -> (d)>
#on = affine_map<(n, d) -> (n)>
#gn = affine_map<(n, m, d) -> (n)>
#gm = affine_map<(n, m, d) -> (m)>
#qn2 = affine_map<(n, m, d) -> (n, d)>
#km2 = affine_map<(n, m, d) -> (m, d)>
#nm2 = affine_map<(n, m, d) -> (n, m)>
func.func @left_alone(%q: tensor<64x32xf32>, %z: tensor<32xf32>, %init: tensor<64xf32>, %g: tensor<64xf32>,
                      %k: tensor<64x32xf32>, %scores: tensor<64x64xf32>) -> (tensor<64xf32>, tensor<64x64xf32>) {
  %r = linalg.generic {indexing_maps = [#qd, #zd, #on], iterator_types = ["parallel", "reduction"]}
      ins(%q, %z : tensor<64x32xf32>, tensor<32xf32>) outs(%init : tensor<64xf32>)
      attrs = {la.register_block = #la.register_block<tile = [16, 1], order = [0, 1], vector = 0>} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<64xf32>
  %s = linalg.generic {indexing_maps = [#qn2, #km2, #gn, #gm, #nm2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k, %g, %g : tensor<64x32xf32>, tensor<64x32xf32>, tensor<64xf32>, tensor<64xf32>)
      outs(%scores : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %gn_: f32, %gm_: f32, %acc: f32):
    %diff = arith.subf %gn_, %gm_ : f32
    %decay = math.exp %diff : f32
    %p = arith.mulf %x, %y fastmath<contract> : f32
    %w = arith.mulf %p, %decay : f32
    %sum = arith.addf %acc, %w fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<64x64xf32>
  return %r, %s : tensor<64xf32>, tensor<64x64xf32>
}

// -----

// A depthwise 3×3 window contraction (aft_conv's form after fusion: the padded input read at x + u, y + v).
// The window reads are taken; the row loop is the window position y, not the head i, so that neighbouring
// rows read overlapping windows (the loads of one row are the previous row's, in L1).
// CHECK-LABEL: func.func @window_contraction
// CHECK: la.register_block = #la.register_block<tile = [1, 6, 1, 1, 1, 64], order = [0, 2, 1, 5, 3, 4], vector = 5, rows = 1>
#win_in = affine_map<(i, y, x, u, v, c) -> (x + u, y + v, i, c)>
#win_w = affine_map<(i, y, x, u, v, c) -> (i, u, v)>
#win_out = affine_map<(i, y, x, u, v, c) -> (x, y, i, c)>
func.func @window_contraction(%padded: tensor<10x34x2x64xf32>, %w: tensor<2x3x3xf32>, %init: tensor<8x32x2x64xf32>)
    -> tensor<8x32x2x64xf32> {
  %r = linalg.generic {indexing_maps = [#win_in, #win_w, #win_out],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%padded, %w : tensor<10x34x2x64xf32>, tensor<2x3x3xf32>) outs(%init : tensor<8x32x2x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<8x32x2x64xf32>
  return %r : tensor<8x32x2x64xf32>
}

// -----

// A window read of the vector loop at an offset (x + u along the lanes) is not a block's contiguous read:
// no plan.
// CHECK-LABEL: func.func @window_along_lanes
// CHECK-NOT: la.register_block
#lane_in = affine_map<(y, x, u) -> (y, x + u)>
#lane_w = affine_map<(y, x, u) -> (u)>
#lane_out = affine_map<(y, x, u) -> (y, x)>
func.func @window_along_lanes(%padded: tensor<8x66xf32>, %w: tensor<3xf32>, %init: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %r = linalg.generic {indexing_maps = [#lane_in, #lane_w, #lane_out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%padded, %w : tensor<8x66xf32>, tensor<3xf32>) outs(%init : tensor<8x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}
