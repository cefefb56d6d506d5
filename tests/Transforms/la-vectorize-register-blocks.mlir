// RUN: la-opt %s -split-input-file -la-vectorize-register-blocks | FileCheck %s

// One 8×32 block of a product, one reduction step: the per-row operand is broadcast across the lanes and the
// per-lane one across the rows, and the multiply-add is one vector.fma on the block. The config is spent.
// CHECK-LABEL: func.func @block
// CHECK-DAG:   %[[COL:.*]] = vector.transfer_read {{.*}} : tensor<8x1xf32>, vector<8x1xf32>
// CHECK-DAG:   %[[ROW:.*]] = vector.transfer_read {{.*}} : tensor<1x32xf32>, vector<32xf32>
// CHECK-DAG:   %[[ACC:.*]] = vector.transfer_read {{.*}} : tensor<8x32xf32>, vector<8x32xf32>
// CHECK-DAG:   %[[A:.*]] = vector.broadcast %[[COL]] : vector<8x1xf32> to vector<8x32xf32>
// CHECK-DAG:   %[[B:.*]] = vector.broadcast %[[ROW]] : vector<32xf32> to vector<8x32xf32>
// CHECK:       %[[FMA:.*]] = vector.fma %[[A]], %[[B]], %[[ACC]] : vector<8x32xf32>
// CHECK:       vector.transfer_write %[[FMA]]
// CHECK-NOT:   linalg.generic
// CHECK-NOT:   la.register_block
#a = affine_map<(n, e, d) -> (n, d)>
#b = affine_map<(n, e, d) -> (d, e)>
#c = affine_map<(n, e, d) -> (n, e)>
func.func @block(%q: tensor<8x1xf32>, %s: tensor<1x32xf32>, %init: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %r = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %s : tensor<8x1xf32>, tensor<1x32xf32>) outs(%init : tensor<8x32xf32>)
      attrs = {la.register_block = #la.register_block<tile = [8, 32, 1], order = [0, 1, 2], vector = 1, rows = 0>} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}

// -----

// An elementwise block that reads a per-row value: the exp runs once per row (vector<8>), then is broadcast
// across the lanes, not once per lane.
// CHECK-LABEL: func.func @per_row_exp
// CHECK:       math.exp {{.*}} : vector<8xf32>
// CHECK-NOT:   math.exp {{.*}} : vector<8x32xf32>
// CHECK:       arith.mulf {{.*}} : vector<8x32xf32>
#row = affine_map<(n, e) -> (n)>
#id = affine_map<(n, e) -> (n, e)>
func.func @per_row_exp(%w: tensor<8xf32>, %x: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %r = linalg.generic {indexing_maps = [#row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w, %x : tensor<8xf32>, tensor<8x32xf32>) outs(%x : tensor<8x32xf32>)
      attrs = {la.register_block = #la.register_block<tile = [8, 32], order = [0, 1], vector = 1>} {
  ^bb0(%ww: f32, %xx: f32, %o: f32):
    %e = math.exp %ww : f32
    %g = arith.mulf %e, %xx : f32
    linalg.yield %g : f32
  } -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}

// -----

// An op larger than its block (it was not tiled) and an op without a config stay generics; the config is
// dropped all the same.
// CHECK-LABEL: func.func @not_blocks
// CHECK:       linalg.generic
// CHECK:       linalg.generic
// CHECK-NOT:   vector.
// CHECK-NOT:   la.register_block
#id2 = affine_map<(n, e) -> (n, e)>
func.func @not_blocks(%x: tensor<16x32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>) {
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<16x32xf32>) outs(%x : tensor<16x32xf32>)
      attrs = {la.register_block = #la.register_block<tile = [8, 32], order = [0, 1], vector = 1>} {
  ^bb0(%a: f32, %o: f32):
    %sq = arith.mulf %a, %a : f32
    linalg.yield %sq : f32
  } -> tensor<16x32xf32>
  %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<16x32xf32>) outs(%x : tensor<16x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %sq = arith.mulf %a, %a : f32
    linalg.yield %sq : f32
  } -> tensor<16x32xf32>
  return %r, %s : tensor<16x32xf32>, tensor<16x32xf32>
}

// -----

// One block of a window contraction: its offset loops u, v run one step, so the window read (x + u, y + v)
// of the block's slice is the plain read (x, y), which the vectoriser takes: six rows of 64 lanes, one FMA
// with the broadcast kernel weight.
// CHECK-LABEL: func.func @window_block
// CHECK-NOT:   linalg.generic
// CHECK:       vector.transfer_read {{.*}} : tensor<1x6x1x64xf32>, vector<6x1x64xf32>
// CHECK:       vector.broadcast {{.*}} : vector<1xf32> to vector<6x1x64xf32>
// CHECK:       vector.fma {{.*}} : vector<6x1x64xf32>
// CHECK-NOT:   la.register_block
#wb_in = affine_map<(i, y, x, u, v, c) -> (x + u, y + v, i, c)>
#wb_w = affine_map<(i, y, x, u, v, c) -> (i, u, v)>
#wb_out = affine_map<(i, y, x, u, v, c) -> (x, y, i, c)>
func.func @window_block(%padded: tensor<1x6x1x64xf32>, %w: tensor<1x1x1xf32>, %init: tensor<1x6x1x64xf32>)
    -> tensor<1x6x1x64xf32> {
  %r = linalg.generic {indexing_maps = [#wb_in, #wb_w, #wb_out],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
      ins(%padded, %w : tensor<1x6x1x64xf32>, tensor<1x1x1xf32>) outs(%init : tensor<1x6x1x64xf32>)
      attrs = {la.register_block = #la.register_block<tile = [1, 6, 1, 1, 1, 64], order = [0, 2, 1, 5, 3, 4], vector = 5, rows = 1>} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<1x6x1x64xf32>
  return %r : tensor<1x6x1x64xf32>
}
