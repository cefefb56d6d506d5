// RUN: la-opt %s --la-promote-to-f64 --split-input-file --verify-diagnostics | FileCheck %s

// Every narrow float becomes f64: signatures, block arguments, scalar and dense constants (values kept
// exactly: the f32 value of 0.1, not the decimal), accumulator types. f64 attributes (eps) and non-float types stay as they are.
// CHECK-LABEL: func.func @widen(
// CHECK-SAME: %[[X:.*]]: tensor<?x?xf64>, %[[H:.*]]: tensor<4x?xf64>) -> (tensor<?xf64>, tensor<4xf64>)
// CHECK: arith.constant 0.10000000149011612 : f64
// CHECK: arith.constant dense<[5.000000e-01, 1.500000e+00]> : tensor<2xf64>
// CHECK: la.map %[[X]] : tensor<?x?xf64> -> tensor<?x?xf64>
// CHECK-NEXT: ^bb0(%{{.*}}: f64):
// CHECK: arith.sitofp %{{.*}} : i64 to f64
// CHECK: la.normalize sum %{{.*}} along 1 eps(1.0e-06) : tensor<?x?xf64> -> tensor<?x?xf64>
// CHECK: la.reduce add %{{.*}} along [1] acc(f64) : tensor<?x?xf64> -> tensor<?xf64>
// CHECK: la.reduce add %[[H]] along [1] acc(f64) : tensor<4x?xf64> -> tensor<4xf64>
func.func @widen(%x: tensor<?x?xf32>, %h: tensor<4x?xf16>) -> (tensor<?xf32>, tensor<4xf16>) {
  %c = arith.constant 0.1 : f32
  %d = arith.constant dense<[0.5, 1.5]> : tensor<2xf32>
  %m = la.map %x : tensor<?x?xf32> -> tensor<?x?xf32> {
  ^bb0(%z: f32):
    %i = la.index 0 : index
    %ic = arith.index_cast %i : index to i64
    %if = arith.sitofp %ic : i64 to f32
    %s = arith.mulf %z, %c : f32
    %t = arith.addf %s, %if : f32
    la.yield %t : f32
  }
  %n = la.normalize sum %m along 1 eps(1.0e-6) : tensor<?x?xf32> -> tensor<?x?xf32>
  %r = la.reduce add %n along [1] acc(f32) : tensor<?x?xf32> -> tensor<?xf32>
  %hr = la.reduce add %h along [1] acc(f32) : tensor<4x?xf16> -> tensor<4xf16>
  return %r, %hr : tensor<?xf32>, tensor<4xf16>
}

// -----

// A narrowing cast has no f64 form: the widened program does not verify, and the pass fails on it.
func.func @narrowing(%x: f32) -> f32 {
  // expected-error @+1 {{'arith.truncf' op operand type 'f64' and result type 'f64' are cast incompatible}}
  %h = arith.truncf %x : f32 to f16
  %w = arith.extf %h : f16 to f32
  return %w : f32
}
