// RUN: la-opt %s -la-slice-positions="entry=gates dims=2 pieces=4" | FileCheck %s
// RUN: la-opt %s -la-slice-positions="entry=gates dims=2 pieces=0" -verify-diagnostics -o /dev/null

// A kernel for one of 4 pieces of each slice's sequence (a GPU call in pieces views [B, H, N] as
// [B, H·4, N/4]): its coordinate along H is head·4 + piece, and `la.index 1` reads the head, the
// coordinate over 4 in integers; the batch coordinate is used as it is.
// CHECK-LABEL: func.func @gates
// CHECK-SAME: %[[B:[a-z0-9]+]]: tensor<1x1xf32> {la.slice_position = 0 : i64}, %[[H:[a-z0-9]+]]: tensor<1x1xf32> {la.slice_position = 1 : i64}
// CHECK: %[[BATCH:.*]] = tensor.extract %[[B]]
// CHECK: %[[PIECE:.*]] = tensor.extract %[[H]]
// CHECK: %[[AS_INT:.*]] = arith.fptoui %[[PIECE]] : f32 to i64
// CHECK: %[[FOUR:.*]] = arith.constant 4 : i64
// CHECK: %[[SLICE:.*]] = arith.divui %[[AS_INT]], %[[FOUR]] : i64
// CHECK: %[[HEAD:.*]] = arith.uitofp %[[SLICE]] : i64 to f32
// CHECK: la.map
// CHECK:   %[[I0:.*]] = la.index 0 : f32
// CHECK:   arith.addf %[[I0]], %[[BATCH]] : f32
// CHECK:   %[[I1:.*]] = la.index 1 : f32
// CHECK:   arith.addf %[[I1]], %[[HEAD]] : f32
// expected-error @below {{la-slice-positions: pieces must be at least 1, not 0}}
module {
func.func @gates(%shape: tensor<1x1x9xf32>) -> tensor<1x1x9xf32> {
  %g = la.map "bht->bht" %shape : tensor<1x1x9xf32> -> tensor<1x1x9xf32> {
  ^bb0(%unused: f32):
    %b = la.index 0 : f32
    %h = la.index 1 : f32
    %s = arith.addf %b, %h : f32
    %e = math.exp2 %s : f32
    la.yield %e : f32
  }
  return %g : tensor<1x1x9xf32>
}
}
