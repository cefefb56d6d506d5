// RUN: la-opt %s -split-input-file -la-gpu-outline-slice-kernel="shared-memory-bytes=1024" | FileCheck %s
// RUN: la-opt %s -split-input-file -la-gpu-outline-slice-kernel="shared-memory-bytes=256" | FileCheck %s --check-prefix=TIGHT
// RUN: la-opt %s -split-input-file -la-gpu-outline-slice-kernel="shared-memory-bytes=512" | FileCheck %s --check-prefix=HOT

// Temporaries share bytes when their lifetimes (first to last top-level op that uses them) do not overlap:
// %a (512 bytes) lives in the first loop, %b (256) and %c (256) in the second, read by the third; %b and %c
// overlap each other, neither overlaps %a. 512 bytes of shared memory hold all three: %a at 0, %b and %c
// side by side over it, against 1024 with a slot each.
// CHECK: gpu.func @slots({{.*}}) workgroup(%[[WG:.*]] : memref<512xi8, #gpu.address_space<workgroup>> {{.*}}) kernel
// CHECK-NOT: memref<{{[0-9]+}}xi8>)
// CHECK-DAG: memref.view %[[WG]][%c0{{.*}}][] : memref<512xi8, #gpu.address_space<workgroup>> to memref<128xf32, #gpu.address_space<workgroup>>
// CHECK-DAG: memref.view %[[WG]][%c256{{.*}}][] : memref<512xi8, #gpu.address_space<workgroup>> to memref<64xf32, #gpu.address_space<workgroup>>
// CHECK-DAG: memref.view %[[WG]][%c0{{.*}}][] : memref<512xi8, #gpu.address_space<workgroup>> to memref<64xf32, #gpu.address_space<workgroup>>
// With 256 bytes, shared memory takes %b (smallest first); %c would overlap it, %a is too large. In the
// global scratch buffer %a and %c share bytes too: 512, not 768.
// TIGHT: gpu.func @slots(%{{.*}}: memref<128xf32>, %{{.*}}: memref<64xf32>, %[[SCRATCH:.*]]: memref<512xi8>) workgroup(%[[WG:.*]] : memref<256xi8, #gpu.address_space<workgroup>> {{.*}}) kernel
// TIGHT-DAG: memref.view %[[SCRATCH]][%c0{{.*}}][] : memref<512xi8> to memref<128xf32>
// TIGHT-DAG: memref.view %[[WG]][%c0{{.*}}][] : memref<256xi8, #gpu.address_space<workgroup>> to memref<64xf32, #gpu.address_space<workgroup>>
// TIGHT-DAG: memref.view %[[SCRATCH]][%c0{{.*}}][] : memref<512xi8> to memref<64xf32>
func.func @slots(%in: memref<128xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %a = memref.alloc() : memref<128xf32>
  %b = memref.alloc() : memref<64xf32>
  %c = memref.alloc() : memref<64xf32>
  scf.for %i = %c0 to %c128 step %c1 {
    %x = memref.load %in[%i] : memref<128xf32>
    memref.store %x, %a[%i] : memref<128xf32>
  }
  scf.for %i = %c0 to %c64 step %c1 {
    %x = memref.load %in[%i] : memref<128xf32>
    memref.store %x, %b[%i] : memref<64xf32>
    memref.store %x, %c[%i] : memref<64xf32>
  }
  scf.for %i = %c0 to %c64 step %c1 {
    %x = memref.load %b[%i] : memref<64xf32>
    %y = memref.load %c[%i] : memref<64xf32>
    %s = arith.addf %x, %y : f32
    memref.store %s, %out[%i] : memref<64xf32>
  }
  return
}

// -----

// A staged copy of an argument (la-gpu-register-tile, la-gpu-contract-to-mma) pays only in shared memory:
// with 1024 bytes it is there; with 256 it does not fit, and rather than a global copy of a global operand
// its readers read the argument itself (no scratch buffer, no copy).
// CHECK-LABEL: gpu.func @staged
// CHECK-SAME: workgroup(%[[WG:.*]] : memref<512xi8, #gpu.address_space<workgroup>>
// CHECK: %[[COPY:.*]] = memref.view %[[WG]]
// CHECK: memref.copy %{{.*}}, %[[COPY]]
// CHECK: memref.load %[[COPY]]
// TIGHT-LABEL: gpu.func @staged
// TIGHT-SAME: (%[[IN:[a-z0-9]+]]: memref<128xf32>, %{{.*}}: memref<1xf32>) kernel
// TIGHT-NOT: memref.copy
// TIGHT-NOT: memref.view
// TIGHT: memref.load %[[IN]]
func.func @staged(%in: memref<128xf32>, %out: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  %copy = memref.alloc() {la.staged_copy} : memref<128xf32>
  memref.copy %in, %copy : memref<128xf32> to memref<128xf32>
  %sum = scf.for %i = %c0 to %c128 step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %copy[%i] : memref<128xf32>
    %s = arith.addf %acc, %x : f32
    scf.yield %s : f32
  }
  memref.store %sum, %out[%c0] : memref<1xf32>
  return
}

// -----

// A staged copy read through subviews (the tiles of a long reduction, la-gpu-contract-to-mma) dissolves
// the same way: the readers read the same tile of the argument.
// TIGHT-LABEL: gpu.func @staged_tiles
// TIGHT-SAME: (%[[IN:[a-z0-9]+]]: memref<128xf32>, %{{.*}}: memref<1xf32>) kernel
// TIGHT-NOT: memref.copy
// TIGHT-NOT: memref.view
// TIGHT: %[[TILE:.*]] = memref.subview %[[IN]][%{{.*}}] [32] [1]
// TIGHT: memref.load %[[TILE]]
func.func @staged_tiles(%in: memref<128xf32>, %out: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  %copy = memref.alloc() {la.staged_copy} : memref<128xf32>
  memref.copy %in, %copy : memref<128xf32> to memref<128xf32>
  %sum = scf.for %i = %c0 to %c128 step %c32 iter_args(%acc = %zero) -> f32 {
    %tile = memref.subview %copy[%i] [32] [1] : memref<128xf32> to memref<32xf32, strided<[1], offset: ?>>
    %x = memref.load %tile[%c1] : memref<32xf32, strided<[1], offset: ?>>
    %s = arith.addf %acc, %x : f32
    scf.yield %s : f32
  }
  memref.store %sum, %out[%c0] : memref<1xf32>
  return
}

// -----

// Shared memory goes where it saves the most global traffic: %hot (512 bytes) is read 64 times per
// element, %cold (256 bytes, alive at the same time) once. Smallest first would take %cold and leave no room
// for %hot; the most accessed per byte first takes %hot, which leaves less traffic in global memory
// (with 512 bytes of shared memory: both fit in 1024).
// HOT-LABEL: gpu.func @hot_and_cold
// HOT-SAME: %[[SCRATCH:[a-z0-9]+]]: memref<256xi8>) workgroup(%[[WG:.*]] : memref<512xi8, #gpu.address_space<workgroup>>
// HOT-DAG: memref.view %[[WG]][%{{.*}}][] : memref<512xi8, #gpu.address_space<workgroup>> to memref<128xf32, #gpu.address_space<workgroup>>
// HOT-DAG: memref.view %[[SCRATCH]][%{{.*}}][] : memref<256xi8> to memref<64xf32>
func.func @hot_and_cold(%in: memref<128xf32>, %out: memref<128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %hot = memref.alloc() : memref<128xf32>
  %cold = memref.alloc() : memref<64xf32>
  scf.for %i = %c0 to %c128 step %c1 {
    %x = memref.load %in[%i] : memref<128xf32>
    memref.store %x, %hot[%i] : memref<128xf32>
  }
  scf.for %i = %c0 to %c64 step %c1 {
    %x = memref.load %in[%i] : memref<128xf32>
    memref.store %x, %cold[%i] : memref<64xf32>
  }
  scf.for %r = %c0 to %c64 step %c1 {
    scf.for %i = %c0 to %c128 step %c1 {
      %x = memref.load %hot[%i] : memref<128xf32>
      memref.store %x, %out[%i] : memref<128xf32>
    }
  }
  scf.for %i = %c0 to %c64 step %c1 {
    %y = memref.load %cold[%i] : memref<64xf32>
    memref.store %y, %out[%i] : memref<128xf32>
  }
  return
}
