// RUN: la-opt %s -split-input-file -la-fuse-block-prologues | FileCheck %s

// A decode step: the state update s' = s + k⊗v is returned and read by the read-out o = q·s', a register
// block of 2 heads × 64 lanes stepping the 32 rows d. The update runs in the block's d loop, one head per
// block (the heads share nothing of s'), its tile marked as a block (a config of the whole update, which fits
// every tile); the loop carries the new state, which is inserted into the update's destination and returned.
// CHECK-LABEL: func.func @step
// CHECK:       %[[DEST:.*]] = tensor.empty() : tensor<2x32x64xf32>
// CHECK-NOT:   } -> tensor<2x32x64xf32>
// CHECK:       %[[LOOPS:.*]]:2 = scf.for %[[H:.*]] = %c0 to %c2 step %c1 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %[[DEST]])
// CHECK:         scf.for %[[D:.*]] = %c0 to %c32 step %c1 iter_args
// CHECK:           %[[ROW:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x64xf32>) attrs =  {la.register_block = #la.register_block<tile = [2, 32, 64], order = [0, 1, 2], vector = 2>}
// CHECK:           linalg.generic {{.*}} ins(%{{.*}}, %[[ROW]] : tensor<1x1xf32>, tensor<1x1x64xf32>)
// CHECK:           tensor.insert_slice %[[ROW]] into %{{.*}}[%[[H]], %[[D]], 0] [1, 1, 64]
// CHECK:       return %[[LOOPS]]#0, %[[LOOPS]]#1
#hd = affine_map<(h, d, e) -> (h, d)>
#he = affine_map<(h, d, e) -> (h, e)>
#hde = affine_map<(h, d, e) -> (h, d, e)>
#q = affine_map<(h, e, d) -> (h, d)>
#s = affine_map<(h, e, d) -> (h, d, e)>
#o = affine_map<(h, e, d) -> (h, e)>
func.func @step(%s: tensor<2x32x64xf32>, %k: tensor<2x32xf32>, %v: tensor<2x64xf32>, %q: tensor<2x32xf32>)
    -> (tensor<2x64xf32>, tensor<2x32x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x32x64xf32>
  %next = linalg.generic {indexing_maps = [#hde, #hd, #he, #hde], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %k, %v : tensor<2x32x64xf32>, tensor<2x32xf32>, tensor<2x64xf32>) outs(%empty : tensor<2x32x64xf32>) {
  ^bb0(%sv: f32, %kv: f32, %vv: f32, %out: f32):
    %outer = arith.mulf %kv, %vv : f32
    %sum = arith.addf %sv, %outer : f32
    linalg.yield %sum : f32
  } -> tensor<2x32x64xf32>
  %oe = tensor.empty() : tensor<2x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%oe : tensor<2x64xf32>) -> tensor<2x64xf32>
  %o = linalg.generic {indexing_maps = [#q, #s, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %next : tensor<2x32xf32>, tensor<2x32x64xf32>) outs(%init : tensor<2x64xf32>)
      attrs = {la.register_block = #la.register_block<tile = [2, 64, 1], order = [0, 1, 2], vector = 1, rows = 0>} {
  ^bb0(%qv: f32, %sv: f32, %acc: f32):
    %m = arith.mulf %qv, %sv : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<2x64xf32>
  return %o, %next : tensor<2x64xf32>, tensor<2x32x64xf32>
}

// -----

// The read-out split into two blocks of heads (3 + 1, as epilogue fusion leaves it), each reading its slice
// of the state through an expansion by a unit dimension (one position). Each block gets the update of its
// own heads, and the second writes into the state the first has filled, so the state stays one tensor.
// CHECK-LABEL: func.func @two_blocks
// CHECK:       %[[DEST:.*]] = tensor.empty() : tensor<4x32x64xf32>
// CHECK:       %[[FIRST:.*]] = tensor.extract_slice %[[DEST]][0, 0, 0] [3, 32, 64]
// CHECK:       %[[A:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %[[FIRST]])
// CHECK:       %[[PART:.*]] = tensor.insert_slice %[[A]]#1 into %[[DEST]][0, 0, 0] [3, 32, 64]
// CHECK:       %[[SECOND:.*]] = tensor.extract_slice %[[PART]][3, 0, 0] [1, 32, 64]
// CHECK:       %[[B:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %[[SECOND]])
// CHECK:       %[[WHOLE:.*]] = tensor.insert_slice %[[B]]#1 into %[[PART]][3, 0, 0] [1, 32, 64]
// CHECK:       return %{{.*}}, %{{.*}}, %[[WHOLE]]
#hd = affine_map<(h, d, e) -> (h, d)>
#he = affine_map<(h, d, e) -> (h, e)>
#hde = affine_map<(h, d, e) -> (h, d, e)>
#q = affine_map<(h, n, e, d) -> (h, n, d)>
#s = affine_map<(h, n, e, d) -> (h, n, d, e)>
#o = affine_map<(h, n, e, d) -> (h, n, e)>
func.func @two_blocks(%s: tensor<4x32x64xf32>, %k: tensor<4x32xf32>, %v: tensor<4x64xf32>, %q: tensor<4x1x32xf32>)
    -> (tensor<3x1x64xf32>, tensor<1x1x64xf32>, tensor<4x32x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x32x64xf32>
  %next = linalg.generic {indexing_maps = [#hde, #hd, #he, #hde], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %k, %v : tensor<4x32x64xf32>, tensor<4x32xf32>, tensor<4x64xf32>) outs(%empty : tensor<4x32x64xf32>) {
  ^bb0(%sv: f32, %kv: f32, %vv: f32, %out: f32):
    %outer = arith.mulf %kv, %vv : f32
    %sum = arith.addf %sv, %outer : f32
    linalg.yield %sum : f32
  } -> tensor<4x32x64xf32>
  %expanded = tensor.expand_shape %next [[0], [1, 2], [3]] output_shape [4, 1, 32, 64]
      : tensor<4x32x64xf32> into tensor<4x1x32x64xf32>
  %s3 = tensor.extract_slice %expanded[0, 0, 0, 0] [3, 1, 32, 64] [1, 1, 1, 1] : tensor<4x1x32x64xf32> to tensor<3x1x32x64xf32>
  %q3 = tensor.extract_slice %q[0, 0, 0] [3, 1, 32] [1, 1, 1] : tensor<4x1x32xf32> to tensor<3x1x32xf32>
  %e3 = tensor.empty() : tensor<3x1x64xf32>
  %i3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<3x1x64xf32>) -> tensor<3x1x64xf32>
  %o3 = linalg.generic {indexing_maps = [#q, #s, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q3, %s3 : tensor<3x1x32xf32>, tensor<3x1x32x64xf32>) outs(%i3 : tensor<3x1x64xf32>)
      attrs = {la.register_block = #la.register_block<tile = [3, 1, 64, 1], order = [1, 0, 2, 3], vector = 2, rows = 0>} {
  ^bb0(%qv: f32, %sv: f32, %acc: f32):
    %m = arith.mulf %qv, %sv : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<3x1x64xf32>
  %s1 = tensor.extract_slice %expanded[3, 0, 0, 0] [1, 1, 32, 64] [1, 1, 1, 1] : tensor<4x1x32x64xf32> to tensor<1x1x32x64xf32>
  %q1 = tensor.extract_slice %q[3, 0, 0] [1, 1, 32] [1, 1, 1] : tensor<4x1x32xf32> to tensor<1x1x32xf32>
  %e1 = tensor.empty() : tensor<1x1x64xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x1x64xf32>) -> tensor<1x1x64xf32>
  %o1 = linalg.generic {indexing_maps = [#q, #s, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q1, %s1 : tensor<1x1x32xf32>, tensor<1x1x32x64xf32>) outs(%i1 : tensor<1x1x64xf32>)
      attrs = {la.register_block = #la.register_block<tile = [3, 1, 64, 1], order = [1, 0, 2, 3], vector = 2, rows = 0>} {
  ^bb0(%qv: f32, %sv: f32, %acc: f32):
    %m = arith.mulf %qv, %sv : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<1x1x64xf32>
  return %o3, %o1, %next : tensor<3x1x64xf32>, tensor<1x1x64xf32>, tensor<4x32x64xf32>
}

// -----

// Left alone: a block that reads only half of the state (the other half would never be computed), and a
// producer the function does not return (la-fuse-elementwise decides about recomputing those).
// CHECK-LABEL: func.func @half_read
// CHECK:       %[[NEXT:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x32x64xf32>)
// CHECK-NOT:   scf.for
// CHECK:       return %{{.*}}, %[[NEXT]]
// CHECK-LABEL: func.func @not_returned
// CHECK:       linalg.generic {{.*}} outs(%{{.*}} : tensor<2x32x64xf32>)
// CHECK:       linalg.generic {{.*}}la.register_block
// CHECK-NOT:   scf.for
#hd = affine_map<(h, d, e) -> (h, d)>
#he = affine_map<(h, d, e) -> (h, e)>
#hde = affine_map<(h, d, e) -> (h, d, e)>
#q = affine_map<(h, e, d) -> (h, d)>
#s = affine_map<(h, e, d) -> (h, d, e)>
#o = affine_map<(h, e, d) -> (h, e)>
func.func @half_read(%s: tensor<2x32x64xf32>, %k: tensor<2x32xf32>, %v: tensor<2x64xf32>, %q: tensor<1x32xf32>)
    -> (tensor<1x64xf32>, tensor<2x32x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x32x64xf32>
  %next = linalg.generic {indexing_maps = [#hde, #hd, #he, #hde], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %k, %v : tensor<2x32x64xf32>, tensor<2x32xf32>, tensor<2x64xf32>) outs(%empty : tensor<2x32x64xf32>) {
  ^bb0(%sv: f32, %kv: f32, %vv: f32, %out: f32):
    %outer = arith.mulf %kv, %vv : f32
    %sum = arith.addf %sv, %outer : f32
    linalg.yield %sum : f32
  } -> tensor<2x32x64xf32>
  %half = tensor.extract_slice %next[0, 0, 0] [1, 32, 64] [1, 1, 1] : tensor<2x32x64xf32> to tensor<1x32x64xf32>
  %oe = tensor.empty() : tensor<1x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x64xf32>) -> tensor<1x64xf32>
  %o = linalg.generic {indexing_maps = [#q, #s, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %half : tensor<1x32xf32>, tensor<1x32x64xf32>) outs(%init : tensor<1x64xf32>)
      attrs = {la.register_block = #la.register_block<tile = [1, 64, 1], order = [0, 1, 2], vector = 1, rows = 0>} {
  ^bb0(%qv: f32, %sv: f32, %acc: f32):
    %m = arith.mulf %qv, %sv : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<1x64xf32>
  return %o, %next : tensor<1x64xf32>, tensor<2x32x64xf32>
}

func.func @not_returned(%s: tensor<2x32x64xf32>, %k: tensor<2x32xf32>, %v: tensor<2x64xf32>, %q: tensor<2x32xf32>)
    -> tensor<2x64xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x32x64xf32>
  %next = linalg.generic {indexing_maps = [#hde, #hd, #he, #hde], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %k, %v : tensor<2x32x64xf32>, tensor<2x32xf32>, tensor<2x64xf32>) outs(%empty : tensor<2x32x64xf32>) {
  ^bb0(%sv: f32, %kv: f32, %vv: f32, %out: f32):
    %outer = arith.mulf %kv, %vv : f32
    %sum = arith.addf %sv, %outer : f32
    linalg.yield %sum : f32
  } -> tensor<2x32x64xf32>
  %oe = tensor.empty() : tensor<2x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%oe : tensor<2x64xf32>) -> tensor<2x64xf32>
  %o = linalg.generic {indexing_maps = [#q, #s, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %next : tensor<2x32xf32>, tensor<2x32x64xf32>) outs(%init : tensor<2x64xf32>)
      attrs = {la.register_block = #la.register_block<tile = [2, 64, 1], order = [0, 1, 2], vector = 1, rows = 0>} {
  ^bb0(%qv: f32, %sv: f32, %acc: f32):
    %m = arith.mulf %qv, %sv : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<2x64xf32>
  return %o : tensor<2x64xf32>
}

// -----

// GLA's step: s' = exp(g[h, d])·s + k⊗v. The exponential does not depend on the vector loop e, so in the
// blocks it would run once per state row as a scalar; it is computed apart over g (vectorised later), and the
// fused update reads its result. The block planned 64 of the 128 lanes; fused, it takes the whole row
// (contiguous state rows; 24 registers for the accumulators, the row and v).
// CHECK-LABEL: func.func @gated_step
// CHECK:       %[[DECAY:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x32xf32>) outs(%{{.*}} : tensor<2x32xf32>)
// CHECK-NEXT:  ^bb0(%[[G:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[G]] : f32
// CHECK-NEXT:    linalg.yield %[[E]] : f32
// CHECK:       scf.for
// CHECK:         scf.for
// CHECK-NOT:       math.exp
// CHECK:           linalg.generic {{.*}} ins({{.*}}) outs(%{{.*}} : tensor<1x1x128xf32>)
// CHECK:       return
#hd = affine_map<(h, d, e) -> (h, d)>
#he = affine_map<(h, d, e) -> (h, e)>
#hde = affine_map<(h, d, e) -> (h, d, e)>
#q = affine_map<(h, e, d) -> (h, d)>
#s = affine_map<(h, e, d) -> (h, d, e)>
#o = affine_map<(h, e, d) -> (h, e)>
func.func @gated_step(%s: tensor<2x32x128xf32>, %k: tensor<2x32xf32>, %v: tensor<2x128xf32>, %g: tensor<2x32xf32>,
                      %q: tensor<2x32xf32>) -> (tensor<2x128xf32>, tensor<2x32x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x32x128xf32>
  %next = linalg.generic {indexing_maps = [#hde, #hd, #he, #hd, #hde], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %k, %v, %g : tensor<2x32x128xf32>, tensor<2x32xf32>, tensor<2x128xf32>, tensor<2x32xf32>)
      outs(%empty : tensor<2x32x128xf32>) {
  ^bb0(%sv: f32, %kv: f32, %vv: f32, %gv: f32, %out: f32):
    %decay = math.exp %gv : f32
    %kept = arith.mulf %decay, %sv : f32
    %outer = arith.mulf %kv, %vv : f32
    %sum = arith.addf %kept, %outer : f32
    linalg.yield %sum : f32
  } -> tensor<2x32x128xf32>
  %oe = tensor.empty() : tensor<2x128xf32>
  %init = linalg.fill ins(%zero : f32) outs(%oe : tensor<2x128xf32>) -> tensor<2x128xf32>
  %o = linalg.generic {indexing_maps = [#q, #s, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %next : tensor<2x32xf32>, tensor<2x32x128xf32>) outs(%init : tensor<2x128xf32>)
      attrs = {la.register_block = #la.register_block<tile = [2, 64, 1], order = [0, 1, 2], vector = 1, rows = 0>} {
  ^bb0(%qv: f32, %sv: f32, %acc: f32):
    %m = arith.mulf %qv, %sv : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<2x128xf32>
  return %o, %next : tensor<2x128xf32>, tensor<2x32x128xf32>
}
