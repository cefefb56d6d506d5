// RUN: la-opt %s -split-input-file -la-hoist-block-accumulators | FileCheck %s

// A vectorised 8×32 block reads its accumulator, adds one reduction step and writes it back, every step: the
// read moves in front of the reduction loop and the write after it, and the accumulator is a loop-carried
// vector<8x32xf32> (registers) in between.
// CHECK-LABEL: func.func @accumulator
// CHECK:       %[[INIT:.*]] = vector.transfer_read %{{.*}} : tensor<8x32xf32>, vector<8x32xf32>
// CHECK:       %[[SUM:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (vector<8x32xf32>)
// CHECK-NOT:     vector.transfer_write
// CHECK:         %[[NEXT:.*]] = vector.fma %{{.*}}, %{{.*}}, %[[ACC]] : vector<8x32xf32>
// CHECK:         scf.yield %[[NEXT]]
// CHECK:       vector.transfer_write %[[SUM]]
func.func @accumulator(%q: tensor<8x16xf32>, %s: tensor<16x32xf32>, %init: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %poison = ub.poison : f32
  %r = scf.for %d = %c0 to %c16 step %c1 iter_args(%acc = %init) -> (tensor<8x32xf32>) {
    %qs = tensor.extract_slice %q[0, %d] [8, 1] [1, 1] : tensor<8x16xf32> to tensor<8x1xf32>
    %ss = tensor.extract_slice %s[%d, 0] [1, 32] [1, 1] : tensor<16x32xf32> to tensor<1x32xf32>
    %a = vector.transfer_read %qs[%c0, %c0], %poison {in_bounds = [true, true]} : tensor<8x1xf32>, vector<8x1xf32>
    %b = vector.transfer_read %ss[%c0, %c0], %poison {in_bounds = [true]} : tensor<1x32xf32>, vector<32xf32>
    %c = vector.transfer_read %acc[%c0, %c0], %poison {in_bounds = [true, true]} : tensor<8x32xf32>, vector<8x32xf32>
    %ab = vector.broadcast %a : vector<8x1xf32> to vector<8x32xf32>
    %bb = vector.broadcast %b : vector<32xf32> to vector<8x32xf32>
    %f = vector.fma %ab, %bb, %c : vector<8x32xf32>
    %w = vector.transfer_write %f, %acc[%c0, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, tensor<8x32xf32>
    scf.yield %w : tensor<8x32xf32>
  }
  return %r : tensor<8x32xf32>
}

// -----

// A function without register blocks (no vector transfers) is left to LLVM: its slice of a loop-carried
// tensor stays in the loop.
// CHECK-LABEL: func.func @no_blocks
// CHECK:       scf.for {{.*}} -> (tensor<8x32xf32>)
// CHECK:         tensor.extract_slice
// CHECK:         tensor.insert_slice
func.func @no_blocks(%x: tensor<8x32xf32>, %y: tensor<4x32xf32>) -> tensor<8x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %r = scf.for %d = %c0 to %c16 step %c1 iter_args(%acc = %x) -> (tensor<8x32xf32>) {
    %slice = tensor.extract_slice %acc[0, 0] [4, 32] [1, 1] : tensor<8x32xf32> to tensor<4x32xf32>
    %sum = arith.addf %slice, %y : tensor<4x32xf32>
    %next = tensor.insert_slice %sum into %acc[0, 0] [4, 32] [1, 1] : tensor<4x32xf32> into tensor<8x32xf32>
    scf.yield %next : tensor<8x32xf32>
  }
  return %r : tensor<8x32xf32>
}
