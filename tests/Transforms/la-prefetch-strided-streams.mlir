// RUN: la-opt %s -split-input-file -la-prefetch-strided-streams | FileCheck %s
// RUN: la-opt %s -split-input-file -la-prefetch-strided-streams="distance=4 max-run-bytes=128" | FileCheck %s --check-prefix=SHORT
// RUN: la-opt %s -split-input-file -la-prefetch-strided-streams="min-argument-bytes=16777216" | FileCheck %s --check-prefix=SMALL
// RUN: la-opt %s -split-input-file -la-prefetch-strided-streams="distance=8 line-bytes=128 locality=3" | FileCheck %s --check-prefix=WIDE
// RUN: not la-opt %s -la-prefetch-strided-streams="distance=0" 2>&1 | FileCheck %s --check-prefix=BAD

// One head (64 floats, 256 bytes) of every 2 KiB position of an aft_conv-like [X, Y, h, c] input, read a
// position per iteration through the head's slice: each iteration prefetches position y + 16 (clamped to
// the last, 127) of that slice, one prefetch per 64-byte line. The output is written, so it is not
// prefetched. With max-run-bytes=128 the 256-byte run is too long.
// CHECK-LABEL: func.func @one_head
// CHECK:       %[[HEAD:.*]] = memref.subview %arg0[0, 0, %arg2, 0] [32, 128, 1, 64]
// CHECK:       scf.for %[[X:.*]] = %c0 to %c32 step %c1 {
// CHECK:         scf.for %[[Y:.*]] = %c0 to %c128 step %c1 {
// CHECK:           %[[LAST:.*]] = arith.subi %c128, %{{.*}}
// CHECK:           %[[AHEAD:.*]] = arith.addi %[[Y]], %{{.*}}
// CHECK:           %[[POS:.*]] = arith.minsi %[[AHEAD]], %[[LAST]]
// CHECK:           memref.prefetch %[[HEAD]][%[[X]], %[[POS]], %{{.*}}, %{{.*}}], read, locality<2>, data
// CHECK-COUNT-3:   memref.prefetch %[[HEAD]][%[[X]], %[[POS]], %{{.*}}, %{{.*}}]
// CHECK-NOT:       memref.prefetch
// CHECK:           memref.subview %[[HEAD]][%[[X]], %[[Y]], 0, 0] [1, 1, 1, 64]
// distance=8 prefetches 8 positions ahead; line-bytes=128 halves the prefetches per run; locality is
// passed through.
// WIDE-LABEL: func.func @one_head
// WIDE:         scf.for %[[Y:.*]] = %c0 to %c128 step %c1 {
// WIDE:           %[[AHEAD:.*]] = arith.addi %[[Y]], %c8 : index
// WIDE:           %[[POS:.*]] = arith.minsi %[[AHEAD]]
// WIDE-COUNT-2:   memref.prefetch %{{.*}}[%{{.*}}, %[[POS]], %{{.*}}, %{{.*}}], read, locality<3>, data
// WIDE-NOT:       memref.prefetch
// WIDE:           memref.subview
// SHORT-LABEL: func.func @one_head
// SHORT-NOT:   memref.prefetch
// Below min-argument-bytes (16 MiB here), an argument (this one is 8 MiB) is taken to stay in cache from
// one call to the next: nothing is prefetched.
// SMALL-LABEL: func.func @one_head
// SMALL-NOT:   memref.prefetch
func.func @one_head(%in: memref<32x128x8x64xf32>, %out: memref<32x128x8x64xf32>, %h: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %pad = arith.constant 0.0 : f32
  %head = memref.subview %in[0, 0, %h, 0] [32, 128, 1, 64] [1, 1, 1, 1] : memref<32x128x8x64xf32> to memref<32x128x1x64xf32, strided<[65536, 512, 64, 1], offset: ?>>
  %outHead = memref.subview %out[0, 0, %h, 0] [32, 128, 1, 64] [1, 1, 1, 1] : memref<32x128x8x64xf32> to memref<32x128x1x64xf32, strided<[65536, 512, 64, 1], offset: ?>>
  scf.for %x = %c0 to %c32 step %c1 {
    scf.for %y = %c0 to %c128 step %c1 {
      %pos = memref.subview %head[%x, %y, 0, 0] [1, 1, 1, 64] [1, 1, 1, 1] : memref<32x128x1x64xf32, strided<[65536, 512, 64, 1], offset: ?>> to memref<1x1x1x64xf32, strided<[65536, 512, 64, 1], offset: ?>>
      %v = vector.transfer_read %pos[%c0, %c0, %c0, %c0], %pad {in_bounds = [true]} : memref<1x1x1x64xf32, strided<[65536, 512, 64, 1], offset: ?>>, vector<64xf32>
      %o = memref.subview %outHead[%x, %y, 0, 0] [1, 1, 1, 64] [1, 1, 1, 1] : memref<32x128x1x64xf32, strided<[65536, 512, 64, 1], offset: ?>> to memref<1x1x1x64xf32, strided<[65536, 512, 64, 1], offset: ?>>
      vector.transfer_write %v, %o[%c0, %c0, %c0, %c0] {in_bounds = [true]} : vector<64xf32>, memref<1x1x1x64xf32, strided<[65536, 512, 64, 1], offset: ?>>
    }
  }
  return
}

// -----

// Left alone (4 MiB arguments): whole rows one after another (one stream, which hardware prefetchers
// follow), a column read element by element (a constant stride, which they follow too), and a loop of step 2.
// CHECK-LABEL: func.func @streams_prefetchers_follow
// CHECK-NOT:   memref.prefetch
func.func @streams_prefetchers_follow(%rows: memref<16384x64xf32>, %cols: memref<16384x64xf32>) -> (vector<64xf32>, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16384 = arith.constant 16384 : index
  %pad = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<64xf32>
  %sum = scf.for %n = %c0 to %c16384 step %c1 iter_args(%acc = %zero) -> (vector<64xf32>) {
    %row = memref.subview %rows[%n, 0] [1, 64] [1, 1] : memref<16384x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    %v = vector.transfer_read %row[%c0, %c0], %pad {in_bounds = [true]} : memref<1x64xf32, strided<[64, 1], offset: ?>>, vector<64xf32>
    %s = arith.addf %acc, %v : vector<64xf32>
    scf.yield %s : vector<64xf32>
  }
  %col = scf.for %n = %c0 to %c16384 step %c1 iter_args(%acc = %pad) -> (f32) {
    %e = memref.subview %cols[%n, 0] [1, 1] [1, 1] : memref<16384x64xf32> to memref<1x1xf32, strided<[64, 1], offset: ?>>
    %x = memref.load %e[%c0, %c0] : memref<1x1xf32, strided<[64, 1], offset: ?>>
    %s = arith.addf %acc, %x : f32
    scf.yield %s : f32
  }
  scf.for %n = %c0 to %c16384 step %c2 {
    %half = memref.subview %rows[%n, 0] [1, 16] [1, 1] : memref<16384x64xf32> to memref<1x16xf32, strided<[64, 1], offset: ?>>
    %v = vector.transfer_read %half[%c0, %c0], %pad {in_bounds = [true]} : memref<1x16xf32, strided<[64, 1], offset: ?>>, vector<16xf32>
    vector.print %v : vector<16xf32>
  }
  return %sum, %col : vector<64xf32>, f32
}

// -----

// The same stream read element by element inside the position loop (an elementwise loop nest before LLVM
// vectorises it): the position loop prefetches the head's run 16 positions ahead.
// CHECK-LABEL: func.func @one_head_by_element
// CHECK:       %[[HEAD:.*]] = memref.subview %arg0
// CHECK:       scf.for %[[Y:.*]] = %c0 to %c128 step %c1 {
// CHECK:         %[[POS:.*]] = arith.minsi
// CHECK-COUNT-4: memref.prefetch %[[HEAD]][%{{.*}}, %[[POS]], %{{.*}}, %{{.*}}]
// CHECK:         scf.for
// CHECK-NOT:       memref.prefetch
// CHECK:           memref.load %[[HEAD]]
func.func @one_head_by_element(%in: memref<32x128x8x64xf32>, %out: memref<128x64xf32>, %h: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %head = memref.subview %in[0, 0, %h, 0] [32, 128, 1, 64] [1, 1, 1, 1] : memref<32x128x8x64xf32> to memref<32x128x1x64xf32, strided<[65536, 512, 64, 1], offset: ?>>
  scf.for %y = %c0 to %c128 step %c1 {
    scf.for %c = %c0 to %c64 step %c1 {
      %x = memref.load %head[%c0, %y, %c0, %c] : memref<32x128x1x64xf32, strided<[65536, 512, 64, 1], offset: ?>>
      %e = math.exp %x : f32
      memref.store %e, %out[%y, %c] : memref<128x64xf32>
    }
  }
  return
}

// -----

// Left alone: a loop of 16 rows (shorter than four times the distance) and a register block's reduction
// loop (its operand panel is in cache), both reading 256-byte runs of 4 KiB rows.
// CHECK-LABEL: func.func @short_and_blocked
// CHECK-NOT:   memref.prefetch
func.func @short_and_blocked(%w: memref<1024x1024xf32>, %acc: vector<64xf32>) -> vector<64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %pad = arith.constant 0.0 : f32
  %sum = scf.for %r = %c0 to %c16 step %c1 iter_args(%a = %acc) -> (vector<64xf32>) {
    %v = vector.transfer_read %w[%r, %c0], %pad {in_bounds = [true]} : memref<1024x1024xf32>, vector<64xf32>
    %s = arith.addf %a, %v : vector<64xf32>
    scf.yield %s : vector<64xf32>
  }
  %fma = scf.for %k = %c0 to %c256 step %c1 iter_args(%a = %sum) -> (vector<64xf32>) {
    %v = vector.transfer_read %w[%k, %c0], %pad {in_bounds = [true]} : memref<1024x1024xf32>, vector<64xf32>
    %f = vector.fma %v, %v, %a : vector<64xf32>
    scf.yield %f : vector<64xf32>
  }
  return %fma : vector<64xf32>
}

// BAD: la-prefetch-strided-streams: distance, line-bytes and max-run-bytes must be positive, min-argument-bytes not negative, locality in [0, 3]
