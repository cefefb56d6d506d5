// RUN: la-opt %s -split-input-file -allow-unregistered-dialect -la-gpu-narrow-fragment-temporaries | FileCheck %s

#id = affine_map<(m, k) -> (m, k)>

// φ(q) of a chunk: written by a fill and a map, read only by f16 fragments, which rounded every element to
// f16 anyway. It is stored in f16, rounded where it is written.
// CHECK-LABEL: func.func @mapped_chunk
// CHECK: %[[PHI:.*]] = memref.alloc() : memref<16x64xf16>
// CHECK: %[[ZERO:.*]] = arith.truncf %{{.*}} : f32 to f16
// CHECK: linalg.fill ins(%[[ZERO]] : f16) outs(%[[PHI]] : memref<16x64xf16>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<16x64xf16>) outs(%[[PHI]] : memref<16x64xf16>)
// CHECK: ^bb0(%{{.*}}: f16, %{{.*}}: f16):
// CHECK: %[[E:.*]] = math.exp
// CHECK: %[[R:.*]] = arith.truncf %[[E]] : f32 to f16
// CHECK: linalg.yield %[[R]] : f16
// CHECK: la_gpu.mma_fragment %[[PHI]]{{.*}} : memref<16x64xf16> -> vector<4x2xf16>
// CHECK: la_gpu.mma_fragment %[[PHI]]{{.*}} : memref<16x64xf16> -> vector<2x2xf16>
func.func @mapped_chunk(%q: memref<16x64xf16>, %lane: index, %i: index) -> (vector<4x2xf16>, vector<2x2xf16>) {
  %zero = arith.constant 0.0 : f32
  %phi = memref.alloc() : memref<16x64xf32>
  linalg.fill ins(%zero : f32) outs(%phi : memref<16x64xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q : memref<16x64xf16>) outs(%phi : memref<16x64xf32>) {
  ^bb0(%x: f16, %old: f32):
    %w = arith.extf %x : f16 to f32
    %e = math.exp %w : f32
    linalg.yield %e : f32
  }
  %a = la_gpu.mma_fragment %phi[%i, %i] lane %lane {row_dim = 0, k_dim = 1} : memref<16x64xf32> -> vector<4x2xf16>
  %b = la_gpu.mma_fragment %phi[%i, %i] lane %lane {row_dim = 0, k_dim = 1} : memref<16x64xf32> -> vector<2x2xf16>
  return %a, %b : vector<4x2xf16>, vector<2x2xf16>
}

// -----

#id = affine_map<(m, k) -> (m, k)>

// Kept in f32: a writer that reads the old value (rounding it once more would change the sum), another
// reader than a fragment, and fragments read as tf32.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: memref.alloc() : memref<16x64xf32>
// CHECK-NOT: arith.truncf
func.func @kept(%q: memref<16x64xf32>, %lane: index, %i: index) -> (vector<4x2xf16>, f32, vector<4x1xf32>) {
  %acc = memref.alloc() : memref<16x64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q : memref<16x64xf32>) outs(%acc : memref<16x64xf32>) {
  ^bb0(%x: f32, %old: f32):
    %s = arith.addf %x, %old : f32
    linalg.yield %s : f32
  }
  %a = la_gpu.mma_fragment %acc[%i, %i] lane %lane {row_dim = 0, k_dim = 1} : memref<16x64xf32> -> vector<4x2xf16>
  %loaded = memref.alloc() : memref<16x64xf32>
  memref.copy %q, %loaded : memref<16x64xf32> to memref<16x64xf32>
  %e = memref.load %loaded[%i, %i] : memref<16x64xf32>
  %b = la_gpu.mma_fragment %loaded[%i, %i] lane %lane {row_dim = 0, k_dim = 1} : memref<16x64xf32> -> vector<4x2xf16>
  %tf = memref.alloc() : memref<16x64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q : memref<16x64xf32>) outs(%tf : memref<16x64xf32>) {
  ^bb0(%x: f32, %old: f32):
    linalg.yield %x : f32
  }
  %c = la_gpu.mma_fragment %tf[%i, %i] lane %lane {row_dim = 0, k_dim = 1} : memref<16x64xf32> -> vector<4x1xf32>
  return %a, %e, %c : vector<4x2xf16>, f32, vector<4x1xf32>
}

// -----

#id = affine_map<(m, k) -> (m, k)>

// A causal chunk's scores: written by the tensor cores (stores), masked in place, then read by fragments.
// The mask writes a second temporary instead, which the fragments read and which is stored in f16; the
// first stays f32 for the stores and the mask's reads.
// CHECK-LABEL: func.func @masked_in_place
// CHECK: %[[S:.*]] = memref.alloc() : memref<16x16xf32>
// CHECK: %[[MASKED:.*]] = memref.alloc() : memref<16x16xf16>
// CHECK: memref.store %{{.*}}, %[[S]]
// CHECK: linalg.generic {{.*}} ins(%[[S]] : memref<16x16xf32>) outs(%[[MASKED]] : memref<16x16xf16>)
// CHECK: arith.truncf
// CHECK: la_gpu.mma_fragment %[[MASKED]]{{.*}} : memref<16x16xf16> -> vector<4x2xf16>
func.func @masked_in_place(%v: f32, %lane: index, %i: index) -> vector<4x2xf16> {
  %zero = arith.constant 0.0 : f32
  %s = memref.alloc() : memref<16x16xf32>
  memref.store %v, %s[%i, %i] : memref<16x16xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : memref<16x16xf32>) outs(%s : memref<16x16xf32>) {
  ^bb0(%x: f32, %old: f32):
    %row = linalg.index 0 : index
    %col = linalg.index 1 : index
    %keep = arith.cmpi uge, %row, %col : index
    %masked = arith.select %keep, %x, %zero : f32
    linalg.yield %masked : f32
  }
  %a = la_gpu.mma_fragment %s[%i, %i] lane %lane {row_dim = 0, k_dim = 1} : memref<16x16xf32> -> vector<4x2xf16>
  return %a : vector<4x2xf16>
}

// -----

#id = affine_map<(m, k) -> (m, k)>

// Read by a load after the in-place write too: nothing changes.
// CHECK-LABEL: func.func @read_after_mask
// CHECK: memref.alloc() : memref<16x16xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: arith.truncf
func.func @read_after_mask(%lane: index, %i: index) -> (vector<4x2xf16>, f32) {
  %zero = arith.constant 0.0 : f32
  %s = memref.alloc() : memref<16x16xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : memref<16x16xf32>) outs(%s : memref<16x16xf32>) {
  ^bb0(%x: f32, %old: f32):
    %m = arith.maximumf %x, %zero : f32
    linalg.yield %m : f32
  }
  %a = la_gpu.mma_fragment %s[%i, %i] lane %lane {row_dim = 0, k_dim = 1} : memref<16x16xf32> -> vector<4x2xf16>
  %e = memref.load %s[%i, %i] : memref<16x16xf32>
  return %a, %e : vector<4x2xf16>, f32
}

// -----

#id = affine_map<(m, k) -> (m, k)>

// The same in a chunk loop, the scores allocated outside it: the next iteration's ops before the mask could
// read what the mask wrote, so the mask keeps writing the f32 tile and writes the f16 copy beside it.
// CHECK-LABEL: func.func @masked_in_loop
// CHECK: %[[S:.*]] = memref.alloc() : memref<16x16xf32>
// CHECK: %[[MASKED:.*]] = memref.alloc() : memref<16x16xf16>
// CHECK: scf.for
// CHECK: linalg.generic {{.*}} ins(%[[S]] : memref<16x16xf32>) outs(%[[S]], %[[MASKED]] : memref<16x16xf32>, memref<16x16xf16>)
// CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f16):
// CHECK: %[[V:.*]] = arith.select
// CHECK: %[[N:.*]] = arith.truncf %[[V]] : f32 to f16
// CHECK: linalg.yield %[[V]], %[[N]] : f32, f16
// CHECK: la_gpu.mma_fragment %[[MASKED]]{{.*}} : memref<16x16xf16> -> vector<4x2xf16>
func.func @masked_in_loop(%v: f32, %lane: index, %i: index, %n: index) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = memref.alloc() : memref<16x16xf32>
  scf.for %chunk = %c0 to %n step %c1 {
    memref.store %v, %s[%i, %i] : memref<16x16xf32>
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%s : memref<16x16xf32>) outs(%s : memref<16x16xf32>) {
    ^bb0(%x: f32, %old: f32):
      %row = linalg.index 0 : index
      %col = linalg.index 1 : index
      %keep = arith.cmpi uge, %row, %col : index
      %masked = arith.select %keep, %x, %zero : f32
      linalg.yield %masked : f32
    }
    %a = la_gpu.mma_fragment %s[%i, %i] lane %lane {row_dim = 0, k_dim = 1} : memref<16x16xf32> -> vector<4x2xf16>
    "test.use"(%a) : (vector<4x2xf16>) -> ()
  }
  return
}
