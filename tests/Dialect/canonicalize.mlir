// RUN: la-opt %s -split-input-file -canonicalize | FileCheck %s

//===----------------------------------------------------------------------===//
// la.map identity
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @identity_folds
// CHECK-SAME: (%[[X:.*]]: tensor<4x?xf32>)
// CHECK-NOT: la.map
// CHECK: return %[[X]], %[[X]] : tensor<4x?xf32>, tensor<4x?xf32>
func.func @identity_folds(%x: tensor<4x?xf32>) -> (tensor<4x?xf32>, tensor<4x?xf32>) {
  %0 = la.map identity %x : tensor<4x?xf32> -> tensor<4x?xf32>
  %1 = la.map identity "ab->ab" %x : tensor<4x?xf32> -> tensor<4x?xf32>
  return %0, %1 : tensor<4x?xf32>, tensor<4x?xf32>
}

// -----

// A transposing identity moves elements and one that refines the type is a cast: neither is the input.

// CHECK-LABEL: func.func @identity_does_not_fold
// CHECK-SAME: (%[[X:.*]]: tensor<4x4xf32>, %[[Y:.*]]: tensor<?xf32>)
// CHECK: %[[T:.*]] = la.map identity "ab->ba" %[[X]] : tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK: %[[C:.*]] = la.map identity "a->a" %[[Y]] : tensor<?xf32> -> tensor<4xf32>
// CHECK: return %[[T]], %[[C]]
func.func @identity_does_not_fold(%x: tensor<4x4xf32>, %y: tensor<?xf32>) -> (tensor<4x4xf32>, tensor<4xf32>) {
  %0 = la.map identity "ab->ba" %x : tensor<4x4xf32> -> tensor<4x4xf32>
  %1 = la.map identity "a->a" %y : tensor<?xf32> -> tensor<4xf32>
  return %0, %1 : tensor<4x4xf32>, tensor<4xf32>
}

// -----

// An identity feeding another map folds away before fusion.

// CHECK-LABEL: func.func @identity_then_map
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>)
// CHECK-NEXT: %[[E:.*]] = la.map exp %[[X]] : tensor<?xf32> -> tensor<?xf32>
// CHECK-NEXT: return %[[E]]
func.func @identity_then_map(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = la.map identity %x : tensor<?xf32> -> tensor<?xf32>
  %1 = la.map exp %0 : tensor<?xf32> -> tensor<?xf32>
  return %1 : tensor<?xf32>
}

//===----------------------------------------------------------------------===//
// Map-of-map fusion
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @fuse_named_into_broadcast
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x?xf32>, %[[D:.*]]: tensor<?x?xf32>)
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[R:.*]] = la.map "bne,bn->bne" %[[X]], %[[D]] : tensor<?x?x?xf32>, tensor<?x?xf32> -> tensor<?x?x?xf32> {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT: %[[POS:.*]] = arith.cmpf ogt, %[[A]], %[[ZERO]] : f32
// CHECK-NEXT: %[[NEG:.*]] = arith.minimumf %[[A]], %[[ZERO]] : f32
// CHECK-NEXT: %[[EXP:.*]] = math.exp %[[NEG]] : f32
// CHECK-NEXT: %[[LIN:.*]] = arith.addf %[[A]], %[[ONE]] : f32
// CHECK-NEXT: %[[ELU:.*]] = arith.select %[[POS]], %[[LIN]], %[[EXP]] : f32
// CHECK-NEXT: %[[MUL:.*]] = arith.mulf %[[ELU]], %[[B]] : f32
// CHECK-NEXT: la.yield %[[MUL]] : f32
// CHECK-NEXT: }
// CHECK-NOT: la.map
// CHECK: return %[[R]]
func.func @fuse_named_into_broadcast(%x: tensor<?x?x?xf32>, %d: tensor<?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = la.map elu1 %x : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %1 = la.map mul "bne,bn->bne" %0, %d : tensor<?x?x?xf32>, tensor<?x?xf32> -> tensor<?x?x?xf32>
  return %1 : tensor<?x?x?xf32>
}

// -----

// A chain of three maps becomes one; the producer's own broadcast is composed into the fused subscripts.

// CHECK-LABEL: func.func @fuse_chain
// CHECK-SAME: (%[[X:.*]]: tensor<?x?xf32>, %[[Y:.*]]: tensor<?xf32>)
// CHECK: %[[R:.*]] = la.map "ab,b->ab" %[[X]], %[[Y]] : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32> {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT: %[[S:.*]] = arith.mulf %[[A]], %{{.*}} : f32
// CHECK-NEXT: %[[T:.*]] = arith.addf %[[S]], %[[B]] : f32
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[T]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[N]] : f32
// CHECK: la.yield
// CHECK-NEXT: }
// CHECK-NOT: la.map
// CHECK: return %[[R]]
func.func @fuse_chain(%x: tensor<?x?xf32>, %y: tensor<?xf32>) -> tensor<?x?xf32> {
  %0 = la.map mul_const(2.0) %x : tensor<?x?xf32> -> tensor<?x?xf32>
  %1 = la.map add "ab,b->ab" %0, %y : tensor<?x?xf32>, tensor<?xf32> -> tensor<?x?xf32>
  %2 = la.map sigmoid %1 : tensor<?x?xf32> -> tensor<?x?xf32>
  return %2 : tensor<?x?xf32>
}

// -----

// The producer broadcasts %x along b; the consumer broadcasts the producer along e: the fused map reads %x
// along n only.

// CHECK-LABEL: func.func @fuse_composes_broadcasts
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>, %[[Y:.*]]: tensor<?x?xf32>, %[[V:.*]]: tensor<?x?x?xf32>)
// CHECK: la.map "bne,n,bn->bne" %[[V]], %[[X]], %[[Y]] : tensor<?x?x?xf32>, tensor<?xf32>, tensor<?x?xf32> -> tensor<?x?x?xf32> {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[B]], %[[C]] : f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[A]], %[[S]] : f32
// CHECK-NEXT: la.yield %[[M]] : f32
// CHECK-NOT: la.map
func.func @fuse_composes_broadcasts(%x: tensor<?xf32>, %y: tensor<?x?xf32>, %v: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = la.map add "n,bn->bn" %x, %y : tensor<?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %1 = la.map mul "bne,bn->bne" %v, %0 : tensor<?x?x?xf32>, tensor<?x?xf32> -> tensor<?x?x?xf32>
  return %1 : tensor<?x?x?xf32>
}

// -----

// A rank-0 producer fuses into a broadcasting consumer.

// CHECK-LABEL: func.func @fuse_scalar
// CHECK-SAME: (%[[S:.*]]: tensor<f32>, %[[V:.*]]: tensor<?x?xf32>)
// CHECK: la.map ",bn->bn" %[[S]], %[[V]] : tensor<f32>, tensor<?x?xf32> -> tensor<?x?xf32> {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT: %[[R:.*]] = arith.divf %{{.*}}, %[[A]] : f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[R]], %[[B]] : f32
// CHECK-NEXT: la.yield %[[M]] : f32
// CHECK-NOT: la.map
func.func @fuse_scalar(%s: tensor<f32>, %v: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = la.map reciprocal %s : tensor<f32> -> tensor<f32>
  %1 = la.map mul ",bn->bn" %0, %v : tensor<f32>, tensor<?x?xf32> -> tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}

// -----

// la.index inside the producer names the producer's result dimensions; after fusion it must name the
// consumer's: producer dimension 1 (n) is consumer dimension 1 here.

// CHECK-LABEL: func.func @fuse_remaps_index
// CHECK-SAME: (%[[X:.*]]: tensor<?x?xf32>, %[[V:.*]]: tensor<?x?x?xf32>)
// CHECK: la.map "bne,bn->bne" %[[V]], %[[X]] : tensor<?x?x?xf32>, tensor<?x?xf32> -> tensor<?x?x?xf32> {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT: %[[T:.*]] = la.index 1 : index
// CHECK-NEXT: %[[I:.*]] = arith.index_cast %[[T]] : index to i64
// CHECK-NEXT: %[[F:.*]] = arith.sitofp %[[I]] : i64 to f32
// CHECK-NEXT: %[[N:.*]] = arith.addf %[[F]], %{{.*}} : f32
// CHECK-NEXT: %[[R:.*]] = arith.divf %[[B]], %[[N]] : f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[A]], %[[R]] : f32
// CHECK-NEXT: la.yield %[[M]] : f32
// CHECK-NOT: la.map
func.func @fuse_remaps_index(%x: tensor<?x?xf32>, %v: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %one = arith.constant 1.0 : f32
  %0 = la.map %x : tensor<?x?xf32> -> tensor<?x?xf32> {
  ^bb0(%a: f32):
    %t = la.index 1 : index
    %i = arith.index_cast %t : index to i64
    %f = arith.sitofp %i : i64 to f32
    %n = arith.addf %f, %one : f32
    %r = arith.divf %a, %n : f32
    la.yield %r : f32
  }
  %1 = la.map mul "bne,bn->bne" %v, %0 : tensor<?x?x?xf32>, tensor<?x?xf32> -> tensor<?x?x?xf32>
  return %1 : tensor<?x?x?xf32>
}

// -----

// The consumer reads the producer transposed ("en"): producer dimensions 0 and 1 become consumer dimensions
// 2 and 1, while the consumer's own la.index is kept.

// CHECK-LABEL: func.func @fuse_remaps_transposed_index
// CHECK-SAME: (%[[X:.*]]: tensor<?x?xf32>, %[[V:.*]]: tensor<?x?x?xf32>)
// CHECK: la.map "bne,en->bne" %[[V]], %[[X]] : tensor<?x?x?xf32>, tensor<?x?xf32> -> tensor<?x?x?xf32> {
// CHECK-NEXT: ^bb0(%[[P:.*]]: f32, %[[Q:.*]]: f32):
// CHECK-NEXT: %[[T:.*]] = la.index 2 : index
// CHECK-NEXT: %[[U:.*]] = la.index 1 : index
// CHECK-NEXT: %[[D:.*]] = arith.subi %[[T]], %[[U]] : index
// CHECK: %[[K:.*]] = la.index 0 : index
// CHECK: la.yield
// CHECK-NOT: la.map
func.func @fuse_remaps_transposed_index(%x: tensor<?x?xf32>, %v: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = la.map %x : tensor<?x?xf32> -> tensor<?x?xf32> {
  ^bb0(%a: f32):
    %t = la.index 0 : index
    %u = la.index 1 : index
    %i = arith.subi %t, %u : index
    %c = arith.index_cast %i : index to i64
    %f = arith.sitofp %c : i64 to f32
    %r = arith.mulf %a, %f : f32
    la.yield %r : f32
  }
  %1 = la.map "bne,en->bne" %v, %0 : tensor<?x?x?xf32>, tensor<?x?xf32> -> tensor<?x?x?xf32> {
  ^bb0(%p: f32, %q: f32):
    %k = la.index 0 : index
    %c = arith.index_cast %k : index to i64
    %f = arith.sitofp %c : i64 to f32
    %s = arith.addf %p, %q : f32
    %r = arith.addf %s, %f : f32
    la.yield %r : f32
  }
  return %1 : tensor<?x?x?xf32>
}

// -----

// A producer with another use stays: fusing would compute it twice.

// CHECK-LABEL: func.func @no_fusion_with_two_uses
// CHECK-SAME: (%[[X:.*]]: tensor<?x?xf32>)
// CHECK: %[[E:.*]] = la.map exp %[[X]] : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK: %[[N:.*]] = la.map neg %[[E]] : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK: return %[[E]], %[[N]]
func.func @no_fusion_with_two_uses(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %0 = la.map exp %x : tensor<?x?xf32> -> tensor<?x?xf32>
  %1 = la.map neg %0 : tensor<?x?xf32> -> tensor<?x?xf32>
  return %0, %1 : tensor<?x?xf32>, tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func.func @no_fusion_when_used_twice_by_consumer
// CHECK-SAME: (%[[X:.*]]: tensor<?x?xf32>)
// CHECK: %[[E:.*]] = la.map exp %[[X]] : tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK: %[[M:.*]] = la.map mul %[[E]], %[[E]] : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
// CHECK: return %[[M]]
func.func @no_fusion_when_used_twice_by_consumer(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = la.map exp %x : tensor<?x?xf32> -> tensor<?x?xf32>
  %1 = la.map mul %0, %0 : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}

//===----------------------------------------------------------------------===//
// la.reduce
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @reduce_no_dims_folds
// CHECK-SAME: (%[[X:.*]]: tensor<4x?xf32>, %[[Y:.*]]: tensor<4x?xf32>)
// CHECK-NOT: la.reduce
// CHECK: return %[[X]], %[[X]], %[[Y]]
func.func @reduce_no_dims_folds(%x: tensor<4x?xf32>, %y: tensor<4x?xf32>) -> (tensor<4x?xf32>, tensor<4x?xf32>, tensor<4x?xf32>) {
  %0 = la.reduce add %x along [] : tensor<4x?xf32> -> tensor<4x?xf32>
  %1:2 = la.reduce %x, %y along [] : tensor<4x?xf32>, tensor<4x?xf32> -> tensor<4x?xf32>, tensor<4x?xf32> {
  ^bb0(%a0: f32, %a1: f32, %b0: f32, %b1: f32):
    %s0 = arith.maximumf %a0, %b0 : f32
    %s1 = arith.minimumf %a1, %b1 : f32
    la.yield %s0, %s1 : f32, f32
  }
  return %0, %1#0, %1#1 : tensor<4x?xf32>, tensor<4x?xf32>, tensor<4x?xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_does_not_fold
// CHECK: la.reduce add %{{.*}} along [1] : tensor<4x1xf32> -> tensor<4xf32>
// CHECK: la.reduce max %{{.*}} along [] : tensor<?xf32> -> tensor<4xf32>
func.func @reduce_does_not_fold(%x: tensor<4x1xf32>, %y: tensor<?xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = la.reduce add %x along [1] : tensor<4x1xf32> -> tensor<4xf32>
  %1 = la.reduce max %y along [] : tensor<?xf32> -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

//===----------------------------------------------------------------------===//
// la.scan
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @scan_single_element_folds
// CHECK-SAME: (%[[X:.*]]: tensor<2x1x8xf32>, %[[G:.*]]: tensor<2x1xf32>)
// CHECK-NOT: la.scan
// CHECK: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]]
func.func @scan_single_element_folds(%x: tensor<2x1x8xf32>, %g: tensor<2x1xf32>)
    -> (tensor<2x1x8xf32>, tensor<2x1x8xf32>, tensor<2x1x8xf32>, tensor<2x1x8xf32>, tensor<2x1x8xf32>) {
  %0 = la.scan add %x along 1 inclusive : tensor<2x1x8xf32> -> tensor<2x1x8xf32>
  %1 = la.scan max %x along 1 inclusive reverse : tensor<2x1x8xf32> -> tensor<2x1x8xf32>
  %2 = la.scan logaddexp %x along 1 inclusive acc(f64) : tensor<2x1x8xf32> -> tensor<2x1x8xf32>
  %3 = la.scan add %x along 1 inclusive window(4) : tensor<2x1x8xf32> -> tensor<2x1x8xf32>
  %4 = la.scan decay %x, %g along 1 inclusive : tensor<2x1x8xf32>, tensor<2x1xf32> -> tensor<2x1x8xf32>
  return %0, %1, %2, %3, %4 : tensor<2x1x8xf32>, tensor<2x1x8xf32>, tensor<2x1x8xf32>, tensor<2x1x8xf32>, tensor<2x1x8xf32>
}

// -----

// Softmax-weighting a single value gives that value, not the logit.

// CHECK-LABEL: func.func @scan_online_softmax_single_element_folds
// CHECK-SAME: (%[[K:.*]]: tensor<1x?xf32>, %[[V:.*]]: tensor<1x?xf32>)
// CHECK-NOT: la.scan
// CHECK: return %[[V]] : tensor<1x?xf32>
func.func @scan_online_softmax_single_element_folds(%k: tensor<1x?xf32>, %v: tensor<1x?xf32>) -> tensor<1x?xf32> {
  %0 = la.scan online_softmax %k, %v along 0 inclusive : tensor<1x?xf32>, tensor<1x?xf32> -> tensor<1x?xf32>
  return %0 : tensor<1x?xf32>
}

// -----

// CHECK-LABEL: func.func @scan_region_single_element_folds
// CHECK-SAME: (%[[A:.*]]: tensor<?x1xf32>, %[[B:.*]]: tensor<?x1xf32>)
// CHECK-NOT: la.scan
// CHECK: return %[[A]], %[[B]]
func.func @scan_region_single_element_folds(%a: tensor<?x1xf32>, %b: tensor<?x1xf32>) -> (tensor<?x1xf32>, tensor<?x1xf32>) {
  %0:2 = la.scan %a, %b along 1 inclusive : tensor<?x1xf32>, tensor<?x1xf32> -> tensor<?x1xf32>, tensor<?x1xf32> {
  ^bb0(%a1: f32, %b1: f32, %a2: f32, %b2: f32):
    %aa = arith.mulf %a1, %a2 : f32
    %ab = arith.mulf %a2, %b1 : f32
    %bb = arith.addf %ab, %b2 : f32
    la.yield %aa, %bb : f32, f32
  }
  return %0#0, %0#1 : tensor<?x1xf32>, tensor<?x1xf32>
}

// -----

// An exclusive scan yields the identity at its one position, and a longer or dynamic dimension has more than
// one element: none of these fold.

// CHECK-LABEL: func.func @scan_does_not_fold
// CHECK-SAME: (%[[X:.*]]: tensor<2x1xf32>, %[[Y:.*]]: tensor<2x3xf32>, %[[Z:.*]]: tensor<2x?xf32>)
// CHECK: la.scan add %[[X]] along 1 exclusive : tensor<2x1xf32> -> tensor<2x1xf32>
// CHECK: la.scan max %[[Y]] along 1 inclusive : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK: la.scan add %[[Z]] along 1 inclusive : tensor<2x?xf32> -> tensor<2x?xf32>
// CHECK: la.scan add %[[X]] along 0 inclusive : tensor<2x1xf32> -> tensor<2x1xf32>
func.func @scan_does_not_fold(%x: tensor<2x1xf32>, %y: tensor<2x3xf32>, %z: tensor<2x?xf32>)
    -> (tensor<2x1xf32>, tensor<2x3xf32>, tensor<2x?xf32>, tensor<2x1xf32>) {
  %0 = la.scan add %x along 1 exclusive : tensor<2x1xf32> -> tensor<2x1xf32>
  %3 = la.scan max %y along 1 inclusive : tensor<2x3xf32> -> tensor<2x3xf32>
  %4 = la.scan add %z along 1 inclusive : tensor<2x?xf32> -> tensor<2x?xf32>
  %5 = la.scan add %x along 0 inclusive : tensor<2x1xf32> -> tensor<2x1xf32>
  return %0, %3, %4, %5 : tensor<2x1xf32>, tensor<2x3xf32>, tensor<2x?xf32>, tensor<2x1xf32>
}

// -----

// One element from an initial state is one combine step, a map in the state's shape (a decode step). The
// scanned outer product of k and v is rebuilt without the position, so that it still fuses into the step.

// CHECK-LABEL: func.func @scan_one_step_from_init
// CHECK-SAME: (%[[X:.*]]: tensor<2x1xf32>, %[[H:.*]]: tensor<2xf32>, %[[K:.*]]: tensor<3x1x4xf32>, %[[V:.*]]: tensor<3x1x5xf32>, %[[G:.*]]: tensor<3x1x4xf32>, %[[S:.*]]: tensor<3x4x5xf32>)
// CHECK: %[[XS:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<2x1xf32> into tensor<2xf32>
// CHECK: %[[SUM:.*]] = la.map add %[[H]], %[[XS]] : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
// CHECK: tensor.expand_shape %[[SUM]] {{\[}}[0, 1]] output_shape [2, 1]
// CHECK: %[[XM:.*]] = tensor.collapse_shape %[[X]]
// CHECK: la.map max %[[H]], %[[XM]]
// CHECK: %[[KS:.*]] = tensor.collapse_shape %[[K]] {{\[}}[0], [1, 2]] : tensor<3x1x4xf32> into tensor<3x4xf32>
// CHECK: %[[VS:.*]] = tensor.collapse_shape %[[V]] {{\[}}[0], [1, 2]] : tensor<3x1x5xf32> into tensor<3x5xf32>
// CHECK: %[[KV:.*]] = la.contract "nk,nv->nkv" %[[KS]], %[[VS]] : tensor<3x4xf32>, tensor<3x5xf32> -> tensor<3x4x5xf32>
// CHECK: %[[GS:.*]] = tensor.collapse_shape %[[G]] {{\[}}[0], [1, 2]] : tensor<3x1x4xf32> into tensor<3x4xf32>
// CHECK: %[[NEXT:.*]] = la.map "ab,abc,abc->abc" %[[GS]], %[[S]], %[[KV]]
// CHECK: math.exp
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[STEP:.*]] = tensor.expand_shape %[[NEXT]] {{\[}}[0], [1, 2], [3]] output_shape [3, 1, 4, 5]
// CHECK-NOT: la.scan
// CHECK: return %{{.*}}, %{{.*}}, %[[STEP]]
func.func @scan_one_step_from_init(%x: tensor<2x1xf32>, %h: tensor<2xf32>, %k: tensor<3x1x4xf32>,
                                   %v: tensor<3x1x5xf32>, %g: tensor<3x1x4xf32>, %s: tensor<3x4x5xf32>)
    -> (tensor<2x1xf32>, tensor<2x1xf32>, tensor<3x1x4x5xf32>) {
  %0 = la.scan add %x init(%h : tensor<2xf32>) along 1 inclusive : tensor<2x1xf32> -> tensor<2x1xf32>
  %1 = la.scan max %x init(%h : tensor<2xf32>) along 1 inclusive : tensor<2x1xf32> -> tensor<2x1xf32>
  %kv = la.contract "ntk,ntv->ntkv" %k, %v : tensor<3x1x4xf32>, tensor<3x1x5xf32> -> tensor<3x1x4x5xf32>
  %2 = la.scan decay %kv, %g init(%s : tensor<3x4x5xf32>) along 1 inclusive
      : tensor<3x1x4x5xf32>, tensor<3x1x4xf32> -> tensor<3x1x4x5xf32>
  return %0, %1, %2 : tensor<2x1xf32>, tensor<2x1xf32>, tensor<3x1x4x5xf32>
}

// -----

// Not one step: a combiner without a single map (logaddexp), accumulation in another type, a dynamic shape.

// CHECK-LABEL: func.func @scan_one_step_not_rewritten
// CHECK: la.scan logaddexp
// CHECK: la.scan add %{{.*}} init(%{{.*}} : tensor<2xf16>) along 1 inclusive acc(f32)
// CHECK: la.scan add %{{.*}} init(%{{.*}} : tensor<?xf32>) along 1 inclusive
func.func @scan_one_step_not_rewritten(%x: tensor<2x1xf32>, %h: tensor<2xf32>, %xh: tensor<2x1xf16>,
                                       %hh: tensor<2xf16>, %xd: tensor<?x1xf32>, %hd: tensor<?xf32>)
    -> (tensor<2x1xf32>, tensor<2x1xf16>, tensor<?x1xf32>) {
  %0 = la.scan logaddexp %x init(%h : tensor<2xf32>) along 1 inclusive : tensor<2x1xf32> -> tensor<2x1xf32>
  %1 = la.scan add %xh init(%hh : tensor<2xf16>) along 1 inclusive acc(f32) : tensor<2x1xf16> -> tensor<2x1xf16>
  %2 = la.scan add %xd init(%hd : tensor<?xf32>) along 1 inclusive : tensor<?x1xf32> -> tensor<?x1xf32>
  return %0, %1, %2 : tensor<2x1xf32>, tensor<2x1xf16>, tensor<?x1xf32>
}

// -----

// CHECK-LABEL: func.func @scan_region_exclusive_does_not_fold
// CHECK: %{{.*}} = la.scan %{{.*}} along 0 exclusive : tensor<1x4xf32> -> tensor<1x4xf32> {
func.func @scan_region_exclusive_does_not_fold(%a: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = la.scan %a along 0 exclusive : tensor<1x4xf32> -> tensor<1x4xf32> {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    la.yield %s : f32
  }
  return %0 : tensor<1x4xf32>
}

//===----------------------------------------------------------------------===//
// la.size
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @size_static_folds
// CHECK-DAG: %[[C128:.*]] = arith.constant dense<1.280000e+02> : tensor<f32>
// CHECK-DAG: %[[C4:.*]] = arith.constant dense<4.000000e+00> : tensor<f16>
// CHECK-DAG: %[[C1:.*]] = arith.constant dense<1.000000e+00> : tensor<f64>
// CHECK-NOT: la.size
// CHECK: return %[[C128]], %[[C4]], %[[C1]]
func.func @size_static_folds(%k: tensor<2x4x128x64xf32>, %h: tensor<?x4x1xbf16>) -> (tensor<f32>, tensor<f16>, tensor<f64>) {
  %0 = la.size %k along 2 : tensor<2x4x128x64xf32> -> tensor<f32>
  %1 = la.size %h along 1 : tensor<?x4x1xbf16> -> tensor<f16>
  %2 = la.size %h along 2 : tensor<?x4x1xbf16> -> tensor<f64>
  return %0, %1, %2 : tensor<f32>, tensor<f16>, tensor<f64>
}

// -----

// CHECK-LABEL: func.func @size_dynamic_stays
// CHECK-SAME: (%[[K:.*]]: tensor<2x?xf32>)
// CHECK: %[[S:.*]] = la.size %[[K]] along 1 : tensor<2x?xf32> -> tensor<f32>
// CHECK: return %[[S]]
func.func @size_dynamic_stays(%k: tensor<2x?xf32>) -> tensor<f32> {
  %0 = la.size %k along 1 : tensor<2x?xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

//===----------------------------------------------------------------------===//
// Regressions of map fusion
//===----------------------------------------------------------------------===//

// -----

// A producer body that yields a value captured from above fuses (it used to crash the canonicalizer).
// CHECK-LABEL: func.func @fuse_producer_yielding_captured_value
// CHECK: %[[E:.*]] = arith.constant 2.71828
// CHECK: %[[R:.*]] = la.map %{{.*}} : tensor<4xf32> -> tensor<4xf32> {
// CHECK-NEXT: ^bb0(%{{.*}}: f32):
// CHECK-NEXT: la.yield %[[E]] : f32
// CHECK: return %[[R]]
func.func @fuse_producer_yielding_captured_value(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant 1.0 : f32
  %p = la.map %x : tensor<4xf32> -> tensor<4xf32> {
  ^bb0(%a: f32):
    la.yield %c : f32
  }
  %r = la.map exp %p : tensor<4xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A consumer body that yields a captured value also fuses.
// CHECK-LABEL: func.func @fuse_consumer_yielding_captured_value
// CHECK: la.map
// CHECK-NOT: la.map
// CHECK: return
func.func @fuse_consumer_yielding_captured_value(%x: tensor<4xf32>, %c: f32) -> tensor<4xf32> {
  %p = la.map exp %x : tensor<4xf32> -> tensor<4xf32>
  %r = la.map %p : tensor<4xf32> -> tensor<4xf32> {
  ^bb0(%a: f32):
    la.yield %c : f32
  }
  return %r : tensor<4xf32>
}

// -----

// la.index keeps its float result type when moved into the fused body (it used to become index).
// CHECK-LABEL: func.func @fuse_float_index
// CHECK: la.map %{{.*}} : tensor<4x8xf32> -> tensor<4x8xf32> {
// CHECK: %[[T:.*]] = la.index 0 : f32
// CHECK: arith.addf %{{.*}}, %[[T]] : f32
// CHECK: math.exp
func.func @fuse_float_index(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %p = la.map "nd->nd" %x : tensor<4x8xf32> -> tensor<4x8xf32> {
  ^bb0(%a: f32):
    %t = la.index 0 : f32
    %r = arith.addf %a, %t : f32
    la.yield %r : f32
  }
  %r = la.map exp %p : tensor<4x8xf32> -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
