// RUN: la-opt %s -split-input-file -la-gpu-reductions-innermost | FileCheck %s
// RUN: la-opt %s -split-input-file -la-gpu-reductions-innermost -convert-linalg-to-parallel-loops -canonicalize -cse -la-gpu-promote-accumulators | FileCheck %s --check-prefix=LOOPS

// K^T·V over the rows n: (n reduction, d, e parallel) becomes (d, e, n); the loops then run each (d, e) on
// its own iteration of the parallel loop, with the accumulator in a register across n: loaded once before
// the loop over n and stored once after it.
#k = affine_map<(n, d, e) -> (n, d)>
#v = affine_map<(n, d, e) -> (n, e)>
#s = affine_map<(n, d, e) -> (d, e)>
func.func @state(%k: memref<16x4xf32>, %v: memref<16x8xf32>, %s: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#k, #v, #s], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%k, %v : memref<16x4xf32>, memref<16x8xf32>) outs(%s : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %sum = arith.addf %acc, %p : f32
    linalg.yield %sum : f32
  }
  return
}
// CHECK-DAG: #[[K:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[V:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[S:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @state
// CHECK: linalg.generic {indexing_maps = [#[[K]], #[[V]], #[[S]]], iterator_types = ["parallel", "parallel", "reduction"]}

// LOOPS-LABEL: func.func @state
// LOOPS: scf.parallel (%[[D:.*]], %[[E:.*]]) =
// LOOPS-NEXT: %[[INIT:.*]] = memref.load %{{.*}}[%[[D]], %[[E]]] : memref<4x8xf32>
// LOOPS-NEXT: %[[SUM:.*]] = scf.for %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32)
// LOOPS-NOT: memref.store
// LOOPS: arith.addf %[[ACC]]
// LOOPS: scf.yield
// LOOPS: }
// LOOPS-NEXT: memref.store %[[SUM]], %{{.*}}[%[[D]], %[[E]]] : memref<4x8xf32>

// -----

// Not promoted: the loop also reads the accumulator's buffer elsewhere (a neighbour element).
func.func @aliased(%x: memref<16xf32>, %s: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %n = %c0 to %c16 step %c1 {
    %acc = memref.load %s[%c0] : memref<4xf32>
    %other = memref.load %s[%c1] : memref<4xf32>
    %xn = memref.load %x[%n] : memref<16xf32>
    %p = arith.addf %acc, %xn : f32
    %q = arith.addf %p, %other : f32
    memref.store %q, %s[%c0] : memref<4xf32>
  }
  return
}
// LOOPS-LABEL: func.func @aliased
// LOOPS: scf.for
// LOOPS-NOT: iter_args
// LOOPS: memref.store
// LOOPS-NEXT: }
