// Every entry of kernels/flash.mlir parses, verifies and round-trips through the custom and generic forms.
// RUN: la-opt %kernels/flash.mlir > %t.custom
// RUN: la-opt %t.custom > %t.again && diff %t.custom %t.again
// RUN: la-opt %kernels/flash.mlir -mlir-print-op-generic | la-opt > %t.generic && diff %t.custom %t.generic
// RUN: FileCheck %s < %t.custom
// RUN: la-opt %kernels/flash.mlir -inline -canonicalize -cse | FileCheck %s --check-prefix=SIMPLIFIED

// CHECK-LABEL: func.func @gau(
// CHECK: la.gate identity
// CHECK-LABEL: func.func @flash(
// CHECK: la.gate identity
// CHECK-LABEL: func.func @flash_causal(
// CHECK: la.gate identity

// SIMPLIFIED-LABEL: func.func @gau(
// SIMPLIFIED-NOT: call
// SIMPLIFIED: return
// SIMPLIFIED-LABEL: func.func @flash(
// SIMPLIFIED-NOT: call
// SIMPLIFIED: return
// SIMPLIFIED-LABEL: func.func @flash_causal(
// SIMPLIFIED-NOT: call
// SIMPLIFIED: return
