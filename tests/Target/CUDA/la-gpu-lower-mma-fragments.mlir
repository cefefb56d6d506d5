// RUN: la-opt %s -split-input-file -allow-unregistered-dialect -la-gpu-lower-mma-fragments -canonicalize -cse | FileCheck %s

// Fragments of f16 tiles in shared memory (views of the block's shared buffer at 16-byte multiples) are
// one ldmatrix each: x4 for A, x2 for B, `.trans` where the tile is contiguous along its rows (m or n)
// instead of k. Lane l addresses row l % 8 of matrix l / 8.
// CHECK-LABEL: gpu.func @in_shared
// CHECK-SAME: (%[[SHARED:.*]]: memref<16384xi8, #gpu.address_space<workgroup>>, %[[LANE:.*]]: index, %[[TILE:.*]]: index, %[[STEP:.*]]: index)
// CHECK-NOT: memref.load
// CHECK-DAG: %[[ROW:.*]] = arith.muli %[[TILE]], %c16
// CHECK-DAG: %[[K:.*]] = arith.muli %[[STEP]], %c16
// A stored [m][k]: matrices (rows +0, k +0), (rows +8, k +0), (rows +0, k +8), (rows +8, k +8).
// CHECK: %[[INM:.*]] = arith.remui %[[LANE]], %c8
// CHECK: %[[MAT:.*]] = arith.divui %[[LANE]], %c8
// CHECK: %[[ROWHALF:.*]] = arith.remui %[[MAT]], %c2
// CHECK: %[[ROWOFF8:.*]] = arith.muli %[[ROWHALF]], %c8
// CHECK: %[[KHALF:.*]] = arith.divui %[[MAT]], %c2
// CHECK: %[[KOFF:.*]] = arith.muli %[[KHALF]], %c8
// CHECK: %[[ROWOFF:.*]] = arith.addi %[[ROWOFF8]], %[[INM]]
// CHECK: %[[R:.*]] = arith.addi %[[ROW]], %[[ROWOFF]]
// CHECK: %[[KK:.*]] = arith.addi %[[K]], %[[KOFF]]
// CHECK: nvgpu.ldmatrix %{{.*}}[%c0, %[[R]], %[[KK]]] {numTiles = 4 : i32, transpose = false} : memref<1x16x64xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// A stored [k][m] (φ(K)^T of φ(K)^T·V): .trans, lane rows along k.
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = true} : memref<64x16xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// B stored [n][k] (K in Q·K^T), then [k][n] (V in S·V).
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 2 : i32, transpose = false} : memref<16x64xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 2 : i32, transpose = true} : memref<64x16xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
// A double-buffered slot, at 2048·parity + 4096 bytes.
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<16x64xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
gpu.module @kernels {
  gpu.func @in_shared(%shared: memref<16384xi8, #gpu.address_space<workgroup>>, %lane: index, %tile: index,
                      %step: index) kernel {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %row = arith.muli %tile, %c16 : index
    %k = arith.muli %step, %c16 : index
    %c2048 = arith.constant 2048 : index
    %c4096 = arith.constant 4096 : index
    %c8192 = arith.constant 8192 : index
    %c2 = arith.constant 2 : index
    %phiq = memref.view %shared[%c0][] : memref<16384xi8, #gpu.address_space<workgroup>> to memref<1x16x64xf16, #gpu.address_space<workgroup>>
    %a = la_gpu.mma_fragment %phiq[%c0, %row, %k] lane %lane {row_dim = 1, k_dim = 2}
        : memref<1x16x64xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
    %phik = memref.view %shared[%c2048][] : memref<16384xi8, #gpu.address_space<workgroup>> to memref<64x16xf16, #gpu.address_space<workgroup>>
    %at = la_gpu.mma_fragment %phik[%k, %row] lane %lane {row_dim = 1, k_dim = 0}
        : memref<64x16xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
    %keys = memref.view %shared[%c4096][] : memref<16384xi8, #gpu.address_space<workgroup>> to memref<16x64xf16, #gpu.address_space<workgroup>>
    %b = la_gpu.mma_fragment %keys[%row, %k] lane %lane {row_dim = 0, k_dim = 1}
        : memref<16x64xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
    %values = memref.view %shared[%c8192][] : memref<16384xi8, #gpu.address_space<workgroup>> to memref<64x16xf16, #gpu.address_space<workgroup>>
    %bt = la_gpu.mma_fragment %values[%k, %row] lane %lane {row_dim = 1, k_dim = 0}
        : memref<64x16xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
    %parity = arith.remui %k, %c2 : index
    %slot = arith.muli %parity, %c2048 : index
    %shift = arith.addi %slot, %c4096 : index
    %next = memref.view %shared[%shift][] : memref<16384xi8, #gpu.address_space<workgroup>> to memref<16x64xf16, #gpu.address_space<workgroup>>
    %a2 = la_gpu.mma_fragment %next[%row, %k] lane %lane {row_dim = 0, k_dim = 1}
        : memref<16x64xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
    "test.use"(%a, %at, %b, %bt, %a2) : (vector<4x2xf16>, vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf16>, vector<4x2xf16>) -> ()
    gpu.return
  }
}

// -----

// Where ldmatrix cannot load the tile, each lane loads its elements: from global memory; from f32 (rounded
// to f16); from a view not provably 16-byte aligned (8 bytes in); from a ragged tile (20 rows: the rows past
// the end are read clamped to row 19 and replaced by zero); at a k origin not provably a multiple of 8.
// CHECK-LABEL: gpu.func @by_loads
// CHECK-NOT: nvgpu.ldmatrix
// CHECK-COUNT-8: memref.load %arg0
// CHECK-COUNT-4: memref.load %{{.*}} : memref<16x64xf32, #gpu.address_space<workgroup>>
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK-COUNT-8: memref.load %{{.*}} : memref<16x64xf16, #gpu.address_space<workgroup>>
// CHECK: arith.minui %{{.*}}, %c19
// CHECK: memref.load %arg1
// CHECK: arith.select
// CHECK-COUNT-8: memref.load %{{.*}} : memref<16x64xf16, #gpu.address_space<workgroup>>
// CHECK-NOT: nvgpu.ldmatrix
gpu.module @kernels {
  gpu.func @by_loads(%global: memref<16x64xf16>, %ragged: memref<20x64xf16>,
                     %shared: memref<16384xi8, #gpu.address_space<workgroup>>, %lane: index, %row: index,
                     %k: index) kernel {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %a = la_gpu.mma_fragment %global[%row, %k] lane %lane {row_dim = 0, k_dim = 1}
        : memref<16x64xf16> -> vector<4x2xf16>
    %wide = memref.view %shared[%c0][] : memref<16384xi8, #gpu.address_space<workgroup>> to memref<16x64xf32, #gpu.address_space<workgroup>>
    %b = la_gpu.mma_fragment %wide[%row, %k] lane %lane {row_dim = 0, k_dim = 1}
        : memref<16x64xf32, #gpu.address_space<workgroup>> -> vector<2x2xf16>
    %off = memref.view %shared[%c8][] : memref<16384xi8, #gpu.address_space<workgroup>> to memref<16x64xf16, #gpu.address_space<workgroup>>
    %c = la_gpu.mma_fragment %off[%row, %k] lane %lane {row_dim = 0, k_dim = 1}
        : memref<16x64xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
    %d = la_gpu.mma_fragment %ragged[%row, %k] lane %lane {row_dim = 0, k_dim = 1}
        : memref<20x64xf16> -> vector<4x2xf16>
    %aligned = memref.view %shared[%c0][] : memref<16384xi8, #gpu.address_space<workgroup>> to memref<16x64xf16, #gpu.address_space<workgroup>>
    %e = la_gpu.mma_fragment %aligned[%row, %k] lane %lane {row_dim = 0, k_dim = 1}
        : memref<16x64xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
    "test.use"(%a, %b, %c, %d, %e) : (vector<4x2xf16>, vector<2x2xf16>, vector<4x2xf16>, vector<4x2xf16>, vector<4x2xf16>) -> ()
    gpu.return
  }
}

// -----

// A warp's B fragments of two tiles side by side (columns n and n + 8) are one ldmatrix x4, its first two
// registers the first tile's; a third tile without a partner is an x2. Here the tile is [k][n] (.trans).
// CHECK-LABEL: gpu.func @tile_pairs
// CHECK: %[[BOTH:.*]] = nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = true} : memref<64x64xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK: %[[R0:.*]] = vector.extract %[[BOTH]][0] : vector<2xf16> from vector<4x2xf16>
// CHECK: %[[R1:.*]] = vector.extract %[[BOTH]][1]
// CHECK: %[[E0:.*]]:2 = vector.to_elements %[[R0]]
// CHECK: %[[E1:.*]]:2 = vector.to_elements %[[R1]]
// CHECK: %[[FIRST:.*]] = vector.from_elements %[[E0]]#0, %[[E0]]#1, %[[E1]]#0, %[[E1]]#1 : vector<2x2xf16>
// CHECK: %[[R2:.*]] = vector.extract %[[BOTH]][2]
// CHECK: %[[R3:.*]] = vector.extract %[[BOTH]][3]
// CHECK: %[[E2:.*]]:2 = vector.to_elements %[[R2]]
// CHECK: %[[E3:.*]]:2 = vector.to_elements %[[R3]]
// CHECK: %[[SECOND:.*]] = vector.from_elements %[[E2]]#0, %[[E2]]#1, %[[E3]]#0, %[[E3]]#1 : vector<2x2xf16>
// CHECK: %[[THIRD:.*]] = nvgpu.ldmatrix %{{.*}} {numTiles = 2 : i32, transpose = true}
// CHECK: "test.use"(%[[FIRST]], %[[SECOND]], %[[THIRD]])
gpu.module @kernels {
  gpu.func @tile_pairs(%shared: memref<16384xi8, #gpu.address_space<workgroup>>, %lane: index, %group: index,
                       %step: index) kernel {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %col = arith.muli %group, %c16 : index
    %k = arith.muli %step, %c16 : index
    %values = memref.view %shared[%c0][] : memref<16384xi8, #gpu.address_space<workgroup>> to memref<64x64xf16, #gpu.address_space<workgroup>>
    %b0 = la_gpu.mma_fragment %values[%k, %col] lane %lane {row_dim = 1, k_dim = 0}
        : memref<64x64xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
    %col1 = arith.addi %col, %c8 : index
    %b1 = la_gpu.mma_fragment %values[%k, %col1] lane %lane {row_dim = 1, k_dim = 0}
        : memref<64x64xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
    %col2 = arith.addi %col, %c16 : index
    %b2 = la_gpu.mma_fragment %values[%k, %col2] lane %lane {row_dim = 1, k_dim = 0}
        : memref<64x64xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
    "test.use"(%b0, %b1, %b2) : (vector<2x2xf16>, vector<2x2xf16>, vector<2x2xf16>) -> ()
    gpu.return
  }
}

// -----

// A fragment's map is applied to each element in registers: after the ldmatrix (a shared, aligned f16
// tile), each of its 8 elements is extracted, mapped (here e^x) and rounded back to f16; after per-element
// loads (global memory, ragged: 20 rows) the map comes before the zero past the edge, which stays zero
// though e^0 = 1.
// CHECK-LABEL: gpu.func @mapped
// CHECK: nvgpu.ldmatrix
// CHECK-COUNT-8: math.exp
// CHECK: memref.load %arg0
// CHECK: arith.extf
// CHECK: %[[E:.*]] = math.exp
// CHECK: %[[H:.*]] = arith.truncf %[[E]] : f32 to f16
// CHECK: arith.select %{{.*}}, %[[H]], %{{.*}} : f16
gpu.module @kernels {
  gpu.func @mapped(%ragged: memref<20x64xf16>, %shared: memref<16384xi8, #gpu.address_space<workgroup>>,
                   %lane: index, %row: index) kernel {
    %c0 = arith.constant 0 : index
    %aligned = memref.view %shared[%c0][] : memref<16384xi8, #gpu.address_space<workgroup>> to memref<16x64xf16, #gpu.address_space<workgroup>>
    %a = la_gpu.mma_fragment %aligned[%c0, %c0] lane %lane {row_dim = 0, k_dim = 1}
        : memref<16x64xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16> map {
    ^bb0(%x: f16):
      %w = arith.extf %x : f16 to f32
      %e = math.exp %w : f32
      la_gpu.yield %e : f32
    }
    %b = la_gpu.mma_fragment %ragged[%row, %c0] lane %lane {row_dim = 0, k_dim = 1}
        : memref<20x64xf16> -> vector<4x2xf16> map {
    ^bb0(%x: f16):
      %w = arith.extf %x : f16 to f32
      %e = math.exp %w : f32
      la_gpu.yield %e : f32
    }
    "test.use"(%a, %b) : (vector<4x2xf16>, vector<4x2xf16>) -> ()
    gpu.return
  }
}
