// RUN: la-opt %s -split-input-file -la-gpu-register-tile -canonicalize -cse | FileCheck %s
// RUN: la-opt %s -split-input-file -la-gpu-register-tile="warps-per-block=32" -canonicalize -cse | FileCheck %s --check-prefix=WIDE

// An f32 contraction C[64x64] += A[64x16]·B[16x64] on FMA: 4×4 outputs per tile leaves 256 tiles for the
// block's 128 threads. The 16 outputs are loaded once, carried through the k loop and stored once; each k
// step loads 4 elements of A and 4 of B (not 16 of each). A and B, arguments (global memory) that 16 tiles
// each read, are copied into temporaries first (which la-gpu-outline-slice-kernel keeps in shared memory,
// or dissolves), and the tiles read the copies.
// RUN: la-opt %s -split-input-file -la-gpu-register-tile -canonicalize -cse | grep -c "memref.load %alloc\[" | FileCheck %s --check-prefix=ALOADS
// RUN: la-opt %s -split-input-file -la-gpu-register-tile -canonicalize -cse | grep -c "memref.load %alloc_0\[" | FileCheck %s --check-prefix=BLOADS
// ALOADS: {{^}}4{{$}}
// BLOADS: {{^}}4{{$}}
// CHECK-LABEL: func.func @contraction
// CHECK-NOT: linalg.generic
// CHECK: %[[A:.*]] = memref.alloc() {la.staged_copy} : memref<64x16xf32>
// CHECK: memref.copy %arg0, %[[A]]
// CHECK: %[[B:.*]] = memref.alloc() {la.staged_copy} : memref<16x64xf32>
// CHECK: memref.copy %arg1, %[[B]]
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%c0, %c0) to (%c16, %c16) step (%c1, %c1)
// CHECK-COUNT-16: memref.load %arg2
// CHECK: scf.for %[[K:.*]] = %c0 to %c16 step %c1 iter_args
// CHECK-NOT: memref.load %arg2
// CHECK-COUNT-16: arith.addf
// CHECK: scf.yield
// CHECK-COUNT-16: memref.store
// A wider block (1024 threads) wants more tiles: 2×2 per tile gives 1024.
// WIDE-LABEL: func.func @contraction
// WIDE: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c32, %c32)
// WIDE-COUNT-4: memref.load %arg2
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @contraction(%x: memref<64x16xf32>, %y: memref<16x64xf32>, %out: memref<64x64xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : memref<64x16xf32>, memref<16x64xf32>) outs(%out : memref<64x64xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Left alone: no reduction (an elementwise map), a dimension no tile size divides (7 outputs), and a
// generic that reads its own output.
// CHECK-LABEL: func.func @untouched
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: scf.parallel
#id = affine_map<(i) -> (i)>
#row = affine_map<(i, k) -> (i, k)>
#out = affine_map<(i, k) -> (i)>
func.func @untouched(%x: memref<8xf32>, %y: memref<8xf32>, %m: memref<7x5xf32>, %v: memref<7xf32>,
                     %s: memref<8x8xf32>, %w: memref<8xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%p: f32, %q: f32):
    linalg.yield %p : f32
  }
  linalg.generic {indexing_maps = [#row, #out], iterator_types = ["parallel", "reduction"]}
      ins(%m : memref<7x5xf32>) outs(%v : memref<7xf32>) {
  ^bb0(%p: f32, %acc: f32):
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#row, #out, #out], iterator_types = ["parallel", "reduction"]}
      ins(%s, %w : memref<8x8xf32>, memref<8xf32>) outs(%w : memref<8xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
