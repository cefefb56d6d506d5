// RUN: la-opt %s -split-input-file -la-reassociate | FileCheck %s

// Linear attention without a mask: (Q Kᵀ) V => Q (Kᵀ V), since N·M·(D+Dv) > D·Dv·(M+N) here.
// CHECK-LABEL: func.func @qk_then_v
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x1024x64xf32>, %[[K:.*]]: tensor<2x4x1024x64xf32>, %[[V:.*]]: tensor<2x4x1024x32xf32>)
// CHECK: %[[KV:.*]] = la.contract "bhmd,bhme->bhde" %[[K]], %[[V]] {{.*}} -> tensor<2x4x64x32xf32>
// CHECK: %[[O:.*]] = la.contract "bhde,bhnd->bhne" %[[KV]], %[[Q]] {{.*}} -> tensor<2x4x1024x32xf32>
// CHECK-NOT: la.contract
// CHECK: return %[[O]]
func.func @qk_then_v(%q: tensor<2x4x1024x64xf32>, %k: tensor<2x4x1024x64xf32>, %v: tensor<2x4x1024x32xf32>) -> tensor<2x4x1024x32xf32> {
  %a = la.contract "bhnd,bhmd->bhnm" %q, %k : tensor<2x4x1024x64xf32>, tensor<2x4x1024x64xf32> -> tensor<2x4x1024x1024xf32>
  %o = la.contract "bhnm,bhme->bhne" %a, %v : tensor<2x4x1024x1024xf32>, tensor<2x4x1024x32xf32> -> tensor<2x4x1024x32xf32>
  return %o : tensor<2x4x1024x32xf32>
}

// -----

// The chain is already cheapest (short sequence, wide heads): left as written.
// CHECK-LABEL: func.func @already_cheapest
// CHECK: la.contract "bhnd,bhmd->bhnm"
// CHECK: la.contract "bhnm,bhme->bhne"
func.func @already_cheapest(%q: tensor<1x1x8x256xf32>, %k: tensor<1x1x8x256xf32>, %v: tensor<1x1x8x256xf32>) -> tensor<1x1x8x256xf32> {
  %a = la.contract "bhnd,bhmd->bhnm" %q, %k : tensor<1x1x8x256xf32>, tensor<1x1x8x256xf32> -> tensor<1x1x8x8xf32>
  %o = la.contract "bhnm,bhme->bhne" %a, %v : tensor<1x1x8x8xf32>, tensor<1x1x8x256xf32> -> tensor<1x1x8x256xf32>
  return %o : tensor<1x1x8x256xf32>
}

// -----

// A mask ties n and m together: no reassociation.
// CHECK-LABEL: func.func @masked_chain_stays
// CHECK: la.contract "bhnd,bhmd->bhnm"
// CHECK: la.contract "bhnm,bhme->bhne" {{.*}} mask tril(n, m)
func.func @masked_chain_stays(%q: tensor<2x4x1024x64xf32>, %k: tensor<2x4x1024x64xf32>, %v: tensor<2x4x1024x32xf32>) -> tensor<2x4x1024x32xf32> {
  %a = la.contract "bhnd,bhmd->bhnm" %q, %k : tensor<2x4x1024x64xf32>, tensor<2x4x1024x64xf32> -> tensor<2x4x1024x1024xf32>
  %o = la.contract "bhnm,bhme->bhne" %a, %v mask tril(n, m) : tensor<2x4x1024x1024xf32>, tensor<2x4x1024x32xf32> -> tensor<2x4x1024x32xf32>
  return %o : tensor<2x4x1024x32xf32>
}

// -----

// The inner product has a second use: reassociating would compute both orders.
// CHECK-LABEL: func.func @shared_inner_stays
// CHECK: la.contract "bhnd,bhmd->bhnm"
// CHECK: la.contract "bhnm,bhme->bhne"
func.func @shared_inner_stays(%q: tensor<2x4x1024x64xf32>, %k: tensor<2x4x1024x64xf32>, %v: tensor<2x4x1024x32xf32>) -> (tensor<2x4x1024x32xf32>, tensor<2x4x1024x1024xf32>) {
  %a = la.contract "bhnd,bhmd->bhnm" %q, %k : tensor<2x4x1024x64xf32>, tensor<2x4x1024x64xf32> -> tensor<2x4x1024x1024xf32>
  %o = la.contract "bhnm,bhme->bhne" %a, %v : tensor<2x4x1024x1024xf32>, tensor<2x4x1024x32xf32> -> tensor<2x4x1024x32xf32>
  return %o, %a : tensor<2x4x1024x32xf32>, tensor<2x4x1024x1024xf32>
}

// -----

// Dynamic sizes: the cost is unknown until the runtime specialises the kernel.
// CHECK-LABEL: func.func @dynamic_stays
// CHECK: la.contract "bhnd,bhmd->bhnm"
func.func @dynamic_stays(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %a = la.contract "bhnd,bhmd->bhnm" %q, %k : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %o = la.contract "bhnm,bhme->bhne" %a, %v : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  return %o : tensor<?x?x?x?xf32>
}

// -----

// The chain's inner product is the right operand and sums over a letter the outer op also uses ('d'):
// the summed letter is renamed so the three-way product stays well formed.
// CHECK-LABEL: func.func @inner_on_the_right
// CHECK: %[[QV:.*]] = la.contract "bma,bme->bae" %{{.*}}, %{{.*}} : tensor<2x512x16xf32>, tensor<2x512x8xf32> -> tensor<2x16x8xf32>
// CHECK: la.contract "bae,bda->bde" %[[QV]]
func.func @inner_on_the_right(%q: tensor<2x512x16xf32>, %k: tensor<2x512x16xf32>, %v: tensor<2x512x8xf32>) -> tensor<2x512x8xf32> {
  %a = la.contract "bnd,bmd->bmn" %q, %k : tensor<2x512x16xf32>, tensor<2x512x16xf32> -> tensor<2x512x512xf32>
  %o = la.contract "bme,bdm->bde" %v, %a : tensor<2x512x8xf32>, tensor<2x512x512xf32> -> tensor<2x512x8xf32>
  return %o : tensor<2x512x8xf32>
}

// -----

// An unmasked three-input contraction is split in its cheapest order.
// CHECK-LABEL: func.func @ternary_split
// CHECK: %[[KV:.*]] = la.contract "bhmd,bhme->bhde"
// CHECK: la.contract "bhde,bhnd->bhne" %[[KV]]
func.func @ternary_split(%q: tensor<2x4x1024x64xf32>, %k: tensor<2x4x1024x64xf32>, %v: tensor<2x4x1024x32xf32>) -> tensor<2x4x1024x32xf32> {
  %o = la.contract "bhnd,bhmd,bhme->bhne" %q, %k, %v : tensor<2x4x1024x64xf32>, tensor<2x4x1024x64xf32>, tensor<2x4x1024x32xf32> -> tensor<2x4x1024x32xf32>
  return %o : tensor<2x4x1024x32xf32>
}

// -----

// A masked three-input contraction stays whole: the mask needs n and m in one loop nest.
// CHECK-LABEL: func.func @ternary_masked_stays
// CHECK: la.contract "bhnd,bhmd,bhme->bhne" {{.*}} mask causal_block(n, m, 64)
func.func @ternary_masked_stays(%q: tensor<2x4x1024x64xf32>, %k: tensor<2x4x1024x64xf32>, %v: tensor<2x4x1024x32xf32>) -> tensor<2x4x1024x32xf32> {
  %o = la.contract "bhnd,bhmd,bhme->bhne" %q, %k, %v mask causal_block(n, m, 64) : tensor<2x4x1024x64xf32>, tensor<2x4x1024x64xf32>, tensor<2x4x1024x32xf32> -> tensor<2x4x1024x32xf32>
  return %o : tensor<2x4x1024x32xf32>
}
