// RUN: la-opt %s -split-input-file -la-gpu-outline-slice-kernel -la-gpu-distribute-to-threads | FileCheck %s

// A scan outside the thread loops (a row-by-row running sum into a temporary) runs on thread 0 alone: every
// thread running it would issue its loads once per thread for one thread's stores. The copy of the state onto
// itself that bufferisation leaves is dropped rather than expanded into a thread loop with barriers.
// CHECK-LABEL: gpu.func @scan
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %{{.*}}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-NEXT:   scf.for
// CHECK-NOT:      gpu.barrier
// CHECK:          vector.store
// CHECK:        }
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: memref.copy
// CHECK: gpu.return
func.func @scan(%in: memref<1x1x8x4xf32>, %out: memref<1x1x8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant dense<0.0> : vector<4xf32>
  %state = memref.alloc() : memref<1x1x4xf32>
  %last = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (vector<4xf32>) {
    %row = vector.load %in[%c0, %c0, %i, %c0] : memref<1x1x8x4xf32>, vector<4xf32>
    %sum = arith.addf %acc, %row : vector<4xf32>
    vector.store %sum, %out[%c0, %c0, %i, %c0] : memref<1x1x8x4xf32>, vector<4xf32>
    memref.copy %state, %state : memref<1x1x4xf32> to memref<1x1x4xf32>
    scf.yield %sum : vector<4xf32>
  }
  return
}

// -----

// A loop whose result is used after it, or that holds a thread loop, stays on every thread.
// CHECK-LABEL: gpu.func @kept
// CHECK-NOT: scf.if
// CHECK: %[[SUM:.*]] = scf.for
// CHECK: scf.if
// CHECK-NEXT: memref.store %[[SUM]]
func.func @kept(%in: memref<1x1x8xf32>, %out: memref<1x1x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
    %x = memref.load %in[%c0, %c0, %i] : memref<1x1x8xf32>
    %s = arith.addf %acc, %x : f32
    scf.yield %s : f32
  }
  memref.store %sum, %out[%c0, %c0, %c0] : memref<1x1x1xf32>
  return
}
