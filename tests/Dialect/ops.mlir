// RUN: la-opt %s -split-input-file | la-opt -split-input-file | FileCheck %s
// RUN: la-opt %s -split-input-file -mlir-print-op-generic | la-opt -split-input-file | FileCheck %s

//===----------------------------------------------------------------------===//
// la.map: named functions
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @map_unary
// CHECK-SAME: (%[[X:.*]]: tensor<?x?xf32>)
// CHECK: %[[M0:.*]] = la.map identity %[[X]] : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK: %[[M1:.*]] = la.map sigmoid %[[M0]] : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK: %[[M2:.*]] = la.map elu1 %[[M1]] : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK: %[[M3:.*]] = la.map relu %[[M2]] : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK: %[[M4:.*]] = la.map relu2 %[[M3]] : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK: %[[M5:.*]] = la.map exp %[[M4]] : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK: %[[M6:.*]] = la.map log %[[M5]] : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK: %[[M7:.*]] = la.map silu %[[M6]] : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK: %[[M8:.*]] = la.map neg %[[M7]] : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK: %[[M9:.*]] = la.map reciprocal %[[M8]] : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK: %[[M10:.*]] = la.map square %[[M9]] : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK: return %[[M10]]
func.func @map_unary(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = la.map identity %x : tensor<?x?xf32> -> tensor<?x?xf32>
  %1 = la.map sigmoid %0 : tensor<?x?xf32> -> tensor<?x?xf32>
  %2 = la.map elu1 %1 : tensor<?x?xf32> -> tensor<?x?xf32>
  %3 = la.map relu %2 : tensor<?x?xf32> -> tensor<?x?xf32>
  %4 = la.map relu2 %3 : tensor<?x?xf32> -> tensor<?x?xf32>
  %5 = la.map exp %4 : tensor<?x?xf32> -> tensor<?x?xf32>
  %6 = la.map log %5 : tensor<?x?xf32> -> tensor<?x?xf32>
  %7 = la.map silu %6 : tensor<?x?xf32> -> tensor<?x?xf32>
  %8 = la.map neg %7 : tensor<?x?xf32> -> tensor<?x?xf32>
  %9 = la.map reciprocal %8 : tensor<?x?xf32> -> tensor<?x?xf32>
  %10 = la.map square %9 : tensor<?x?xf32> -> tensor<?x?xf32>
  return %10 : tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func.func @map_params
// CHECK: la.map clamp(-1.0, 1.0) %{{.*}} : tensor<4x8xf16> -> tensor<4x8xf16>
// CHECK: la.map clamp(0.0, 6.0) %{{.*}} : tensor<4x8xf16> -> tensor<4x8xf16>
// CHECK: la.map add_const(1.0e-06) %{{.*}} : tensor<4x8xf16> -> tensor<4x8xf16>
// CHECK: la.map add_const(-2.5) %{{.*}} : tensor<4x8xf16> -> tensor<4x8xf16>
// CHECK: la.map mul_const(0.125) %{{.*}} : tensor<4x8xf16> -> tensor<4x8xf16>
// CHECK: la.map mul_const(0.1) %{{.*}} : tensor<4x8xf16> -> tensor<4x8xf16>
func.func @map_params(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = la.map clamp(-1.0, 1.0) %x : tensor<4x8xf16> -> tensor<4x8xf16>
  %1 = la.map clamp(0.0, 6.0) %0 : tensor<4x8xf16> -> tensor<4x8xf16>
  %2 = la.map add_const(1.0e-6) %1 : tensor<4x8xf16> -> tensor<4x8xf16>
  %3 = la.map add_const(-2.5) %2 : tensor<4x8xf16> -> tensor<4x8xf16>
  %4 = la.map mul_const(0.125) %3 : tensor<4x8xf16> -> tensor<4x8xf16>
  %5 = la.map mul_const(0.1) %4 : tensor<4x8xf16> -> tensor<4x8xf16>
  return %5 : tensor<4x8xf16>
}

// -----

// CHECK-LABEL: func.func @map_binary
// CHECK-SAME: (%[[A:.*]]: tensor<?x8xbf16>, %[[B:.*]]: tensor<?x8xbf16>, %[[C:.*]]: tensor<?x8xbf16>)
// CHECK: la.map add %[[A]], %[[B]] : tensor<?x8xbf16>, tensor<?x8xbf16> -> tensor<?x8xbf16>
// CHECK: la.map sub %{{.*}}, %[[B]] : tensor<?x8xbf16>, tensor<?x8xbf16> -> tensor<?x8xbf16>
// CHECK: la.map mul %{{.*}}, %[[B]] : tensor<?x8xbf16>, tensor<?x8xbf16> -> tensor<?x8xbf16>
// CHECK: la.map div %{{.*}}, %[[B]] : tensor<?x8xbf16>, tensor<?x8xbf16> -> tensor<?x8xbf16>
// CHECK: la.map max %{{.*}}, %[[B]] : tensor<?x8xbf16>, tensor<?x8xbf16> -> tensor<?x8xbf16>
// CHECK: la.map min %{{.*}}, %[[B]] : tensor<?x8xbf16>, tensor<?x8xbf16> -> tensor<?x8xbf16>
// CHECK: la.map affine %{{.*}}, %[[B]], %[[C]] : tensor<?x8xbf16>, tensor<?x8xbf16>, tensor<?x8xbf16> -> tensor<?x8xbf16>
func.func @map_binary(%a: tensor<?x8xbf16>, %b: tensor<?x8xbf16>, %c: tensor<?x8xbf16>) -> tensor<?x8xbf16> {
  %0 = la.map add %a, %b : tensor<?x8xbf16>, tensor<?x8xbf16> -> tensor<?x8xbf16>
  %1 = la.map sub %0, %b : tensor<?x8xbf16>, tensor<?x8xbf16> -> tensor<?x8xbf16>
  %2 = la.map mul %1, %b : tensor<?x8xbf16>, tensor<?x8xbf16> -> tensor<?x8xbf16>
  %3 = la.map div %2, %b : tensor<?x8xbf16>, tensor<?x8xbf16> -> tensor<?x8xbf16>
  %4 = la.map max %3, %b : tensor<?x8xbf16>, tensor<?x8xbf16> -> tensor<?x8xbf16>
  %5 = la.map min %4, %b : tensor<?x8xbf16>, tensor<?x8xbf16> -> tensor<?x8xbf16>
  %6 = la.map affine %5, %b, %c : tensor<?x8xbf16>, tensor<?x8xbf16>, tensor<?x8xbf16> -> tensor<?x8xbf16>
  return %6 : tensor<?x8xbf16>
}

// -----

// CHECK-LABEL: func.func @map_broadcast
// CHECK-SAME: (%[[V:.*]]: tensor<?x?x?x?xf32>, %[[D:.*]]: tensor<?x?x?xf32>, %[[S:.*]]: tensor<f32>, %[[G:.*]]: tensor<?x?x?xf32>)
// CHECK: la.map mul "bhne,bhn->bhne" %[[V]], %[[D]] : tensor<?x?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?x?xf32>
// CHECK: la.map mul ",bhn->bhn" %[[S]], %[[D]] : tensor<f32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>
// CHECK: la.map affine "bhne,hne,hne->bhne" %[[V]], %{{.*}}, %{{.*}} : tensor<?x?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?x?xf32>
// CHECK: la.map exp "bhn->bhn" %[[G]] : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
// CHECK: la.map identity "bhne->bhen" %[[V]] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
func.func @map_broadcast(%v: tensor<?x?x?x?xf32>, %d: tensor<?x?x?xf32>, %s: tensor<f32>, %g: tensor<?x?x?xf32>)
    -> (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?x?xf32>) {
  %0 = la.map mul "bhne,bhn->bhne" %v, %d : tensor<?x?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?x?xf32>
  %1 = la.map mul ",bhn->bhn" %s, %d : tensor<f32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %2 = la.map affine "bhne,hne,hne->bhne" %v, %1, %1
      : tensor<?x?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?x?xf32>
  %3 = la.map exp "bhn->bhn" %g : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %4 = la.map identity "bhne->bhen" %v : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  return %0, %1, %2, %3, %4 : tensor<?x?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?x?xf32>
}

// -----

// CHECK-LABEL: func.func @map_region
// CHECK-SAME: (%[[D:.*]]: tensor<?x?x?xf32>, %[[S:.*]]: tensor<f32>)
// CHECK: %[[C1:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: la.map ",bhn->bhn" %[[S]], %[[D]] : tensor<f32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32> {
// CHECK-NEXT: ^bb0(%[[SCALE:.*]]: f32, %[[X:.*]]: f32):
// CHECK-NEXT: %[[T:.*]] = la.index 2 : f32
// CHECK-NEXT: %[[N:.*]] = arith.addf %[[T]], %[[C1]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.divf %[[X]], %[[N]] : f32
// CHECK-NEXT: %[[Y:.*]] = arith.mulf %[[R]], %[[SCALE]] : f32
// CHECK-NEXT: la.yield %[[Y]] : f32
// CHECK-NEXT: }
// CHECK: la.map %{{.*}} : tensor<?x?x?xf32> -> tensor<?x?x?xf32> {
// CHECK-NEXT: ^bb0(%[[Z:.*]]: f32):
// CHECK-NEXT: %[[I:.*]] = la.index 0 : index
// CHECK-NEXT: %[[IC:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK-NEXT: %[[IF:.*]] = arith.sitofp %[[IC]] : i64 to f32
// CHECK-NEXT: %[[W:.*]] = la.index 1 : f64
// CHECK-NEXT: %[[WF:.*]] = arith.truncf %[[W]] : f64 to f32
// CHECK-NEXT: %[[A:.*]] = arith.addf %[[Z]], %[[IF]] : f32
// CHECK-NEXT: %[[B:.*]] = arith.addf %[[A]], %[[WF]] : f32
// CHECK-NEXT: la.yield %[[B]] : f32
// CHECK-NEXT: }
func.func @map_region(%d: tensor<?x?x?xf32>, %s: tensor<f32>) -> tensor<?x?x?xf32> {
  %one = arith.constant 1.0 : f32
  %0 = la.map ",bhn->bhn" %s, %d : tensor<f32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32> {
  ^bb0(%scale: f32, %x: f32):
    %t = la.index 2 : f32
    %n = arith.addf %t, %one : f32
    %r = arith.divf %x, %n : f32
    %y = arith.mulf %r, %scale : f32
    la.yield %y : f32
  }
  %1 = la.map %0 : tensor<?x?x?xf32> -> tensor<?x?x?xf32> {
  ^bb0(%z: f32):
    %i = la.index 0 : index
    %ic = arith.index_cast %i : index to i64
    %if = arith.sitofp %ic : i64 to f32
    %w = la.index 1 : f64
    %wf = arith.truncf %w : f64 to f32
    %a = arith.addf %z, %if : f32
    %b = arith.addf %a, %wf : f32
    la.yield %b : f32
  }
  return %1 : tensor<?x?x?xf32>
}

//===----------------------------------------------------------------------===//
// la.reduce
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @reduce_named
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x?x?xf32>)
// CHECK: la.reduce add %[[X]] along [2] : tensor<?x?x?x?xf32> -> tensor<?x?x?xf32>
// CHECK: la.reduce max %[[X]] along [3] : tensor<?x?x?x?xf32> -> tensor<?x?x?xf32>
// CHECK: la.reduce min %[[X]] along [0, 2] : tensor<?x?x?x?xf32> -> tensor<?x?xf32>
// CHECK: la.reduce logaddexp %[[X]] along [1, 2, 3] acc(f64) : tensor<?x?x?x?xf32> -> tensor<?xf32>
// CHECK: la.reduce add %[[X]] along [] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
func.func @reduce_named(%x: tensor<?x?x?x?xf32>)
    -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?xf32>, tensor<?xf32>, tensor<?x?x?x?xf32>) {
  %0 = la.reduce add %x along [2] : tensor<?x?x?x?xf32> -> tensor<?x?x?xf32>
  %1 = la.reduce max %x along [3] : tensor<?x?x?x?xf32> -> tensor<?x?x?xf32>
  %2 = la.reduce min %x along [0, 2] : tensor<?x?x?x?xf32> -> tensor<?x?xf32>
  %3 = la.reduce logaddexp %x along [1, 2, 3] acc(f64) : tensor<?x?x?x?xf32> -> tensor<?xf32>
  %4 = la.reduce add %x along [] : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  return %0, %1, %2, %3, %4 : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?xf32>, tensor<?xf32>, tensor<?x?x?x?xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_region
// CHECK-SAME: (%[[X:.*]]: tensor<4x?xf16>, %[[I:.*]]: tensor<4x?xf16>)
// CHECK: %{{.*}}:2 = la.reduce %[[X]], %[[I]] along [1] acc(f32) : tensor<4x?xf16>, tensor<4x?xf16> -> tensor<4xf16>, tensor<4xf16> {
// CHECK-NEXT: ^bb0(%[[AM:.*]]: f16, %[[AI:.*]]: f16, %[[M:.*]]: f16, %[[J:.*]]: f16):
// CHECK-NEXT: %[[GT:.*]] = arith.cmpf ogt, %[[M]], %[[AM]] : f16
// CHECK-NEXT: %[[RM:.*]] = arith.select %[[GT]], %[[M]], %[[AM]] : f16
// CHECK-NEXT: %[[RI:.*]] = arith.select %[[GT]], %[[J]], %[[AI]] : f16
// CHECK-NEXT: la.yield %[[RM]], %[[RI]] : f16, f16
// CHECK-NEXT: }
func.func @reduce_region(%x: tensor<4x?xf16>, %i: tensor<4x?xf16>) -> (tensor<4xf16>, tensor<4xf16>) {
  %0:2 = la.reduce %x, %i along [1] acc(f32) : tensor<4x?xf16>, tensor<4x?xf16> -> tensor<4xf16>, tensor<4xf16> {
  ^bb0(%am: f16, %ai: f16, %m: f16, %j: f16):
    %gt = arith.cmpf ogt, %m, %am : f16
    %rm = arith.select %gt, %m, %am : f16
    %ri = arith.select %gt, %j, %ai : f16
    la.yield %rm, %ri : f16, f16
  }
  return %0#0, %0#1 : tensor<4xf16>, tensor<4xf16>
}

//===----------------------------------------------------------------------===//
// la.scan
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @scan_named
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x?xf32>)
// CHECK: la.scan add %[[X]] along 2 inclusive : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
// CHECK: la.scan max %[[X]] along 1 exclusive : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
// CHECK: la.scan min %[[X]] along 0 inclusive reverse : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
// CHECK: la.scan logaddexp %[[X]] along 2 exclusive reverse : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
// CHECK: la.scan add %[[X]] along 2 inclusive window(64) : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
// CHECK: la.scan add %[[X]] along 2 exclusive reverse window(8) acc(f64) : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
func.func @scan_named(%x: tensor<?x?x?xf32>)
    -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %0 = la.scan add %x along 2 inclusive : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %1 = la.scan max %x along 1 exclusive : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %2 = la.scan min %x along 0 inclusive reverse : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %3 = la.scan logaddexp %x along 2 exclusive reverse : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %4 = la.scan add %x along 2 inclusive window(64) : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %5 = la.scan add %x along 2 exclusive reverse window(8) acc(f64) : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>
}

// -----

// CHECK-LABEL: func.func @scan_acc
// CHECK: la.scan add %{{.*}} along 1 inclusive acc(f16) : tensor<2x?xf16> -> tensor<2x?xf16>
// CHECK: la.scan add %{{.*}} along 1 inclusive acc(f32) : tensor<2x?xf16> -> tensor<2x?xf16>
func.func @scan_acc(%x: tensor<2x?xf16>) -> (tensor<2x?xf16>, tensor<2x?xf16>) {
  %0 = la.scan add %x along 1 inclusive acc(f16) : tensor<2x?xf16> -> tensor<2x?xf16>
  %1 = la.scan add %x along 1 inclusive acc(f32) : tensor<2x?xf16> -> tensor<2x?xf16>
  return %0, %1 : tensor<2x?xf16>, tensor<2x?xf16>
}

// -----

// CHECK-LABEL: func.func @scan_decay
// CHECK-SAME: (%[[KV:.*]]: tensor<?x?x?x?x?xf32>, %[[G:.*]]: tensor<?x?x?xf32>, %[[GK:.*]]: tensor<?x?x?x?xf32>, %[[H0:.*]]: tensor<?x?x?x?xf32>)
// CHECK: la.scan decay %[[KV]], %[[G]] along 2 inclusive : tensor<?x?x?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?x?x?xf32>
// CHECK: la.scan decay %[[KV]], %[[GK]] init(%[[H0]] : tensor<?x?x?x?xf32>) along 2 inclusive acc(f32) : tensor<?x?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?x?xf32>
// CHECK: la.scan decay %[[KV]], %[[G]] init(%[[H0]] : tensor<?x?x?x?xf32>) along 2 exclusive reverse : tensor<?x?x?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?x?x?xf32>
func.func @scan_decay(%kv: tensor<?x?x?x?x?xf32>, %g: tensor<?x?x?xf32>, %gk: tensor<?x?x?x?xf32>, %h0: tensor<?x?x?x?xf32>)
    -> (tensor<?x?x?x?x?xf32>, tensor<?x?x?x?x?xf32>, tensor<?x?x?x?x?xf32>) {
  %0 = la.scan decay %kv, %g along 2 inclusive : tensor<?x?x?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?x?x?xf32>
  %1 = la.scan decay %kv, %gk init(%h0 : tensor<?x?x?x?xf32>) along 2 inclusive acc(f32)
      : tensor<?x?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?x?xf32>
  %2 = la.scan decay %kv, %g init(%h0 : tensor<?x?x?x?xf32>) along 2 exclusive reverse
      : tensor<?x?x?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?x?x?xf32>
  return %0, %1, %2 : tensor<?x?x?x?x?xf32>, tensor<?x?x?x?x?xf32>, tensor<?x?x?x?x?xf32>
}

// -----

// CHECK-LABEL: func.func @scan_online_softmax
// CHECK-SAME: (%[[K:.*]]: tensor<?x?x?xf32>, %[[V:.*]]: tensor<?x?x?xf32>)
// CHECK: la.scan online_softmax %[[K]], %[[V]] along 2 inclusive : tensor<?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>
// CHECK: la.scan online_softmax %[[K]], %[[V]] along 1 inclusive reverse acc(f64) : tensor<?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>
func.func @scan_online_softmax(%k: tensor<?x?x?xf32>, %v: tensor<?x?x?xf32>) -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %0 = la.scan online_softmax %k, %v along 2 inclusive : tensor<?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %1 = la.scan online_softmax %k, %v along 1 inclusive reverse acc(f64) : tensor<?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  return %0, %1 : tensor<?x?x?xf32>, tensor<?x?x?xf32>
}

// -----

// The online-softmax triple (value, running max, normaliser) as results and as the state to start from.
// CHECK-LABEL: func.func @scan_online_softmax_states
// CHECK: la.scan online_softmax %{{.*}}, %{{.*}} init(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) along 1 inclusive : tensor<2x5x8xf32>, tensor<2x5x8xf32> -> tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>
func.func @scan_online_softmax_states(%k: tensor<2x5x8xf32>, %v: tensor<2x5x8xf32>, %y: tensor<2x8xf32>, %m: tensor<2x8xf32>, %z: tensor<2x8xf32>) -> tensor<2x5x8xf32> {
  %0:3 = la.scan online_softmax %k, %v init(%y, %m, %z : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) along 1 inclusive : tensor<2x5x8xf32>, tensor<2x5x8xf32> -> tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<2x5x8xf32>
  return %0#1 : tensor<2x5x8xf32>
}

// -----

// CHECK-LABEL: func.func @scan_region
// CHECK-SAME: (%[[A:.*]]: tensor<?x16xf32>, %[[B:.*]]: tensor<?x16xf32>, %[[A0:.*]]: tensor<16xf32>, %[[B0:.*]]: tensor<16xf32>)
// CHECK: %{{.*}}:2 = la.scan %[[A]], %[[B]] init(%[[A0]], %[[B0]] : tensor<16xf32>, tensor<16xf32>) along 0 inclusive : tensor<?x16xf32>, tensor<?x16xf32> -> tensor<?x16xf32>, tensor<?x16xf32> {
// CHECK-NEXT: ^bb0(%[[A1:.*]]: f32, %[[B1:.*]]: f32, %[[A2:.*]]: f32, %[[B2:.*]]: f32):
// CHECK-NEXT: %[[AA:.*]] = arith.mulf %[[A1]], %[[A2]] : f32
// CHECK-NEXT: %[[AB:.*]] = arith.mulf %[[A2]], %[[B1]] : f32
// CHECK-NEXT: %[[BB:.*]] = arith.addf %[[AB]], %[[B2]] : f32
// CHECK-NEXT: la.yield %[[AA]], %[[BB]] : f32, f32
// CHECK-NEXT: }
func.func @scan_region(%a: tensor<?x16xf32>, %b: tensor<?x16xf32>, %a0: tensor<16xf32>, %b0: tensor<16xf32>)
    -> (tensor<?x16xf32>, tensor<?x16xf32>) {
  %0:2 = la.scan %a, %b init(%a0, %b0 : tensor<16xf32>, tensor<16xf32>) along 0 inclusive
      : tensor<?x16xf32>, tensor<?x16xf32> -> tensor<?x16xf32>, tensor<?x16xf32> {
  ^bb0(%a1: f32, %b1: f32, %a2: f32, %b2: f32):
    %aa = arith.mulf %a1, %a2 : f32
    %ab = arith.mulf %a2, %b1 : f32
    %bb = arith.addf %ab, %b2 : f32
    la.yield %aa, %bb : f32, f32
  }
  return %0#0, %0#1 : tensor<?x16xf32>, tensor<?x16xf32>
}

//===----------------------------------------------------------------------===//
// la.normalize
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @normalize
// CHECK-SAME: (%[[NUM:.*]]: tensor<?x?x?x?xf32>, %[[DEN:.*]]: tensor<?x?x?xf32>)
// CHECK: la.normalize sum %[[NUM]] along 3 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
// CHECK: la.normalize sum %[[NUM]] along 2 eps(0.0) acc(f64) : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
// CHECK: la.normalize sum %[[NUM]] by %[[DEN]] along 3 eps(1.0e-06) : tensor<?x?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?x?xf32>
// CHECK: la.normalize sum %[[NUM]] by %[[DEN]] along 3 : tensor<?x?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?x?xf32>
// CHECK: la.normalize softmax %[[NUM]] along 2 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
// CHECK: la.normalize softmax %[[NUM]] along 0 acc(f32) : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
func.func @normalize(%num: tensor<?x?x?x?xf32>, %den: tensor<?x?x?xf32>)
    -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) {
  %0 = la.normalize sum %num along 3 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %1 = la.normalize sum %num along 2 eps(0.0) acc(f64) : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %2 = la.normalize sum %num by %den along 3 eps(1.0e-6) : tensor<?x?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?x?xf32>
  %3 = la.normalize sum %num by %den along 3 : tensor<?x?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?x?xf32>
  %4 = la.normalize softmax %num along 2 : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %5 = la.normalize softmax %num along 0 acc(f32) : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
}

//===----------------------------------------------------------------------===//
// la.contract
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @contract_plain
// CHECK-SAME: (%[[K:.*]]: tensor<?x?x?x?xf32>, %[[V:.*]]: tensor<?x?x?x?xf32>, %[[Q:.*]]: tensor<?x?x?x?xf32>)
// CHECK: %[[KV:.*]] = la.contract "bhmd,bhme->bhde" %[[K]], %[[V]] : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
// CHECK: la.contract "bhnd,bhde->bhne" %[[Q]], %[[KV]] acc(f64) : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
// CHECK: la.contract "bhnd,bhmd,bhme->bhne" %[[Q]], %[[K]], %[[V]] : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
// CHECK: la.contract "bhnd,bhnd->" %[[Q]], %[[K]] : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<f32>
func.func @contract_plain(%k: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x?xf32>, %q: tensor<?x?x?x?xf32>)
    -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<f32>) {
  %kv = la.contract "bhmd,bhme->bhde" %k, %v : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %0 = la.contract "bhnd,bhde->bhne" %q, %kv acc(f64) : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %1 = la.contract "bhnd,bhmd,bhme->bhne" %q, %k, %v
      : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %2 = la.contract "bhnd,bhnd->" %q, %k : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<f32>
  return %0, %1, %2 : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<f32>
}

// -----

// A shifted mask: a window of a larger band whose rows start 15 positions after its columns.
// CHECK-LABEL: func.func @contract_mask_offsets
// CHECK: la.contract "nd,md->nm" %{{.*}}, %{{.*}} mask band(n, m, 16, offset = 15)
// CHECK: la.contract "nd,md->nm" %{{.*}}, %{{.*}} mask tril(n, m, offset = -3)
// CHECK: la.contract "nd,md->nm" %{{.*}}, %{{.*}} mask causal_band(n, m, 4) :
func.func @contract_mask_offsets(%a: tensor<4x8xf32>, %b: tensor<6x8xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x4xf32>) {
  %0 = la.contract "nd,md->nm" %a, %b mask band(n, m, 16, offset = 15) : tensor<4x8xf32>, tensor<6x8xf32> -> tensor<4x6xf32>
  %1 = la.contract "nd,md->nm" %a, %b mask tril(n, m, offset = -3) : tensor<4x8xf32>, tensor<6x8xf32> -> tensor<4x6xf32>
  // A zero offset is the default and is not printed.
  %2 = la.contract "nd,md->nm" %a, %a mask causal_band(n, m, 4, offset = 0) : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x4xf32>
  return %0, %1, %2 : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x4xf32>
}

// -----

// CHECK-LABEL: func.func @contract_masks
// CHECK: la.contract "bhnd,bhmd,bhme->bhne" %{{.*}}, %{{.*}}, %{{.*}} mask tril(n, m) : tensor<2x4x128x64xf32>, tensor<2x4x128x64xf32>, tensor<2x4x128x32xf32> -> tensor<2x4x128x32xf32>
// CHECK: la.contract "bhnd,bhmd,bhme->bhne" %{{.*}}, %{{.*}}, %{{.*}} mask band(n, m, 16) : tensor<2x4x128x64xf32>, tensor<2x4x128x64xf32>, tensor<2x4x128x32xf32> -> tensor<2x4x128x32xf32>
// CHECK: la.contract "bhnd,bhmd,bhme->bhne" %{{.*}}, %{{.*}}, %{{.*}} mask causal_band(n, m, 32) : tensor<2x4x128x64xf32>, tensor<2x4x128x64xf32>, tensor<2x4x128x32xf32> -> tensor<2x4x128x32xf32>
// CHECK: la.contract "bhnd,bhmd,bhme->bhne" %{{.*}}, %{{.*}}, %{{.*}} mask block(n, m, 64) : tensor<2x4x128x64xf32>, tensor<2x4x128x64xf32>, tensor<2x4x128x32xf32> -> tensor<2x4x128x32xf32>
// CHECK: la.contract "bhnd,bhmd,bhme->bhne" %{{.*}}, %{{.*}}, %{{.*}} mask causal_block(n, m, 256) acc(f64) : tensor<2x4x128x64xf32>, tensor<2x4x128x64xf32>, tensor<2x4x128x32xf32> -> tensor<2x4x128x32xf32>
// CHECK: la.contract "bhnd,bhmd,bhme->bhne" %{{.*}}, %{{.*}}, %{{.*}} mask prior_block(n, m, 64) : tensor<2x4x128x64xf32>, tensor<2x4x128x64xf32>, tensor<2x4x128x32xf32> -> tensor<2x4x128x32xf32>
// CHECK: la.contract "bhnd,bhmd->bhnm" %{{.*}}, %{{.*}} mask tril(n, m) : tensor<2x4x128x64xf32>, tensor<2x4x128x64xf32> -> tensor<2x4x128x128xf32>
func.func @contract_masks(%q: tensor<2x4x128x64xf32>, %k: tensor<2x4x128x64xf32>, %v: tensor<2x4x128x32xf32>)
    -> (tensor<2x4x128x32xf32>, tensor<2x4x128x32xf32>, tensor<2x4x128x32xf32>, tensor<2x4x128x32xf32>,
        tensor<2x4x128x32xf32>, tensor<2x4x128x32xf32>, tensor<2x4x128x128xf32>) {
  %0 = la.contract "bhnd,bhmd,bhme->bhne" %q, %k, %v mask tril(n, m)
      : tensor<2x4x128x64xf32>, tensor<2x4x128x64xf32>, tensor<2x4x128x32xf32> -> tensor<2x4x128x32xf32>
  %1 = la.contract "bhnd,bhmd,bhme->bhne" %q, %k, %v mask band(n, m, 16)
      : tensor<2x4x128x64xf32>, tensor<2x4x128x64xf32>, tensor<2x4x128x32xf32> -> tensor<2x4x128x32xf32>
  %2 = la.contract "bhnd,bhmd,bhme->bhne" %q, %k, %v mask causal_band(n, m, 32)
      : tensor<2x4x128x64xf32>, tensor<2x4x128x64xf32>, tensor<2x4x128x32xf32> -> tensor<2x4x128x32xf32>
  %3 = la.contract "bhnd,bhmd,bhme->bhne" %q, %k, %v mask block(n, m, 64)
      : tensor<2x4x128x64xf32>, tensor<2x4x128x64xf32>, tensor<2x4x128x32xf32> -> tensor<2x4x128x32xf32>
  %4 = la.contract "bhnd,bhmd,bhme->bhne" %q, %k, %v mask causal_block(n, m, 256) acc(f64)
      : tensor<2x4x128x64xf32>, tensor<2x4x128x64xf32>, tensor<2x4x128x32xf32> -> tensor<2x4x128x32xf32>
  %5 = la.contract "bhnd,bhmd,bhme->bhne" %q, %k, %v mask prior_block(n, m, 64)
      : tensor<2x4x128x64xf32>, tensor<2x4x128x64xf32>, tensor<2x4x128x32xf32> -> tensor<2x4x128x32xf32>
  %6 = la.contract "bhnd,bhmd->bhnm" %q, %k mask tril(n, m)
      : tensor<2x4x128x64xf32>, tensor<2x4x128x64xf32> -> tensor<2x4x128x128xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2x4x128x32xf32>, tensor<2x4x128x32xf32>, tensor<2x4x128x32xf32>,
      tensor<2x4x128x32xf32>, tensor<2x4x128x32xf32>, tensor<2x4x128x32xf32>, tensor<2x4x128x128xf32>
}

// -----

// CHECK-LABEL: func.func @contract_decay
// CHECK-SAME: (%[[Q:.*]]: tensor<?x?x?x?xf32>, %[[K:.*]]: tensor<?x?x?x?xf32>, %[[V:.*]]: tensor<?x?x?x?xf32>, %[[G:.*]]: tensor<?x?x?xf32>)
// CHECK: la.contract "bhnd,bhmd,bhme->bhne" %[[Q]], %[[K]], %[[V]] mask decay(n, m) gate(%[[G]] : tensor<?x?x?xf32>) : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
// CHECK: la.contract "bhnd,bhmd->bhnm" %[[Q]], %[[K]] mask decay(n, m) gate(%[[G]] : tensor<?x?x?xf32>) acc(f32) : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
func.func @contract_decay(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x?xf32>, %g: tensor<?x?x?xf32>)
    -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) {
  %0 = la.contract "bhnd,bhmd,bhme->bhne" %q, %k, %v mask decay(n, m) gate(%g : tensor<?x?x?xf32>)
      : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %1 = la.contract "bhnd,bhmd->bhnm" %q, %k mask decay(n, m) gate(%g : tensor<?x?x?xf32>) acc(f32)
      : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  return %0, %1 : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
}

//===----------------------------------------------------------------------===//
// la.gate
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @gate
// CHECK-SAME: (%[[U:.*]]: tensor<?x?x?xf32>, %[[A:.*]]: tensor<?x?x?xf32>, %[[B:.*]]: tensor<?x?x?xf32>, %[[P:.*]]: tensor<?x?xf32>)
// CHECK: la.gate identity %[[U]], %[[A]], %[[B]] : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>
// CHECK: la.gate sigmoid %[[U]], %[[A]] : tensor<?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>
// CHECK: la.gate silu %[[P]], %[[A]], %[[B]], %[[A]] : tensor<?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>
func.func @gate(%u: tensor<?x?x?xf32>, %a: tensor<?x?x?xf32>, %b: tensor<?x?x?xf32>, %p: tensor<?x?xf32>)
    -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %0 = la.gate identity %u, %a, %b : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %1 = la.gate sigmoid %u, %a : tensor<?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %2 = la.gate silu %p, %a, %b, %a
      : tensor<?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  return %0, %1, %2 : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>
}

//===----------------------------------------------------------------------===//
// la.size
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @size
// CHECK-SAME: (%[[K:.*]]: tensor<?x?x?x?xf32>, %[[H:.*]]: tensor<2x?xf16>)
// CHECK: la.size %[[K]] along 2 : tensor<?x?x?x?xf32> -> tensor<f32>
// CHECK: la.size %[[H]] along 1 : tensor<2x?xf16> -> tensor<f16>
// CHECK: la.size %[[H]] along 0 : tensor<2x?xf16> -> tensor<f64>
func.func @size(%k: tensor<?x?x?x?xf32>, %h: tensor<2x?xf16>) -> (tensor<f32>, tensor<f16>, tensor<f64>) {
  %0 = la.size %k along 2 : tensor<?x?x?x?xf32> -> tensor<f32>
  %1 = la.size %h along 1 : tensor<2x?xf16> -> tensor<f16>
  %2 = la.size %h along 0 : tensor<2x?xf16> -> tensor<f64>
  return %0, %1, %2 : tensor<f32>, tensor<f16>, tensor<f64>
}

// -----

// The mask is an attribute too, usable on its own.

// CHECK-LABEL: func.func @mask_attr
// CHECK-SAME: mask = #la.mask<causal_band(n, m, 4)>
// CHECK-SAME: other = #la.mask<decay(t, s)>
func.func @mask_attr() attributes {mask = #la.mask<causal_band(n, m, 4)>, other = #la.mask<decay(t, s)>} {
  return
}

// -----

// CHECK-LABEL: func.func @window
// CHECK: la.window %{{.*}} along [1, 2] size [3, 5] : tensor<2x8x9x4xf32> -> tensor<2x8x3x9x5x4xf32>
// CHECK: la.window %{{.*}} along [1] size [7] : tensor<?x?x4xf32> -> tensor<?x?x7x4xf32>
func.func @window(%x: tensor<2x8x9x4xf32>, %y: tensor<?x?x4xf32>) -> (tensor<2x8x3x9x5x4xf32>, tensor<?x?x7x4xf32>) {
  %0 = la.window %x along [1, 2] size [3, 5] : tensor<2x8x9x4xf32> -> tensor<2x8x3x9x5x4xf32>
  %1 = la.window %y along [1] size [7] : tensor<?x?x4xf32> -> tensor<?x?x7x4xf32>
  return %0, %1 : tensor<2x8x3x9x5x4xf32>, tensor<?x?x7x4xf32>
}
