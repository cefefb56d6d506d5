// RUN: la-opt %s -la-gpu-outline-slice-kernel="warps-per-block=2 shared-memory-bytes=0" -la-gpu-distribute-to-threads | FileCheck %s
// RUN: la-opt %s -la-gpu-outline-slice-kernel="warps-per-block=2" | FileCheck %s --check-prefix=SHARED

// By default the temporary (32 bytes) is a view of shared memory, and the kernel takes no scratch; with
// shared-memory-bytes=0 (the checks below) it is a view of the global scratch buffer.
// SHARED: gpu.func @slice(%{{.*}}: memref<1x1x8xf32>, %{{.*}}: memref<1x1x8xf32>) workgroup(%[[WG:.*]] : memref<64xi8, #gpu.address_space<workgroup>> {llvm.align = 64 : i64}) kernel
// SHARED-SAME: la.slice_bytes = array<i64: 32, 32>
// SHARED: memref.view %[[WG]][%{{.*}}][] : memref<64xi8, #gpu.address_space<workgroup>> to memref<1x1x8xf32, #gpu.address_space<workgroup>>

// One slice of an entry after bufferisation: a parallel loop into a temporary, a single-threaded scalar
// write between two reads, and a position argument.
// CHECK-LABEL: gpu.module @la_kernels
// CHECK: gpu.func @slice(%[[IN:.*]]: memref<1x1x8xf32>, %[[OUT:.*]]: memref<1x1x8xf32>, %[[SCRATCH:.*]]: memref<64xi8>) kernel
// CHECK-SAME: known_block_size = array<i32: 64, 1, 1>
// CHECK-SAME: la.slice_bytes = array<i64: 32, 32, 64>
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[NTID:.*]] = gpu.block_dim x
// The head coordinate is the block's x index, in a private cell.
// CHECK: %[[CELL:.*]] = memref.alloca() : memref<1x1xf32>
// CHECK: gpu.block_id x
// CHECK: memref.store %{{.*}}, %[[CELL]]
// The temporary is a view of the scratch buffer.
// CHECK: %[[TMP:.*]] = memref.view %[[SCRATCH]][%{{.*}}][] : memref<64xi8> to memref<1x1x8xf32>
// The parallel loop: thread-strided, fenced.
// CHECK: gpu.barrier
// CHECK: scf.for %[[I:.*]] = %[[TID]] to %{{.*}} step %[[NTID]]
// CHECK:   memref.store %{{.*}}, %[[TMP]]
// CHECK: gpu.barrier
// The write outside any parallel loop: thread 0 only, fenced.
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %{{.*}}
// CHECK: gpu.barrier
// CHECK: scf.if %[[FIRST]]
// CHECK:   memref.store %{{.*}}, %[[OUT]]
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @slice(%in: memref<1x1x8xf32>, %head: memref<1x1xf32> {la.slice_position = 0 : i64},
                 %out: memref<1x1x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %tmp = memref.alloc() : memref<1x1x8xf32>
  %h = memref.load %head[%c0, %c0] : memref<1x1xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %x = memref.load %in[%c0, %c0, %i] : memref<1x1x8xf32>
    %y = arith.addf %x, %h : f32
    memref.store %y, %tmp[%c0, %c0, %i] : memref<1x1x8xf32>
    scf.reduce
  }
  %first = memref.load %tmp[%c0, %c0, %c0] : memref<1x1x8xf32>
  memref.store %first, %out[%c0, %c0, %c0] : memref<1x1x8xf32>
  return
}
