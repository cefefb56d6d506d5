// RUN: la-opt %s -la-expand-strided-copies | FileCheck %s

// A copy out of a strided view would lower to a call to `memrefCopy`, which the JIT cannot resolve: it becomes
// linalg.copy (loops later).
// CHECK-LABEL: func.func @strided
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%{{.*}} : memref<4x4xf32, strided<[8, 1], offset: 2>>) outs(%arg1 : memref<4x4xf32>)
func.func @strided(%a: memref<4x8xf32>, %b: memref<4x4xf32>) {
  %s = memref.subview %a[0, 2] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1], offset: 2>>
  memref.copy %s, %b : memref<4x4xf32, strided<[8, 1], offset: 2>> to memref<4x4xf32>
  return
}

// A contiguous copy stays a memref.copy (a memcpy intrinsic).
// CHECK-LABEL: func.func @contiguous
// CHECK: memref.copy
func.func @contiguous(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
  return
}
