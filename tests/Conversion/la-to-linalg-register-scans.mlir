// RUN: la-opt %s -split-input-file -la-to-linalg | FileCheck %s
// RUN: la-opt %s -split-input-file -la-to-linalg="register-state-elements=0" | FileCheck %s --check-prefix=TENSOR
// RUN: la-opt %s -split-input-file -la-to-linalg="register-state-elements=3" | FileCheck %s --check-prefix=SMALL
// RUN: not la-opt %s -la-to-linalg="register-state-elements=-1" 2>&1 | FileCheck %s --check-prefix=BAD

// A sliced kernel's running sum ([1, D] here) is carried as a vector iter_arg: each step reads one input
// row, adds, and writes one result row in place through a slice of the result; f16 data accumulates in f32.
// CHECK-LABEL: func.func @row_state_with_init
// CHECK:       %[[INIT:.*]] = vector.transfer_read %arg1{{.*}} : tensor<1x4xf16>, vector<4xf16>
// CHECK:       %[[WIDE:.*]] = arith.extf %[[INIT]] : vector<4xf16> to vector<4xf32>
// CHECK:       scf.for %[[T:.*]] = {{.*}} iter_args(%[[S:.*]] = %[[WIDE]], %[[R:.*]] = %{{.*}}) -> (vector<4xf32>, tensor<1x6x4xf16>)
// CHECK:         %[[IN:.*]] = tensor.extract_slice %arg0[0, %[[T]], 0] [1, 1, 4]
// CHECK:         %[[X:.*]] = vector.transfer_read %[[IN]]
// CHECK:         %[[XW:.*]] = arith.extf %[[X]]
// CHECK:         %[[SUM:.*]] = arith.addf %[[S]], %[[XW]] fastmath<reassoc,contract> : vector<4xf32>
// CHECK:         %[[ROW:.*]] = tensor.extract_slice %[[R]][0, %[[T]], 0] [1, 1, 4]
// CHECK:         %[[NARROW:.*]] = arith.truncf %[[SUM]] : vector<4xf32> to vector<4xf16>
// CHECK:         %[[W:.*]] = vector.transfer_write %[[NARROW]], %[[ROW]]
// CHECK:         %[[NEXT:.*]] = tensor.insert_slice %[[W]] into %[[R]][0, %[[T]], 0] [1, 1, 4]
// CHECK:         scf.yield %[[SUM]], %[[NEXT]] : vector<4xf32>, tensor<1x6x4xf16>
// CHECK-NOT:   linalg.generic
// TENSOR-LABEL: func.func @row_state_with_init
// TENSOR:       scf.for {{.*}} -> (tensor<1x4xf32>, tensor<1x6x4xf16>)
// TENSOR:         linalg.generic
// TENSOR-NOT:   vector.
// SMALL-LABEL: func.func @row_state_with_init
// SMALL:       scf.for {{.*}} -> (tensor<1x4xf32>, tensor<1x6x4xf16>)
// BAD: register-state-elements must be at least 0
func.func @row_state_with_init(%x: tensor<1x6x4xf16>, %init: tensor<1x4xf16>) -> tensor<1x6x4xf16> {
  %s = la.scan add %x init(%init : tensor<1x4xf16>) along 1 inclusive : tensor<1x6x4xf16> -> tensor<1x6x4xf16>
  return %s : tensor<1x6x4xf16>
}

// -----

// Reversed and exclusive: the step at i reads position N-1-i and writes the state from before the combine;
// the state starts at the combiner's identity (-inf for max).
// CHECK-LABEL: func.func @reverse_exclusive_max
// CHECK:       %[[NEGINF:.*]] = arith.constant dense<0xFF800000> : vector<4xf32>
// CHECK:       scf.for %[[T:.*]] = {{.*}} iter_args(%[[S:.*]] = %[[NEGINF]], %[[R:.*]] = %{{.*}}) -> (vector<4xf32>, tensor<1x1x6x4xf32>)
// CHECK:         %[[LAST:.*]] = arith.subi %c6, %c1
// CHECK:         %[[P:.*]] = arith.subi %[[LAST]], %[[T]]
// CHECK:         tensor.extract_slice %arg0[0, 0, %[[P]], 0]
// CHECK:         %[[M:.*]] = arith.maximumf %[[S]], %{{.*}} : vector<4xf32>
// CHECK:         vector.transfer_write %[[S]]
// CHECK:         scf.yield %[[M]]
func.func @reverse_exclusive_max(%x: tensor<1x1x6x4xf32>) -> tensor<1x1x6x4xf32> {
  %s = la.scan max %x along 2 exclusive reverse : tensor<1x1x6x4xf32> -> tensor<1x1x6x4xf32>
  return %s : tensor<1x1x6x4xf32>
}

// -----

// A scalar running sum per slice ([1, 1] state) is a one-element vector.
// CHECK-LABEL: func.func @scalar_state
// CHECK:       scf.for {{.*}} -> (vector<1xf32>, tensor<1x1x9xf32>)
func.func @scalar_state(%x: tensor<1x1x9xf32>) -> tensor<1x1x9xf32> {
  %s = la.scan add %x along 2 inclusive : tensor<1x1x9xf32> -> tensor<1x1x9xf32>
  return %s : tensor<1x1x9xf32>
}

// -----

// The register form needs one non-unit state dimension, the innermost: a [2, 4] state keeps the tensor form.
// CHECK-LABEL: func.func @two_dimensional_state
// CHECK:       scf.for {{.*}} -> (tensor<2x4xf32>, tensor<2x6x4xf32>)
// CHECK:         linalg.generic
func.func @two_dimensional_state(%x: tensor<2x6x4xf32>) -> tensor<2x6x4xf32> {
  %s = la.scan add %x along 1 inclusive : tensor<2x6x4xf32> -> tensor<2x6x4xf32>
  return %s : tensor<2x6x4xf32>
}

// -----

// A decay gate is read with a smaller shape than the state (it broadcasts over it): tensor form.
// CHECK-LABEL: func.func @decay_gate_broadcast
// CHECK:       scf.for {{.*}} -> (tensor<1x4xf32>, tensor<1x6x4xf32>)
func.func @decay_gate_broadcast(%x: tensor<1x6x4xf32>, %g: tensor<1x6xf32>) -> tensor<1x6x4xf32> {
  %s = la.scan decay %x, %g along 1 inclusive : tensor<1x6x4xf32>, tensor<1x6xf32> -> tensor<1x6x4xf32>
  return %s : tensor<1x6x4xf32>
}
