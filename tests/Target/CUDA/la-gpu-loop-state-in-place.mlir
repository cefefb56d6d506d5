// RUN: la-opt %s -split-input-file -la-gpu-loop-state-in-place | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

// A state the loop reads and returns: updated in place in its iteration argument, then copied out after the
// loop, so that bufferisation gives the loop a temporary of its own (shared memory on the GPU) rather than
// the caller's result buffer. The sequence-long result, which the loop only writes a slice at a time, is
// returned as it is.
// CHECK-LABEL: func.func @state_copied_out
// CHECK: %[[LOOP:.*]]:2 = scf.for {{.*}} iter_args(%[[S:.*]] = %{{.*}}, %[[O:.*]] = %{{.*}})
// CHECK:   %[[NEXT:.*]] = linalg.generic
// CHECK:   %[[INPLACE:.*]] = bufferization.materialize_in_destination %[[NEXT]] in %[[S]]
// CHECK:   scf.yield %[[INPLACE]], %{{.*}}
// CHECK: %[[E:.*]] = tensor.empty() : tensor<16x16xf32>
// CHECK: %[[OUT:.*]] = linalg.copy ins(%[[LOOP]]#0 : tensor<16x16xf32>) outs(%[[E]] : tensor<16x16xf32>)
// CHECK: return %[[OUT]], %[[LOOP]]#1
func.func @state_copied_out(%x: tensor<64x16xf32>, %h0: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<64x16xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %out = tensor.empty() : tensor<64x16xf32>
  %r:2 = scf.for %i = %c0 to %c64 step %c16 iter_args(%s = %h0, %o = %out) -> (tensor<16x16xf32>, tensor<64x16xf32>) {
    %chunk = tensor.extract_slice %x[%i, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
    %next = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%chunk : tensor<16x16xf32>) outs(%s : tensor<16x16xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %sum = arith.addf %a, %acc : f32
      linalg.yield %sum : f32
    } -> tensor<16x16xf32>
    %written = tensor.insert_slice %next into %o[%i, 0] [16, 16] [1, 1] : tensor<16x16xf32> into tensor<64x16xf32>
    scf.yield %next, %written : tensor<16x16xf32>, tensor<64x16xf32>
  }
  return %r#0, %r#1 : tensor<16x16xf32>, tensor<64x16xf32>
}
