// RUN: la-opt %s -split-input-file -la-gpu-fuse-producers-into-loops -canonicalize -cse | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

// φ(q) over the whole slice (f16 in, f32 out) read a chunk at a time by one loop: computed on each chunk
// instead, from the chunk of q, into a chunk-sized empty tensor, not a window of the sequence-long one (u = 1: 2 bytes read against 2 + 4 + 4).
// CHECK-LABEL: func.func @feature_map_per_chunk
// CHECK-SAME: (%[[Q:.*]]: tensor<64x32xf16>)
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[I:[a-z0-9_]+]] =
// CHECK:   %[[QC:.*]] = tensor.extract_slice %[[Q]][%[[I]], 0] [16, 32] [1, 1]
// CHECK:   linalg.generic {{.*}} ins(%[[QC]] : tensor<16x32xf16>) outs(%{{.*}} : tensor<16x32xf32>)
// CHECK:     math.exp
func.func @feature_map_per_chunk(%q: tensor<64x32xf16>) -> tensor<16x32xf32> {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %empty = tensor.empty() : tensor<64x32xf32>
  %phi = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<64x32xf16>) outs(%empty : tensor<64x32xf32>) {
  ^bb0(%x: f16, %out: f32):
    %e = arith.extf %x : f16 to f32
    %p = math.exp %e : f32
    linalg.yield %p : f32
  } -> tensor<64x32xf32>
  %init = tensor.empty() : tensor<16x32xf32>
  %sum = scf.for %i = %c0 to %c64 step %c16 iter_args(%acc = %init) -> tensor<16x32xf32> {
    %chunk = tensor.extract_slice %phi[%i, 0] [16, 32] [1, 1] : tensor<64x32xf32> to tensor<16x32xf32>
    %next = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%chunk, %acc : tensor<16x32xf32>, tensor<16x32xf32>) outs(%acc : tensor<16x32xf32>) {
    ^bb0(%x: f32, %y: f32, %out: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    } -> tensor<16x32xf32>
    scf.yield %next : tensor<16x32xf32>
  }
  return %sum : tensor<16x32xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A product of three f32 tensors, kept whole by a use outside any loop: recomputing it in the loop would
// read 12 bytes per element where the materialised result costs 4 (I ≤ O fails), so it stays.
// CHECK-LABEL: func.func @wide_producer_stays
// CHECK: %[[P:.*]] = linalg.generic
// CHECK: scf.for
// CHECK:   tensor.extract_slice %[[P]]
// CHECK-NOT: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<16x32xf32>
// CHECK: return
func.func @wide_producer_stays(%a: tensor<64x32xf32>, %b: tensor<64x32xf32>, %c: tensor<64x32xf32>)
    -> (tensor<64x32xf32>, tensor<16x32xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %empty = tensor.empty() : tensor<64x32xf32>
  %p = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b, %c : tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>) outs(%empty : tensor<64x32xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %out: f32):
    %xy = arith.mulf %x, %y : f32
    %xyz = arith.mulf %xy, %z : f32
    linalg.yield %xyz : f32
  } -> tensor<64x32xf32>
  %init = tensor.empty() : tensor<16x32xf32>
  %sum = scf.for %i = %c0 to %c64 step %c16 iter_args(%acc = %init) -> tensor<16x32xf32> {
    %chunk = tensor.extract_slice %p[%i, 0] [16, 32] [1, 1] : tensor<64x32xf32> to tensor<16x32xf32>
    %next = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%chunk, %acc : tensor<16x32xf32>, tensor<16x32xf32>) outs(%acc : tensor<16x32xf32>) {
    ^bb0(%x: f32, %y: f32, %out: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    } -> tensor<16x32xf32>
    scf.yield %next : tensor<16x32xf32>
  }
  return %p, %sum : tensor<64x32xf32>, tensor<16x32xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A chain of producers (a cast, then a map of the cast) follows into the loop, each on the chunk.
// CHECK-LABEL: func.func @chain_follows
// CHECK-SAME: (%[[V:.*]]: tensor<64x32xbf16>)
// CHECK-NOT: linalg.generic
// CHECK: scf.for
// CHECK:   tensor.extract_slice %[[V]]
// CHECK:   arith.extf
// CHECK:   math.tanh
func.func @chain_follows(%v: tensor<64x32xbf16>) -> tensor<16x32xf32> {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %empty = tensor.empty() : tensor<64x32xf32>
  %wide = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%v : tensor<64x32xbf16>) outs(%empty : tensor<64x32xf32>) {
  ^bb0(%x: bf16, %out: f32):
    %e = arith.extf %x : bf16 to f32
    linalg.yield %e : f32
  } -> tensor<64x32xf32>
  %mapped = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%wide : tensor<64x32xf32>) outs(%empty : tensor<64x32xf32>) {
  ^bb0(%x: f32, %out: f32):
    %t = math.tanh %x : f32
    linalg.yield %t : f32
  } -> tensor<64x32xf32>
  %init = tensor.empty() : tensor<16x32xf32>
  %sum = scf.for %i = %c0 to %c64 step %c16 iter_args(%acc = %init) -> tensor<16x32xf32> {
    %chunk = tensor.extract_slice %mapped[%i, 0] [16, 32] [1, 1] : tensor<64x32xf32> to tensor<16x32xf32>
    %next = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%chunk, %acc : tensor<16x32xf32>, tensor<16x32xf32>) outs(%acc : tensor<16x32xf32>) {
    ^bb0(%x: f32, %y: f32, %out: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    } -> tensor<16x32xf32>
    scf.yield %next : tensor<16x32xf32>
  }
  return %sum : tensor<16x32xf32>
}
