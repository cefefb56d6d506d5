// RUN: la-opt %s -split-input-file -la-gpu-warp-reductions | FileCheck %s
// RUN: la-opt %s -split-input-file -la-gpu-warp-reductions=min-steps=1024 | FileCheck %s --check-prefix=SHORT
// RUN: la-opt %s -split-input-file -la-gpu-warp-reductions=warps-per-block=1 | FileCheck %s --check-prefix=WARP1
// RUN: not la-opt %s -split-input-file -la-gpu-warp-reductions=warps-per-block=0 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: la-gpu-warp-reductions: warps-per-block must be positive

// Flow's softmax maximum over 512 sources of one batch×head: one element, 32 lanes, each taking every 32nd
// step from -inf, then a butterfly of 5 shuffles; lane 0 combines the result into the old value and stores.
// CHECK-LABEL: func.func @one_element
// CHECK: scf.parallel (%[[E:.*]], %[[L:.*]]) = ({{.*}}) to (%c1{{[_0-9]*}}, %c32)
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[P:.*]] = scf.for %[[S:.*]] = %[[L]] to %c512 step %c32{{[_0-9]*}} iter_args(%[[A:.*]] = %[[NEGINF]])
// CHECK:   %[[X:.*]] = memref.load %arg0[%{{.*}}, %[[S]]]
// CHECK:   %[[C:.*]] = arith.minimumf
// CHECK:   arith.maximumf %[[A]], %[[C]] : f32
// CHECK: gpu.shuffle xor %[[P]], %c16_i32, %c32_i32 : f32
// CHECK: gpu.shuffle xor {{.*}}, %c8_i32, %c32_i32 : f32
// CHECK: gpu.shuffle xor {{.*}}, %c4_i32, %c32_i32 : f32
// CHECK: gpu.shuffle xor {{.*}}, %c2_i32, %c32_i32 : f32
// CHECK: %[[R:.*]], %{{.*}} = gpu.shuffle xor {{.*}}, %c1_i32, %c32_i32 : f32
// CHECK: %[[T:.*]] = arith.maximumf %{{.*}}, %[[R]] : f32
// CHECK: scf.if
// CHECK:   %[[OLD:.*]] = memref.load %arg1
// CHECK:   %[[NEW:.*]] = arith.maximumf %[[OLD]], %[[T]] : f32
// CHECK:   memref.store %[[NEW]], %arg1
// CHECK-NOT: linalg.generic
// SHORT-LABEL: func.func @one_element
// SHORT: linalg.generic
func.func @one_element(%x: memref<1x512xf32>, %m: memref<1xf32>) {
  %lo = arith.constant -1.0 : f32
  %hi = arith.constant 1.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]} ins(%x : memref<1x512xf32>) outs(%m : memref<1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = arith.maximumf %in, %lo : f32
    %d = arith.minimumf %c, %hi : f32
    %r = arith.maximumf %out, %d : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A sum over the rows of 3 columns, the reduction loop first (aft_simple's Σ over T): 3 elements rounded up
// to 4, a warp of 32 lanes each on the block's 4 warps (5 shuffle steps); the fourth element reads column 2's
// inputs and stores nothing.
// CHECK-LABEL: func.func @columns
// CHECK: scf.parallel (%[[E:.*]], %[[L:.*]]) = (%{{.*}}, %{{.*}}) to (%c4, %c32)
// CHECK: %[[COL:.*]] = arith.minui %[[E]], %c2 : index
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: scf.for %[[S:.*]] = %[[L]] to %c256 step %c32{{[_0-9]*}} iter_args(%[[A:.*]] = %[[ZERO]])
// CHECK:   memref.load %arg0[%[[S]], %[[COL]]]
// CHECK:   arith.addf %[[A]], %{{.*}} : f32
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK-NOT: gpu.shuffle
// WARP1-LABEL: func.func @columns
// WARP1: scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%c4, %c8)
// WARP1-COUNT-3: gpu.shuffle xor
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[L]], %c0 : index
// CHECK: %[[REAL:.*]] = arith.cmpi ult, %[[E]], %c3{{[_0-9]*}} : index
// CHECK: %[[STORE:.*]] = arith.andi %[[FIRST]], %[[REAL]] : i1
// CHECK: scf.if %[[STORE]]
func.func @columns(%x: memref<256x3xf32>, %s: memref<3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]} ins(%x : memref<256x3xf32>) outs(%s : memref<3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A sum over the rows of 64 columns (Flow's Σ_n σ(q) on the GPU): two lanes each, the block's 128 threads
// busy where 64 ran the whole loop (1 shuffle step). With one warp per block there are no lanes to spare.
// CHECK-LABEL: func.func @sixty_four_columns
// CHECK: scf.parallel (%[[E:.*]], %[[L:.*]]) = (%{{.*}}, %{{.*}}) to (%c64, %c2)
// CHECK: scf.for %{{.*}} = %[[L]] to %c256 step %c2{{[_0-9]*}} iter_args
// CHECK: gpu.shuffle xor {{.*}}, %c1_i32, %c32_i32 : f32
// CHECK-NOT: gpu.shuffle
// WARP1-LABEL: func.func @sixty_four_columns
// WARP1: linalg.generic
// WARP1-NOT: gpu.shuffle
func.func @sixty_four_columns(%x: memref<256x64xf32>, %s: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]} ins(%x : memref<256x64xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Left alone: 128 elements (each thread of the block has one already), a body that reads the old value twice, a combine
// without an identity here (mulf), a reduction already inside a parallel loop (its lanes would run one after
// another on each thread there).
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: gpu.shuffle
func.func @left_alone(%x: memref<256x128xf32>, %s: memref<128xf32>, %v: memref<256xf32>, %t: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]} ins(%x : memref<256x128xf32>) outs(%s : memref<128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]} ins(%v : memref<256xf32>) outs(%t : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    %r = arith.addf %a, %out : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]} ins(%v : memref<256xf32>) outs(%t : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.mulf %out, %in : f32
    linalg.yield %r : f32
  }
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                    iterator_types = ["reduction"]} ins(%v : memref<256xf32>) outs(%t : memref<f32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.addf %out, %in : f32
      linalg.yield %r : f32
    }
    scf.reduce
  }
  return
}
