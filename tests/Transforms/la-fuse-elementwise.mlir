// RUN: la-opt %s -split-input-file -la-to-linalg -la-fuse-elementwise -canonicalize | FileCheck %s
// RUN: la-opt %s -split-input-file -la-to-linalg -la-fuse-elementwise=max-recompute-cost=14 -canonicalize | FileCheck %s --check-prefix=COSTLY
// RUN: la-opt %s -split-input-file -la-to-linalg -la-fuse-elementwise=large-result-bytes=3199 -canonicalize | FileCheck %s --check-prefix=COSTLY
// RUN: la-opt %s -split-input-file -la-to-linalg -la-fuse-elementwise=large-result-bytes=3200 -canonicalize | FileCheck %s
// RUN: la-opt %s -split-input-file -la-to-linalg -la-fuse-elementwise="large-result-bytes=3199 max-large-recompute-cost=13" -canonicalize | FileCheck %s
// RUN: la-opt %s -split-input-file -la-to-linalg -la-fuse-elementwise=keep-contractions=true -canonicalize | FileCheck %s --check-prefix=KEEP

// A costly feature map (sigmoid: cost 14 > max-recompute-cost 4) read by two consumers is materialised
// once: both reductions read the [N, D] result instead of recomputing the exp.
// CHECK-LABEL: func.func @materialise_costly_shared_map
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK:   math.exp
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK-NOT: math.exp
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK-NOT: math.exp
// With max-recompute-cost=14 sigmoid counts as cheap enough: recomputed in both reductions, no temporary.
// So it does where its 3200-byte result counts as large (large-result-bytes below 3200, as the CUDA target
// sets it: a large result would go to global memory), up to max-large-recompute-cost (default 32, here 13).
// COSTLY-LABEL: func.func @materialise_costly_shared_map
// COSTLY: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// COSTLY:   math.exp
// COSTLY: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// COSTLY:   math.exp
// COSTLY-NOT: linalg.generic
// COSTLY: return
func.func @materialise_costly_shared_map(%q: tensor<100x8xf32>, %z: tensor<8xf32>) -> (tensor<100xf32>, tensor<100xf32>) {
  %qs = la.map sigmoid %q : tensor<100x8xf32> -> tensor<100x8xf32>
  %d = la.contract "nd,d->n" %qs, %z : tensor<100x8xf32>, tensor<8xf32> -> tensor<100xf32>
  %r = la.reduce add %qs along [1] : tensor<100x8xf32> -> tensor<100xf32>
  return %d, %r : tensor<100xf32>, tensor<100xf32>
}

// -----

// A cheap map read by two consumers along their innermost loop is recomputed in each: no temporary.
// CHECK-LABEL: func.func @recompute_cheap_shared_map
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK:   arith.addf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK:   arith.addf
// CHECK-NOT: linalg.generic
func.func @recompute_cheap_shared_map(%q: tensor<100x8xf32>, %z: tensor<8xf32>) -> (tensor<100xf32>, tensor<100xf32>) {
  %qe = la.map add_const(1.0e-6) %q : tensor<100x8xf32> -> tensor<100x8xf32>
  %d = la.contract "nd,d->n" %qe, %z : tensor<100x8xf32>, tensor<8xf32> -> tensor<100xf32>
  %r = la.reduce add %qe along [1] : tensor<100x8xf32> -> tensor<100xf32>
  return %d, %r : tensor<100xf32>, tensor<100xf32>
}

// -----

// A costly map with one consumer that reads it along the innermost loop is fused: no temporary.
// CHECK-LABEL: func.func @fuse_single_use_costly_map
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK:   math.exp
// CHECK-NOT: linalg.generic
func.func @fuse_single_use_costly_map(%q: tensor<100x8xf32>) -> tensor<100xf32> {
  %qs = la.map sigmoid %q : tensor<100x8xf32> -> tensor<100x8xf32>
  %r = la.reduce add %qs along [1] : tensor<100x8xf32> -> tensor<100xf32>
  return %r : tensor<100xf32>
}

// -----

// An exp-based map that is constant along the consumer's innermost loop would be evaluated on a broadcast
// vector there (once per lane): it stays a separate loop nest.
// CHECK-LABEL: func.func @keep_broadcast_map
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK:   math.exp
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "parallel"]
// CHECK-NOT: math.exp
func.func @keep_broadcast_map(%k: tensor<100x8xf32>, %v: tensor<100x16xf32>) -> tensor<8x16xf32> {
  %ks = la.map sigmoid %k : tensor<100x8xf32> -> tensor<100x8xf32>
  %s = la.contract "md,me->de" %ks, %v : tensor<100x8xf32>, tensor<100x16xf32> -> tensor<8x16xf32>
  return %s : tensor<8x16xf32>
}

// -----

// A row-times-row dot product (the reduction innermost: GLA's chunk scores) reads its operands in place, so
// an exp-based map that is constant along another loop (the rows of the other operand) would be evaluated
// once per row: it stays a separate loop nest, though it varies along the innermost loop.
// CHECK-LABEL: func.func @keep_map_broadcast_in_dot_product
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK:   math.exp
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-NOT: math.exp
func.func @keep_map_broadcast_in_dot_product(%q: tensor<16x8xf32>, %k: tensor<16x8xf32>) -> tensor<16x16xf32> {
  %kg = la.map exp %k : tensor<16x8xf32> -> tensor<16x8xf32>
  %s = la.contract "nd,md->nm" %q, %kg : tensor<16x8xf32>, tensor<16x8xf32> -> tensor<16x16xf32>
  return %s : tensor<16x16xf32>
}

// -----

// A cheap map (add a constant) is fused even when broadcast.
// CHECK-LABEL: func.func @fuse_cheap_broadcast
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "parallel"]
// CHECK:   arith.addf
// CHECK:   arith.mulf
// CHECK-NOT: linalg.generic
func.func @fuse_cheap_broadcast(%k: tensor<100x8xf32>, %v: tensor<100x16xf32>) -> tensor<8x16xf32> {
  %ke = la.map add_const(1.0e-6) %k : tensor<100x8xf32> -> tensor<100x8xf32>
  %s = la.contract "md,me->de" %ke, %v : tensor<100x8xf32>, tensor<100x16xf32> -> tensor<8x16xf32>
  return %s : tensor<8x16xf32>
}

// -----

// The state update of a chunked causal contraction, S + kᵀv: the contraction accumulates into S instead of
// into a zero-filled tile that one more loop adds to S.
// CHECK-LABEL: func.func @state_update
// CHECK-SAME: (%[[S:.*]]: tensor<2x3xf32>, %[[K:.*]]: tensor<4x2xf32>, %[[V:.*]]: tensor<4x3xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[K]], %[[V]] : tensor<4x2xf32>, tensor<4x3xf32>) outs(%[[S]] : tensor<2x3xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @state_update(%s: tensor<2x3xf32>, %k: tensor<4x2xf32>, %v: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %d = la.contract "md,me->de" %k, %v : tensor<4x2xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %n = la.map add %s, %d : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  return %n : tensor<2x3xf32>
}

// -----

// The sum of two contractions (a chunk's inter + intra parts): the later one accumulates into the earlier
// one's result, never the other way round (its result does not exist yet where the earlier one starts).
// CHECK-LABEL: func.func @inter_plus_intra
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK: %[[X:.*]] = linalg.generic {{.*}} outs(%[[ZERO]] : tensor<4x3xf32>)
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} outs(%[[X]] : tensor<4x3xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[Y]]
func.func @inter_plus_intra(%a: tensor<4x2xf32>, %b: tensor<2x3xf32>, %c: tensor<4x5xf32>, %d: tensor<5x3xf32>) -> tensor<4x3xf32> {
  %x = la.contract "nd,de->ne" %a, %b : tensor<4x2xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
  %y = la.contract "nm,me->ne" %c, %d : tensor<4x5xf32>, tensor<5x3xf32> -> tensor<4x3xf32>
  %r = la.map add %x, %y : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// -----

// A cheap map that another map also reads by position (tensor.extract in its region, which fusion cannot
// absorb) is materialised anyway: the reduction reads it back instead of recomputing the select, so the
// maximum stays a plain reduction.
// CHECK-LABEL: func.func @materialised_anyway
// CHECK: %[[MASKED:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK:   arith.select
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[MASKED]] :
// CHECK-NOT: arith.select
// CHECK: arith.maximumf
// CHECK: tensor.extract %[[MASKED]]
func.func @materialised_anyway(%w: tensor<16x16xf32>, %x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %masked = la.map "ts->ts" %w : tensor<16x16xf32> -> tensor<16x16xf32> {
  ^bb0(%wv: f32):
    %t = la.index 0 : index
    %s = la.index 1 : index
    %visible = arith.cmpi ule, %s, %t : index
    %r = arith.select %visible, %wv, %ninf : f32
    la.yield %r : f32
  }
  %max = la.reduce max %masked along [1] : tensor<16x16xf32> -> tensor<16xf32>
  %first = la.map "t->t" %x : tensor<16xf32> -> tensor<16xf32> {
  ^bb0(%xv: f32):
    %t = la.index 0 : index
    %c0 = arith.constant 0 : index
    %e = tensor.extract %masked[%t, %c0] : tensor<16x16xf32>
    %r = arith.addf %xv, %e : f32
    la.yield %r : f32
  }
  return %max, %first : tensor<16xf32>, tensor<16xf32>
}

// -----

// A half-precision argument widened to f32 and read by position and by a tile of both dimensions (AFT-full's
// exact fallback and its pairs tiles): the scalar read widens the f16 element, the tile widens the f16 tile,
// and no f32 copy of the whole argument is left.
// CHECK-LABEL: func.func @widened_reads
// CHECK-NOT: tensor<8x8xf32>
// CHECK: %[[TILE:.*]] = tensor.extract_slice %arg0[%arg1, %arg2] [2, 4] [1, 1] : tensor<8x8xf16> to tensor<2x4xf16>
// CHECK: linalg.generic {{.*}} ins(%[[TILE]] : tensor<2x4xf16>)
// CHECK: arith.extf
// CHECK: %[[E:.*]] = tensor.extract %arg0[%arg1, %arg2] : tensor<8x8xf16>
// CHECK: arith.extf %[[E]] : f16 to f32
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @widened_reads(%w: tensor<8x8xf16>, %i: index, %j: index) -> (tensor<2x4xf32>, f32) {
  %e = tensor.empty() : tensor<8x8xf32>
  %wide = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<8x8xf16>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%in: f16, %out: f32):
    %x = arith.extf %in : f16 to f32
    linalg.yield %x : f32
  } -> tensor<8x8xf32>
  %tile = tensor.extract_slice %wide[%i, %j] [2, 4] [1, 1] : tensor<8x8xf32> to tensor<2x4xf32>
  %one = tensor.extract %wide[%i, %j] : tensor<8x8xf32>
  return %tile, %one : tensor<2x4xf32>, f32
}

// -----

// A chunk of rows (one dimension sliced) reads the widened tensor: chunk loops are the target's to widen.
// CHECK-LABEL: func.func @widened_chunk
// CHECK: %[[WIDE:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<8x8xf16>)
// CHECK: tensor.extract_slice %[[WIDE]][%arg1, 0] [2, 8] [1, 1] : tensor<8x8xf32> to tensor<2x8xf32>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @widened_chunk(%w: tensor<8x8xf16>, %i: index) -> tensor<2x8xf32> {
  %e = tensor.empty() : tensor<8x8xf32>
  %wide = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<8x8xf16>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%in: f16, %out: f32):
    %x = arith.extf %in : f16 to f32
    linalg.yield %x : f32
  } -> tensor<8x8xf32>
  %chunk = tensor.extract_slice %wide[%i, 0] [2, 8] [1, 1] : tensor<8x8xf32> to tensor<2x8xf32>
  return %chunk : tensor<2x8xf32>
}

// -----

// A map read by a matrix product (m, n and k: what tensor cores run) fuses into it by default, as one
// read by a matrix-vector product does. With keep-contractions (the CUDA target) the product stays plain,
// its map materialised; the matrix-vector product, which stays on FMA anyway, still takes its map.
// CHECK-LABEL: func.func @map_into_products
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "parallel"]
// CHECK:   arith.mulf
// CHECK:   arith.mulf
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
// CHECK:   arith.mulf
// CHECK:   arith.mulf
// CHECK-NOT: linalg.generic
// KEEP-LABEL: func.func @map_into_products
// KEEP: %[[MAPPED:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// KEEP: linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "parallel"]{{.*}} ins(%{{.*}}, %[[MAPPED]] :
// KEEP-NEXT: ^bb0
// KEEP-NEXT:   arith.mulf
// KEEP-NEXT:   arith.addf
// KEEP: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
// KEEP:   arith.mulf
// KEEP:   arith.mulf
func.func @map_into_products(%v: tensor<32x16xf32>, %c: tensor<32xf32>, %k: tensor<32x8xf32>, %w: tensor<16x8xf32>,
                             %x: tensor<16xf32>) -> (tensor<8x16xf32>, tensor<8xf32>) {
  %vc = la.map mul "me,m->me" %v, %c : tensor<32x16xf32>, tensor<32xf32> -> tensor<32x16xf32>
  %kv = la.contract "md,me->de" %k, %vc : tensor<32x8xf32>, tensor<32x16xf32> -> tensor<8x16xf32>
  %wx = la.map mul "ed,e->ed" %w, %x : tensor<16x8xf32>, tensor<16xf32> -> tensor<16x8xf32>
  %wxs = la.contract "ed,e->d" %wx, %x : tensor<16x8xf32>, tensor<16xf32> -> tensor<8xf32>
  return %kv, %wxs : tensor<8x16xf32>, tensor<8xf32>
}
