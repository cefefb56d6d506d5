// Every entry of kernels/aft.mlir parses, verifies and round-trips through the custom and generic forms.
// RUN: la-opt %kernels/aft.mlir > %t.custom
// RUN: la-opt %t.custom > %t.again && diff %t.custom %t.again
// RUN: la-opt %kernels/aft.mlir -mlir-print-op-generic | la-opt > %t.generic && diff %t.custom %t.generic
// RUN: FileCheck %s < %t.custom
// RUN: la-opt %kernels/aft.mlir -inline -canonicalize -cse | FileCheck %s --check-prefix=SIMPLIFIED

// CHECK-LABEL: func.func @aft_causal(
// CHECK: la.scan online_softmax
// CHECK: la.gate sigmoid
// CHECK-LABEL: func.func @aft_simple(
// CHECK: la.normalize softmax
// CHECK-LABEL: func.func @aft_full(
// CHECK: la.gate sigmoid
// CHECK-LABEL: func.func @aft_full_causal(
// CHECK: la.gate sigmoid
// CHECK-LABEL: func.func @aft_local(
// CHECK: mask band(t, s, 64)
// CHECK: la.gate sigmoid

// SIMPLIFIED-LABEL: func.func @aft_causal(
// SIMPLIFIED-NOT: call
// SIMPLIFIED: return
// SIMPLIFIED-LABEL: func.func @aft_simple(
// SIMPLIFIED-NOT: call
// SIMPLIFIED: return
// SIMPLIFIED-LABEL: func.func @aft_full(
// SIMPLIFIED-NOT: call
// SIMPLIFIED: return
// SIMPLIFIED-LABEL: func.func @aft_full_causal(
// SIMPLIFIED-NOT: call
// SIMPLIFIED: return
// SIMPLIFIED-LABEL: func.func @aft_local(
// SIMPLIFIED-NOT: call
// SIMPLIFIED: return
