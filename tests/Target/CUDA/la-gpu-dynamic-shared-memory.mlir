// RUN: la-opt %s -pass-pipeline='builtin.module(gpu.module(la-gpu-dynamic-shared-memory))' | FileCheck %s

// A workgroup byte array beyond the 48 KiB a kernel may declare statically becomes external and zero-length
// (PTX `.extern .shared`: dynamic shared memory, sized by the launch); its users read the same address.
// One within the limit, one in another address space and one of another element type stay as they are.
gpu.module @la_kernels {
  // CHECK: llvm.mlir.global external @__wg_big_0() {addr_space = 3 : i32, alignment = 64 : i64} : !llvm.array<0 x i8>
  llvm.mlir.global internal @__wg_big_0() {addr_space = 3 : i32, alignment = 64 : i64} : !llvm.array<49153 x i8>
  // CHECK: llvm.mlir.global internal @__wg_small_0() {addr_space = 3 : i32, alignment = 64 : i64} : !llvm.array<49152 x i8>
  llvm.mlir.global internal @__wg_small_0() {addr_space = 3 : i32, alignment = 64 : i64} : !llvm.array<49152 x i8>
  // CHECK: llvm.mlir.global internal @global_bytes() {addr_space = 1 : i32} : !llvm.array<65536 x i8>
  llvm.mlir.global internal @global_bytes() {addr_space = 1 : i32} : !llvm.array<65536 x i8>
  // CHECK: llvm.mlir.global internal @__wg_words_0() {addr_space = 3 : i32} : !llvm.array<16384 x i32>
  llvm.mlir.global internal @__wg_words_0() {addr_space = 3 : i32} : !llvm.array<16384 x i32>

  // CHECK-LABEL: llvm.func @big
  // CHECK: %[[BASE:.*]] = llvm.mlir.addressof @__wg_big_0 : !llvm.ptr<3>
  // CHECK: llvm.getelementptr %[[BASE]][49000] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
  llvm.func @big(%value: f32) {
    %base = llvm.mlir.addressof @__wg_big_0 : !llvm.ptr<3>
    %slot = llvm.getelementptr %base[49000] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
    llvm.store %value, %slot : f32, !llvm.ptr<3>
    llvm.return
  }
}
