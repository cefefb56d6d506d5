// Every entry of kernels/retention.mlir parses, verifies and round-trips through the custom and generic forms.
// RUN: la-opt %kernels/retention.mlir > %t.custom
// RUN: la-opt %t.custom > %t.again && diff %t.custom %t.again
// RUN: la-opt %kernels/retention.mlir -mlir-print-op-generic | la-opt > %t.generic && diff %t.custom %t.generic
// RUN: FileCheck %s < %t.custom
// RUN: la-opt %kernels/retention.mlir -inline -canonicalize -cse | FileCheck %s --check-prefix=SIMPLIFIED

// CHECK-LABEL: func.func private @final_state(
// CHECK: tensor.extract_slice
// CHECK-LABEL: func.func private @retention_gates(
// CHECK: la.index 1 : f32
// CHECK-LABEL: func.func @retention(
// CHECK-LABEL: func.func @simple_gla(
// CHECK: la.scan decay
// CHECK-LABEL: func.func @gla(
// CHECK: la.scan decay
// CHECK-LABEL: func.func @retention_with_state(
// CHECK-LABEL: func.func @simple_gla_with_state(
// CHECK: la.scan decay {{.*}} init(
// CHECK-LABEL: func.func @gla_with_state(
// CHECK: la.scan decay {{.*}} init(

// SIMPLIFIED-LABEL: func.func @retention(
// SIMPLIFIED-NOT: call
// SIMPLIFIED: return
// SIMPLIFIED-LABEL: func.func @simple_gla(
// SIMPLIFIED-NOT: call
// SIMPLIFIED: return
// SIMPLIFIED-LABEL: func.func @gla(
// SIMPLIFIED-NOT: call
// SIMPLIFIED: return
