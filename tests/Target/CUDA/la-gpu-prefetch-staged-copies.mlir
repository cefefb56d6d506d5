// RUN: la-opt %s -split-input-file -la-gpu-outline-slice-kernel="shared-memory-bytes=4096" -la-gpu-prefetch-staged-copies | FileCheck %s
// RUN: la-opt %s -split-input-file -la-gpu-outline-slice-kernel="shared-memory-bytes=1024" -la-gpu-prefetch-staged-copies | FileCheck %s --check-prefix=ONE
// RUN: la-opt %s -split-input-file -la-gpu-outline-slice-kernel="shared-memory-bytes=4096" -la-gpu-prefetch-staged-copies -la-gpu-distribute-to-threads -canonicalize | FileCheck %s --check-prefix=THREADS

// A chunk loop reads each chunk of %k from a staged copy (as la-gpu-contract-to-mma leaves it). With room
// for two 1024-byte slots the copy is double-buffered: the first chunk's copy before the loop, then at the
// top of every iteration the next chunk's copy into the other slot, one group, a wait for all but it.
// CHECK-LABEL: gpu.func @chunks
// CHECK-SAME: workgroup(%[[WG:.*]] : memref<2048xi8, #gpu.address_space<workgroup>>
// CHECK: scf.if
// CHECK:   scf.parallel (%[[R:.*]], %[[P:.*]]) = (%c0{{.*}}) to (%c32{{.*}}, %c2{{.*}})
// CHECK:     %[[COL:.*]] = arith.muli %[[P]], %c8
// CHECK:     nvgpu.device_async_copy %{{.*}}[%[[R]], %[[COL]]], %{{.*}}[%[[R]], %[[COL]]], 8 {bypassL1} : memref<32x16xf16, strided<[16, 1], offset: ?>> to memref<32x16xf16, #gpu.address_space<workgroup>>
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for %[[IV:.*]] =
// CHECK:   %[[PARITY:.*]] = arith.remui
// CHECK:   %[[NEXT:.*]] = arith.addi %[[IV]], %c32
// CHECK:   %[[MORE:.*]] = arith.cmpi slt, %[[NEXT]], %c128
// CHECK:   scf.if %[[MORE]] {
// CHECK:     memref.subview %{{.*}}[%[[NEXT]], 0] [32, 16] [1, 1]
// CHECK:     nvgpu.device_async_copy
// CHECK:   }
// CHECK:   nvvm.cp.async.commit.group
// CHECK:   nvvm.cp.async.wait.group 1
// CHECK:   gpu.barrier
// CHECK-NOT: memref.copy
// CHECK:   memref.load
// With room for one slot, the copy is issued where it was and waited for at once.
// ONE-LABEL: gpu.func @chunks
// ONE-SAME: workgroup(%{{.*}} : memref<1024xi8, #gpu.address_space<workgroup>>
// ONE: scf.for
// ONE:   scf.parallel
// ONE:     nvgpu.device_async_copy {{.*}}, 8 {bypassL1}
// ONE:   nvvm.cp.async.commit.group
// ONE:   nvvm.cp.async.wait.group 0
// ONE:   gpu.barrier
// ONE-NOT: memref.copy
// ONE:   memref.load
// Over the threads: every thread issues its share of the copies, between the barriers around every thread
// loop (the one before orders the previous iteration's reads of the slot first); the commit and the wait run
// on all of them.
// THREADS-LABEL: gpu.func @chunks
// THREADS: %[[TID:.*]] = gpu.thread_id x
// THREADS: %[[NTID:.*]] = gpu.block_dim x
// THREADS: gpu.barrier
// THREADS-NEXT: scf.for %{{.*}} = %[[TID]] to %c64 step %[[NTID]] {
// THREADS: nvgpu.device_async_copy
// THREADS: gpu.barrier
// THREADS-NEXT: nvvm.cp.async.commit.group
// THREADS: scf.for
// THREADS: scf.if
// THREADS-NEXT: memref.subview
// THREADS-NEXT: gpu.barrier
// THREADS-NEXT: scf.for %{{.*}} = %[[TID]] to %c64 step %[[NTID]] {
// THREADS: nvgpu.device_async_copy
// THREADS: gpu.barrier
// THREADS-NEXT: }
// THREADS-NEXT: nvvm.cp.async.commit.group
// THREADS-NEXT: nvvm.cp.async.wait.group 1
// THREADS-NEXT: gpu.barrier
// The barrier that fences the single-thread region below would follow with only index arithmetic in
// between: it orders nothing and goes.
// THREADS-NEXT: arith.cmpi eq
// THREADS-NEXT: scf.if
func.func @chunks(%k: memref<128x16xf16>, %out: memref<128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  scf.for %i = %c0 to %c128 step %c32 {
    %staged = memref.alloc() {la.staged_copy} : memref<32x16xf16>
    %chunk = memref.subview %k[%i, 0] [32, 16] [1, 1] : memref<128x16xf16> to memref<32x16xf16, strided<[16, 1], offset: ?>>
    memref.copy %chunk, %staged : memref<32x16xf16, strided<[16, 1], offset: ?>> to memref<32x16xf16>
    scf.for %r = %c0 to %c32 step %c1 {
      %x = memref.load %staged[%r, %c0] : memref<32x16xf16>
      %y = arith.extf %x : f16 to f32
      %row = arith.addi %i, %r : index
      memref.store %y, %out[%row] : memref<128xf32>
    }
  }
  return
}

// -----

// A source that starts 3 elements into its rows (6 bytes) cannot be copied by cp.async of 4 bytes or more:
// the copy stays.
// CHECK-LABEL: gpu.func @misaligned
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: memref.copy
func.func @misaligned(%k: memref<32x16xf16>, %out: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %staged = memref.alloc() {la.staged_copy} : memref<32x8xf16>
  %part = memref.subview %k[0, 3] [32, 8] [1, 1] : memref<32x16xf16> to memref<32x8xf16, strided<[16, 1], offset: 3>>
  memref.copy %part, %staged : memref<32x8xf16, strided<[16, 1], offset: 3>> to memref<32x8xf16>
  scf.for %r = %c0 to %c32 step %c1 {
    %x = memref.load %staged[%r, %c0] : memref<32x8xf16>
    %y = arith.extf %x : f16 to f32
    memref.store %y, %out[%r] : memref<32xf32>
  }
  return
}

// -----

// Rows of three f32 (12 bytes) are copied 4 bytes at a time, outside any loop: at once.
// CHECK-LABEL: gpu.func @narrow
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0{{.*}}) to (%c32{{.*}}, %c3{{.*}})
// CHECK:   nvgpu.device_async_copy {{.*}}, 1 : memref<32x3xf32> to memref<32x3xf32, #gpu.address_space<workgroup>>
// CHECK: nvvm.cp.async.wait.group 0
func.func @narrow(%k: memref<32x3xf32>, %out: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %staged = memref.alloc() {la.staged_copy} : memref<32x3xf32>
  memref.copy %k, %staged : memref<32x3xf32> to memref<32x3xf32>
  scf.for %r = %c0 to %c32 step %c1 {
    %x = memref.load %staged[%r, %c0] : memref<32x3xf32>
    memref.store %x, %out[%r] : memref<32xf32>
  }
  return
}

// -----

// A reader of the staged buffer before its copy in the loop body would see the next chunk's rows once the
// copy ran ahead: the copy is not prefetched (no second slot), only issued by cp.async where it stands.
// CHECK-LABEL: gpu.func @read_before_copy
// CHECK-SAME: workgroup(%{{.*}} : memref<1024xi8, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK:   memref.load
// CHECK:   nvgpu.device_async_copy
// CHECK:   nvvm.cp.async.wait.group 0
func.func @read_before_copy(%k: memref<128x16xf16>, %out: memref<128xf32>) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %staged = memref.alloc() {la.staged_copy} : memref<32x16xf16>
  scf.for %i = %c0 to %c128 step %c32 {
    %previous = memref.load %staged[%c0, %c0] : memref<32x16xf16>
    %y = arith.extf %previous : f16 to f32
    memref.store %y, %out[%i] : memref<128xf32>
    %chunk = memref.subview %k[%i, 0] [32, 16] [1, 1] : memref<128x16xf16> to memref<32x16xf16, strided<[16, 1], offset: ?>>
    memref.copy %chunk, %staged : memref<32x16xf16, strided<[16, 1], offset: ?>> to memref<32x16xf16>
  }
  return
}
