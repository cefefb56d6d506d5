// RUN: la-opt %s -split-input-file -la-gpu-scan-lanes | FileCheck %s

// Causal Flow's running Σ σ(k) over a chunk of 16 rows, from the state before the chunk: the feature map
// written to a row temporary (it reads the row's position), the row added to the carried sum and written
// out, then a self-copy that bufferisation leaves. Each of the 64 elements gets a lane carrying a scalar.
// CHECK-LABEL: func.func @running_sum
// CHECK-SAME: (%[[K:.*]]: memref<1x1x16x64xf16, {{.*}}>, %[[S0:.*]]: memref<1x1x64xf32>, %[[OUT:.*]]: memref<1x1x16x64xf32>, %[[TMP:.*]]: memref<1x1x1x64xf32>)
// CHECK-NOT: vector.transfer_read
// CHECK: scf.parallel (%[[LANE:.*]]) = (%{{.*}}) to (%c64) step
// CHECK:   %[[START:.*]] = memref.load %[[S0]][%{{.*}}, %{{.*}}, %{{.*}}]
// CHECK:   scf.for %[[ROW:.*]] = %{{.*}} to %c16 step %{{.*}} iter_args(%[[ACC:.*]] = %[[START]]) -> (f32)
// CHECK:     %[[KROW:.*]] = memref.subview %[[K]][0, 0, %[[ROW]], 0]
// CHECK:     %[[KX:.*]] = memref.load %[[KROW]][%{{.*}}, %{{.*}}, %{{.*}}, %[[LANE]]]
// CHECK:     %[[WIDE:.*]] = arith.extf %[[KX]] : f16 to f32
// CHECK:     %[[POS:.*]] = arith.index_cast %[[ROW]] : index to i32
// CHECK:     memref.store %{{.*}}, %[[TMP]][%{{.*}}, %{{.*}}, %{{.*}}, %[[LANE]]]
// CHECK:     %[[X:.*]] = memref.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}]
// CHECK:     %[[SUM:.*]] = arith.addf %[[ACC]], %[[X]] : f32
// CHECK:     memref.store %[[SUM]], %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}]
// CHECK-NOT:   memref.load
// CHECK:     scf.yield %[[SUM]] : f32
// CHECK-NOT: vector<64xf32>
func.func @running_sum(%k: memref<1x1x16x64xf16, strided<[16384, 16384, 64, 1], offset: ?>>, %s0: memref<1x1x64xf32>,
                       %out: memref<1x1x16x64xf32>, %tmp: memref<1x1x1x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : f32
  %start = vector.transfer_read %s0[%c0, %c0, %c0], %pad {in_bounds = [true]} : memref<1x1x64xf32>, vector<64xf32>
  %r = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %start) -> (vector<64xf32>) {
    %krow = memref.subview %k[0, 0, %i, 0] [1, 1, 1, 64] [1, 1, 1, 1] : memref<1x1x16x64xf16, strided<[16384, 16384, 64, 1], offset: ?>> to memref<1x1x1x64xf16, strided<[16384, 16384, 64, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                    iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%krow : memref<1x1x1x64xf16, strided<[16384, 16384, 64, 1], offset: ?>>) outs(%tmp : memref<1x1x1x64xf32>) {
    ^bb0(%in: f16, %o: f32):
      %wide = arith.extf %in : f16 to f32
      %pos = arith.index_cast %i : index to i32
      %posf = arith.sitofp %pos : i32 to f32
      %scaled = arith.mulf %wide, %posf : f32
      linalg.yield %scaled : f32
    }
    %trow = memref.subview %tmp[0, 0, 0, 0] [1, 1, 1, 64] [1, 1, 1, 1] : memref<1x1x1x64xf32> to memref<1x1x64xf32, strided<[64, 64, 1]>>
    %x = vector.transfer_read %trow[%c0, %c0, %c0], %pad {in_bounds = [true]} : memref<1x1x64xf32, strided<[64, 64, 1]>>, vector<64xf32>
    %sum = arith.addf %acc, %x : vector<64xf32>
    %orow = memref.subview %out[0, 0, %i, 0] [1, 1, 1, 64] [1, 1, 1, 1] : memref<1x1x16x64xf32> to memref<1x1x64xf32, strided<[1024, 1024, 1], offset: ?>>
    vector.transfer_write %sum, %orow[%c0, %c0, %c0] {in_bounds = [true]} : vector<64xf32>, memref<1x1x64xf32, strided<[1024, 1024, 1], offset: ?>>
    %again = memref.subview %out[0, 0, %i, 0] [1, 1, 1, 64] [1, 1, 1, 1] : memref<1x1x16x64xf32> to memref<1x1x64xf32, strided<[1024, 1024, 1], offset: ?>>
    memref.copy %orow, %again : memref<1x1x64xf32, strided<[1024, 1024, 1], offset: ?>> to memref<1x1x64xf32, strided<[1024, 1024, 1], offset: ?>>
    scf.yield %sum : vector<64xf32>
  }
  return
}

// -----

// The carried row is read after the loop: left alone (its lanes would have to be gathered back).
// CHECK-LABEL: func.func @result_read
// CHECK-NOT: scf.parallel
// CHECK: scf.for {{.*}} -> (vector<64xf32>)
func.func @result_read(%src: memref<16x64xf32>, %dst: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<64xf32>
  %r = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> (vector<64xf32>) {
    %x = vector.transfer_read %src[%i, %c0], %pad {in_bounds = [true]} : memref<16x64xf32>, vector<64xf32>
    %sum = arith.addf %acc, %x : vector<64xf32>
    scf.yield %sum : vector<64xf32>
  }
  vector.transfer_write %r, %dst[%c0] {in_bounds = [true]} : vector<64xf32>, memref<64xf32>
  return
}

// -----

// A row from outside the loop (here the gates, read once) has no scalar at the lane inside it: left alone.
// CHECK-LABEL: func.func @row_from_outside
// CHECK-NOT: scf.parallel
// CHECK: scf.for {{.*}} -> (vector<64xf32>)
func.func @row_from_outside(%src: memref<16x64xf32>, %gates: memref<64xf32>, %dst: memref<16x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<64xf32>
  %g = vector.transfer_read %gates[%c0], %pad {in_bounds = [true]} : memref<64xf32>, vector<64xf32>
  %r = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> (vector<64xf32>) {
    %x = vector.transfer_read %src[%i, %c0], %pad {in_bounds = [true]} : memref<16x64xf32>, vector<64xf32>
    %decayed = arith.mulf %acc, %g : vector<64xf32>
    %sum = arith.addf %decayed, %x : vector<64xf32>
    vector.transfer_write %sum, %dst[%i, %c0] {in_bounds = [true]} : vector<64xf32>, memref<16x64xf32>
    scf.yield %sum : vector<64xf32>
  }
  return
}

// -----

// An op without a scalar form at the lane (a reduction across the row): left alone.
// CHECK-LABEL: func.func @across_the_row
// CHECK-NOT: scf.parallel
func.func @across_the_row(%src: memref<16x64xf32>, %dst: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<64xf32>
  %r = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> (vector<64xf32>) {
    %x = vector.transfer_read %src[%i, %c0], %pad {in_bounds = [true]} : memref<16x64xf32>, vector<64xf32>
    %sum = arith.addf %acc, %x : vector<64xf32>
    %total = vector.reduction <add>, %sum : vector<64xf32> into f32
    memref.store %total, %dst[%i] : memref<16xf32>
    scf.yield %sum : vector<64xf32>
  }
  return
}

// -----

// The start is read before a write to its buffer: read at the loop, a lane would see the new value. Left
// alone.
// CHECK-LABEL: func.func @start_overwritten
// CHECK-NOT: scf.parallel
func.func @start_overwritten(%src: memref<16x64xf32>, %s0: memref<64xf32>, %dst: memref<16x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : f32
  %start = vector.transfer_read %s0[%c0], %pad {in_bounds = [true]} : memref<64xf32>, vector<64xf32>
  memref.store %pad, %s0[%c0] : memref<64xf32>
  %r = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %start) -> (vector<64xf32>) {
    %x = vector.transfer_read %src[%i, %c0], %pad {in_bounds = [true]} : memref<16x64xf32>, vector<64xf32>
    %sum = arith.addf %acc, %x : vector<64xf32>
    vector.transfer_write %sum, %dst[%i, %c0] {in_bounds = [true]} : vector<64xf32>, memref<16x64xf32>
    scf.yield %sum : vector<64xf32>
  }
  return
}
