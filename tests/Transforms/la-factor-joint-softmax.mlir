// RUN: la-opt %s -split-input-file -la-factor-joint-softmax | FileCheck %s

// AFT-full: softmax over s of w[t, s] + k[b, s, d], contracted with v[b, s, d]. Each summand is shifted by
// its own maximum over s, the two sums become contractions of e^{w - mw} with e^{k - mk} ⊙ v and e^{k - mk},
// and their ratio is taken where the denominator is at least 2^-64, the joint form elsewhere.
// CHECK-LABEL: func.func @aft_full
// CHECK-SAME: (%[[K:.*]]: tensor<2x16x8xf32>, %[[V:.*]]: tensor<2x16x8xf32>, %[[W:.*]]: tensor<16x16xf32>)
// CHECK-DAG: %[[THRESHOLD:.*]] = arith.constant 5.42101086E-20 : f32
// CHECK-DAG: %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[MW:.*]] = la.reduce max %[[W]] along [1] : tensor<16x16xf32> -> tensor<16xf32>
// CHECK: %[[EW:.*]] = la.map "ts,t->ts" %[[W]], %[[MW]]
// CHECK: math.exp
// CHECK: %[[MK:.*]] = la.reduce max %[[K]] along [1] : tensor<2x16x8xf32> -> tensor<2x8xf32>
// CHECK: %[[EK:.*]] = la.map "bsd,bd->bsd" %[[K]], %[[MK]]
// CHECK: math.exp
// CHECK: %[[EKV:.*]] = la.map mul %[[EK]], %[[V]]
// CHECK: %[[NUM:.*]] = la.contract "ts,bsd->btd" %[[EW]], %[[EKV]] :
// CHECK: %[[DEN:.*]] = la.contract "ts,bsd->btd" %[[EW]], %[[EK]] :
// CHECK: %[[Y:.*]] = la.map %[[NUM]], %[[DEN]]
// CHECK-NEXT: ^bb0(%[[N:.*]]: f32, %[[D:.*]]: f32):
// CHECK: %[[EXACT:.*]] = arith.cmpf oge, %[[D]], %[[THRESHOLD]]
// CHECK: scf.if %[[EXACT]]
// CHECK: arith.divf %[[N]], %[[D]]
// CHECK: } else {
// The joint form: the maximum of w + k over s, then the sums shifted by it.
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[NEG_INF]])
// CHECK: tensor.extract %[[W]]
// CHECK: tensor.extract %[[K]]
// CHECK: arith.maximumf
// CHECK: scf.for
// CHECK: math.exp
// CHECK: tensor.extract %[[V]]
// CHECK-NOT: la.normalize
// CHECK: return %[[Y]]
func.func @aft_full(%k: tensor<2x16x8xf32>, %v: tensor<2x16x8xf32>, %w: tensor<16x16xf32>) -> tensor<2x16x8xf32> {
  %logits = la.map add "ts,bsd->btsd" %w, %k : tensor<16x16xf32>, tensor<2x16x8xf32> -> tensor<2x16x16x8xf32>
  %weights = la.normalize softmax %logits along 2 : tensor<2x16x16x8xf32> -> tensor<2x16x16x8xf32>
  %avg = la.contract "btsd,bsd->btd" %weights, %v : tensor<2x16x16x8xf32>, tensor<2x16x8xf32> -> tensor<2x16x8xf32>
  return %avg : tensor<2x16x8xf32>
}

// -----

// Causal AFT-full after canonicalisation: the -inf mask of w is folded into the sum's region. The mask's
// part becomes a map of w alone; since it is -inf wherever tril(t, s) drops a term, e^{w - mw} is 0 there,
// so the denominator may keep the mask like the numerator: both products cover the triangle only
// (la-chunk-scans runs them in row blocks). The shift of the bias is the maximum of its whole rows, read from w
// itself (a masked maximum does not vectorise); the joint form reads w too and stops at the diagonal.
// CHECK-LABEL: func.func @aft_full_causal
// CHECK-SAME: (%[[K:.*]]: tensor<2x16x8xf32>, %[[V:.*]]: tensor<2x16x8xf32>, %[[W:.*]]: tensor<16x16xf32>)
// CHECK: %[[WC:.*]] = la.map %[[W]] : tensor<16x16xf32> -> tensor<16x16xf32>
// CHECK: %[[T:.*]] = la.index 0 : index
// CHECK: %[[S:.*]] = la.index 1 : index
// CHECK: arith.cmpi ule, %[[S]], %[[T]]
// CHECK: arith.select
// CHECK: la.reduce max %[[W]] along [1]
// CHECK: la.contract "ts,bsd->btd" %{{.*}}, %{{.*}} mask tril(t, s) : tensor
// CHECK: la.contract "ts,bsd->btd" %{{.*}}, %{{.*}} mask tril(t, s) : tensor
// CHECK: %[[ROW:.*]] = la.index 1 : index
// CHECK: scf.if
// CHECK: } else {
// CHECK: %[[END:.*]] = arith.addi %[[ROW]], %c1
// CHECK: scf.for %{{.*}} = %c0 to %[[END]]
// CHECK: tensor.extract %[[W]]
func.func @aft_full_causal(%k: tensor<2x16x8xf32>, %v: tensor<2x16x8xf32>, %w: tensor<16x16xf32>) -> tensor<2x16x8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %logits = la.map "ts,bsd->btsd" %w, %k : tensor<16x16xf32>, tensor<2x16x8xf32> -> tensor<2x16x16x8xf32> {
  ^bb0(%wv: f32, %kv: f32):
    %t = la.index 1 : index
    %s = la.index 2 : index
    %visible = arith.cmpi ule, %s, %t : index
    %masked = arith.select %visible, %wv, %ninf : f32
    %sum = arith.addf %masked, %kv : f32
    la.yield %sum : f32
  }
  %weights = la.normalize softmax %logits along 2 : tensor<2x16x16x8xf32> -> tensor<2x16x16x8xf32>
  %avg = la.contract "btsd,bsd->btd" %weights, %v mask tril(t, s) : tensor<2x16x16x8xf32>, tensor<2x16x8xf32> -> tensor<2x16x8xf32>
  return %avg : tensor<2x16x8xf32>
}

// -----

// A mask the logits do not already apply: the softmax still normalises over every s, so the numerator keeps
// the mask and the denominator does not.
// CHECK-LABEL: func.func @masked_after_softmax
// CHECK: la.contract "ts,bsd->btd" %{{.*}}, %{{.*}} mask tril(t, s)
// CHECK: la.contract "ts,bsd->btd" %{{.*}}, %{{.*}} : tensor
func.func @masked_after_softmax(%k: tensor<2x16x8xf32>, %v: tensor<2x16x8xf32>, %w: tensor<16x16xf32>) -> tensor<2x16x8xf32> {
  %logits = la.map add "ts,bsd->btsd" %w, %k : tensor<16x16xf32>, tensor<2x16x8xf32> -> tensor<2x16x16x8xf32>
  %weights = la.normalize softmax %logits along 2 : tensor<2x16x16x8xf32> -> tensor<2x16x16x8xf32>
  %avg = la.contract "btsd,bsd->btd" %weights, %v mask tril(t, s) : tensor<2x16x16x8xf32>, tensor<2x16x8xf32> -> tensor<2x16x8xf32>
  return %avg : tensor<2x16x8xf32>
}

// -----

// Left alone: the weights are read twice (the joint tensor is needed anyway), a summand that reads the other
// input, and half-precision logits (2^-64 is not representable in f16).
// CHECK-LABEL: func.func @weights_read_twice
// CHECK: la.normalize softmax
func.func @weights_read_twice(%k: tensor<2x16x8xf32>, %v: tensor<2x16x8xf32>, %w: tensor<16x16xf32>) -> (tensor<2x16x8xf32>, tensor<2x16x16x8xf32>) {
  %logits = la.map add "ts,bsd->btsd" %w, %k : tensor<16x16xf32>, tensor<2x16x8xf32> -> tensor<2x16x16x8xf32>
  %weights = la.normalize softmax %logits along 2 : tensor<2x16x16x8xf32> -> tensor<2x16x16x8xf32>
  %avg = la.contract "btsd,bsd->btd" %weights, %v : tensor<2x16x16x8xf32>, tensor<2x16x8xf32> -> tensor<2x16x8xf32>
  return %avg, %weights : tensor<2x16x8xf32>, tensor<2x16x16x8xf32>
}

// CHECK-LABEL: func.func @summands_not_separable
// CHECK: la.normalize softmax
func.func @summands_not_separable(%k: tensor<2x16x8xf32>, %v: tensor<2x16x8xf32>, %w: tensor<16x16xf32>) -> tensor<2x16x8xf32> {
  %logits = la.map "ts,bsd->btsd" %w, %k : tensor<16x16xf32>, tensor<2x16x8xf32> -> tensor<2x16x16x8xf32> {
  ^bb0(%wv: f32, %kv: f32):
    %p = arith.mulf %wv, %kv : f32
    %sum = arith.addf %p, %kv : f32
    la.yield %sum : f32
  }
  %weights = la.normalize softmax %logits along 2 : tensor<2x16x16x8xf32> -> tensor<2x16x16x8xf32>
  %avg = la.contract "btsd,bsd->btd" %weights, %v : tensor<2x16x16x8xf32>, tensor<2x16x8xf32> -> tensor<2x16x8xf32>
  return %avg : tensor<2x16x8xf32>
}

// CHECK-LABEL: func.func @half_logits
// CHECK: la.normalize softmax
func.func @half_logits(%k: tensor<2x16x8xf16>, %v: tensor<2x16x8xf16>, %w: tensor<16x16xf16>) -> tensor<2x16x8xf16> {
  %logits = la.map add "ts,bsd->btsd" %w, %k : tensor<16x16xf16>, tensor<2x16x8xf16> -> tensor<2x16x16x8xf16>
  %weights = la.normalize softmax %logits along 2 : tensor<2x16x16x8xf16> -> tensor<2x16x16x8xf16>
  %avg = la.contract "btsd,bsd->btd" %weights, %v : tensor<2x16x16x8xf16>, tensor<2x16x8xf16> -> tensor<2x16x8xf16>
  return %avg : tensor<2x16x8xf16>
}
