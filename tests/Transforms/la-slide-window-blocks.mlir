// RUN: la-opt %s -split-input-file -la-slide-window-blocks | FileCheck %s

// A 3-row block of a window contraction over 4 offsets (the shape la-hoist-block-accumulators leaves): each
// offset v reads rows v .. v+2 and adds w[v] times them. After the rewrite the 3 + 4 − 1 = 6 distinct rows
// are read once each, and row p goes to every accumulator row r ≤ p with the weight of offset p − r, so
// accumulator row 0 still adds offsets 0, 1, 2, 3 in order (rows 0, 1, 2, 3).
// CHECK-LABEL: func.func @window_rows
// CHECK-NOT:   scf.for
// CHECK-DAG:   %[[W0:.*]] = tensor.extract_slice %arg1[0] [1] [1]
// CHECK-DAG:   %[[W3:.*]] = tensor.extract_slice %arg1[3] [1] [1]
// CHECK:       %[[ACC0:.*]] = vector.extract %arg2[0] : vector<16xf32> from vector<3x16xf32>
// CHECK:       %[[ACC2:.*]] = vector.extract %arg2[2] : vector<16xf32> from vector<3x16xf32>
// CHECK:       tensor.extract_slice %arg0[0, 0] [1, 16] [1, 1]
// CHECK:       %[[R00:.*]] = vector.fma %{{.*}}, %{{.*}}, %[[ACC0]] : vector<16xf32>
// CHECK:       tensor.extract_slice %arg0[1, 0] [1, 16] [1, 1]
// CHECK-COUNT-2: vector.fma
// CHECK:       tensor.extract_slice %arg0[2, 0] [1, 16] [1, 1]
// CHECK-COUNT-3: vector.fma
// CHECK:       tensor.extract_slice %arg0[3, 0] [1, 16] [1, 1]
// CHECK-COUNT-3: vector.fma
// CHECK:       tensor.extract_slice %arg0[4, 0] [1, 16] [1, 1]
// CHECK-COUNT-2: vector.fma
// CHECK:       %[[LAST:.*]] = tensor.extract_slice %arg0[5, 0] [1, 16] [1, 1]
// CHECK:       %[[ROW5:.*]] = vector.transfer_read %[[LAST]]
// CHECK:       %[[ROW5V:.*]] = vector.shape_cast %[[ROW5]] : vector<1x16xf32> to vector<16xf32>
// CHECK:       %[[R23:.*]] = vector.fma %[[ROW5V]], %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK-NOT:   tensor.extract_slice %arg0
// CHECK:       %[[B0:.*]] = vector.insert %{{.*}}, %arg2 [0] : vector<16xf32> into vector<3x16xf32>
// CHECK:       %[[B1:.*]] = vector.insert %{{.*}}, %[[B0]] [1]
// CHECK:       %[[B2:.*]] = vector.insert %[[R23]], %[[B1]] [2]
// CHECK:       return %[[B2]]
func.func @window_rows(%x: tensor<6x16xf32>, %w: tensor<4xf32>, %init: vector<3x16xf32>) -> vector<3x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %poison = ub.poison : f32
  %r = scf.for %v = %c0 to %c4 step %c1 iter_args(%acc = %init) -> (vector<3x16xf32>) {
    %xs = tensor.extract_slice %x[%v, 0] [3, 16] [1, 1] : tensor<6x16xf32> to tensor<3x16xf32>
    %ws = tensor.extract_slice %w[%v] [1] [1] : tensor<4xf32> to tensor<1xf32>
    %rows = vector.transfer_read %xs[%c0, %c0], %poison {in_bounds = [true, true]} : tensor<3x16xf32>, vector<3x16xf32>
    %wv = vector.transfer_read %ws[%c0], %poison {in_bounds = [true]} : tensor<1xf32>, vector<1xf32>
    %wb = vector.broadcast %wv : vector<1xf32> to vector<3x16xf32>
    %f = vector.fma %rows, %wb, %acc : vector<3x16xf32>
    scf.yield %f : vector<3x16xf32>
  }
  return %r : vector<3x16xf32>
}

// -----

// An ordinary reduction step of a matrix-product block (a broadcast column of A, a row of B) is not a window:
// the loop stays.
// CHECK-LABEL: func.func @product_step
// CHECK:       scf.for
// CHECK:         vector.fma
func.func @product_step(%a: tensor<3x4xf32>, %b: tensor<4x16xf32>, %init: vector<3x16xf32>) -> vector<3x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %poison = ub.poison : f32
  %r = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %init) -> (vector<3x16xf32>) {
    %as = tensor.extract_slice %a[0, %k] [3, 1] [1, 1] : tensor<3x4xf32> to tensor<3x1xf32>
    %bs = tensor.extract_slice %b[%k, 0] [1, 16] [1, 1] : tensor<4x16xf32> to tensor<1x16xf32>
    %av = vector.transfer_read %as[%c0, %c0], %poison {in_bounds = [true, true]} : tensor<3x1xf32>, vector<3x1xf32>
    %bv = vector.transfer_read %bs[%c0, %c0], %poison {in_bounds = [true]} : tensor<1x16xf32>, vector<16xf32>
    %ab = vector.broadcast %av : vector<3x1xf32> to vector<3x16xf32>
    %bb = vector.broadcast %bv : vector<16xf32> to vector<3x16xf32>
    %f = vector.fma %ab, %bb, %acc : vector<3x16xf32>
    scf.yield %f : vector<3x16xf32>
  }
  return %r : vector<3x16xf32>
}
