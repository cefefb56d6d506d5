// RUN: la-opt %s -split-input-file -la-register-tile-contractions -canonicalize | FileCheck %s

// q·S with a ragged row count: 32 lanes are 2 registers per row, so a block has 8 rows (max-rows) and
// 37 = 4·8 + 5 leaves a 5-row remainder block. Each block's accumulator is carried in registers across the
// reduction loop (iter_args of vector type) and updated with one vector.fma per step.
// CHECK-LABEL: func.func @matmul_ragged_rows
// CHECK: scf.for {{.*}} = %c0 to %c32 step %c8
// CHECK:   vector.transfer_read {{.*}} vector<8x32xf32>
// CHECK:   scf.for {{.*}} = %c0 to %c16 step %c1 iter_args({{.*}}) -> (vector<8x32xf32>)
// CHECK:     %[[COL:.*]] = vector.transfer_read {{.*}} vector<8x1xf32>
// CHECK:     %[[ROW:.*]] = vector.transfer_read {{.*}} vector<32xf32>
// CHECK-DAG: %[[A:.*]] = vector.broadcast %[[COL]] : vector<8x1xf32> to vector<8x32xf32>
// CHECK-DAG: %[[B:.*]] = vector.broadcast %[[ROW]] : vector<32xf32> to vector<8x32xf32>
// CHECK:     vector.fma %[[A]], %[[B]], {{.*}} : vector<8x32xf32>
// CHECK:   vector.transfer_write {{.*}} vector<8x32xf32>
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<5x32xf32>)
// CHECK:   vector.fma {{.*}} : vector<5x32xf32>
// CHECK-NOT: linalg.generic
#a = affine_map<(n, e, d) -> (n, d)>
#b = affine_map<(n, e, d) -> (d, e)>
#c = affine_map<(n, e, d) -> (n, e)>
func.func @matmul_ragged_rows(%q: tensor<37x16xf32>, %s: tensor<16x32xf32>, %init: tensor<37x32xf32>) -> tensor<37x32xf32> {
  %r = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %s : tensor<37x16xf32>, tensor<16x32xf32>) outs(%init : tensor<37x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<37x32xf32>
  return %r : tensor<37x32xf32>
}

// -----

// kᵀ·(v·exp(x)) with the exp fused, in one row block (64 lanes = 4 registers per row, 24 registers = 6
// rows): the exp depends only on the reduction index m, so it runs once per step on one element and is
// broadcast afterwards, never on the 6×64 block. (With several row blocks, la-reduction-panels computes
// v·exp(x) once for all of them instead: la-reduction-panels.mlir, @short_reduction.)
// CHECK-LABEL: func.func @fused_per_step_exp
// CHECK-NOT: linalg.generic
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<6x64xf32>)
// CHECK:   math.exp {{.*}} : vector<1xf32>
// CHECK-NOT: math.exp {{.*}} : vector<6x64xf32>
// CHECK:   vector.fma {{.*}} : vector<6x64xf32>
#k = affine_map<(m, d, e) -> (m, d)>
#v = affine_map<(m, d, e) -> (m, e)>
#x = affine_map<(m, d, e) -> (m)>
#s = affine_map<(m, d, e) -> (d, e)>
func.func @fused_per_step_exp(%k: tensor<100x6xf32>, %v: tensor<100x64xf32>, %x: tensor<100xf32>,
                              %init: tensor<6x64xf32>) -> tensor<6x64xf32> {
  %r = linalg.generic {indexing_maps = [#k, #v, #x, #s], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%k, %v, %x : tensor<100x6xf32>, tensor<100x64xf32>, tensor<100xf32>) outs(%init : tensor<6x64xf32>) {
  ^bb0(%kk: f32, %vv: f32, %xx: f32, %acc: f32):
    %w = math.exp %xx : f32
    %vw = arith.mulf %vv, %w : f32
    %p = arith.mulf %kk, %vw fastmath<contract> : f32
    %sum = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<6x64xf32>
  return %r : tensor<6x64xf32>
}

// -----

// q·kᵀ reads the output's innermost loop m with a stride in k[m, d]: k is copied once into [d, m] (each
// element is reused by all 64 rows) and the product becomes register blocks like any other. The copy
// itself is 16×16 blocks, each one vector.transpose of 16 rows.
// CHECK-LABEL: func.func @transpose_strided_input
// CHECK: %[[KT:.*]] = scf.for {{.*}} to %c32 step %c16 {{.*}} -> (tensor<32x64xf32>)
// CHECK:   scf.for {{.*}} to %c64 step %c16
// CHECK:     %[[TILE:.*]] = vector.transfer_read {{.*}} : tensor<16x16xf32>, vector<16x16xf32>
// CHECK:     vector.transpose %[[TILE]], [1, 0] : vector<16x16xf32> to vector<16x16xf32>
// CHECK-NOT: linalg.transpose
// CHECK: scf.for
// CHECK:   scf.for {{.*}} iter_args({{.*}}) -> (vector<6x64xf32>)
// CHECK:     tensor.extract_slice %[[KT]]
// CHECK:     vector.fma {{.*}} : vector<6x64xf32>
#qn = affine_map<(n, m, d) -> (n, d)>
#km = affine_map<(n, m, d) -> (m, d)>
#nm = affine_map<(n, m, d) -> (n, m)>
func.func @transpose_strided_input(%q: tensor<64x32xf32>, %k: tensor<64x32xf32>, %init: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = linalg.generic {indexing_maps = [#qn, #km, #nm], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<64x32xf32>, tensor<64x32xf32>) outs(%init : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

// With a moved dimension that is not a multiple of 16 (m = 20), the transposed copy stays a
// linalg.transpose (scalar loops later); the product is still register-blocked.
// CHECK-LABEL: func.func @transpose_ragged
// CHECK: %[[KT:.*]] = linalg.transpose ins(%{{.*}} : tensor<20x32xf32>) outs(%{{.*}} : tensor<32x20xf32>) permutation = [1, 0]
// CHECK: vector.fma
#qn = affine_map<(n, m, d) -> (n, d)>
#km = affine_map<(n, m, d) -> (m, d)>
#nm = affine_map<(n, m, d) -> (n, m)>
func.func @transpose_ragged(%q: tensor<64x32xf32>, %k: tensor<20x32xf32>, %init: tensor<64x20xf32>) -> tensor<64x20xf32> {
  %r = linalg.generic {indexing_maps = [#qn, #km, #nm], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<64x32xf32>, tensor<20x32xf32>) outs(%init : tensor<64x20xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<64x20xf32>
  return %r : tensor<64x20xf32>
}

// -----

// A dot product per output element with no row loop (q·z: the vector loop n is strided in q[n, d]) reads
// q once: a transposed copy would not pay off, so it is left to the loop vectoriser.
// CHECK-LABEL: func.func @dot_product_left_alone
// CHECK: linalg.generic
// CHECK-NOT: vector.
// CHECK-NOT: linalg.transpose
#qd = affine_map<(n, d) -> (n, d)>
#zd = affine_map<(n, d) -> (d)>
#on = affine_map<(n, d) -> (n)>
func.func @dot_product_left_alone(%q: tensor<64x32xf32>, %z: tensor<32xf32>, %init: tensor<64xf32>) -> tensor<64xf32> {
  %r = linalg.generic {indexing_maps = [#qd, #zd, #on], iterator_types = ["parallel", "reduction"]}
      ins(%q, %z : tensor<64x32xf32>, tensor<32xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

// kᵀ·(v·c) over a long reduction (200 = 3·64 + 8 steps) with 16 output rows (blocks of 6, 6, 4): the
// reduction is cut into 64-step panels (the ragged last one peeled), and v·c, which does not depend on the
// row loop, is computed once per panel into a 64×64 tile that every row block then reads.
// CHECK-LABEL: func.func @long_reduction_panels
// CHECK:     %[[PANELS:.*]] = scf.for %[[P:.*]] = %c0 to %c192 step %c64 iter_args(%{{.*}} = %{{.*}}) -> (tensor<16x64xf32>)
// CHECK-DAG:   %[[C:.*]] = tensor.extract_slice %{{.*}}[%[[P]]] [64] [1]
// CHECK-DAG:   %[[V:.*]] = tensor.extract_slice %{{.*}}[%[[P]], 0] [64, 64] [1, 1]
// CHECK:       %[[VC:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[V]], %[[C]] : tensor<64x64xf32>, tensor<64xf32>)
// CHECK:         arith.mulf
// CHECK:       scf.for {{.*}} = %c0 to %c12 step %c6
// CHECK:         scf.for {{.*}} = %c0 to %c64 step %c1 iter_args({{.*}}) -> (vector<6x64xf32>)
// CHECK:           tensor.extract_slice %[[VC]]
// CHECK-NOT:       arith.mulf
// CHECK:           vector.fma {{.*}} : vector<6x64xf32>
// CHECK:       scf.for {{.*}} = %c0 to %c64 step %c1 iter_args({{.*}}) -> (vector<4x64xf32>)
// CHECK:     linalg.generic {{.*}} ins({{.*}} : tensor<8x64xf32>, tensor<8xf32>)
// CHECK:     scf.for {{.*}} = %c0 to %c12 step %c6
// CHECK:       scf.for {{.*}} = %c0 to %c8 step %c1 iter_args({{.*}}) -> (vector<6x64xf32>)
#k2 = affine_map<(m, d, e) -> (m, d)>
#v2 = affine_map<(m, d, e) -> (m, e)>
#c2 = affine_map<(m, d, e) -> (m)>
#s2 = affine_map<(m, d, e) -> (d, e)>
func.func @long_reduction_panels(%k: tensor<200x16xf32>, %v: tensor<200x64xf32>, %c: tensor<200xf32>,
                                 %init: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %r = linalg.generic {indexing_maps = [#k2, #v2, #c2, #s2], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%k, %v, %c : tensor<200x16xf32>, tensor<200x64xf32>, tensor<200xf32>) outs(%init : tensor<16x64xf32>) {
  ^bb0(%kk: f32, %vv: f32, %cc: f32, %acc: f32):
    %vc = arith.mulf %vv, %cc : f32
    %p = arith.mulf %kk, %vc fastmath<contract> : f32
    %sum = arith.addf %acc, %p fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}

// -----

// A gate w[n]·(q·s)[n,e], the product's only user, runs on each register block: the gate is tiled by the
// block (37 rows = 4·8 + 5, the last block peeled), the product and the zero fill of its accumulator are
// fused into each tile, and each block multiplies its accumulators by w and stores them straight into the
// output. No 37×32 accumulator is filled, written or read back.
// CHECK-LABEL: func.func @gated_product
// CHECK-NOT:   linalg.fill
// CHECK:       scf.for %[[N:.*]] = %c0 to %c32 step %c8 iter_args(%[[OUT:.*]] = %{{.*}}) -> (tensor<37x32xf32>)
// CHECK:         %[[ACC:.*]] = scf.for {{.*}} = %c0 to %c16 step %c1 iter_args(%{{.*}} = %cst{{.*}}) -> (vector<8x32xf32>)
// CHECK:           vector.fma {{.*}} : vector<8x32xf32>
// CHECK:         tensor.extract_slice %{{.*}}[%[[N]]] [8] [1] : tensor<37xf32> to tensor<8xf32>
// CHECK:         %[[SLICE:.*]] = tensor.extract_slice %[[OUT]][%[[N]], 0] [8, 32] [1, 1]
// CHECK:         %[[GATED:.*]] = arith.mulf %{{.*}}, %[[ACC]] : vector<8x32xf32>
// CHECK:         %[[STORED:.*]] = vector.transfer_write %[[GATED]], %[[SLICE]]
// CHECK:         tensor.insert_slice %[[STORED]] into %[[OUT]][%[[N]], 0] [8, 32] [1, 1]
// CHECK:       scf.for {{.*}} iter_args({{.*}}) -> (vector<5x32xf32>)
// CHECK:       arith.mulf {{.*}} : vector<5x32xf32>
// CHECK:       vector.transfer_write {{.*}} : vector<5x32xf32>, tensor<5x32xf32>
// CHECK-NOT:   linalg.generic
#q3 = affine_map<(n, e, d) -> (n, d)>
#s3 = affine_map<(n, e, d) -> (d, e)>
#r3 = affine_map<(n, e, d) -> (n, e)>
#row = affine_map<(n, e) -> (n)>
#id = affine_map<(n, e) -> (n, e)>
func.func @gated_product(%q: tensor<37x16xf32>, %s: tensor<16x32xf32>, %w: tensor<37xf32>) -> tensor<37x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<37x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<37x32xf32>) -> tensor<37x32xf32>
  %p = linalg.generic {indexing_maps = [#q3, #s3, #r3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %s : tensor<37x16xf32>, tensor<16x32xf32>) outs(%init : tensor<37x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %m fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<37x32xf32>
  %r = linalg.generic {indexing_maps = [#row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w, %p : tensor<37xf32>, tensor<37x32xf32>) outs(%empty : tensor<37x32xf32>) {
  ^bb0(%ww: f32, %pp: f32, %out: f32):
    %g = arith.mulf %ww, %pp : f32
    linalg.yield %g : f32
  } -> tensor<37x32xf32>
  return %r : tensor<37x32xf32>
}

// -----

// A consumer of two products with one plan (num / den) runs on the blocks of both: each block computes its
// tile of the numerator, then of the denominator, each in registers, then divides. Neither product is
// stored whole.
// CHECK-LABEL: func.func @ratio_of_products
// CHECK:       scf.for %{{.*}} = %c0 to %c32 step %c8 iter_args({{.*}}) -> (tensor<37x32xf32>)
// CHECK:         %[[NUM:.*]] = scf.for {{.*}} -> (vector<8x32xf32>)
// CHECK:           vector.fma {{.*}} : vector<8x32xf32>
// CHECK:         %[[DEN:.*]] = scf.for {{.*}} -> (vector<8x32xf32>)
// CHECK:           vector.fma {{.*}} : vector<8x32xf32>
// CHECK:         arith.divf %[[NUM]], %[[DEN]] : vector<8x32xf32>
// CHECK:       %[[NUM5:.*]] = scf.for {{.*}} -> (vector<5x32xf32>)
// CHECK:       %[[DEN5:.*]] = scf.for {{.*}} -> (vector<5x32xf32>)
// CHECK:       arith.divf %[[NUM5]], %[[DEN5]] : vector<5x32xf32>
#q4 = affine_map<(n, e, d) -> (n, d)>
#s4 = affine_map<(n, e, d) -> (d, e)>
#r4 = affine_map<(n, e, d) -> (n, e)>
#id4 = affine_map<(n, e) -> (n, e)>
func.func @ratio_of_products(%q: tensor<37x16xf32>, %s: tensor<16x32xf32>, %t: tensor<16x32xf32>) -> tensor<37x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<37x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<37x32xf32>) -> tensor<37x32xf32>
  %num = linalg.generic {indexing_maps = [#q4, #s4, #r4], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %s : tensor<37x16xf32>, tensor<16x32xf32>) outs(%init : tensor<37x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %m fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<37x32xf32>
  %den = linalg.generic {indexing_maps = [#q4, #s4, #r4], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %t : tensor<37x16xf32>, tensor<16x32xf32>) outs(%init : tensor<37x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %m fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<37x32xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel"]}
      ins(%num, %den : tensor<37x32xf32>, tensor<37x32xf32>) outs(%empty : tensor<37x32xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %g = arith.divf %a, %b : f32
    linalg.yield %g : f32
  } -> tensor<37x32xf32>
  return %r : tensor<37x32xf32>
}

// -----

// A chunk loop writes its 32×16 output 8 rows at a time; the gate that consumes it runs on each chunk in
// the loop (moved in front of it: the gate's weights, computed after the loop but independent of it), and
// the loop no longer builds the ungated result.
// CHECK-LABEL: func.func @gated_chunk_loop
// CHECK:       %[[W:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<32xf32>)
// CHECK:         math.exp
// CHECK:       %[[OUT:.*]] = scf.for %[[C:.*]] = %c0 to %c32 step %c8 iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<32x16xf32>) {
// CHECK:         %[[TILE:.*]] = linalg.generic
// CHECK:         tensor.extract_slice %[[W]][%[[C]]] [8] [1]
// CHECK:         %[[SQUARES:.*]] = vector.transfer_read %[[TILE]]
// CHECK:         arith.mulf %{{.*}}, %[[SQUARES]] : vector<8x16xf32>
// CHECK:         vector.transfer_write {{.*}} : vector<8x16xf32>, tensor<8x16xf32>
// CHECK:         tensor.insert_slice {{.*}} into %[[ACC]][%[[C]], 0] [8, 16] [1, 1]
// CHECK-NOT:     tensor.insert_slice
// CHECK:         scf.yield
// CHECK:       return %[[OUT]]
#chunk = affine_map<(n, e) -> (n, e)>
#gate_row = affine_map<(n, e) -> (n)>
#vec = affine_map<(n) -> (n)>
func.func @gated_chunk_loop(%x: tensor<32x16xf32>, %s: tensor<32xf32>) -> tensor<32x16xf32> {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %empty = tensor.empty() : tensor<32x16xf32>
  %num = scf.for %c = %c0 to %c32 step %c8 iter_args(%acc = %empty) -> (tensor<32x16xf32>) {
    %in = tensor.extract_slice %x[%c, 0] [8, 16] [1, 1] : tensor<32x16xf32> to tensor<8x16xf32>
    %tile_init = tensor.empty() : tensor<8x16xf32>
    %tile = linalg.generic {indexing_maps = [#chunk, #chunk], iterator_types = ["parallel", "parallel"]}
        ins(%in : tensor<8x16xf32>) outs(%tile_init : tensor<8x16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %sq = arith.mulf %a, %a : f32
      linalg.yield %sq : f32
    } -> tensor<8x16xf32>
    %next = tensor.insert_slice %tile into %acc[%c, 0] [8, 16] [1, 1] : tensor<8x16xf32> into tensor<32x16xf32>
    scf.yield %next : tensor<32x16xf32>
  }
  %w_init = tensor.empty() : tensor<32xf32>
  %w = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%s : tensor<32xf32>) outs(%w_init : tensor<32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  } -> tensor<32xf32>
  %r = linalg.generic {indexing_maps = [#gate_row, #chunk, #chunk], iterator_types = ["parallel", "parallel"]}
      ins(%w, %num : tensor<32xf32>, tensor<32x16xf32>) outs(%empty : tensor<32x16xf32>) {
  ^bb0(%ww: f32, %nn: f32, %o: f32):
    %g = arith.mulf %ww, %nn : f32
    linalg.yield %g : f32
  } -> tensor<32x16xf32>
  return %r : tensor<32x16xf32>
}

// -----

// A scan loop writes one [B, D] row of its [B, N, D] result per step, through a rank-reducing insert (AFT's
// online-softmax scan at batch 3: `lac compile kernels/aft.mlir --entry aft_causal --shape 3x100x48` failed
// here with "'vector.transfer_read' op requires a permutation_map with input dims of the same rank as the
// source type"). The gate that consumes it is fused into the loop with the row expanded to the slice's rank,
// [3, 1, 16], so its tile has the rank of its indexing maps.
// CHECK-LABEL: func.func @gated_rank_reduced_rows
// CHECK:       %[[OUT:.*]] = scf.for %[[N:.*]] = %c0 to %c8 step %c1 iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<3x8x16xf32>) {
// CHECK:         %[[ROW:.*]] = linalg.generic
// CHECK:         } -> tensor<3x16xf32>
// CHECK:         %[[TILE:.*]] = tensor.expand_shape %[[ROW]] {{\[}}[0], [1, 2]] output_shape [3, 1, 16] : tensor<3x16xf32> into tensor<3x1x16xf32>
// CHECK:         %[[Q:.*]] = tensor.extract_slice %{{.*}}[0, %[[N]], 0] [3, 1, 16] [1, 1, 1] : tensor<3x8x16xf32> to tensor<3x1x16xf32>
// CHECK-DAG:     %[[QV:.*]] = vector.transfer_read %[[Q]]{{.*}} : tensor<3x1x16xf32>, vector<3x1x16xf32>
// CHECK-DAG:     %[[ROWV:.*]] = vector.transfer_read %[[TILE]]{{.*}} : tensor<3x1x16xf32>, vector<3x1x16xf32>
// CHECK:         %[[GATED:.*]] = arith.mulf %[[QV]], %[[ROWV]] : vector<3x1x16xf32>
// CHECK:         %[[WRITTEN:.*]] = vector.transfer_write %[[GATED]], {{.*}} : vector<3x1x16xf32>, tensor<3x1x16xf32>
// CHECK:         %[[NEXT:.*]] = tensor.insert_slice %[[WRITTEN]] into %[[ACC]][0, %[[N]], 0] [3, 1, 16] [1, 1, 1]
// CHECK-NOT:     tensor.insert_slice
// CHECK:         scf.yield %[[NEXT]]
// CHECK:       return %[[OUT]]
#row = affine_map<(b, e) -> (b, e)>
#all = affine_map<(b, n, e) -> (b, n, e)>
func.func @gated_rank_reduced_rows(%x: tensor<3x8x16xf32>, %q: tensor<3x8x16xf32>) -> tensor<3x8x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %empty = tensor.empty() : tensor<3x8x16xf32>
  %rows = scf.for %n = %c0 to %c8 step %c1 iter_args(%acc = %empty) -> (tensor<3x8x16xf32>) {
    %in = tensor.extract_slice %x[0, %n, 0] [3, 1, 16] [1, 1, 1] : tensor<3x8x16xf32> to tensor<3x16xf32>
    %row_init = tensor.empty() : tensor<3x16xf32>
    %row = linalg.generic {indexing_maps = [#row, #row], iterator_types = ["parallel", "parallel"]}
        ins(%in : tensor<3x16xf32>) outs(%row_init : tensor<3x16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %sq = arith.mulf %a, %a : f32
      linalg.yield %sq : f32
    } -> tensor<3x16xf32>
    %next = tensor.insert_slice %row into %acc[0, %n, 0] [3, 1, 16] [1, 1, 1] : tensor<3x16xf32> into tensor<3x8x16xf32>
    scf.yield %next : tensor<3x8x16xf32>
  }
  %r = linalg.generic {indexing_maps = [#all, #all, #all], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%q, %rows : tensor<3x8x16xf32>, tensor<3x8x16xf32>) outs(%empty : tensor<3x8x16xf32>) {
  ^bb0(%qq: f32, %rr: f32, %o: f32):
    %g = arith.mulf %qq, %rr : f32
    linalg.yield %g : f32
  } -> tensor<3x8x16xf32>
  return %r : tensor<3x8x16xf32>
}

// -----

// Causal scores tril(q·kᵀ) (a chunk's 16×16): the mask is the product's epilogue, so the product is tiled
// into 8-row blocks before it is planned, and its strided k needs a transposed copy. The copy is made once,
// in front of the loop of blocks (k does not change across blocks), not once per block.
// CHECK-LABEL: func.func @masked_scores_transpose_once
// CHECK:       %[[KT:.*]] = scf.for {{.*}} = %c0 to %c64 step %c16 {{.*}} -> (tensor<64x16xf32>)
// CHECK:         vector.transpose
// CHECK:       scf.for %[[N:.*]] = %c0 to %c16 step %c8 {{.*}} -> (tensor<16x16xf32>)
// CHECK-NOT:     vector.transpose
// CHECK:         tensor.extract_slice %[[KT]]
// CHECK:         vector.fma {{.*}} : vector<8x16xf32>
// CHECK:         arith.cmpi uge
// CHECK:         arith.select
#qs = affine_map<(n, m, d) -> (n, d)>
#ks = affine_map<(n, m, d) -> (m, d)>
#ss = affine_map<(n, m, d) -> (n, m)>
#id2 = affine_map<(n, m) -> (n, m)>
func.func @masked_scores_transpose_once(%q: tensor<16x64xf32>, %k: tensor<16x64xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<16x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<16x16xf32>) -> tensor<16x16xf32>
  %p = linalg.generic {indexing_maps = [#qs, #ks, #ss], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<16x64xf32>, tensor<16x64xf32>) outs(%init : tensor<16x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y fastmath<contract> : f32
    %sum = arith.addf %acc, %m fastmath<contract> : f32
    linalg.yield %sum : f32
  } -> tensor<16x16xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<16x16xf32>) outs(%empty : tensor<16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %row = linalg.index 0 : index
    %col = linalg.index 1 : index
    %keep = arith.cmpi uge, %row, %col : index
    %v = arith.select %keep, %in, %zero : f32
    linalg.yield %v : f32
  } -> tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}

// -----

// A loop over two slices runs a chunk loop over 24 of each slice's 32 rows, then inserts the 8-row tail into
// that loop's result: the yielded insert is not all an iteration writes, so the consumer (a narrowing to f16)
// is not fused into the slice loop, where it would see the tails alone. It runs on the whole result after.
// CHECK-LABEL: func.func @slice_loop_with_tail
// CHECK:       %[[OUT:.*]] = scf.for {{.*}} -> (tensor<2x32x16xf32>) {
// CHECK-NOT:     arith.truncf
// CHECK:         scf.yield
// CHECK:       linalg.generic {{.*}} ins(%[[OUT]] : tensor<2x32x16xf32>) outs(%{{.*}} : tensor<2x32x16xf16>)
// CHECK:         arith.truncf
#slice3 = affine_map<(b, n, e) -> (b, n, e)>
func.func @slice_loop_with_tail(%x: tensor<2x32x16xf32>) -> tensor<2x32x16xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c24 = arith.constant 24 : index
  %empty = tensor.empty() : tensor<2x32x16xf32>
  %all = scf.for %b = %c0 to %c2 step %c1 iter_args(%acc = %empty) -> (tensor<2x32x16xf32>) {
    %chunks = scf.for %c = %c0 to %c24 step %c8 iter_args(%rows = %acc) -> (tensor<2x32x16xf32>) {
      %in = tensor.extract_slice %x[%b, %c, 0] [1, 8, 16] [1, 1, 1] : tensor<2x32x16xf32> to tensor<1x8x16xf32>
      %next = tensor.insert_slice %in into %rows[%b, %c, 0] [1, 8, 16] [1, 1, 1] : tensor<1x8x16xf32> into tensor<2x32x16xf32>
      scf.yield %next : tensor<2x32x16xf32>
    }
    %tail = tensor.extract_slice %x[%b, 24, 0] [1, 8, 16] [1, 1, 1] : tensor<2x32x16xf32> to tensor<1x8x16xf32>
    %done = tensor.insert_slice %tail into %chunks[%b, 24, 0] [1, 8, 16] [1, 1, 1] : tensor<1x8x16xf32> into tensor<2x32x16xf32>
    scf.yield %done : tensor<2x32x16xf32>
  }
  %half_init = tensor.empty() : tensor<2x32x16xf16>
  %half = linalg.generic {indexing_maps = [#slice3, #slice3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%all : tensor<2x32x16xf32>) outs(%half_init : tensor<2x32x16xf16>) {
  ^bb0(%a: f32, %o: f16):
    %t = arith.truncf %a : f32 to f16
    linalg.yield %t : f16
  } -> tensor<2x32x16xf16>
  return %half : tensor<2x32x16xf16>
}
