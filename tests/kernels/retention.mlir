// Every entry of kernels/retention.mlir parses, verifies and round-trips through the custom and generic forms.
// RUN: la-opt %kernels/retention.mlir > %t.custom
// RUN: la-opt %t.custom > %t.again && diff %t.custom %t.again
// RUN: la-opt %kernels/retention.mlir -mlir-print-op-generic | la-opt > %t.generic && diff %t.custom %t.generic
// RUN: FileCheck %s < %t.custom
// RUN: la-opt %kernels/retention.mlir -inline -canonicalize -cse | FileCheck %s --check-prefix=SIMPLIFIED

// CHECK-LABEL: func.func private @retention_gates(
// CHECK: la.index 1 : f32
// CHECK-LABEL: func.func @retention(
// CHECK-LABEL: func.func @simple_gla(
// CHECK: la.scan decay
// CHECK-LABEL: func.func @gla(
// CHECK: la.scan decay
// The state-passing forms are declarations the compiler derives (la-derive-state-variants).
// CHECK: func.func private @retention_with_state({{.*}}) -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) attributes {la.resume_of = @retention}
// CHECK: func.func private @simple_gla_with_state({{.*}} attributes {la.resume_of = @simple_gla}
// CHECK: func.func private @gla_with_state({{.*}} attributes {la.resume_of = @gla}

// RUN: la-opt %kernels/retention.mlir -la-derive-state-variants | FileCheck %s --check-prefix=DERIVED
// DERIVED-LABEL: func.func @retention_with_state(
// DERIVED-NOT: call
// DERIVED: la.scan decay {{.*}} init(
// DERIVED: tensor.extract_slice
// DERIVED: return
// DERIVED-LABEL: func.func @simple_gla_with_state(
// DERIVED: la.scan decay {{.*}} init(
// DERIVED-LABEL: func.func @gla_with_state(
// DERIVED: la.scan decay {{.*}} init(

// SIMPLIFIED-LABEL: func.func @retention(
// SIMPLIFIED-NOT: call
// SIMPLIFIED: return
// SIMPLIFIED-LABEL: func.func @simple_gla(
// SIMPLIFIED-NOT: call
// SIMPLIFIED: return
// SIMPLIFIED-LABEL: func.func @gla(
// SIMPLIFIED-NOT: call
// SIMPLIFIED: return
