// RUN: la-opt %s -split-input-file -la-chunk-scans="pair-tile=4" | FileCheck %s
// RUN: la-opt %s -split-input-file -la-chunk-scans | FileCheck %s --check-prefix=OFF

// GAU's attention, relu(q kᵀ)² v, over N = 10 positions in 4×4 tiles: two full row tiles in a loop and a tail
// of 2 rows, each summing two full column tiles in a loop and a tail of 2 columns. The scores are recomputed
// per tile from q's rows and k's columns; no [1, 10, 10] tensor is left.
// CHECK-LABEL: func.func @gau_scores
// CHECK-NOT: tensor<1x10x10xf32>
// CHECK: %[[ROWS:.*]] = scf.for %[[R:.*]] = %c0 to %c8 step %c4 iter_args(%[[OUT:.*]] = %{{.*}}) -> (tensor<1x10x2xf32>)
// CHECK:   %[[SUM:.*]] = scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<1x4x2xf32>)
// CHECK:     %[[Q:.*]] = tensor.extract_slice %arg0[0, %[[R]], 0] [1, 4, 3]
// CHECK:     %[[K:.*]] = tensor.extract_slice %arg1[0, %[[C]], 0] [1, 4, 3]
// CHECK:     %[[S:.*]] = la.contract "bns,bms->bnm" %[[Q]], %[[K]] {{.*}} -> tensor<1x4x4xf32>
// CHECK:     %[[A:.*]] = la.map relu2 %[[S]]
// CHECK:     %[[V:.*]] = tensor.extract_slice %arg2[0, %[[C]], 0] [1, 4, 2]
// CHECK:     %[[PART:.*]] = la.contract "bnm,bme->bne" %[[A]], %[[V]] {{.*}} -> tensor<1x4x2xf32>
// CHECK:     %[[NEXT:.*]] = la.map add %[[ACC]], %[[PART]]
// CHECK:     scf.yield %[[NEXT]]
// CHECK:   la.contract "bns,bms->bnm" {{.*}} -> tensor<1x4x2xf32>
// CHECK:   tensor.insert_slice {{.*}} into %[[OUT]][0, %[[R]], 0] [1, 4, 2]
// CHECK: la.contract "bns,bms->bnm" {{.*}} -> tensor<1x2x2xf32>
// CHECK: tensor.insert_slice {{.*}} into %[[ROWS]][0, %c8, 0] [1, 2, 2]
// OFF-LABEL: func.func @gau_scores
// OFF-NOT: scf.for
// OFF: la.contract "bns,bms->bnm" {{.*}} -> tensor<1x10x10xf32>
func.func @gau_scores(%q: tensor<1x10x3xf32>, %k: tensor<1x10x3xf32>, %v: tensor<1x10x2xf32>) -> tensor<1x10x2xf32> {
  %s = la.contract "bns,bms->bnm" %q, %k : tensor<1x10x3xf32>, tensor<1x10x3xf32> -> tensor<1x10x10xf32>
  %a = la.map relu2 %s : tensor<1x10x10xf32> -> tensor<1x10x10xf32>
  %o = la.contract "bnm,bme->bne" %a, %v : tensor<1x10x10xf32>, tensor<1x10x2xf32> -> tensor<1x10x2xf32>
  return %o : tensor<1x10x2xf32>
}

// -----

// A pairs tensor that is an argument is read as it is: nothing to recompute, so no tiles.
// CHECK-LABEL: func.func @pairs_argument
// CHECK-NOT: scf.for
// CHECK: la.contract "bnm,bme->bne" %arg0, %arg1
func.func @pairs_argument(%a: tensor<1x10x10xf32>, %v: tensor<1x10x2xf32>) -> tensor<1x10x2xf32> {
  %o = la.contract "bnm,bme->bne" %a, %v : tensor<1x10x10xf32>, tensor<1x10x2xf32> -> tensor<1x10x2xf32>
  return %o : tensor<1x10x2xf32>
}

// -----

// Pairs that fit one tile stay whole.
// CHECK-LABEL: func.func @one_tile
// CHECK-NOT: scf.for
func.func @one_tile(%q: tensor<1x4x3xf32>, %k: tensor<1x4x3xf32>, %v: tensor<1x4x2xf32>) -> tensor<1x4x2xf32> {
  %s = la.contract "bns,bms->bnm" %q, %k : tensor<1x4x3xf32>, tensor<1x4x3xf32> -> tensor<1x4x4xf32>
  %a = la.map relu2 %s : tensor<1x4x4xf32> -> tensor<1x4x4xf32>
  %o = la.contract "bnm,bme->bne" %a, %v : tensor<1x4x4xf32>, tensor<1x4x2xf32> -> tensor<1x4x2xf32>
  return %o : tensor<1x4x2xf32>
}

// -----

// A state's φ(K)ᵀV over 10 positions: the [D, M] operand is no larger than v, so recomputing it in tiles
// would save nothing; it stays one contraction.
// CHECK-LABEL: func.func @state_update
// CHECK-NOT: scf.for
// CHECK: la.contract "bmd,bme->bde"
func.func @state_update(%k: tensor<1x10x2xf32>, %v: tensor<1x10x2xf32>) -> tensor<1x2x2xf32> {
  %phi = la.map relu %k : tensor<1x10x2xf32> -> tensor<1x10x2xf32>
  %s = la.contract "bmd,bme->bde" %phi, %v : tensor<1x10x2xf32>, tensor<1x10x2xf32> -> tensor<1x2x2xf32>
  return %s : tensor<1x2x2xf32>
}

// -----

// A normaliser's φ(Q)·Σφ(K) over 10 positions reduces a [N, D] operand, not pairs of positions: it stays whole.
// CHECK-LABEL: func.func @normaliser
// CHECK-NOT: scf.for
// CHECK: la.contract "bnd,bd->bn"
func.func @normaliser(%q: tensor<1x10x6xf32>, %ksum: tensor<1x6xf32>) -> tensor<1x10xf32> {
  %phi = la.map relu %q : tensor<1x10x6xf32> -> tensor<1x10x6xf32>
  %d = la.contract "bnd,bd->bn" %phi, %ksum : tensor<1x10x6xf32>, tensor<1x6xf32> -> tensor<1x10xf32>
  return %d : tensor<1x10xf32>
}

// -----

// Causal scores (FLASH's diagonal block): the tril-masked consumer runs in row blocks of 4; the blocks before
// the diagonal recompute the scores unmasked, the diagonal block recomputes them under tril.
// CHECK-LABEL: func.func @causal_scores
// CHECK-NOT: tensor<1x8x8xf32>
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK:   scf.for %[[C:.*]] = %{{.*}} to %[[R]] step %{{.*}} iter_args
// CHECK:     %[[S:.*]] = la.contract "bns,bms->bnm" %{{.*}}, %{{.*}} : tensor<1x4x3xf32>, tensor<1x4x3xf32> -> tensor<1x4x4xf32>
// CHECK:     %[[A:.*]] = la.map relu2 %[[S]]
// CHECK:     la.contract "bnm,bme->bne" %[[A]], %{{.*}} : tensor<1x4x4xf32>, tensor<1x4x2xf32> -> tensor<1x4x2xf32>
// CHECK:   %[[SD:.*]] = la.contract "bns,bms->bnm" %{{.*}}, %{{.*}} mask tril(n, m) : tensor<1x4x3xf32>, tensor<1x4x3xf32> -> tensor<1x4x4xf32>
// CHECK:   %[[AD:.*]] = la.map relu2 %[[SD]]
// CHECK:   la.contract "bnm,bme->bne" %[[AD]], %{{.*}} mask tril(n, m)
func.func @causal_scores(%q: tensor<1x8x3xf32>, %k: tensor<1x8x3xf32>, %v: tensor<1x8x2xf32>) -> tensor<1x8x2xf32> {
  %s = la.contract "bns,bms->bnm" %q, %k mask tril(n, m) : tensor<1x8x3xf32>, tensor<1x8x3xf32> -> tensor<1x8x8xf32>
  %a = la.map relu2 %s : tensor<1x8x8xf32> -> tensor<1x8x8xf32>
  %o = la.contract "bnm,bme->bne" %a, %v mask tril(n, m) : tensor<1x8x8xf32>, tensor<1x8x2xf32> -> tensor<1x8x2xf32>
  return %o : tensor<1x8x2xf32>
}
