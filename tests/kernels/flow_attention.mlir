// Every entry of kernels/flow_attention.mlir parses, verifies and round-trips through the custom and generic forms.
// RUN: la-opt %kernels/flow_attention.mlir > %t.custom
// RUN: la-opt %t.custom > %t.again && diff %t.custom %t.again
// RUN: la-opt %kernels/flow_attention.mlir -mlir-print-op-generic | la-opt > %t.generic && diff %t.custom %t.generic
// RUN: FileCheck %s < %t.custom
// RUN: la-opt %kernels/flow_attention.mlir -inline -canonicalize -cse | FileCheck %s --check-prefix=SIMPLIFIED

// CHECK-LABEL: func.func @flow_attention(
// CHECK: la.gate identity
// CHECK-LABEL: func.func @flow_attention_causal(
// CHECK: la.scan add
// CHECK: la.gate identity

// SIMPLIFIED-LABEL: func.func @flow_attention(
// SIMPLIFIED-NOT: call
// SIMPLIFIED: return
// SIMPLIFIED-LABEL: func.func @flow_attention_causal(
// SIMPLIFIED-NOT: call
// SIMPLIFIED: return
