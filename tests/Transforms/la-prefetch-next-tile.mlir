// RUN: la-opt %s -split-input-file -la-prefetch-next-tile | FileCheck %s
// RUN: la-opt %s -split-input-file -la-prefetch-next-tile="max-tile-bytes=1024" | FileCheck %s --check-prefix=SMALL
// RUN: la-opt %s -split-input-file -la-prefetch-next-tile="line-bytes=128 locality=3" | FileCheck %s --check-prefix=WIDE
// RUN: not la-opt %s -la-prefetch-next-tile="locality=4" 2>&1 | FileCheck %s --check-prefix=BAD

// A chunk loop reads 16×64 tiles (4 KiB) of its input %v: each iteration first prefetches the next tile,
// rows [c + 16, min(c + 32, 4096)), one prefetch per 64-byte line (16 floats). The output %out is written,
// so it is not prefetched; nor is anything when the tile is larger than max-tile-bytes.
// CHECK-LABEL: func.func @chunks
// CHECK:       scf.for %[[C:.*]] = %c0 to %c4096 step %c16 {
// CHECK:         %[[FIRST:.*]] = arith.addi %[[C]], %c16
// CHECK:         %[[END:.*]] = arith.addi %[[FIRST]], %c16
// CHECK:         %[[LAST:.*]] = arith.minsi %[[END]], %c4096
// CHECK:         scf.for %[[ROW:.*]] = %[[FIRST]] to %[[LAST]] step %{{.*}} {
// CHECK-COUNT-4:   memref.prefetch %arg0[%[[ROW]], %{{.*}}], read, locality<2>, data
// CHECK-NOT:       memref.prefetch
// CHECK:         }
// CHECK:         memref.subview %arg0[%[[C]], 0] [16, 64] [1, 1]
// CHECK-NOT:     memref.prefetch
// line-bytes=128 halves the prefetches per 64-float row; locality is passed through.
// WIDE-LABEL: func.func @chunks
// WIDE:         scf.for
// WIDE-COUNT-2:   memref.prefetch %arg0[%{{.*}}, %{{.*}}], read, locality<3>, data
// WIDE-NOT:       memref.prefetch
// SMALL-LABEL: func.func @chunks
// SMALL-NOT:   memref.prefetch
// BAD: locality in [0, 3]
func.func @chunks(%v: memref<4096x64xf32>, %out: memref<4096x64xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c4096 = arith.constant 4096 : index
  scf.for %c = %c0 to %c4096 step %c16 {
    %tile = memref.subview %v[%c, 0] [16, 64] [1, 1] : memref<4096x64xf32> to memref<16x64xf32, strided<[64, 1], offset: ?>>
    %dest = memref.subview %out[%c, 0] [16, 64] [1, 1] : memref<4096x64xf32> to memref<16x64xf32, strided<[64, 1], offset: ?>>
    memref.copy %tile, %dest : memref<16x64xf32, strided<[64, 1], offset: ?>> to memref<16x64xf32, strided<[64, 1], offset: ?>>
    // Stands for the chunk's register-blocked products, which compute from cache while the prefetches run.
    %one = arith.constant dense<1.0> : vector<16xf32>
    %product = vector.fma %one, %one, %one : vector<16xf32>
  }
  return
}

// -----

// A loop that only maps and sums its 64-row tiles (a grouped sweep's feature map) has no register-blocked
// arithmetic to hide the prefetches behind: it is a plain stream, left to the hardware prefetchers.
// CHECK-LABEL: func.func @stream
// CHECK-NOT:   memref.prefetch
func.func @stream(%v: memref<4096x64xf32>, %out: memref<4096x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c4096 = arith.constant 4096 : index
  scf.for %c = %c0 to %c4096 step %c64 {
    %tile = memref.subview %v[%c, 0] [64, 64] [1, 1] : memref<4096x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
    scf.for %r = %c0 to %c64 step %c1 {
      scf.for %d = %c0 to %c64 step %c1 {
        %x = memref.load %tile[%r, %d] : memref<64x64xf32, strided<[64, 1], offset: ?>>
        %y = math.exp %x : f32
        memref.store %y, %out[%r, %d] : memref<4096x64xf32>
      }
    }
  }
  return
}

// -----

// One row per iteration is a plain stream (hardware prefetchers follow it), and a tile whose offset is not
// the induction variable is not the iteration's tile: neither is prefetched.
// CHECK-LABEL: func.func @not_tiles
// WIDE-LABEL: func.func @not_tiles
// CHECK-NOT:   memref.prefetch
func.func @not_tiles(%v: memref<4096x64xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c4096 = arith.constant 4096 : index
  scf.for %n = %c0 to %c4096 step %c1 {
    %row = memref.subview %v[%n, 0] [1, 64] [1, 1] : memref<4096x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    %x = memref.load %row[%c0, %c0] : memref<1x64xf32, strided<[64, 1], offset: ?>>
    memref.store %x, %out[%c0] : memref<64xf32>
    %one = arith.constant dense<1.0> : vector<16xf32>
    %product = vector.fma %one, %one, %one : vector<16xf32>
  }
  scf.for %n = %c0 to %c4096 step %c16 {
    %fixed = memref.subview %v[0, 0] [16, 64] [1, 1] : memref<4096x64xf32> to memref<16x64xf32, strided<[64, 1]>>
    %x = memref.load %fixed[%c0, %c0] : memref<16x64xf32, strided<[64, 1]>>
    memref.store %x, %out[%c0] : memref<64xf32>
    %one = arith.constant dense<1.0> : vector<16xf32>
    %product = vector.fma %one, %one, %one : vector<16xf32>
  }
  return
}

// -----

// A panel loop whose body has a loop of row blocks: the next panel's 64 rows are prefetched 8 per block
// (8 blocks), inside the block loop that computes from cache, not all at once at the start of the panel.
// The prologue loop reads the panel and is not chosen although it is as long.
// CHECK-LABEL: func.func @spread_over_blocks
// CHECK:       scf.for %[[P:.*]] = %c0 to %c4096 step %c64 {
// CHECK:         %[[FIRST:.*]] = arith.addi %[[P]], %c64
// CHECK:         %[[LAST:.*]] = arith.minsi
// CHECK:         memref.subview %arg0[%[[P]], 0] [64, 64] [1, 1]
// CHECK:         scf.for {{.*}} = %c0 to %c8 step %c1 {
// CHECK-NOT:       memref.prefetch
// CHECK:         }
// CHECK:         scf.for %[[B:.*]] = %c0 to %c64 step %c8 {
// CHECK:           %[[INDEX:.*]] = arith.divui
// CHECK:           %[[OFFSET:.*]] = arith.muli %[[INDEX]], %[[EIGHT:.*]] : index
// CHECK:           %[[LO:.*]] = arith.addi %[[FIRST]], %[[OFFSET]]
// CHECK:           %[[HI:.*]] = arith.addi %[[LO]], %[[EIGHT]]
// CHECK:           %[[END:.*]] = arith.minsi %[[HI]], %[[LAST]]
// CHECK:           scf.for %[[ROW:.*]] = %[[LO]] to %[[END]] step
// CHECK-COUNT-4:     memref.prefetch %arg0[%[[ROW]], %{{.*}}]
func.func @spread_over_blocks(%v: memref<4096x64xf32>, %acc: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %c4096 = arith.constant 4096 : index
  scf.for %p = %c0 to %c4096 step %c64 {
    %panel = memref.subview %v[%p, 0] [64, 64] [1, 1] : memref<4096x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
    scf.for %r = %c0 to %c8 step %c1 {
      %x = memref.load %panel[%r, %c0] : memref<64x64xf32, strided<[64, 1], offset: ?>>
      memref.store %x, %acc[%r, %c0] : memref<64x64xf32>
    }
    scf.for %b = %c0 to %c64 step %c8 {
      %y = memref.load %acc[%b, %c0] : memref<64x64xf32>
      memref.store %y, %acc[%b, %c1] : memref<64x64xf32>
      %one = arith.constant dense<1.0> : vector<16xf32>
      %product = vector.fma %one, %one, %one : vector<16xf32>
    }
  }
  return
}
