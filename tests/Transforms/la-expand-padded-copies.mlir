// RUN: la-opt %s -split-input-file -la-expand-padded-copies | FileCheck %s

// A zero pad of a map's result: the border slabs are filled at the start of the block, the map writes into
// the buffer's interior, and its result is inserted back (in place) right before the first reader of the
// padded tensor, after the map's other reader. Nothing is written twice, and no fill covers the buffer.
// CHECK-LABEL: func.func @pad_map
// CHECK:      %[[BUF:.*]] = bufferization.alloc_tensor() : tensor<2x10x13xf32>
// CHECK:      %[[S0:.*]] = tensor.extract_slice %[[BUF]][0, 0, 0] [2, 1, 13]
// CHECK:      %[[F0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[S0]] : tensor<2x1x13xf32>)
// CHECK:      %[[IN0:.*]] = tensor.insert_slice %[[F0]] into %[[BUF]][0, 0, 0] [2, 1, 13]
// CHECK:      tensor.insert_slice %{{.*}} into %[[IN0]][0, 9, 0] [2, 1, 13]
// CHECK:      tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0] [2, 10, 2]
// CHECK:      %[[BORDER:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 11] [2, 10, 2]
// CHECK:      %[[INTERIOR:.*]] = tensor.extract_slice %[[BORDER]][0, 1, 2] [2, 8, 9] [1, 1, 1]
// CHECK:      %[[E:.*]] = linalg.generic {{.*}} outs(%[[INTERIOR]] : tensor<2x8x9xf32>)
// CHECK:        math.exp
// CHECK:      %[[OTHER:.*]] = linalg.generic {{.*}} ins(%[[E]] : tensor<2x8x9xf32>)
// CHECK:      %[[PADDED:.*]] = tensor.insert_slice %[[E]] into %[[BORDER]][0, 1, 2] [2, 8, 9] [1, 1, 1]
// CHECK:      %[[READ:.*]] = linalg.generic {{.*}} ins(%[[PADDED]] : tensor<2x10x13xf32>)
// CHECK-NOT:  tensor.pad
// CHECK:      return %[[OTHER]], %[[READ]]
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @pad_map(%x: tensor<2x8x9xf32>) -> (tensor<2x8x9xf32>, tensor<2x10x13xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x8x9xf32>
  %e = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x8x9xf32>) outs(%empty : tensor<2x8x9xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<2x8x9xf32>
  %other = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e : tensor<2x8x9xf32>) outs(%empty : tensor<2x8x9xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.mulf %in, %in : f32
    linalg.yield %r : f32
  } -> tensor<2x8x9xf32>
  %padded = tensor.pad %e low[0, 1, 2] high[0, 1, 2] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %zero : f32
  } : tensor<2x8x9xf32> to tensor<2x10x13xf32>
  %empty2 = tensor.empty() : tensor<2x10x13xf32>
  %read = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%padded : tensor<2x10x13xf32>) outs(%empty2 : tensor<2x10x13xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %in : f32
    linalg.yield %r : f32
  } -> tensor<2x10x13xf32>
  return %other, %read : tensor<2x8x9xf32>, tensor<2x10x13xf32>
}

// -----

// A pad of an argument (no producer to redirect) on a dynamic shape: the buffer is allocated at the pad,
// its sizes the source's plus the padding, and only the padded dimension's two slabs are filled.
// CHECK-LABEL: func.func @pad_dynamic
// CHECK-SAME:  (%[[X:.*]]: tensor<?x8xf32>)
// CHECK:      %[[N:.*]] = tensor.dim %[[X]], %c0
// CHECK:      %[[PADDED_N:.*]] = affine.apply #{{.*}}()[%[[N]]]
// CHECK:      %[[BUF:.*]] = bufferization.alloc_tensor(%[[PADDED_N]]) : tensor<?x8xf32>
// CHECK-COUNT-2: linalg.fill
// CHECK-NOT:  linalg.fill
// CHECK:      tensor.insert_slice %[[X]] into %{{.*}}[3, 0] [%[[N]], 8] [1, 1]
func.func @pad_dynamic(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[3, 0] high[3, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<?x8xf32> to tensor<?x8xf32>
  return %padded : tensor<?x8xf32>
}
