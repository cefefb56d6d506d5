// RUN: la-opt %s -split-input-file -la-gpu-contract-to-mma -canonicalize -cse | FileCheck %s
// RUN: la-opt %s -split-input-file -la-gpu-contract-to-mma="mode=tf32" -canonicalize -cse | FileCheck %s --check-prefix=TF32
// RUN: la-opt %s -split-input-file -la-gpu-contract-to-mma="mode=tf32 warps-per-block=1" -canonicalize -cse | FileCheck %s --check-prefix=WARP1
// RUN: la-opt %s -split-input-file -la-gpu-contract-to-mma="mode=off" | FileCheck %s --check-prefix=OFF
// RUN: not la-opt %s -split-input-file -la-gpu-contract-to-mma="mode=fp8" 2>&1 | FileCheck %s --check-prefix=BADMODE
// RUN: la-opt %s -split-input-file -la-gpu-contract-to-mma="shared-memory-bytes=32768" -canonicalize -cse | FileCheck %s --check-prefix=KTILES

// BADMODE: la-gpu-contract-to-mma: mode 'fp8' is not auto, tf32 or off

#a = affine_map<(b, m, n, k) -> (b, m, k)>
#bt = affine_map<(b, m, n, k) -> (b, n, k)>
#c = affine_map<(b, m, n, k) -> (b, m, n)>

// An f16 entry: C[20x12] += A[20x24] · B^T[12x24], ragged in m (20 = 16 + 4), n (12 = 8 + 4) and k (24 =
// 16 + 8). ceil(20/16)·ceil(12/8) = 4 tiles of 32 lanes; k in ceil(24/16) = 2 steps.
// CHECK-LABEL: func.func @ragged_f16
// CHECK-SAME: (%[[A:.*]]: memref<1x20x24xf16>, %[[B:.*]]: memref<1x12x24xf32>, %[[C:.*]]: memref<1x20x12xf32>)
// CHECK-NOT: linalg.generic
// Two warps gather each A fragment (one per column of tiles) and two each B fragment (one per row): both
// operands, arguments in global memory, are copied into temporaries first, read once.
// CHECK: %[[SA:.*]] = memref.alloc() {la.staged_copy} : memref<1x20x24xf16>
// CHECK: memref.copy %[[A]], %[[SA]]
// CHECK: %[[SB:.*]] = memref.alloc() {la.staged_copy} : memref<1x12x24xf32>
// CHECK: memref.copy %[[B]], %[[SB]]
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%c128) step
// The lane's row of C: tile row + g. Past a ragged edge the accumulator starts at zero without a load: a
// clamped address would be another lane's output, which that lane stores after the mma (a race).
// CHECK: %[[ROWFITS:.*]] = arith.cmpi ule, %{{.*}}, %c19
// CHECK: %[[ROW:.*]] = arith.minui %{{.*}}, %c19
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK-NEXT: memref.load %[[C]][%{{.*}}, %[[ROW]], %{{.*}}]
// CHECK: } else {
// CHECK-NEXT: scf.yield %{{.*}} : f32
// CHECK: %[[ACC0:.*]] = vector.from_elements {{.*}} : vector<2x2xf32>
// CHECK: %[[ACC:.*]] = scf.for %{{.*}} = %{{.*}} to %c2 step %{{.*}} iter_args(%[[IT:.*]] = %[[ACC0]])
// The fragments at the warp's tile origin (row 16·(warp / 2), k 16·step), la-gpu-lower-mma-fragments'
// to load: A's rows along dimension 1 and k along 2; B (f32 in memory, rounded to the f16 operand type) the
// same with n for rows.
// CHECK:   %[[AF:.*]] = la_gpu.mma_fragment %[[SA]][%c0, %{{.*}}, %{{.*}}] lane %{{.*}} {k_dim = 2 : i64, row_dim = 1 : i64} : memref<1x20x24xf16> -> vector<4x2xf16>
// CHECK:   %[[BF:.*]] = la_gpu.mma_fragment %[[SB]][%c0, %{{.*}}, %{{.*}}] lane %{{.*}} {k_dim = 2 : i64, row_dim = 1 : i64} : memref<1x12x24xf32> -> vector<2x2xf16>
// CHECK:   %[[D:.*]] = nvgpu.mma.sync(%[[AF]], %[[BF]], %[[IT]]) {mmaShape = [16, 8, 16]}
// CHECK:   scf.yield %[[D]]
// Stores past the ragged edge are skipped.
// CHECK: vector.extract %[[ACC]][0, 0]
// CHECK: scf.if
// CHECK:   memref.store %{{.*}}, %[[C]]
// CHECK: } {la.warp_lanes}
// An f32 contraction stays on FMA unless TF32 is asked for.
// OFF-LABEL: func.func @ragged_f16
// OFF: linalg.generic
// OFF-NOT: nvgpu.mma.sync
func.func @ragged_f16(%q: memref<1x20x24xf16>, %kt: memref<1x12x24xf32>, %out: memref<1x20x12xf32>) {
  linalg.generic {indexing_maps = [#a, #bt, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %kt : memref<1x20x24xf16>, memref<1x12x24xf32>) outs(%out : memref<1x20x12xf32>) {
  ^bb0(%x: f16, %y: f32, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %p = arith.mulf %xe, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>

// An f32 entry: FMA by default; m16n8k8 TF32 when asked, with no edge handling (every size a multiple).
// 2·4 tiles of 16×8: a warp takes 2 tiles side by side, which leaves the 4 warps of a block one each
// (128 lanes); it gathers its A fragment once per k step for both mma.sync.
// CHECK-LABEL: func.func @aligned_f32
// CHECK: linalg.generic
// CHECK-NOT: nvgpu.mma.sync
// TF32-LABEL: func.func @aligned_f32
// TF32-NOT: linalg.generic
// TF32-NOT: arith.select
// TF32: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c128) step
// TF32: scf.for {{.*}} iter_args(%[[C0:.*]] = %{{.*}}, %[[C1:.*]] = %{{.*}}) -> (vector<2x2xf32>, vector<2x2xf32>)
// TF32: %[[A:.*]] = la_gpu.mma_fragment %{{.*}}[{{.*}}] lane %{{.*}} {k_dim = 1 : i64, row_dim = 0 : i64} : memref<32x16xf32> -> vector<4x1xf32>
// TF32: %[[B0:.*]] = la_gpu.mma_fragment %{{.*}}[{{.*}}] lane %{{.*}} {k_dim = 0 : i64, row_dim = 1 : i64} : memref<16x32xf32> -> vector<2x1xf32>
// TF32: nvgpu.mma.sync(%[[A]], %[[B0]], %[[C0]]) {mmaShape = [16, 8, 8], tf32Enabled}
// TF32: %[[B1:.*]] = la_gpu.mma_fragment
// TF32: nvgpu.mma.sync(%[[A]], %[[B1]], %[[C1]]) {mmaShape = [16, 8, 8], tf32Enabled}
// TF32-NOT: scf.if
// TF32: } {la.warp_lanes}
// With one warp per block a warp takes all 4 tiles of its row.
// WARP1-LABEL: func.func @aligned_f32
// WARP1: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c64) step
// WARP1-COUNT-4: nvgpu.mma.sync
// WARP1-NOT: nvgpu.mma.sync
// WARP1: } {la.warp_lanes}
func.func @aligned_f32(%x: memref<32x16xf32>, %y: memref<16x32xf32>, %out: memref<32x32xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : memref<32x16xf32>, memref<16x32xf32>) outs(%out : memref<32x32xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
#v = affine_map<(m, k) -> (m, k)>
#w = affine_map<(m, k) -> (k)>
#o = affine_map<(m, k) -> (m)>

// What stays on FMA in an f16 entry: a product smaller than one tile (m = 4: decode's one-row chunk would
// waste 3/4 of each mma), a matrix-vector product (no n dimension), and a contraction inside a parallel loop
// (its lanes could not form a warp).
// CHECK-LABEL: func.func @not_for_tensor_cores
// CHECK-NOT: nvgpu.mma.sync
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: scf.parallel
// CHECK: linalg.generic
// CHECK-NOT: nvgpu.mma.sync
func.func @not_for_tensor_cores(%h: memref<4x16xf16>, %s: memref<16x16xf32>, %out: memref<4x16xf32>,
                                %vec: memref<16xf32>, %mv: memref<4xf32>, %big: memref<2x16x16xf32>,
                                %bigout: memref<2x16x16xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h, %s : memref<4x16xf16>, memref<16x16xf32>) outs(%out : memref<4x16xf32>) {
  ^bb0(%p: f16, %q: f32, %acc: f32):
    %pe = arith.extf %p : f16 to f32
    %m = arith.mulf %pe, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#v, #w, #o], iterator_types = ["parallel", "reduction"]}
      ins(%h, %vec : memref<4x16xf16>, memref<16xf32>) outs(%mv : memref<4xf32>) {
  ^bb0(%p: f16, %q: f32, %acc: f32):
    %pe = arith.extf %p : f16 to f32
    %m = arith.mulf %pe, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
    %x = memref.subview %big[%i, 0, 0] [1, 16, 16] [1, 1, 1] : memref<2x16x16xf32> to memref<16x16xf32, strided<[16, 1], offset: ?>>
    %y = memref.subview %bigout[%i, 0, 0] [1, 16, 16] [1, 1, 1] : memref<2x16x16xf32> to memref<16x16xf32, strided<[16, 1], offset: ?>>
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %s : memref<16x16xf32, strided<[16, 1], offset: ?>>, memref<16x16xf32>)
        outs(%y : memref<16x16xf32, strided<[16, 1], offset: ?>>) {
    ^bb0(%p: f32, %q: f32, %acc: f32):
      %m = arith.mulf %p, %q : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    }
    scf.reduce
  }
  return
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>

// A chain: O = 0; O += Q·H; S = Q·K (another output); O += S·V, as a causal chunk's output. One lane loop
// runs both contractions into O where the second was, its accumulators starting at zero (the fill goes) and
// staying in registers from the first k loop to the second: O is stored once, never loaded. S, which the
// chain's first link does not touch, runs on its own before it.
// CHECK-LABEL: func.func @chain_from_zero
// CHECK-SAME: (%[[Q:.*]]: memref<16x64xf16>, %[[H:.*]]: memref<64x64xf32>, %[[K:.*]]: memref<64x16xf16>, %[[V:.*]]: memref<16x64xf16>, %[[S:.*]]: memref<16x16xf32>, %[[O:.*]]: memref<16x64xf32>)
// S's fill is right before it too: both fills go.
// CHECK-NOT: linalg.fill
// CHECK: scf.parallel
// CHECK-NOT: memref.load %[[S]]
// CHECK: memref.store %{{.*}}, %[[S]]
// CHECK: } {la.warp_lanes}
// CHECK: %[[SS:.*]] = memref.alloc() {la.staged_copy} : memref<16x16xf32>
// CHECK: memref.copy %[[S]], %[[SS]]
// CHECK: scf.parallel
// CHECK-NOT: memref.load %[[O]]
// CHECK: %[[QH:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO:cst[_0-9]*]], %{{.*}} = %[[ZERO]])
// CHECK: la_gpu.mma_fragment %[[H]]
// CHECK: scf.yield
// S·V has one k step (k = 16), which canonicalisation leaves without its loop; it starts from Q·H's values.
// Four warps gather each of S's A fragments: S is read from a copy (V's B fragments, one row of tiles, are
// gathered once and read in place).
// CHECK: la_gpu.mma_fragment %[[SS]]
// CHECK: la_gpu.mma_fragment %[[V]]
// CHECK: %[[SV0:.*]] = nvgpu.mma.sync(%{{.*}}, %{{.*}}, %[[QH]]#0)
// CHECK: %[[SV1:.*]] = nvgpu.mma.sync(%{{.*}}, %{{.*}}, %[[QH]]#1)
// CHECK-NOT: memref.load %[[O]]
// CHECK: vector.extract %[[SV0]][0, 0]
// CHECK: memref.store %{{.*}}, %[[O]]
// CHECK: } {la.warp_lanes}
// CHECK-NEXT: return
func.func @chain_from_zero(%q: memref<16x64xf16>, %h: memref<64x64xf32>, %k: memref<64x16xf16>,
                           %v: memref<16x64xf16>, %s: memref<16x16xf32>, %o: memref<16x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%o : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %h : memref<16x64xf16>, memref<64x64xf32>) outs(%o : memref<16x64xf32>) {
  ^bb0(%x: f16, %y: f32, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %p = arith.mulf %xe, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%s : memref<16x16xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<16x64xf16>, memref<64x16xf16>) outs(%s : memref<16x16xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s, %v : memref<16x16xf32>, memref<16x64xf16>) outs(%o : memref<16x64xf32>) {
  ^bb0(%x: f32, %y: f16, %acc: f32):
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %x, %ye : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>

// No chain where an op between the two reads the shared output (the first contraction's result must be in
// memory for it), and no zero start where the fill is not right before the contraction: two lane loops,
// each loading O.
// CHECK-LABEL: func.func @chain_broken_by_a_reader
// CHECK: linalg.fill
// CHECK: scf.parallel
// CHECK: memref.load %arg3
// CHECK: } {la.warp_lanes}
// CHECK: linalg.copy ins(%arg3 {{.*}}) outs(%arg4
// CHECK: scf.parallel
// CHECK: memref.load %arg3
// CHECK: } {la.warp_lanes}
func.func @chain_broken_by_a_reader(%q: memref<16x64xf16>, %h: memref<64x64xf16>, %v: memref<64x64xf16>,
                                    %o: memref<16x64xf32>, %snapshot: memref<16x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%o : memref<16x64xf32>)
  linalg.copy ins(%snapshot : memref<16x64xf32>) outs(%snapshot : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %h : memref<16x64xf16>, memref<64x64xf16>) outs(%o : memref<16x64xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  linalg.copy ins(%o : memref<16x64xf32>) outs(%snapshot : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %v : memref<16x64xf16>, memref<64x64xf16>) outs(%o : memref<16x64xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#id = affine_map<(m, k) -> (m, k)>
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
// %wide only widens %v (f16) to f32 for the contraction, whose gathers round each element back to f16:
// the widening becomes a staged copy of %v in f16, which the gathers read; the f32 temporary goes.
// %kept is also read by an elementwise op (not a contraction): its widening stays.
// CHECK-LABEL: func.func @widened_input
// CHECK-NOT: memref.alloc() : memref<64x64xf32>
// CHECK: %[[STAGED:.*]] = memref.alloc() {la.staged_copy} : memref<64x64xf16>
// CHECK: memref.copy %arg1, %[[STAGED]]
// CHECK: %[[KEPT:.*]] = memref.alloc() : memref<64x64xf32>
// CHECK: linalg.generic {{.*}} ins(%arg2 : memref<64x64xf16>) outs(%[[KEPT]] : memref<64x64xf32>)
// CHECK: scf.parallel
// CHECK: la_gpu.mma_fragment %[[STAGED]]{{.*}} : memref<64x64xf16> -> vector<2x2xf16>
// CHECK: nvgpu.mma.sync
// CHECK: } {la.warp_lanes}
// CHECK: scf.parallel
// CHECK: la_gpu.mma_fragment %[[KEPT]]{{.*}} : memref<64x64xf32> -> vector<2x2xf16>
// CHECK: } {la.warp_lanes}
func.func @widened_input(%q: memref<16x64xf16>, %v: memref<64x64xf16>, %w: memref<64x64xf16>,
                         %o: memref<16x64xf32>, %p: memref<16x64xf32>, %e: memref<64x64xf32>) {
  %wide = memref.alloc() : memref<64x64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%v : memref<64x64xf16>) outs(%wide : memref<64x64xf32>) {
  ^bb0(%x: f16, %out: f32):
    %xe = arith.extf %x : f16 to f32
    linalg.yield %xe : f32
  }
  %kept = memref.alloc() : memref<64x64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : memref<64x64xf16>) outs(%kept : memref<64x64xf32>) {
  ^bb0(%x: f16, %out: f32):
    %xe = arith.extf %x : f16 to f32
    linalg.yield %xe : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %wide : memref<16x64xf16>, memref<64x64xf32>) outs(%o : memref<16x64xf32>) {
  ^bb0(%x: f16, %y: f32, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %m = arith.mulf %xe, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %kept : memref<16x64xf16>, memref<64x64xf32>) outs(%p : memref<16x64xf32>) {
  ^bb0(%x: f16, %y: f32, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %m = arith.mulf %xe, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%kept : memref<64x64xf32>) outs(%e : memref<64x64xf32>) {
  ^bb0(%x: f32, %out: f32):
    linalg.yield %x : f32
  }
  return
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>

// A state variant's S = S0 + Kᵀ·V: bufferisation copies the read-only S0 into the result, then the
// contraction accumulates into it. The accumulators start from S0 itself and the copy goes: S is stored
// once, never loaded.
// CHECK-LABEL: func.func @from_a_copy
// CHECK-SAME: (%[[KT:.*]]: memref<16x32xf16>, %[[V:.*]]: memref<32x16xf16>, %[[S0:.*]]: memref<16x16xf32>, %[[S:.*]]: memref<16x16xf32>)
// CHECK-NOT: memref.copy %[[S0]]
// CHECK: scf.parallel
// CHECK-NOT: memref.load %[[S]]
// CHECK: memref.load %[[S0]]
// CHECK-NOT: memref.load %[[S]]
// CHECK: nvgpu.mma.sync
// CHECK: memref.store %{{.*}}, %[[S]]
// CHECK: } {la.warp_lanes}
func.func @from_a_copy(%kt: memref<16x32xf16>, %v: memref<32x16xf16>, %s0: memref<16x16xf32>,
                       %s: memref<16x16xf32>) {
  memref.copy %s0, %s : memref<16x16xf32> to memref<16x16xf32>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%kt, %v : memref<16x32xf16>, memref<32x16xf16>) outs(%s : memref<16x16xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>

// The copy's source is written before the chain runs (at its last link), so the accumulators cannot start
// from it: the copy stays and the chain loads S.
// CHECK-LABEL: func.func @copy_source_overwritten
// CHECK-SAME: (%{{.*}}: memref<16x32xf16>, %{{.*}}: memref<32x16xf16>, %[[S0:.*]]: memref<16x16xf32>, %[[S:.*]]: memref<16x16xf32>)
// CHECK: memref.copy %[[S0]], %[[S]]
// CHECK: linalg.fill
// CHECK: scf.parallel
// CHECK-NOT: memref.load %[[S0]]
// CHECK: memref.load %[[S]]
func.func @copy_source_overwritten(%kt: memref<16x32xf16>, %v: memref<32x16xf16>, %s0: memref<16x16xf32>,
                                   %s: memref<16x16xf32>) {
  %one = arith.constant 1.0 : f32
  memref.copy %s0, %s : memref<16x16xf32> to memref<16x16xf32>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%kt, %v : memref<16x32xf16>, memref<32x16xf16>) outs(%s : memref<16x16xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%one : f32) outs(%s0 : memref<16x16xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%kt, %v : memref<16x32xf16>, memref<32x16xf16>) outs(%s : memref<16x16xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#id = affine_map<(m, k) -> (m, k)>
#row = affine_map<(m, k) -> (m)>
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
// Linear attention's read-out, O = φ(Q)·S / den, as bufferisation leaves it:
//   - %phi = φ(Q) = e^q, an f32 map of the f16 argument %q that only the contraction reads: the gathers read
//     a staged copy of %q and map each element in registers (the fragment's map region), and the f32
//     temporary goes, although its buffer is given to another value afterwards (the fill and the copy);
//   - %num, read only by the normalising generic after it: the chain runs there and its accumulators go
//     through the generic's body (a division by %den, loaded at the lane's rows, and rounding to f16) into
//     %out; %num is never stored.
// CHECK-LABEL: func.func @mapped_operand_and_epilogue
// CHECK-SAME: (%[[Q:.*]]: memref<16x64xf16>, %[[S:.*]]: memref<64x64xf16>, %[[DEN:.*]]: memref<16xf32>, %[[OUT:.*]]: memref<16x64xf16>, %[[LATER:.*]]: memref<16x64xf32>)
// One f32 buffer is left, for the value bufferisation gave φ(Q)'s buffer afterwards.
// CHECK: %[[REUSED:.*]] = memref.alloc() : memref<16x64xf32>
// CHECK: %[[STAGED:.*]] = memref.alloc() {la.staged_copy} : memref<16x64xf16>
// CHECK: memref.copy %[[Q]], %[[STAGED]]
// CHECK-NOT: memref.alloc() : memref<16x64xf32>
// CHECK-NOT: linalg.generic
// CHECK: scf.parallel
// CHECK: la_gpu.mma_fragment %[[STAGED]]{{.*}} : memref<16x64xf16> -> vector<4x2xf16> map {
// CHECK-NEXT: ^bb0(%[[X:.*]]: f16):
// CHECK-NEXT:   %[[XE:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK-NEXT:   %[[E:.*]] = math.exp %[[XE]] : f32
// CHECK-NEXT:   la_gpu.yield %[[E]] : f32
// CHECK-NEXT: }
// CHECK: nvgpu.mma.sync
// CHECK: %[[D:.*]] = memref.load %[[DEN]][%{{.*}}] : memref<16xf32>
// CHECK: %[[N:.*]] = arith.divf %{{.*}}, %[[D]] : f32
// CHECK: %[[H:.*]] = arith.truncf %[[N]] : f32 to f16
// CHECK: memref.store %[[H]], %[[OUT]]
// CHECK: } {la.warp_lanes}
// The buffer's next value is untouched.
// CHECK: linalg.fill {{.*}} outs(%[[REUSED]] : memref<16x64xf32>)
// CHECK: memref.copy %[[REUSED]], %[[LATER]]
func.func @mapped_operand_and_epilogue(%q: memref<16x64xf16>, %s: memref<64x64xf16>, %den: memref<16xf32>,
                                       %out: memref<16x64xf16>, %later: memref<16x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %phi = memref.alloc() : memref<16x64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q : memref<16x64xf16>) outs(%phi : memref<16x64xf32>) {
  ^bb0(%x: f16, %o: f32):
    %xe = arith.extf %x : f16 to f32
    %e = math.exp %xe : f32
    linalg.yield %e : f32
  }
  %num = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%num : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%phi, %s : memref<16x64xf32>, memref<64x64xf16>) outs(%num : memref<16x64xf32>) {
  ^bb0(%x: f32, %y: f16, %acc: f32):
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %x, %ye : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%num, %den : memref<16x64xf32>, memref<16xf32>) outs(%out : memref<16x64xf16>) {
  ^bb0(%n: f32, %d: f32, %o: f16):
    %x = arith.divf %n, %d : f32
    %h = arith.truncf %x : f32 to f16
    linalg.yield %h : f16
  }
  linalg.fill ins(%zero : f32) outs(%phi : memref<16x64xf32>)
  memref.copy %phi, %later : memref<16x64xf32> to memref<16x64xf32>
  return
}

// -----

#id = affine_map<(m, k) -> (m, k)>
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
// An epilogue that reads its position (FLASH divides row t by the positions before its block, t / 256): the
// accumulator element's row index stands for linalg.index 0, which has no linalg op around it any more.
// CHECK-LABEL: func.func @epilogue_reads_its_position
// CHECK: scf.parallel
// CHECK: nvgpu.mma.sync
// CHECK-NOT: linalg.index
// CHECK: %[[ROW:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[F:.*]] = arith.uitofp %[[ROW]] : i64 to f32
// CHECK: arith.divf %{{.*}}, %[[F]] : f32
// CHECK: memref.store
// CHECK: } {la.warp_lanes}
func.func @epilogue_reads_its_position(%q: memref<16x64xf16>, %s: memref<64x64xf16>, %out: memref<16x64xf16>) {
  %zero = arith.constant 0.0 : f32
  %num = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%num : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %s : memref<16x64xf16>, memref<64x64xf16>) outs(%num : memref<16x64xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%num : memref<16x64xf32>) outs(%out : memref<16x64xf16>) {
  ^bb0(%n: f32, %o: f16):
    %t = linalg.index 0 : index
    %ti = arith.index_cast %t : index to i64
    %tf = arith.uitofp %ti : i64 to f32
    %x = arith.divf %n, %tf : f32
    %h = arith.truncf %x : f32 to f16
    linalg.yield %h : f16
  }
  return
}

// -----

#id = affine_map<(m, k) -> (m, k)>
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
// The map's result is also read by an elementwise op, and the chain's output by a second one: the map is
// materialised and the accumulators are stored, as they are.
// CHECK-LABEL: func.func @shared_map_and_output
// CHECK: %[[PHI:.*]] = memref.alloc() : memref<16x64xf32>
// CHECK: linalg.generic {{.*}} outs(%[[PHI]] : memref<16x64xf32>)
// CHECK: scf.parallel
// CHECK: la_gpu.mma_fragment %[[PHI]]{{.*}} : memref<16x64xf32> -> vector<4x2xf16>{{$}}
// CHECK: memref.store %{{.*}}, %[[NUM:.*]][
// CHECK: } {la.warp_lanes}
// CHECK: linalg.generic {{.*}} ins(%[[PHI]] : memref<16x64xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[NUM]] : memref<16x64xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[NUM]] : memref<16x64xf32>)
func.func @shared_map_and_output(%q: memref<16x64xf16>, %s: memref<64x64xf16>, %e1: memref<16x64xf32>,
                                 %e2: memref<16x64xf32>, %e3: memref<16x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %phi = memref.alloc() : memref<16x64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q : memref<16x64xf16>) outs(%phi : memref<16x64xf32>) {
  ^bb0(%x: f16, %o: f32):
    %xe = arith.extf %x : f16 to f32
    %e = math.exp %xe : f32
    linalg.yield %e : f32
  }
  %num = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%num : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%phi, %s : memref<16x64xf32>, memref<64x64xf16>) outs(%num : memref<16x64xf32>) {
  ^bb0(%x: f32, %y: f16, %acc: f32):
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %x, %ye : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%phi : memref<16x64xf32>) outs(%e1 : memref<16x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%num : memref<16x64xf32>) outs(%e2 : memref<16x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%num : memref<16x64xf32>) outs(%e3 : memref<16x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  return
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
// Operands that several warps gather are staged (two warps per A fragment, two per B fragment). Inside a
// loop that neither defines them nor writes them (GAU's q rows, read by every column tile), each is copied
// once, before the loop, not once per iteration.
// CHECK-LABEL: func.func @staged_copies_hoisted
// CHECK-SAME: (%[[Q:.*]]: memref<32x64xf16>, %[[K:.*]]: memref<64x32xf16>, %{{.*}}: memref<4x32x32xf32>)
// CHECK: %[[SQ:.*]] = memref.alloc() {la.staged_copy} : memref<32x64xf16>
// CHECK: memref.copy %[[Q]], %[[SQ]]
// CHECK: %[[SK:.*]] = memref.alloc() {la.staged_copy} : memref<64x32xf16>
// CHECK: memref.copy %[[K]], %[[SK]]
// CHECK: scf.for
// CHECK-NOT: memref.copy
// CHECK: scf.parallel
// CHECK: la_gpu.mma_fragment %[[SQ]]
// CHECK: la_gpu.mma_fragment %[[SK]]
func.func @staged_copies_hoisted(%q: memref<32x64xf16>, %k: memref<64x32xf16>, %o: memref<4x32x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %oi = memref.subview %o[%i, 0, 0] [1, 32, 32] [1, 1, 1] : memref<4x32x32xf32> to memref<32x32xf32, strided<[32, 1], offset: ?>>
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%q, %k : memref<32x64xf16>, memref<64x32xf16>) outs(%oi : memref<32x32xf32, strided<[32, 1], offset: ?>>) {
    ^bb0(%x: f16, %y: f16, %acc: f32):
      %xe = arith.extf %x : f16 to f32
      %ye = arith.extf %y : f16 to f32
      %p = arith.mulf %xe, %ye : f32
      %r = arith.addf %acc, %p : f32
      linalg.yield %r : f32
    }
  }
  return
}

// -----

#id = affine_map<(m, n) -> (m, n)>
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
// The generic after the chain writes the chain's operand %x: run at the generic, its lanes would store
// elements of %x that other lanes still gather. It stays apart, and the chain stores its accumulators.
// CHECK-LABEL: func.func @epilogue_overwrites_an_operand
// CHECK: %[[PRODUCT:.*]] = memref.alloc() : memref<16x16xf32>
// CHECK: scf.parallel
// CHECK: memref.store %{{.*}}, %[[PRODUCT]]
// CHECK: } {la.warp_lanes}
// CHECK: linalg.generic {{.*}} ins(%[[PRODUCT]] : memref<16x16xf32>) outs(%arg0 : memref<16x16xf16>)
func.func @epilogue_overwrites_an_operand(%x: memref<16x16xf16>, %y: memref<16x16xf16>) {
  %zero = arith.constant 0.0 : f32
  %product = memref.alloc() : memref<16x16xf32>
  linalg.fill ins(%zero : f32) outs(%product : memref<16x16xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : memref<16x16xf16>, memref<16x16xf16>) outs(%product : memref<16x16xf32>) {
  ^bb0(%p: f16, %q: f16, %acc: f32):
    %pe = arith.extf %p : f16 to f32
    %qe = arith.extf %q : f16 to f32
    %m = arith.mulf %pe, %qe : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%product : memref<16x16xf32>) outs(%x : memref<16x16xf16>) {
  ^bb0(%p: f32, %o: f16):
    %h = arith.truncf %p : f32 to f16
    linalg.yield %h : f16
  }
  return
}

// -----

#a = affine_map<(d, e, m) -> (m, d)>
#b = affine_map<(d, e, m) -> (m, e)>
#c = affine_map<(d, e, m) -> (d, e)>
// A state's S = Kᵀ·V over 256 positions: V, the B operand, is gathered by the 4 warps of its row of tiles
// (one per 16 rows of S) and, at 32 KiB, is more than half of a 32 KiB block's shared memory, so it would
// not be staged whole. With shared-memory-bytes given, the reduction runs in tiles of 128 positions: each
// iteration stages its tile of V (16 KiB) and accumulates into S from memory, the zero fill before the loop.
// Without it (the default, 0) it runs whole.
// CHECK-LABEL: func.func @long_reduction
// CHECK-NOT: scf.for %{{.*}} = %c0 to %c256 step %c128
// CHECK: scf.parallel
// KTILES-LABEL: func.func @long_reduction
// KTILES-SAME: (%[[K:.*]]: memref<256x64xf16>, %[[V:.*]]: memref<256x64xf16>, %[[S:.*]]: memref<64x64xf32>)
// KTILES: linalg.fill {{.*}} outs(%[[S]] : memref<64x64xf32>)
// KTILES: scf.for %[[KB:.*]] = %c0 to %c256 step %c128 {
// KTILES:   %[[KT:.*]] = memref.subview %[[K]][%[[KB]], 0] [128, 64] [1, 1]
// KTILES:   %[[VT:.*]] = memref.subview %[[V]][%[[KB]], 0] [128, 64] [1, 1]
// KTILES:   %[[STAGED:.*]] = memref.alloc() {la.staged_copy} : memref<128x64xf16>
// KTILES:   memref.copy %[[VT]], %[[STAGED]]
// KTILES:   scf.parallel
// KTILES:     memref.load %[[S]]
// KTILES:     la_gpu.mma_fragment %[[KT]]
// KTILES:     la_gpu.mma_fragment %[[STAGED]]
// KTILES:     nvgpu.mma.sync
// KTILES:     memref.store %{{.*}}, %[[S]]
// KTILES:   } {la.warp_lanes}
// KTILES: }
func.func @long_reduction(%k: memref<256x64xf16>, %v: memref<256x64xf16>, %s: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%k, %v : memref<256x64xf16>, memref<256x64xf16>) outs(%s : memref<64x64xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
