// Every entry of kernels/linear_attention.mlir parses, verifies and round-trips through the custom and generic forms.
// RUN: la-opt %kernels/linear_attention.mlir > %t.custom
// RUN: la-opt %t.custom > %t.again && diff %t.custom %t.again
// RUN: la-opt %kernels/linear_attention.mlir -mlir-print-op-generic | la-opt > %t.generic && diff %t.custom %t.generic
// RUN: FileCheck %s < %t.custom
// RUN: la-opt %kernels/linear_attention.mlir -inline -canonicalize -cse | FileCheck %s --check-prefix=SIMPLIFIED

// CHECK-LABEL: func.func @linear_attention(
// CHECK: la.normalize sum
// CHECK-LABEL: func.func @linear_attention_causal(
// CHECK: la.normalize sum

// SIMPLIFIED-LABEL: func.func @linear_attention(
// SIMPLIFIED-NOT: call
// SIMPLIFIED: return
// SIMPLIFIED-LABEL: func.func @linear_attention_causal(
// SIMPLIFIED-NOT: call
// SIMPLIFIED: return
