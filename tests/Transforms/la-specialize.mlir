// RUN: la-opt %s -split-input-file -verify-diagnostics \
// RUN:   '-la-specialize=entry=kernel arg-types=tensor<2x3x37x48xf32>,tensor<2x3x37x40xf32>' | FileCheck %s

// Argument types become static, every la result type is inferred from its operands, and the other
// functions are dropped.
// CHECK-NOT: func.func @other
// CHECK-LABEL: func.func @kernel
// CHECK-SAME: (%[[K:.*]]: tensor<2x3x37x48xf32>, %[[V:.*]]: tensor<2x3x37x40xf32>) -> tensor<2x3x48x40xf32>
// CHECK: la.map sigmoid %[[K]] : tensor<2x3x37x48xf32> -> tensor<2x3x37x48xf32>
// CHECK: la.contract "bhmd,bhme->bhde" {{.*}} -> tensor<2x3x48x40xf32>
// CHECK: la.reduce add {{.*}} along [2] : tensor<2x3x37x48xf32> -> tensor<2x3x48xf32>
// CHECK: la.gate identity {{.*}} -> tensor<2x3x48x40xf32>
func.func @kernel(%k: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %ks = la.map sigmoid %k : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %s = la.contract "bhmd,bhme->bhde" %ks, %v : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %z = la.reduce add %ks along [2] : tensor<?x?x?x?xf32> -> tensor<?x?x?xf32>
  %o = la.gate identity %z, %s : tensor<?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  return %o : tensor<?x?x?x?xf32>
}
func.func @other(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}

// -----

// A static dimension of the signature must match.
// expected-error @below {{argument #1 dimension 3 has size 40 but 'kernel' declares 64}}
func.func @kernel(%k: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  return %v : tensor<?x?x?x64xf32>
}

// -----

// expected-error @below {{argument #0 has rank 4 but 'kernel' declares rank 3}}
func.func @kernel(%k: tensor<?x?x?xf32>, %v: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  return %v : tensor<?x?x?x?xf32>
}

// -----

// Each op infers its result shape (InferShapedTypeOpInterface); a declared static dimension must agree,
// and the error names the op, the result and the dimension. Here e (v's last dimension) is 40, not 64.
func.func @kernel(%k: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  // expected-error @below {{'la.contract' op result #0 dimension 3 is declared 64 but its operands give 40}}
  %s = la.contract "bhmd,bhme->bhde" %k, %v : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x64xf32>
  %c = tensor.cast %s : tensor<?x?x?x64xf32> to tensor<?x?x?x?xf32>
  return %c : tensor<?x?x?x?xf32>
}

// -----

// The same for a map without subscripts, whose result has its inputs' shape: the sequence is 37 long.
func.func @kernel(%k: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  // expected-error @below {{'la.map' op result #0 dimension 2 is declared 16 but its operands give 37}}
  %e = la.map exp %k : tensor<?x?x?x?xf32> -> tensor<?x?x16x?xf32>
  %c = tensor.cast %e : tensor<?x?x16x?xf32> to tensor<?x?x?x?xf32>
  return %c : tensor<?x?x?x?xf32>
}

// -----

// A reduction drops its reduced dimension: [2, 3, 48] after summing over the sequence, not [2, 3, 37].
func.func @kernel(%k: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x?xf32>) -> tensor<?x?x?xf32> {
  // expected-error @below {{'la.reduce' op result #0 dimension 2 is declared 37 but its operands give 48}}
  %z = la.reduce add %k along [2] : tensor<?x?x?x?xf32> -> tensor<?x?x37xf32>
  %c = tensor.cast %z : tensor<?x?x37xf32> to tensor<?x?x?xf32>
  return %c : tensor<?x?x?xf32>
}
