// RUN: la-opt %s -split-input-file -la-slice-positions="entry=gates dims=2" -verify-diagnostics | FileCheck %s

// A per-head gate compiled for one [1, 1, T] slice: the head coordinate comes from the second of two new
// arguments and is added to every `la.index 1`; `la.index 2` (not sliced) is left alone.
// CHECK-LABEL: func.func @gates
// CHECK-SAME: (%[[SHAPE:.*]]: tensor<1x1x9xf32>, %[[B:.*]]: tensor<1x1xf32> {la.slice_position = 0 : i64},
// CHECK-SAME:  %[[H:.*]]: tensor<1x1xf32> {la.slice_position = 1 : i64})
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %{{.*}} = tensor.extract %[[B]][%[[C0]], %[[C0]]] : tensor<1x1xf32>
// CHECK: %[[HEAD:.*]] = tensor.extract %[[H]][%[[C0]], %[[C0]]] : tensor<1x1xf32>
// CHECK: la.map
// CHECK:   %[[I1:.*]] = la.index 1 : f32
// CHECK:   %[[SHIFTED:.*]] = arith.addf %[[I1]], %[[HEAD]] : f32
// CHECK:   %[[I2:.*]] = la.index 2 : index
// CHECK-NOT: arith.addi
// CHECK:   math.exp2 %[[SHIFTED]]
func.func @gates(%shape: tensor<1x1x9xf32>) -> tensor<1x1x9xf32> {
  %g = la.map "bht->bht" %shape : tensor<1x1x9xf32> -> tensor<1x1x9xf32> {
  ^bb0(%unused: f32):
    %h = la.index 1 : f32
    %t = la.index 2 : index
    %e = math.exp2 %h : f32
    la.yield %e : f32
  }
  return %g : tensor<1x1x9xf32>
}

// -----

// An index-typed position gets the coordinate converted to an index.
// CHECK-LABEL: func.func @gates
// CHECK: %[[HEAD:.*]] = tensor.extract %arg2
// CHECK: %[[I:.*]] = la.index 1 : index
// CHECK: %[[AS_INT:.*]] = arith.fptoui %[[HEAD]] : f32 to i64
// CHECK: %[[AS_INDEX:.*]] = arith.index_castui %[[AS_INT]] : i64 to index
// CHECK: arith.addi %[[I]], %[[AS_INDEX]] : index
func.func @gates(%shape: tensor<1x1x9xf32>) -> tensor<1x1x9xf32> {
  %g = la.map "bht->bht" %shape : tensor<1x1x9xf32> -> tensor<1x1x9xf32> {
  ^bb0(%unused: f32):
    %h = la.index 1 : index
    %i = arith.index_castui %h : index to i64
    %f = arith.uitofp %i : i64 to f32
    la.yield %f : f32
  }
  return %g : tensor<1x1x9xf32>
}

// -----

// Not a slice: the coordinates would be those of a whole batch.
// expected-error @+1 {{la-slice-positions: the first sliced argument of 'gates' is not a slice (its first 1 dimensions must have size 1, and the next a static size)}}
func.func @gates(%shape: tensor<2x1x9xf32>) -> tensor<2x1x9xf32> {
  return %shape : tensor<2x1x9xf32>
}

// -----

// A block of 4 consecutive heads in one call (the runtime groups small slices): the coordinate is the
// block's first head, and the in-kernel position along the block is added to it.
// CHECK-LABEL: func.func @gates
// CHECK-SAME: (%{{.*}}: tensor<1x4x9xf32>, %{{.*}}: tensor<1x1xf32> {la.slice_position = 0 : i64},
// CHECK-SAME:  %[[H:.*]]: tensor<1x1xf32> {la.slice_position = 1 : i64})
// CHECK: %[[HEAD:.*]] = tensor.extract %[[H]]
// CHECK:   %[[I1:.*]] = la.index 1 : f32
// CHECK:   arith.addf %[[I1]], %[[HEAD]] : f32
func.func @gates(%shape: tensor<1x4x9xf32>) -> tensor<1x4x9xf32> {
  %g = la.map "bht->bht" %shape : tensor<1x4x9xf32> -> tensor<1x4x9xf32> {
  ^bb0(%unused: f32):
    %h = la.index 1 : f32
    la.yield %h : f32
  }
  return %g : tensor<1x4x9xf32>
}
