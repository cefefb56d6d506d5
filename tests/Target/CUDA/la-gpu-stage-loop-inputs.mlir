// RUN: la-opt %s -split-input-file -pass-pipeline="builtin.module(func.func(la-gpu-stage-loop-inputs))" | FileCheck %s
// RUN: la-opt %s -split-input-file -pass-pipeline="builtin.module(func.func(la-gpu-stage-loop-inputs),la-gpu-outline-slice-kernel{shared-memory-bytes=3072},gpu.module(la-gpu-prefetch-staged-copies))" | FileCheck %s --check-prefix=ROOM
// RUN: la-opt %s -split-input-file -pass-pipeline="builtin.module(func.func(la-gpu-stage-loop-inputs),la-gpu-outline-slice-kernel{shared-memory-bytes=2048},gpu.module(la-gpu-prefetch-staged-copies))" | FileCheck %s --check-prefix=TIGHT

// The chunk loop reads rows of %k (an input slice, only loaded): they are read from a staged copy, marked
// as saving no traffic. %acc, a 1 KiB accumulator the loop writes and reads at every chunk, saves traffic.
// CHECK-LABEL: func.func @chunks
// CHECK: scf.for %[[I:.*]] =
// CHECK:   %[[SLICE:.*]] = memref.subview %{{.*}}[%[[I]], 0] [32, 16] [1, 1]
// CHECK:   %[[STAGED:.*]] = memref.alloc() {la.staged_copy, la.staged_for_latency} : memref<32x16xf16>
// CHECK:   memref.copy %[[SLICE]], %[[STAGED]]
// CHECK:   memref.load %[[STAGED]]
// The accumulator (1 KiB) is chosen first; 3 KiB leaves room for the staged slice (1 KiB) and its
// second slot: the slice is copied a chunk ahead.
// ROOM-LABEL: gpu.func @chunks
// ROOM-SAME: workgroup(%{{.*}} : memref<3072xi8, #gpu.address_space<workgroup>>
// ROOM: nvvm.cp.async.commit.group
// ROOM: scf.for
// ROOM: nvvm.cp.async.wait.group 1
// With 2 KiB, the slice gets one slot: copied by cp.async and waited for at once.
// TIGHT-LABEL: gpu.func @chunks
// TIGHT-SAME: workgroup(%{{.*}} : memref<2048xi8, #gpu.address_space<workgroup>>
// TIGHT: scf.for
// TIGHT: nvvm.cp.async.wait.group 0
func.func @chunks(%k: memref<128x16xf16>, %out: memref<16x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %acc = memref.alloc() : memref<16x16xf32>
  scf.for %i = %c0 to %c128 step %c32 {
    %chunk = memref.subview %k[%i, 0] [32, 16] [1, 1] : memref<128x16xf16> to memref<32x16xf16, strided<[16, 1], offset: ?>>
    scf.for %r = %c0 to %c16 step %c1 {
      scf.for %c = %c0 to %c16 step %c1 {
        %x = memref.load %chunk[%r, %c] : memref<32x16xf16, strided<[16, 1], offset: ?>>
        %y = arith.extf %x : f16 to f32
        %a = memref.load %acc[%r, %c] : memref<16x16xf32>
        %s = arith.addf %a, %y : f32
        memref.store %s, %acc[%r, %c] : memref<16x16xf32>
      }
    }
  }
  memref.copy %acc, %out : memref<16x16xf32> to memref<16x16xf32>
  return
}

// -----

// Not staged: a slice the loop writes, and one whose offset the loop loads from memory.
// CHECK-LABEL: func.func @not_inputs
// CHECK-NOT: la.staged_copy
// CHECK: return
func.func @not_inputs(%k: memref<128x16xf32>, %offsets: memref<4xi32>, %out: memref<128x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %row = arith.muli %i, %c32 : index
    %written = memref.subview %out[%row, 0] [32, 16] [1, 1] : memref<128x16xf32> to memref<32x16xf32, strided<[16, 1], offset: ?>>
    %startInt = memref.load %offsets[%i] : memref<4xi32>
    %start = arith.index_cast %startInt : i32 to index
    %gathered = memref.subview %k[%start, 0] [32, 16] [1, 1] : memref<128x16xf32> to memref<32x16xf32, strided<[16, 1], offset: ?>>
    %x = memref.load %gathered[%c0, %c0] : memref<32x16xf32, strided<[16, 1], offset: ?>>
    memref.store %x, %written[%c0, %c0] : memref<32x16xf32, strided<[16, 1], offset: ?>>
  }
  return
}
