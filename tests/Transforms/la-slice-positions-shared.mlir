// RUN: la-opt %s -split-input-file -la-slice-positions="entry=causal_bias dims=1 shared-arguments=1" -verify-diagnostics | FileCheck %s

// A batch slice of causal AFT-full's bias: w[T, T] has no batch dimension, so every slice reads it whole. It
// is marked for the GPU target (which then does not step it per block), and the map computed from it alone
// keeps its own `la.index 0` (the row t, not a batch coordinate); the map over the slice shifts its batch
// index as before.
// CHECK-LABEL: func.func @causal_bias
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x4xf32>, %[[W:.*]]: tensor<4x4xf32> {la.shared_argument},
// CHECK-SAME:  %[[B:.*]]: tensor<1xf32> {la.slice_position = 0 : i64})
// CHECK: %[[BATCH:.*]] = tensor.extract %[[B]]
// CHECK: la.map "ts->ts" %[[W]]
// CHECK-NEXT: ^bb0
// CHECK-NEXT: %[[T:.*]] = la.index 0 : index
// CHECK-NEXT: %[[S:.*]] = la.index 1 : index
// CHECK-NEXT: arith.cmpi ule, %[[S]], %[[T]] : index
// CHECK: la.map "bts,ts->bts"
// CHECK: %[[I0:.*]] = la.index 0 : f32
// CHECK-NEXT: arith.addf %[[I0]], %[[BATCH]] : f32
func.func @causal_bias(%x: tensor<1x4x4xf32>, %w: tensor<4x4xf32>) -> tensor<1x4x4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %wc = la.map "ts->ts" %w : tensor<4x4xf32> -> tensor<4x4xf32> {
  ^bb0(%wv: f32):
    %t = la.index 0 : index
    %s = la.index 1 : index
    %visible = arith.cmpi ule, %s, %t : index
    %r = arith.select %visible, %wv, %ninf : f32
    la.yield %r : f32
  }
  %y = la.map "bts,ts->bts" %x, %wc : tensor<1x4x4xf32>, tensor<4x4xf32> -> tensor<1x4x4xf32> {
  ^bb0(%xv: f32, %wv: f32):
    %b = la.index 0 : f32
    %p = arith.mulf %xv, %wv : f32
    %r = arith.addf %p, %b : f32
    la.yield %r : f32
  }
  return %y : tensor<1x4x4xf32>
}

// -----

// A shared argument that does not exist.
// expected-error @+1 {{la-slice-positions: shared argument #1 of 'causal_bias', which takes 1}}
func.func @causal_bias(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  return %x : tensor<1x4x8xf32>
}
