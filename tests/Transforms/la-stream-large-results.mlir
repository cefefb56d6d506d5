// RUN: la-opt %s -split-input-file -la-stream-large-results="min-bytes=4096" | FileCheck %s
// RUN: la-opt %s -split-input-file -la-stream-large-results | FileCheck %s --check-prefix=DEFAULT
// RUN: la-opt %s -split-input-file -la-stream-large-results="min-bytes=4096 sfence=false" | FileCheck %s --check-prefix=PORTABLE
// RUN: not la-opt %s -la-stream-large-results="min-bytes=0" 2>&1 | FileCheck %s --check-prefix=BAD

// A 64×64 result (16 KiB) written once, a row of 16-lane vectors (whole 64-byte lines) per iteration, and
// never read: the body is versioned on its alignment; the aligned version stores non-temporally, each
// store 64-byte aligned (row r starts at 256·r bytes, column c at 4·16·c), and ends with a store fence
// (with sfence=false, a portable one). The input %in and the unaligned version are unchanged. Below the
// default 2 MiB, nothing happens.
// CHECK-LABEL: func.func @rows
// CHECK:         %[[ADDRESS:.*]] = memref.extract_aligned_pointer_as_index %arg1
// CHECK:         %[[OFF:.*]] = arith.remui %[[ADDRESS]], %c64
// CHECK:         %[[ALIGNED:.*]] = arith.cmpi eq, %[[OFF]], %c0
// CHECK:         scf.if %[[ALIGNED]] {
// CHECK:           scf.for
// CHECK:             vector.transfer_read %arg0
// CHECK:             vector.store %{{.*}}, %arg1[%{{.*}}, %{{.*}}] {alignment = 64 : i64, nontemporal = true}
// CHECK:           llvm.call_intrinsic "llvm.x86.sse.sfence"()
// CHECK:         } else {
// CHECK:           scf.for
// CHECK:             vector.transfer_write %{{.*}}, %arg1
// CHECK-NOT:         vector.store
// CHECK-NOT:         llvm.call_intrinsic
// CHECK:         return
// PORTABLE-LABEL: func.func @rows
// PORTABLE:         vector.store
// PORTABLE:         llvm.fence seq_cst
// DEFAULT-LABEL: func.func @rows
// DEFAULT-NOT:   scf.if
func.func @rows(%in: memref<64x64xf32>, %out: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  scf.for %r = %c0 to %c64 step %c1 {
    scf.for %c = %c0 to %c64 step %c16 {
      %x = vector.transfer_read %in[%r, %c], %pad {in_bounds = [true]} : memref<64x64xf32>, vector<16xf32>
      %y = arith.addf %x, %x : vector<16xf32>
      vector.transfer_write %y, %out[%r, %c] {in_bounds = [true]} : vector<16xf32>, memref<64x64xf32>
    }
  }
  return
}

// -----

// The same writes through a subview of one row block, as register blocks store: the subview's offset
// (a multiple of 8 rows) and the write's indices prove the alignment.
// CHECK-LABEL: func.func @blocks
// CHECK:         scf.if
// CHECK:           memref.subview %arg1
// CHECK:           vector.store {{.*}} {alignment = 64 : i64, nontemporal = true}
func.func @blocks(%in: memref<64x64xf32>, %out: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %v = arith.constant dense<1.0> : vector<64xf32>
  scf.for %r = %c0 to %c64 step %c8 {
    %block = memref.subview %out[%r, 0] [8, 64] [1, 1] : memref<64x64xf32> to memref<8x64xf32, strided<[64, 1], offset: ?>>
    vector.transfer_write %v, %block[%c0, %c0] {in_bounds = [true]} : vector<64xf32>, memref<8x64xf32, strided<[64, 1], offset: ?>>
  }
  return
}

// -----

// Left alone: a result the function reads back (a temporary kept in its output), a write of 32 bytes (half
// a line), and a write that starts 4 bytes into a line (column offset 1).
// CHECK-LABEL: func.func @reads_back
// CHECK-NOT:   scf.if
// CHECK-NOT:   vector.store
func.func @reads_back(%out: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %v = arith.constant dense<1.0> : vector<16xf32>
  vector.transfer_write %v, %out[%c0, %c0] {in_bounds = [true]} : vector<16xf32>, memref<64x64xf32>
  %x = vector.transfer_read %out[%c0, %c0], %pad {in_bounds = [true]} : memref<64x64xf32>, vector<16xf32>
  vector.transfer_write %x, %out[%c0, %c0] {in_bounds = [true]} : vector<16xf32>, memref<64x64xf32>
  return
}

// CHECK-LABEL: func.func @half_lines
// CHECK-NOT:   scf.if
func.func @half_lines(%out: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %v = arith.constant dense<1.0> : vector<8xf32>
  vector.transfer_write %v, %out[%c0, %c0] {in_bounds = [true]} : vector<8xf32>, memref<64x64xf32>
  return
}

// CHECK-LABEL: func.func @off_line
// CHECK-NOT:   scf.if
func.func @off_line(%out: memref<64x65xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = arith.constant dense<1.0> : vector<16xf32>
  vector.transfer_write %v, %out[%c0, %c1] {in_bounds = [true]} : vector<16xf32>, memref<64x65xf32>
  return
}

// BAD: la-stream-large-results: min-bytes must be positive
