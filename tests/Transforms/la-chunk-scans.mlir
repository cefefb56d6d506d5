// RUN: la-opt %s -split-input-file -la-chunk-scans="chunk-size=4 scan-chunk-size=4" | FileCheck %s
// RUN: not la-opt %s -split-input-file -la-chunk-scans=scan-chunk-size=0 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: la-opt %s -split-input-file -la-chunk-scans="chunk-size=4 factor-gated-scores=false" | FileCheck %s --check-prefix=EXACT

// BAD: la-chunk-scans: chunk-size and scan-chunk-size must be positive and pair-tile not negative, got 16, 0 and 0

// Causal linear attention's numerator: the [N, D, Dv] scan of outer products disappears. N = 10 is two full
// chunks of 4 in the loop plus a static tail of 2.
// CHECK-LABEL: func.func @outer_product_scan
// CHECK-NOT: la.scan
// CHECK: %[[S0:.*]] = arith.constant dense<0.000000e+00> : tensor<1x3x2xf32>
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[C:.*]] = %c0 to %c8 step %c4 iter_args(%[[S:.*]] = %[[S0]], %[[O:.*]] = %{{.*}})
// CHECK:   %[[Q:.*]] = tensor.extract_slice %arg0[0, %[[C]], 0] [1, 4, 3]
// CHECK:   %[[K:.*]] = tensor.extract_slice %arg1[0, %[[C]], 0] [1, 4, 3]
// CHECK:   %[[V:.*]] = tensor.extract_slice %arg2[0, %[[C]], 0] [1, 4, 2]
// CHECK:   %[[INTER:.*]] = la.contract "bnd,bde->bne" %[[Q]], %[[S]]
// CHECK:   %[[A:.*]] = la.contract "bnd,bmd->bnm" %[[Q]], %[[K]] mask tril(n, m) {{.*}} -> tensor<1x4x4xf32>
// CHECK:   %[[INTRA:.*]] = la.contract "bnm,bme->bne" %[[A]], %[[V]]
// CHECK:   %[[SUM:.*]] = la.map add %[[INTER]], %[[INTRA]]
// CHECK:   tensor.insert_slice %[[SUM]] into %[[O]][0, %[[C]], 0] [1, 4, 2]
// CHECK:   %[[DELTA:.*]] = la.contract "bmd,bme->bde" %[[K]], %[[V]]
// CHECK:   la.map add %[[S]], %[[DELTA]]
// CHECK: la.contract "bnd,bmd->bnm" {{.*}} mask tril(n, m) {{.*}} -> tensor<1x2x2xf32>
// CHECK: tensor.insert_slice {{.*}} into %[[LOOP]]#1[0, %c8, 0] [1, 2, 2]
func.func @outer_product_scan(%q: tensor<1x10x3xf32>, %k: tensor<1x10x3xf32>, %v: tensor<1x10x2xf32>) -> tensor<1x10x2xf32> {
  %kv = la.contract "bnd,bne->bnde" %k, %v : tensor<1x10x3xf32>, tensor<1x10x2xf32> -> tensor<1x10x3x2xf32>
  %s = la.scan add %kv along 1 inclusive : tensor<1x10x3x2xf32> -> tensor<1x10x3x2xf32>
  %o = la.contract "bnd,bnde->bne" %q, %s : tensor<1x10x3xf32>, tensor<1x10x3x2xf32> -> tensor<1x10x2xf32>
  return %o : tensor<1x10x2xf32>
}

// -----

// The normaliser: a scan of k read by a dot product with q, with a [D] running sum. It is chunked like
// every prefix sum a dot reads (rewrite 6), not as a tril contraction: each chunk takes an in-chunk prefix
// sum of k seeded with the carried sum (O(C·D); no C×C tile), dots it with q, and carries its last row.
// CHECK-LABEL: func.func @vector_scan
// CHECK: scf.for {{.*}} iter_args(%[[Z:.*]] = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<1x3xf32>, tensor<1x8xf32>)
// CHECK:   %[[K:.*]] = tensor.extract_slice %arg1
// CHECK:   %[[P:.*]] = la.scan add %[[K]] init(%[[Z]] : tensor<1x3xf32>) along 1 inclusive
// CHECK:   %[[Q:.*]] = tensor.extract_slice %arg0
// CHECK:   la.contract "bnd,bnd->bn" %[[Q]], %[[P]]
// CHECK:   %[[LAST:.*]] = tensor.extract_slice %[[P]][0, 3, 0] [1, 1, 3]
// CHECK:   linalg.copy ins(%[[LAST]] : tensor<1x3xf32>) outs(%[[Z]] : tensor<1x3xf32>)
// CHECK-NOT: mask
func.func @vector_scan(%q: tensor<1x8x3xf32>, %k: tensor<1x8x3xf32>) -> tensor<1x8xf32> {
  %z = la.scan add %k along 1 inclusive : tensor<1x8x3xf32> -> tensor<1x8x3xf32>
  %d = la.contract "bnd,bnd->bn" %q, %z : tensor<1x8x3xf32>, tensor<1x8x3xf32> -> tensor<1x8xf32>
  return %d : tensor<1x8xf32>
}

// -----

// A sequence no longer than a chunk keeps the masked contraction (one C×C tile).
// CHECK-LABEL: func.func @short_sequence
// CHECK-NOT: scf.for
// CHECK: la.contract "bnd,bmd,bme->bne" %arg0, %arg1, %arg2 mask tril(n, m)
func.func @short_sequence(%q: tensor<1x4x3xf32>, %k: tensor<1x4x3xf32>, %v: tensor<1x4x2xf32>) -> tensor<1x4x2xf32> {
  %kv = la.contract "bnd,bne->bnde" %k, %v : tensor<1x4x3xf32>, tensor<1x4x2xf32> -> tensor<1x4x3x2xf32>
  %s = la.scan add %kv along 1 inclusive : tensor<1x4x3x2xf32> -> tensor<1x4x3x2xf32>
  %o = la.contract "bnd,bnde->bne" %q, %s : tensor<1x4x3xf32>, tensor<1x4x3x2xf32> -> tensor<1x4x2xf32>
  return %o : tensor<1x4x2xf32>
}

// -----

// Not a causal product: an exclusive scan, and a scan with a second reader, are left alone.
// CHECK-LABEL: func.func @not_causal
// CHECK: la.scan add %{{.*}} along 1 exclusive
// CHECK: la.scan add %{{.*}} along 1 inclusive
// CHECK-NOT: mask
func.func @not_causal(%q: tensor<1x8x3xf32>, %k: tensor<1x8x3xf32>) -> (tensor<1x8xf32>, tensor<1x8x3xf32>) {
  %z = la.scan add %k along 1 exclusive : tensor<1x8x3xf32> -> tensor<1x8x3xf32>
  %d = la.contract "bnd,bnd->bn" %q, %z : tensor<1x8x3xf32>, tensor<1x8x3xf32> -> tensor<1x8xf32>
  %w = la.scan add %q along 1 inclusive : tensor<1x8x3xf32> -> tensor<1x8x3xf32>
  %e = la.contract "bnd,bnd->bn" %k, %w : tensor<1x8x3xf32>, tensor<1x8x3xf32> -> tensor<1x8xf32>
  %r = la.map add %d, %e : tensor<1x8xf32>, tensor<1x8xf32> -> tensor<1x8xf32>
  return %r, %w : tensor<1x8xf32>, tensor<1x8x3xf32>
}

// -----

// A decay scan (simple GLA, one gate per position) read by q, with an initial state and its final state
// taken: chunks of 4 over N = 10 carry the [K, V] state; each chunk decays q by e^{b} (b the in-chunk
// cumsum), scores with a decay mask, and updates S ← e^{b_last} S + (k ⊙ e^{b_last - b})ᵀ v. The final slice
// becomes the state after the tail chunk; no [N, K, V] tensor remains.
// CHECK-LABEL: func.func @decay_scan
// CHECK-NOT: tensor<1x10x3x2xf32>
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[C:.*]] = %c0 to %c8 step %c4 iter_args(%[[S:.*]] = %arg4, %[[O:.*]] = %{{.*}})
// CHECK:   %[[G:.*]] = tensor.extract_slice %arg3[0, %[[C]]] [1, 4]
// CHECK:   %[[B:.*]] = la.scan add %[[G]] along 1 inclusive
// CHECK:   %[[LAST:.*]] = la.reduce add %[[G]] along [1]
// CHECK:   la.map exp %[[B]]
// CHECK:   la.contract "bnd,bmd->bnm" {{.*}} mask decay(n, m) gate(%[[G]] : tensor<1x4xf32>)
// CHECK:   la.contract "bnd,bde->bne" {{.*}}, %[[S]]
// CHECK:   la.map sub "b,bn->bn" %[[LAST]], %[[B]]
// CHECK:   la.map exp %[[LAST]]
// CHECK:   scf.yield
// CHECK: la.contract "bnd,bmd->bnm" {{.*}} mask decay(n, m) {{.*}} -> tensor<1x2x2xf32>
// CHECK: la.map exp {{.*}} : tensor<1xf32>
// CHECK: la.map mul "b,bde->bde"
// CHECK: %[[FINAL:.*]] = la.map add
// CHECK: return %{{.*}}, %[[FINAL]]
func.func @decay_scan(%q: tensor<1x10x3xf32>, %k: tensor<1x10x3xf32>, %v: tensor<1x10x2xf32>, %g: tensor<1x10xf32>,
                      %h0: tensor<1x3x2xf32>) -> (tensor<1x10x2xf32>, tensor<1x3x2xf32>) {
  %kv = la.contract "bnd,bne->bnde" %k, %v : tensor<1x10x3xf32>, tensor<1x10x2xf32> -> tensor<1x10x3x2xf32>
  %s = la.scan decay %kv, %g init(%h0 : tensor<1x3x2xf32>) along 1 inclusive : tensor<1x10x3x2xf32>, tensor<1x10xf32> -> tensor<1x10x3x2xf32>
  %o = la.contract "bnd,bnde->bne" %q, %s : tensor<1x10x3xf32>, tensor<1x10x3x2xf32> -> tensor<1x10x2xf32>
  %last = tensor.extract_slice %s[0, 9, 0, 0] [1, 1, 3, 2] [1, 1, 1, 1] : tensor<1x10x3x2xf32> to tensor<1x1x3x2xf32>
  %final = tensor.collapse_shape %last [[0], [1, 2], [3]] : tensor<1x1x3x2xf32> into tensor<1x3x2xf32>
  return %o, %final : tensor<1x10x2xf32>, tensor<1x3x2xf32>
}

// -----

// A decay scan with one gate per position and key (GLA): each chunk's scores are the tril-masked product of
// q ⊙ e^{b} and k ⊙ e^{-b} while the chunk decays by at most e^{-40} on every key (the smallest of b_last
// against -40), and the exact decay-masked contraction otherwise. With factor-gated-scores=false, always
// the exact form.
// CHECK-LABEL: func.func @decay_scan_per_key
// CHECK: scf.for
// CHECK:   %[[B:.*]] = la.scan add %{{.*}} along 1 inclusive : tensor<1x4x3xf32>
// CHECK:   %[[LAST:.*]] = la.reduce add
// CHECK:   %[[QD:.*]] = la.map mul "bnd,bnd->bnd"
// CHECK:   %[[SMALLEST:.*]] = la.reduce min %[[LAST]] along [1] : tensor<1x3xf32> -> tensor<1xf32>
// CHECK:   %[[DECAY:.*]] = tensor.extract %[[SMALLEST]]
// CHECK:   %[[OK:.*]] = arith.cmpf oge, %[[DECAY]], %{{.*}} : f32
// CHECK:   scf.if %[[OK]] -> (tensor<1x4x4xf32>)
// CHECK:     la.map neg %[[B]]
// CHECK:     %[[KG:.*]] = la.map mul "bnd,bnd->bnd"
// CHECK:     la.contract "bnd,bmd->bnm" %[[QD]], %[[KG]] mask tril(n, m)
// CHECK:   else
// CHECK:     la.contract "bnd,bmd->bnm" {{.*}} mask decay(n, m) gate
// EXACT-LABEL: func.func @decay_scan_per_key
// EXACT-NOT: scf.if
// EXACT: la.contract "bnd,bmd->bnm" {{.*}} mask decay(n, m) gate
// EXACT-NOT: scf.if
// EXACT-LABEL: func.func @decay_scan_one_slice
func.func @decay_scan_per_key(%q: tensor<1x8x3xf32>, %k: tensor<1x8x3xf32>, %v: tensor<1x8x2xf32>,
                              %g: tensor<1x8x3xf32>) -> tensor<1x8x2xf32> {
  %kv = la.contract "bnd,bne->bnde" %k, %v : tensor<1x8x3xf32>, tensor<1x8x2xf32> -> tensor<1x8x3x2xf32>
  %s = la.scan decay %kv, %g along 1 inclusive : tensor<1x8x3x2xf32>, tensor<1x8x3xf32> -> tensor<1x8x3x2xf32>
  %o = la.contract "bnd,bnde->bne" %q, %s : tensor<1x8x3xf32>, tensor<1x8x3x2xf32> -> tensor<1x8x2xf32>
  return %o : tensor<1x8x2xf32>
}

// -----

// One (batch, head) slice, as the runtime compiles: q's scaling is one pass over the slice before the chunk
// loop, and each chunk reads a slice of it (a chunk-sized temporary per chunk measured slower).
// CHECK-LABEL: func.func @decay_scan_one_slice
// CHECK: %[[QS:.*]] = la.map mul_const(0.5) %arg0 : tensor<1x1x10x4xf32>
// CHECK: scf.for
// CHECK-NOT: la.map mul_const
// CHECK: tensor.extract_slice %[[QS]]
func.func @decay_scan_one_slice(%q: tensor<1x1x10x4xf32>, %k: tensor<1x1x10x4xf32>, %v: tensor<1x1x10x2xf32>,
                                %g: tensor<1x1x10xf32>) -> tensor<1x1x10x2xf32> {
  %qs = la.map mul_const(0.5) %q : tensor<1x1x10x4xf32> -> tensor<1x1x10x4xf32>
  %kv = la.contract "bhnd,bhne->bhnde" %k, %v : tensor<1x1x10x4xf32>, tensor<1x1x10x2xf32> -> tensor<1x1x10x4x2xf32>
  %s = la.scan decay %kv, %g along 2 inclusive : tensor<1x1x10x4x2xf32>, tensor<1x1x10xf32> -> tensor<1x1x10x4x2xf32>
  %o = la.contract "bhnd,bhnde->bhne" %qs, %s : tensor<1x1x10x4xf32>, tensor<1x1x10x4x2xf32> -> tensor<1x1x10x2xf32>
  return %o : tensor<1x1x10x2xf32>
}

// -----

// Several (batch, head) slices, as a kernel compiled unsliced has: a loop over each leading dimension longer
// than one (b: 2, h: 3) runs the chunk loop of one slice at a time, so the carried state is one slice's
// [1, 1, K, V] and starts from that slice of h0. Every operand is sliced at (b, h, chunk); q's scaling (a
// single-use map) is recomputed on the chunk instead of being built over the whole sequence. Each chunk's
// rows go straight into the [B, H, N, V] result, and each slice's final state into the [B, H, K, V] one.
// CHECK-LABEL: func.func @decay_scan_heads
// CHECK-NOT: tensor<2x3x10x4x2xf32>
// CHECK: %[[OUT:.*]]:2 = scf.for %[[B:.*]] = %c0 to %c2 step %c1 iter_args(%[[RES:.*]] = %{{.*}}, %[[FIN:.*]] = %{{.*}})
// CHECK:   %[[SL:.*]]:2 = scf.for %[[H:.*]] = %{{.*}} to %c3 step %{{.*}} iter_args(%[[RES2:.*]] = %[[RES]], %[[FIN2:.*]] = %[[FIN]])
// CHECK:     %[[H0:.*]] = tensor.extract_slice %arg4[%[[B]], %[[H]], 0, 0] [1, 1, 4, 2]
// CHECK:     %[[CH:.*]]:2 = scf.for %[[C:.*]] = %{{.*}} to %c8 step %c4 iter_args(%[[S:.*]] = %[[H0]], %[[O:.*]] = %[[RES2]])
// CHECK:       %[[Q:.*]] = tensor.extract_slice %arg0[%[[B]], %[[H]], %[[C]], 0] [1, 1, 4, 4]
// CHECK:       %[[QS:.*]] = la.map mul_const(0.5) %[[Q]] : tensor<1x1x4x4xf32>
// CHECK:       la.contract "bhnd,bhmd->bhnm" %[[QS]], {{.*}} mask decay(n, m) {{.*}} -> tensor<1x1x4x4xf32>
// CHECK:       la.contract "bhnd,bhde->bhne" {{.*}}, %[[S]]
// CHECK:       tensor.insert_slice {{.*}} into %[[O]][%[[B]], %[[H]], %[[C]], 0] [1, 1, 4, 2]
// CHECK:     tensor.insert_slice {{.*}} into %[[CH]]#1[%[[B]], %[[H]], %c8, 0] [1, 1, 2, 2]
// CHECK:     tensor.insert_slice {{.*}} into %[[FIN2]][%[[B]], %[[H]], 0, 0] [1, 1, 4, 2]
// CHECK: return %[[OUT]]#0, %[[OUT]]#1 : tensor<2x3x10x2xf32>, tensor<2x3x4x2xf32>
func.func @decay_scan_heads(%q: tensor<2x3x10x4xf32>, %k: tensor<2x3x10x4xf32>, %v: tensor<2x3x10x2xf32>,
                            %g: tensor<2x3x10xf32>, %h0: tensor<2x3x4x2xf32>) -> (tensor<2x3x10x2xf32>, tensor<2x3x4x2xf32>) {
  %qs = la.map mul_const(0.5) %q : tensor<2x3x10x4xf32> -> tensor<2x3x10x4xf32>
  %kv = la.contract "bhnd,bhne->bhnde" %k, %v : tensor<2x3x10x4xf32>, tensor<2x3x10x2xf32> -> tensor<2x3x10x4x2xf32>
  %s = la.scan decay %kv, %g init(%h0 : tensor<2x3x4x2xf32>) along 2 inclusive
      : tensor<2x3x10x4x2xf32>, tensor<2x3x10xf32> -> tensor<2x3x10x4x2xf32>
  %o = la.contract "bhnd,bhnde->bhne" %qs, %s : tensor<2x3x10x4xf32>, tensor<2x3x10x4x2xf32> -> tensor<2x3x10x2xf32>
  %last = tensor.extract_slice %s[0, 0, 9, 0, 0] [2, 3, 1, 4, 2] [1, 1, 1, 1, 1] : tensor<2x3x10x4x2xf32> to tensor<2x3x1x4x2xf32>
  %final = tensor.collapse_shape %last [[0], [1], [2, 3], [4]] : tensor<2x3x1x4x2xf32> into tensor<2x3x4x2xf32>
  return %o, %final : tensor<2x3x10x2xf32>, tensor<2x3x4x2xf32>
}

// -----

// A sequence of one position is its own last position: the final-state slice has folded away and the
// collapse reads the scan directly. It is still the state after the (single, partial) chunk.
// CHECK-LABEL: func.func @decay_scan_one_position
// CHECK-NOT: la.scan decay
// CHECK-NOT: tensor.collapse_shape
// CHECK: la.contract "bnd,bmd->bnm" {{.*}} mask decay(n, m) {{.*}} -> tensor<1x1x1xf32>
// CHECK: %[[FINAL:.*]] = la.map add {{.*}} -> tensor<1x3x2xf32>
// CHECK: return %{{.*}}, %[[FINAL]] : tensor<1x1x2xf32>, tensor<1x3x2xf32>
func.func @decay_scan_one_position(%q: tensor<1x1x3xf32>, %k: tensor<1x1x3xf32>, %v: tensor<1x1x2xf32>,
                                   %g: tensor<1x1xf32>, %h0: tensor<1x3x2xf32>) -> (tensor<1x1x2xf32>, tensor<1x3x2xf32>) {
  %kv = la.contract "bnd,bne->bnde" %k, %v : tensor<1x1x3xf32>, tensor<1x1x2xf32> -> tensor<1x1x3x2xf32>
  %s = la.scan decay %kv, %g init(%h0 : tensor<1x3x2xf32>) along 1 inclusive : tensor<1x1x3x2xf32>, tensor<1x1xf32> -> tensor<1x1x3x2xf32>
  %o = la.contract "bnd,bnde->bne" %q, %s : tensor<1x1x3xf32>, tensor<1x1x3x2xf32> -> tensor<1x1x2xf32>
  %final = tensor.collapse_shape %s [[0], [1, 2], [3]] : tensor<1x1x3x2xf32> into tensor<1x3x2xf32>
  return %o, %final : tensor<1x1x2xf32>, tensor<1x3x2xf32>
}

// -----

// A decay scan read any other way (here: a slice that is not the last position) keeps its sequential form.
// CHECK-LABEL: func.func @decay_scan_other_reader
// CHECK: la.scan decay
func.func @decay_scan_other_reader(%k: tensor<1x10x3xf32>, %v: tensor<1x10x2xf32>, %g: tensor<1x10xf32>) -> tensor<1x3x2xf32> {
  %kv = la.contract "bnd,bne->bnde" %k, %v : tensor<1x10x3xf32>, tensor<1x10x2xf32> -> tensor<1x10x3x2xf32>
  %s = la.scan decay %kv, %g along 1 inclusive : tensor<1x10x3x2xf32>, tensor<1x10xf32> -> tensor<1x10x3x2xf32>
  %slice = tensor.extract_slice %s[0, 4, 0, 0] [1, 1, 3, 2] [1, 1, 1, 1] : tensor<1x10x3x2xf32> to tensor<1x1x3x2xf32>
  %mid = tensor.collapse_shape %slice [[0], [1, 2], [3]] : tensor<1x1x3x2xf32> into tensor<1x3x2xf32>
  return %mid : tensor<1x3x2xf32>
}

// -----

// FLASH's quadratic part: scores masked to diagonal blocks of 4, mapped, then contracted with v under the
// same mask. Each block of rows recomputes its [4, 4] scores from slices of q and k (the block mask becomes
// tril inside a block for causal_block); the [10, 10] scores are never built. N = 10 is two blocks of 4 in
// the loop and a tail block of 2.
// CHECK-LABEL: func.func @block_diagonal
// CHECK-NOT: tensor<1x10x10xf32>
// CHECK: scf.for %[[C:.*]] = %c0 to %c8 step %c4 iter_args(%[[O:.*]] = %{{.*}})
// CHECK:   %[[Q:.*]] = tensor.extract_slice %arg0[0, %[[C]], 0] [1, 4, 3]
// CHECK:   %[[K:.*]] = tensor.extract_slice %arg1[0, %[[C]], 0] [1, 4, 3]
// CHECK:   %[[S:.*]] = la.contract "bns,bms->bnm" %[[Q]], %[[K]] mask tril(n, m) {{.*}} -> tensor<1x4x4xf32>
// CHECK:   %[[A:.*]] = la.map relu2 %[[S]] : tensor<1x4x4xf32>
// CHECK:   %[[V:.*]] = tensor.extract_slice %arg2[0, %[[C]], 0] [1, 4, 2]
// CHECK:   %[[P:.*]] = la.contract "bnm,bme->bne" %[[A]], %[[V]] mask tril(n, m) {{.*}} -> tensor<1x4x2xf32>
// CHECK:   tensor.insert_slice %[[P]] into %[[O]][0, %[[C]], 0] [1, 4, 2]
// CHECK: la.contract "bnm,bme->bne" {{.*}} -> tensor<1x2x2xf32>
func.func @block_diagonal(%q: tensor<1x10x3xf32>, %k: tensor<1x10x3xf32>, %v: tensor<1x10x2xf32>) -> tensor<1x10x2xf32> {
  %s = la.contract "bns,bms->bnm" %q, %k mask causal_block(n, m, 4) : tensor<1x10x3xf32>, tensor<1x10x3xf32> -> tensor<1x10x10xf32>
  %a = la.map relu2 %s : tensor<1x10x10xf32> -> tensor<1x10x10xf32>
  %o = la.contract "bnm,bme->bne" %a, %v mask causal_block(n, m, 4) : tensor<1x10x10xf32>, tensor<1x10x2xf32> -> tensor<1x10x2xf32>
  return %o : tensor<1x10x2xf32>
}

// -----

// FLASH's causal linear part, prior_block(n, m, 5): an exclusive scan over chunks of exactly the mask's
// size (not the pass option): each chunk reads the state of the chunks before it, then adds its own k ⊗ v.
// CHECK-LABEL: func.func @prior_blocks
// CHECK: scf.for %[[C:.*]] = %c0 to %c10 step %c5 iter_args(%[[S:.*]] = %{{.*}}, %[[O:.*]] = %{{.*}})
// CHECK:   %[[Q:.*]] = tensor.extract_slice %arg0[0, %[[C]], 0] [1, 5, 3]
// CHECK:   %[[OUT:.*]] = la.contract "bnd,bde->bne" %[[Q]], %[[S]]
// CHECK:   tensor.insert_slice %[[OUT]] into %[[O]]
// CHECK:   la.contract "bmd,bme->bde"
// CHECK-NOT: mask
// CHECK: return
func.func @prior_blocks(%q: tensor<1x10x3xf32>, %k: tensor<1x10x3xf32>, %v: tensor<1x10x2xf32>) -> tensor<1x10x2xf32> {
  %o = la.contract "bnd,bmd,bme->bne" %q, %k, %v mask prior_block(n, m, 5) : tensor<1x10x3xf32>, tensor<1x10x3xf32>, tensor<1x10x2xf32> -> tensor<1x10x2xf32>
  return %o : tensor<1x10x2xf32>
}

// -----

// A stretch of FLASH that starts after earlier blocks (a derived resume variant, la-derive-state-variants):
// prior_block(q, k, v) + q · S0 is the chunk loop started from S0, and S0 + Σ k ⊗ v, the state it hands on,
// is the loop's final state. No second [N, Dv] product, no second pass over k and v.
// CHECK-LABEL: func.func @prior_blocks_from_state
// CHECK-SAME: %[[S0:[a-z0-9]+]]: tensor<1x3x2xf32>)
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[C:.*]] = %c0 to %c10 step %c5 iter_args(%[[S:.*]] = %[[S0]], %[[O:.*]] = %{{.*}})
// CHECK:   la.contract "bnd,bde->bne" %{{.*}}, %[[S]]
// CHECK:   la.contract "bmd,bme->bde"
// CHECK-NOT: la.contract
// CHECK: return %[[LOOP]]#1, %[[LOOP]]#0
func.func @prior_blocks_from_state(%q: tensor<1x10x3xf32>, %k: tensor<1x10x3xf32>, %v: tensor<1x10x2xf32>,
                                   %s0: tensor<1x3x2xf32>) -> (tensor<1x10x2xf32>, tensor<1x3x2xf32>) {
  %prior = la.contract "bnd,bmd,bme->bne" %q, %k, %v mask prior_block(n, m, 5) : tensor<1x10x3xf32>, tensor<1x10x3xf32>, tensor<1x10x2xf32> -> tensor<1x10x2xf32>
  %carried = la.contract "bnd,bde->bne" %q, %s0 : tensor<1x10x3xf32>, tensor<1x3x2xf32> -> tensor<1x10x2xf32>
  %o = la.map add %prior, %carried : tensor<1x10x2xf32>, tensor<1x10x2xf32> -> tensor<1x10x2xf32>
  %own = la.contract "bmd,bme->bde" %k, %v : tensor<1x10x3xf32>, tensor<1x10x2xf32> -> tensor<1x3x2xf32>
  %after = la.map add %s0, %own : tensor<1x3x2xf32>, tensor<1x3x2xf32> -> tensor<1x3x2xf32>
  return %o, %after : tensor<1x10x2xf32>, tensor<1x3x2xf32>
}

// -----

// The same sum after canonicalisation fused it into the map that reads it (FLASH divides by the positions
// before the block): the map's two inputs both read the chunked result, the addition goes.
// CHECK-LABEL: func.func @prior_blocks_from_state_fused
// CHECK: %[[LOOP:.*]]:2 = scf.for
// CHECK: la.map "bne,bne->bne" %[[LOOP]]#1, %[[LOOP]]#1
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK-NEXT: la.yield %[[R]]
func.func @prior_blocks_from_state_fused(%q: tensor<1x10x3xf32>, %k: tensor<1x10x3xf32>, %v: tensor<1x10x2xf32>,
                                         %s0: tensor<1x3x2xf32>) -> tensor<1x10x2xf32> {
  %prior = la.contract "bnd,bmd,bme->bne" %q, %k, %v mask prior_block(n, m, 5) : tensor<1x10x3xf32>, tensor<1x10x3xf32>, tensor<1x10x2xf32> -> tensor<1x10x2xf32>
  %carried = la.contract "bnd,bde->bne" %q, %s0 : tensor<1x10x3xf32>, tensor<1x3x2xf32> -> tensor<1x10x2xf32>
  %o = la.map "bne,bne->bne" %prior, %carried : tensor<1x10x2xf32>, tensor<1x10x2xf32> -> tensor<1x10x2xf32> {
  ^bb0(%a: f32, %b: f32):
    %sum = arith.addf %a, %b : f32
    %r = arith.mulf %sum, %sum : f32
    la.yield %r : f32
  }
  return %o : tensor<1x10x2xf32>
}

// -----

// AFT-local's correction, band(t, s, 2) over T = 18 in row blocks of 4: each block reads the 4 + 2·1 = 6
// columns its band reaches. Block 0's window clamps to [0, 6) (offset 0); blocks at 4, 8 and 12 run in the
// loop with windows starting one column before their rows (offset 1); the partial block at 16 clamps to
// [12, 18) (offset 4). e^w is recomputed on each [rows, 6] slice of w, never on the whole [18, 18].
// CHECK-LABEL: func.func @band_rows
// CHECK: %[[W0:.*]] = tensor.extract_slice %arg0[0, 0] [4, 6] [1, 1]
// CHECK: %[[E0:.*]] = la.map exp %[[W0]] : tensor<4x6xf32>
// CHECK: %[[V0:.*]] = tensor.extract_slice %arg1[0, 0, 0] [2, 6, 3] [1, 1, 1]
// CHECK: la.contract "ts,bsd->btd" %[[E0]], %[[V0]] mask band(t, s, 2) : {{.*}} -> tensor<2x4x3xf32>
// CHECK: scf.for %[[R:.*]] = %c4 to %c16 step %{{.*}} iter_args(%[[O:.*]] = %{{.*}})
// CHECK:   %[[C:.*]] = arith.subi %[[R]], %c1 : index
// CHECK:   %[[W:.*]] = tensor.extract_slice %arg0[%[[R]], %[[C]]] [4, 6] [1, 1]
// CHECK:   %[[E:.*]] = la.map exp %[[W]] : tensor<4x6xf32>
// CHECK:   %[[V:.*]] = tensor.extract_slice %arg1[0, %[[C]], 0] [2, 6, 3] [1, 1, 1]
// CHECK:   %[[P:.*]] = la.contract "ts,bsd->btd" %[[E]], %[[V]] mask band(t, s, 2, offset = 1) : {{.*}} -> tensor<2x4x3xf32>
// CHECK:   tensor.insert_slice %[[P]] into %[[O]][0, %[[R]], 0] [2, 4, 3]
// CHECK: tensor.extract_slice %arg0[16, 12] [2, 6] [1, 1]
// CHECK: la.contract "ts,bsd->btd" {{.*}} mask band(t, s, 2, offset = 4) : {{.*}} -> tensor<2x2x3xf32>
// CHECK-NOT: tensor<18x18xf32> -> tensor<18x18xf32>
// CHECK: return
func.func @band_rows(%w: tensor<18x18xf32>, %v: tensor<2x18x3xf32>) -> tensor<2x18x3xf32> {
  %e = la.map exp %w : tensor<18x18xf32> -> tensor<18x18xf32>
  %o = la.contract "ts,bsd->btd" %e, %v mask band(t, s, 2) : tensor<18x18xf32>, tensor<2x18x3xf32> -> tensor<2x18x3xf32>
  return %o : tensor<2x18x3xf32>
}

// -----

// AFT-local's numerator and denominator: two band contractions of the same e^w slices with the same rows and
// columns share one loop over row blocks (after CSE each block's slice of e^w is computed once). The
// greedy driver visits the second one first; it leaves the rewrite to the first.
// CHECK-LABEL: func.func @band_siblings
// CHECK-COUNT-2: la.contract "ts,bsd->btd" {{.*}} mask band(t, s, 2) : {{.*}} -> tensor<2x4x3xf32>
// CHECK: scf.for %{{.*}} = %c4 to %c16 step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<2x18x3xf32>, tensor<2x18x3xf32>)
// CHECK-COUNT-2: la.contract "ts,bsd->btd" {{.*}} mask band(t, s, 2, offset = 1) : {{.*}} -> tensor<2x4x3xf32>
// CHECK:   scf.yield %{{.*}}, %{{.*}} : tensor<2x18x3xf32>, tensor<2x18x3xf32>
// CHECK-NOT: scf.for
// CHECK: la.map add %{{.*}}, %{{.*}} : tensor<2x18x3xf32>, tensor<2x18x3xf32>
func.func @band_siblings(%w: tensor<18x18xf32>, %v: tensor<2x18x3xf32>, %k: tensor<2x18x3xf32>) -> tensor<2x18x3xf32> {
  %e = la.map exp %w : tensor<18x18xf32> -> tensor<18x18xf32>
  %num = la.contract "ts,bsd->btd" %e, %v mask band(t, s, 2) : tensor<18x18xf32>, tensor<2x18x3xf32> -> tensor<2x18x3xf32>
  %den = la.contract "ts,bsd->btd" %e, %k mask band(t, s, 2) : tensor<18x18xf32>, tensor<2x18x3xf32> -> tensor<2x18x3xf32>
  %sum = la.map add %num, %den : tensor<2x18x3xf32>, tensor<2x18x3xf32> -> tensor<2x18x3xf32>
  return %sum : tensor<2x18x3xf32>
}

// -----

// A band contraction that reads another's result needs it whole first: two loops.
// CHECK-LABEL: func.func @band_dependent
// CHECK: scf.for {{.*}} -> (tensor<2x18x3xf32>)
// CHECK: scf.for {{.*}} -> (tensor<2x18x3xf32>)
func.func @band_dependent(%w: tensor<18x18xf32>, %v: tensor<2x18x3xf32>) -> tensor<2x18x3xf32> {
  %once = la.contract "ts,bsd->btd" %w, %v mask band(t, s, 2) : tensor<18x18xf32>, tensor<2x18x3xf32> -> tensor<2x18x3xf32>
  %twice = la.contract "ts,bsd->btd" %w, %once mask band(t, s, 2) : tensor<18x18xf32>, tensor<2x18x3xf32> -> tensor<2x18x3xf32>
  return %twice : tensor<2x18x3xf32>
}

// -----

// A band reaching every column of a row block (4 + 2·3 ≥ 8) is left whole: chunking would only add work.
// CHECK-LABEL: func.func @band_too_wide
// CHECK-NOT: scf.for
// CHECK: la.contract "ts,bsd->btd" %arg0, %arg1 mask band(t, s, 4)
func.func @band_too_wide(%w: tensor<8x8xf32>, %v: tensor<2x8x3xf32>) -> tensor<2x8x3xf32> {
  %o = la.contract "ts,bsd->btd" %w, %v mask band(t, s, 4) : tensor<8x8xf32>, tensor<2x8x3xf32> -> tensor<2x8x3xf32>
  return %o : tensor<2x8x3xf32>
}

// -----

// Flow-Attention's causal normaliser (q + eps)·(Σ_{s≤t} k_s + eps): the scan is read through a map, so
// it is not a tril contraction. Each chunk seeds an in-chunk prefix sum with the carried [D] sum, applies
// the map to it and dots it with q; the carried sum is the chunk's last prefix row, copied into the carried
// tensor (so the loop bufferizes to one state buffer, not one per chunk). The shared `q + eps`
// is cheap, so it is recomputed on the chunk instead of being sliced out of a materialised [N, D] tensor.
// CHECK-LABEL: func.func @shifted_prefix_sum
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[C:.*]] = %c0 to %c8 step %c4 iter_args(%[[Z:.*]] = %{{.*}}, %[[O:.*]] = %{{.*}}) -> (tensor<1x3xf32>, tensor<1x10xf32>)
// CHECK:   %[[K:.*]] = tensor.extract_slice %arg1[0, %[[C]], 0] [1, 4, 3]
// CHECK:   %[[P:.*]] = la.scan add %[[K]] init(%[[Z]] : tensor<1x3xf32>) along 1 inclusive
// CHECK:   %[[PE:.*]] = la.map add_const(1.0e-06) %[[P]] : tensor<1x4x3xf32>
// CHECK:   %[[Q:.*]] = tensor.extract_slice %arg0[0, %[[C]], 0] [1, 4, 3]
// CHECK:   %[[QE:.*]] = la.map add_const(1.0e-06) %[[Q]] : tensor<1x4x3xf32>
// CHECK:   %[[DOT:.*]] = la.contract "bnd,bnd->bn" %[[QE]], %[[PE]]
// CHECK:   %[[LAST:.*]] = tensor.extract_slice %[[P]][0, 3, 0] [1, 1, 3] [1, 1, 1] : tensor<1x4x3xf32> to tensor<1x3xf32>
// CHECK:   %[[NEXT:.*]] = linalg.copy ins(%[[LAST]] : tensor<1x3xf32>) outs(%[[Z]] : tensor<1x3xf32>)
// CHECK:   %[[INS:.*]] = tensor.insert_slice %[[DOT]] into %[[O]][0, %[[C]]] [1, 4]
// CHECK:   scf.yield %[[NEXT]], %[[INS]]
// CHECK: %[[KT:.*]] = tensor.extract_slice %arg1[0, %c8, 0] [1, 2, 3]
// CHECK: la.scan add %[[KT]] init(%[[LOOP]]#0 : tensor<1x3xf32>) along 1 inclusive : tensor<1x2x3xf32>
// CHECK: la.contract "bnd,bnd->bn" {{.*}} -> tensor<1x2xf32>
// CHECK: tensor.insert_slice {{.*}} into %[[LOOP]]#1[0, %c8] [1, 2]
func.func @shifted_prefix_sum(%q: tensor<1x10x3xf32>, %k: tensor<1x10x3xf32>) -> (tensor<1x10xf32>, tensor<1x10x3xf32>) {
  %qe = la.map add_const(1.0e-6) %q : tensor<1x10x3xf32> -> tensor<1x10x3xf32>
  %z = la.scan add %k along 1 inclusive : tensor<1x10x3xf32> -> tensor<1x10x3xf32>
  %ze = la.map add_const(1.0e-6) %z : tensor<1x10x3xf32> -> tensor<1x10x3xf32>
  %d = la.contract "bnd,bnd->bn" %qe, %ze : tensor<1x10x3xf32>, tensor<1x10x3xf32> -> tensor<1x10xf32>
  return %d, %qe : tensor<1x10xf32>, tensor<1x10x3xf32>
}

// -----

// The scan may be the first operand and its map may read other tensors (broadcast along d); the scanned
// tensor `k · b` is a single-use map, recomputed on each chunk.
// CHECK-LABEL: func.func @prefix_sum_first_operand
// CHECK: scf.for {{.*}} iter_args(%[[Z:.*]] = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<1x3xf32>, tensor<1x8xf32>)
// CHECK:   %[[KB:.*]] = la.map mul "bnd,bn->bnd" {{.*}} : tensor<1x4x3xf32>, tensor<1x4xf32> -> tensor<1x4x3xf32>
// CHECK:   %[[P:.*]] = la.scan add %[[KB]] init(%[[Z]] : tensor<1x3xf32>)
// CHECK:   %[[W:.*]] = tensor.extract_slice %arg3[0, %{{.*}}] [1, 4]
// CHECK:   %[[F:.*]] = la.map mul "bnd,bn->bnd" %[[P]], %[[W]]
// CHECK:   la.contract "bnd,bnd->bn" %[[F]], %{{.*}}
// CHECK-NOT: scf.for
func.func @prefix_sum_first_operand(%q: tensor<1x8x3xf32>, %k: tensor<1x8x3xf32>, %b: tensor<1x8xf32>,
                                    %w: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %kb = la.map mul "bnd,bn->bnd" %k, %b : tensor<1x8x3xf32>, tensor<1x8xf32> -> tensor<1x8x3xf32>
  %z = la.scan add %kb along 1 inclusive : tensor<1x8x3xf32> -> tensor<1x8x3xf32>
  %zw = la.map mul "bnd,bn->bnd" %z, %w : tensor<1x8x3xf32>, tensor<1x8xf32> -> tensor<1x8x3xf32>
  %d = la.contract "bnd,bnd->bn" %zw, %q : tensor<1x8x3xf32>, tensor<1x8x3xf32> -> tensor<1x8xf32>
  return %d : tensor<1x8xf32>
}

// -----

// Left as they are: a prefix sum that is also returned (it has to be materialised anyway), and a map
// that reads absolute positions (la.index), which a chunk's slices would shift.
// CHECK-LABEL: func.func @prefix_sum_not_fused
// CHECK-NOT: scf.for
// CHECK: la.scan add %arg1 along 1 inclusive : tensor<1x8x3xf32>
// CHECK: la.scan add %arg0 along 1 inclusive : tensor<1x8x3xf32>
func.func @prefix_sum_not_fused(%q: tensor<1x8x3xf32>, %k: tensor<1x8x3xf32>)
    -> (tensor<1x8xf32>, tensor<1x8x3xf32>, tensor<1x8xf32>) {
  %z = la.scan add %k along 1 inclusive : tensor<1x8x3xf32> -> tensor<1x8x3xf32>
  %ze = la.map add_const(1.0e-6) %z : tensor<1x8x3xf32> -> tensor<1x8x3xf32>
  %d = la.contract "bnd,bnd->bn" %q, %ze : tensor<1x8x3xf32>, tensor<1x8x3xf32> -> tensor<1x8xf32>
  %y = la.scan add %q along 1 inclusive : tensor<1x8x3xf32> -> tensor<1x8x3xf32>
  %yt = la.map "bnd->bnd" %y : tensor<1x8x3xf32> -> tensor<1x8x3xf32> {
  ^bb0(%x: f32):
    %t = la.index 1 : f32
    %r = arith.mulf %x, %t : f32
    la.yield %r : f32
  }
  %e = la.contract "bnd,bnd->bn" %k, %yt : tensor<1x8x3xf32>, tensor<1x8x3xf32> -> tensor<1x8xf32>
  return %d, %z, %e : tensor<1x8xf32>, tensor<1x8x3xf32>, tensor<1x8xf32>
}

// -----

// The causal contraction recomputes a single-use map of its values (Flow's v·comp) on each chunk.
// CHECK-LABEL: func.func @outer_product_scan_mapped_values
// CHECK: scf.for
// CHECK:   %[[V:.*]] = tensor.extract_slice %arg2[0, %{{.*}}, 0] [1, 4, 2]
// CHECK:   %[[C:.*]] = tensor.extract_slice %arg3[0, %{{.*}}] [1, 4]
// CHECK:   %[[VC:.*]] = la.map mul "bne,bn->bne" %[[V]], %[[C]] : tensor<1x4x2xf32>, tensor<1x4xf32>
// CHECK:   la.contract "bnm,bme->bne" %{{.*}}, %[[VC]]
// CHECK:   la.contract "bmd,bme->bde" %{{.*}}, %[[VC]]
func.func @outer_product_scan_mapped_values(%q: tensor<1x8x3xf32>, %k: tensor<1x8x3xf32>, %v: tensor<1x8x2xf32>,
                                            %c: tensor<1x8xf32>) -> tensor<1x8x2xf32> {
  %vc = la.map mul "bne,bn->bne" %v, %c : tensor<1x8x2xf32>, tensor<1x8xf32> -> tensor<1x8x2xf32>
  %kv = la.contract "bnd,bne->bnde" %k, %vc : tensor<1x8x3xf32>, tensor<1x8x2xf32> -> tensor<1x8x3x2xf32>
  %s = la.scan add %kv along 1 inclusive : tensor<1x8x3x2xf32> -> tensor<1x8x3x2xf32>
  %o = la.contract "bnd,bnde->bne" %q, %s : tensor<1x8x3xf32>, tensor<1x8x3x2xf32> -> tensor<1x8x2xf32>
  return %o : tensor<1x8x2xf32>
}

// -----

// A shared map is recomputed on each chunk when it is cheap by RecomputeCost.h's measure, the one
// la-fuse-elementwise uses: `clamp` (two compares, cost 2) is, `exp` (cost 8) is sliced out of the tensor
// that its other reader makes materialised anyway.
// CHECK-LABEL: func.func @shared_map_cost
// CHECK: scf.for
// CHECK:   %[[KE:.*]] = tensor.extract_slice %0[0, %{{.*}}, 0] [1, 4, 3]
// CHECK:   la.scan add %[[KE]]
// CHECK:   %[[Q:.*]] = tensor.extract_slice %arg0[0, %{{.*}}, 0] [1, 4, 3]
// CHECK:   la.map clamp(-1.0, 1.0) %[[Q]] : tensor<1x4x3xf32>
// CHECK-NOT: la.map exp {{.*}} : tensor<1x4x3xf32>
func.func @shared_map_cost(%q: tensor<1x8x3xf32>, %k: tensor<1x8x3xf32>)
    -> (tensor<1x8xf32>, tensor<1x8x3xf32>, tensor<1x8x3xf32>) {
  %ke = la.map exp %k : tensor<1x8x3xf32> -> tensor<1x8x3xf32>
  %qc = la.map clamp(-1.0, 1.0) %q : tensor<1x8x3xf32> -> tensor<1x8x3xf32>
  %z = la.scan add %ke along 1 inclusive : tensor<1x8x3xf32> -> tensor<1x8x3xf32>
  %d = la.contract "bnd,bnd->bn" %qc, %z : tensor<1x8x3xf32>, tensor<1x8x3xf32> -> tensor<1x8xf32>
  return %d, %qc, %ke : tensor<1x8xf32>, tensor<1x8x3xf32>, tensor<1x8x3xf32>
}

// -----

// A resume variant of causal linear attention (la-derive-state-variants): the outer-product scan starts from
// S0 and its final state is returned. The chunk loop starts from S0, and the final slice becomes the state
// the loop ends with; no [N, D, Dv] tensor remains.
// CHECK-LABEL: func.func @outer_product_scan_with_state
// CHECK-NOT: tensor<1x10x3x2xf32>
// CHECK: %[[LOOP:.*]]:2 = scf.for %{{.*}} = %c0 to %c8 step %c4 iter_args(%[[S:.*]] = %arg3, %{{.*}} = %{{.*}})
// CHECK:   la.contract "bnd,bde->bne" {{.*}}, %[[S]]
// CHECK:   scf.yield
// CHECK: %[[DELTA:.*]] = la.contract "bmd,bme->bde"
// CHECK: %[[FINAL:.*]] = la.map add %[[LOOP]]#0, %[[DELTA]]
// CHECK: return %{{.*}}, %[[FINAL]]
func.func @outer_product_scan_with_state(%q: tensor<1x10x3xf32>, %k: tensor<1x10x3xf32>, %v: tensor<1x10x2xf32>,
                                         %s0: tensor<1x3x2xf32>) -> (tensor<1x10x2xf32>, tensor<1x3x2xf32>) {
  %kv = la.contract "bnd,bne->bnde" %k, %v : tensor<1x10x3xf32>, tensor<1x10x2xf32> -> tensor<1x10x3x2xf32>
  %s = la.scan add %kv init(%s0 : tensor<1x3x2xf32>) along 1 inclusive : tensor<1x10x3x2xf32> -> tensor<1x10x3x2xf32>
  %o = la.contract "bnd,bnde->bne" %q, %s : tensor<1x10x3xf32>, tensor<1x10x3x2xf32> -> tensor<1x10x2xf32>
  %last = tensor.extract_slice %s[0, 9, 0, 0] [1, 1, 3, 2] [1, 1, 1, 1] : tensor<1x10x3x2xf32> to tensor<1x1x3x2xf32>
  %final = tensor.collapse_shape %last [[0], [1, 2], [3]] : tensor<1x1x3x2xf32> into tensor<1x3x2xf32>
  return %o, %final : tensor<1x10x2xf32>, tensor<1x3x2xf32>
}

// -----

// The normaliser of a resume variant: the running sum read by the row dot starts from z0, and its final
// state is the sum the chunk loop carries out.
// CHECK-LABEL: func.func @normaliser_with_state
// CHECK-NOT: la.scan add %arg1
// CHECK: %[[LOOP:.*]]:2 = scf.for %{{.*}} = %c0 to %c8 step %c4 iter_args(%[[Z:.*]] = %arg2, %{{.*}} = %{{.*}})
// CHECK:   la.scan add %{{.*}} init(%[[Z]] : tensor<1x3xf32>) along 1 inclusive : tensor<1x4x3xf32>
// CHECK: return %{{.*}}, %[[FINAL:.*]] :
func.func @normaliser_with_state(%q: tensor<1x10x3xf32>, %k: tensor<1x10x3xf32>, %z0: tensor<1x3xf32>)
    -> (tensor<1x10xf32>, tensor<1x3xf32>) {
  %z = la.scan add %k init(%z0 : tensor<1x3xf32>) along 1 inclusive : tensor<1x10x3xf32> -> tensor<1x10x3xf32>
  %den = la.contract "bnd,bnd->bn" %q, %z : tensor<1x10x3xf32>, tensor<1x10x3xf32> -> tensor<1x10xf32>
  %last = tensor.extract_slice %z[0, 9, 0] [1, 1, 3] [1, 1, 1] : tensor<1x10x3xf32> to tensor<1x1x3xf32>
  %final = tensor.collapse_shape %last [[0], [1, 2]] : tensor<1x1x3xf32> into tensor<1x3xf32>
  return %den, %final : tensor<1x10xf32>, tensor<1x3xf32>
}

// -----

// Causal AFT-full's product, tril(t, s) over T = 600, in row blocks of 128: the columns before a block in dense
// 128-wide blocks (no mask) accumulated by an inner loop up to the block's start, then the diagonal block with
// the mask; the partial last block (88 rows) with its own static sizes. The masked exponential is recomputed
// on each block, its positions (la.index) shifted by the block's start.
// CHECK-LABEL: func.func @tril_rows
// CHECK: scf.for %[[R:.*]] = %c0 to %c512 step %c128 iter_args(%{{.*}} = %{{.*}}) -> (tensor<2x600x3xf32>)
// CHECK:   scf.for %[[C:.*]] = %{{.*}} to %[[R]] step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<2x128x3xf32>)
// CHECK:     tensor.extract_slice %arg0[%[[R]], %[[C]]] [128, 128]
// CHECK:       %[[T:.*]] = la.index 0 : index
// CHECK:       arith.addi %[[T]], %[[R]] : index
// CHECK:       %[[S:.*]] = la.index 1 : index
// CHECK:       arith.addi %[[S]], %[[C]] : index
// CHECK:     %[[P:.*]] = la.contract "ts,bsd->btd" %{{.*}}, %{{.*}} : tensor<128x128xf32>, tensor<2x128x3xf32> -> tensor<2x128x3xf32>
// CHECK:     la.map add %[[ACC]], %[[P]]
// CHECK:   tensor.extract_slice %arg0[%[[R]], %[[R]]] [128, 128]
// CHECK:   la.contract "ts,bsd->btd" {{.*}} mask tril(t, s) : tensor<128x128xf32>, tensor<2x128x3xf32> -> tensor<2x128x3xf32>
// CHECK:   tensor.insert_slice %{{.*}} into %{{.*}}[0, %[[R]], 0] [2, 128, 3]
// CHECK: scf.for %{{.*}} = %{{.*}} to %c512 step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<2x88x3xf32>)
// CHECK:   la.contract "ts,bsd->btd" {{.*}} : tensor<88x128xf32>, tensor<2x128x3xf32> -> tensor<2x88x3xf32>
// CHECK: la.contract "ts,bsd->btd" {{.*}} mask tril(t, s) : tensor<88x88xf32>, tensor<2x88x3xf32> -> tensor<2x88x3xf32>
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, %c512, 0] [2, 88, 3]
func.func @tril_rows(%w: tensor<600x600xf32>, %v: tensor<2x600x3xf32>) -> tensor<2x600x3xf32> {
  %m = la.map "ts->ts" %w : tensor<600x600xf32> -> tensor<600x600xf32> {
  ^bb0(%x: f32):
    %t = la.index 0 : index
    %s = la.index 1 : index
    %visible = arith.cmpi ule, %s, %t : index
    %e = math.exp %x : f32
    %zero = arith.constant 0.0 : f32
    %r = arith.select %visible, %e, %zero : f32
    la.yield %r : f32
  }
  %o = la.contract "ts,bsd->btd" %m, %v mask tril(t, s) : tensor<600x600xf32>, tensor<2x600x3xf32> -> tensor<2x600x3xf32>
  return %o : tensor<2x600x3xf32>
}

// -----

// A triangle of fewer than two row blocks is left whole.
// CHECK-LABEL: func.func @tril_one_block
// CHECK-NOT: scf.for
// CHECK: la.contract "ts,bsd->btd" %arg0, %arg1 mask tril(t, s)
func.func @tril_one_block(%w: tensor<200x200xf32>, %v: tensor<2x200x3xf32>) -> tensor<2x200x3xf32> {
  %o = la.contract "ts,bsd->btd" %w, %v mask tril(t, s) : tensor<200x200xf32>, tensor<2x200x3xf32> -> tensor<2x200x3xf32>
  return %o : tensor<2x200x3xf32>
}

// -----

// Causal AFT-full's numerator and denominator: two tril contractions of one masked exponential. One row loop
// computes both (two results, two accumulators in the column loop), so the exponential's blocks are built
// once per block for both products (CSE merges the two recomputations the rewrite emits side by side).
// CHECK-LABEL: func.func @tril_rows_shared
// CHECK: scf.for %[[R:.*]] = %c0 to %c512 step %c128 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<2x600x3xf32>, tensor<2x600x3xf32>)
// CHECK:   scf.for %{{.*}} = %{{.*}} to %[[R]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<2x128x3xf32>, tensor<2x128x3xf32>)
// CHECK-COUNT-2: la.contract "ts,bsd->btd" {{.*}} : tensor<128x128xf32>, tensor<2x128x3xf32> -> tensor<2x128x3xf32>
// CHECK-COUNT-2: la.contract "ts,bsd->btd" {{.*}} mask tril(t, s) : tensor<128x128xf32>, tensor<2x128x3xf32> -> tensor<2x128x3xf32>
// CHECK-NOT: -> (tensor<2x600x3xf32>)
// CHECK: return
func.func @tril_rows_shared(%w: tensor<600x600xf32>, %v: tensor<2x600x3xf32>, %u: tensor<2x600x3xf32>) -> (tensor<2x600x3xf32>, tensor<2x600x3xf32>) {
  %m = la.map "ts->ts" %w : tensor<600x600xf32> -> tensor<600x600xf32> {
  ^bb0(%x: f32):
    %e = math.exp %x : f32
    la.yield %e : f32
  }
  %num = la.contract "ts,bsd->btd" %m, %v mask tril(t, s) : tensor<600x600xf32>, tensor<2x600x3xf32> -> tensor<2x600x3xf32>
  %den = la.contract "ts,bsd->btd" %m, %u mask tril(t, s) : tensor<600x600xf32>, tensor<2x600x3xf32> -> tensor<2x600x3xf32>
  return %num, %den : tensor<2x600x3xf32>, tensor<2x600x3xf32>
}

// -----

// The second product reads the first: they cannot share a loop, and each gets its own.
// CHECK-LABEL: func.func @tril_rows_chained
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c512{{.*}} step %c128{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<2x600x3xf32>)
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c512{{.*}} step %c128{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<2x600x3xf32>)
func.func @tril_rows_chained(%w: tensor<600x600xf32>, %v: tensor<2x600x3xf32>) -> tensor<2x600x3xf32> {
  %first = la.contract "ts,bsd->btd" %w, %v mask tril(t, s) : tensor<600x600xf32>, tensor<2x600x3xf32> -> tensor<2x600x3xf32>
  %second = la.contract "ts,bsd->btd" %w, %first mask tril(t, s) : tensor<600x600xf32>, tensor<2x600x3xf32> -> tensor<2x600x3xf32>
  return %second : tensor<2x600x3xf32>
}
