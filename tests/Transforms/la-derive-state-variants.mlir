// RUN: la-opt %s -split-input-file -la-derive-state-variants -verify-diagnostics | FileCheck %s

// Causal linear attention: two scans along the sequence, so two states ([B,H,D,E] and [B,H,D]) after the
// outputs; resume starts each scan from its state, prefill from zero. Calls are inlined first.

!x = tensor<?x?x?x?xf32>
!s = tensor<?x?x?x?x?xf32>
func.func private @features(%x: !x) -> !x {
  %f = la.map elu1 %x : !x -> !x
  return %f : !x
}
func.func @causal(%q: !x, %k: !x, %v: !x) -> !x {
  %qf = func.call @features(%q) : (!x) -> !x
  %kf = func.call @features(%k) : (!x) -> !x
  %kv = la.contract "bhnd,bhne->bhnde" %kf, %v : !x, !x -> !s
  %s = la.scan add %kv along 2 inclusive : !s -> !s
  %z = la.scan add %kf along 2 inclusive : !x -> !x
  %num = la.contract "bhnd,bhnde->bhne" %qf, %s : !x, !s -> !x
  %den = la.contract "bhnd,bhnd->bhn" %qf, %z : !x, !x -> tensor<?x?x?xf32>
  %o = la.normalize sum %num by %den along 3 : !x, tensor<?x?x?xf32> -> !x
  return %o : !x
}
func.func private @causal_prefill(%q: !x, %k: !x, %v: !x) -> (!x, !x, tensor<?x?x?xf32>)
    attributes {la.prefill_of = @causal}
func.func private @causal_resume(%q: !x, %k: !x, %v: !x, %s0: !x, %z0: tensor<?x?x?xf32>)
    -> (!x, !x, tensor<?x?x?xf32>) attributes {la.resume_of = @causal}
func.func private @causal_state(%q: !x, %k: !x, %v: !x, %s0: !x, %z0: tensor<?x?x?xf32>)
    -> (!x, tensor<?x?x?xf32>) attributes {la.state_of = @causal}

// CHECK-LABEL: func.func @causal_prefill(
// CHECK-NOT: call
// CHECK: %[[S:.*]] = la.scan add %{{.*}} along 2 inclusive : tensor<?x?x?x?x?xf32>
// CHECK: %[[Z:.*]] = la.scan add %{{.*}} along 2 inclusive : tensor<?x?x?x?xf32>
// CHECK: %[[SLAST:.*]] = tensor.extract_slice %[[S]]
// CHECK: %[[SFINAL:.*]] = tensor.collapse_shape %[[SLAST]] {{\[}}[0], [1], [2, 3], [4]]
// CHECK: %[[ZLAST:.*]] = tensor.extract_slice %[[Z]]
// CHECK: %[[ZFINAL:.*]] = tensor.collapse_shape %[[ZLAST]] {{\[}}[0], [1], [2, 3]]
// CHECK: return %{{.*}}, %[[SFINAL]], %[[ZFINAL]]
// CHECK-LABEL: func.func @causal_resume(
// CHECK-SAME: %[[S0:[a-z0-9]+]]: tensor<?x?x?x?xf32>, %[[Z0:[a-z0-9]+]]: tensor<?x?x?xf32>)
// CHECK-NOT: la.prefill_of
// CHECK-NOT: la.resume_of
// CHECK: la.scan add %{{.*}} init(%[[S0]] : tensor<?x?x?x?xf32>) along 2 inclusive
// CHECK: la.scan add %{{.*}} init(%[[Z0]] : tensor<?x?x?xf32>) along 2 inclusive

// The state variant: no read-out, no scan. The running outer product is summed over the sequence as one
// contraction (Kᵀ V), the running sum of the keys as a reduction, each added to its state.
// CHECK-LABEL: func.func @causal_state(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<?x?x?x?xf32>, %[[K:[a-z0-9]+]]: tensor<?x?x?x?xf32>, %[[V:[a-z0-9]+]]: tensor<?x?x?x?xf32>, %[[S0:[a-z0-9]+]]: tensor<?x?x?x?xf32>, %[[Z0:[a-z0-9]+]]: tensor<?x?x?xf32>)
// CHECK-SAME: -> (tensor<?x?x?x?xf32> {la.state}, tensor<?x?x?xf32> {la.state})
// CHECK-NOT: la.scan
// CHECK-NOT: la.normalize
// CHECK: %[[KF:.*]] = la.map elu1 %[[K]]
// CHECK-NOT: %[[Q]]
// CHECK: %[[KV:.*]] = la.contract "bhnd,bhne->bhde" %[[KF]], %[[V]]
// CHECK: %[[S:.*]] = la.map add %[[S0]], %[[KV]]
// CHECK: %[[ZS:.*]] = la.reduce add %[[KF]] along [2]
// CHECK: %[[Z:.*]] = la.map add %[[Z0]], %[[ZS]]
// CHECK: return %[[S]], %[[Z]]

// -----

// A decay scan's state variant: e^{G} ⊙ h0 + Σ_t e^{Σ_{u>t} g_u} ⊙ k_t ⊗ v_t, the weights from a reverse
// exclusive scan of the log-gates (summed from the end, where the weights that matter are) and the sum one
// contraction of the weighted keys with the values; then G itself, which the state before the piece decays by.
!x = tensor<?x?x?x?xf32>
!g = tensor<?x?x?xf32>
!s = tensor<?x?x?x?x?xf32>
!h = tensor<?x?x?x?xf32>
func.func @decayed(%q: !x, %k: !x, %v: !x, %g: !g) -> !x {
  %kv = la.contract "bhtk,bhtv->bhtkv" %k, %v : !x, !x -> !s
  %st = la.scan decay %kv, %g along 2 inclusive : !s, !g -> !s
  %o = la.contract "bhtk,bhtkv->bhtv" %q, %st : !x, !s -> !x
  return %o : !x
}
func.func private @decayed_state(%q: !x, %k: !x, %v: !x, %g: !g, %h0: !h) -> (!h, tensor<?x?xf32>)
    attributes {la.state_of = @decayed}

// CHECK-LABEL: func.func @decayed_state(
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<?x?x?x?xf32>, %[[K:[a-z0-9]+]]: tensor<?x?x?x?xf32>, %[[V:[a-z0-9]+]]: tensor<?x?x?x?xf32>, %[[G:[a-z0-9]+]]: tensor<?x?x?xf32>, %[[H0:[a-z0-9]+]]: tensor<?x?x?x?xf32>)
// CHECK: %[[LATER:.*]] = la.scan add %[[G]] along 2 exclusive reverse
// CHECK: %[[W:.*]] = la.map exp %[[LATER]]
// CHECK: %[[TOTAL:.*]] = la.reduce add %[[G]] along [2]
// CHECK: %[[WK:.*]] = la.map mul "bht,bhtk->bhtk" %[[W]], %[[K]]
// CHECK: %[[SUM:.*]] = la.contract "bhtk,bhtv->bhkv" %[[WK]], %[[V]]
// CHECK: %[[F:.*]] = la.map exp %[[TOTAL]]
// CHECK: %[[DECAYED:.*]] = la.map mul "ab,abde->abde" %[[F]], %[[H0]]
// CHECK: %[[H:.*]] = la.map add %[[DECAYED]], %[[SUM]]
// CHECK: return %[[H]], %[[TOTAL]]
// CHECK-NOT: la.scan decay

// -----

// A declared signature that is not the derived one: the error prints the derived one.
!x = tensor<?x?x?x?xf32>
func.func @running(%x: !x) -> !x {
  %s = la.scan add %x along 2 inclusive : !x -> !x
  return %s : !x
}
// expected-error @+1 {{is declared (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> but the resume variant of @running is (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>)}}
func.func private @running_resume(%x: !x) -> !x attributes {la.resume_of = @running}

// -----

// Non-causal sources: the op that reads later positions is named.
!x = tensor<?x?x?x?xf32>
func.func @pooled(%x: !x) -> !x {
  %s = la.scan add %x along 2 inclusive : !x -> !x
  // expected-error @+1 {{reduces along the sequence (dimension 2): each position would read later ones}}
  %m = la.reduce add %x along [2] : !x -> tensor<?x?x?xf32>
  %y = la.map add "bhnd,bhd->bhnd" %s, %m : !x, tensor<?x?x?xf32> -> !x
  return %y : !x
}
// expected-error @+1 {{cannot be derived as the prefill variant of @pooled}}
func.func private @pooled_prefill(%x: !x) -> (!x, tensor<?x?x?xf32>) attributes {la.prefill_of = @pooled}

// -----

!x = tensor<?x?x?x?xf32>
func.func @quadratic(%q: !x, %k: !x, %v: !x) -> !x {
  %z = la.scan add %k along 2 inclusive : !x -> !x
  // expected-error @+1 {{pairs every position with the earlier ones (mask tril): its state would grow with the sequence}}
  %a = la.contract "bhnd,bhmd->bhnm" %q, %k mask tril(n, m) : !x, !x -> !x
  %o = la.contract "bhnm,bhme->bhne" %a, %v : !x, !x -> !x
  %y = la.map add %o, %z : !x, !x -> !x
  return %y : !x
}
// expected-error @+1 {{cannot be derived as the resume variant of @quadratic}}
func.func private @quadratic_resume(%q: !x, %k: !x, %v: !x, %z: tensor<?x?x?xf32>) -> (!x, tensor<?x?x?xf32>)
    attributes {la.resume_of = @quadratic}

// -----

// A map that reads the position along the sequence (Flow's n_t = t + 1) gets a counter state, shaped like its
// result without the sequence: resume adds the positions before the piece to la.index, and both variants
// return how many positions have been processed.
!x = tensor<?x?x?xf32>
func.func @counted(%x: !x) -> !x {
  %s = la.scan add %x along 2 inclusive : !x -> !x
  %n = la.map "bhn->bhn" %s : !x -> !x {
  ^bb0(%e: f32):
    %t = la.index 2 : f32
    %one = arith.constant 1.0 : f32
    %nt = arith.addf %t, %one : f32
    %r = arith.divf %e, %nt : f32
    la.yield %r : f32
  }
  return %n : !x
}
func.func private @counted_prefill(%x: !x) -> (!x, tensor<?x?xf32>, tensor<?x?xf32>) attributes {la.prefill_of = @counted}
func.func private @counted_resume(%x: !x, %s0: tensor<?x?xf32>, %n0: tensor<?x?xf32>)
    -> (!x, tensor<?x?xf32>, tensor<?x?xf32>) attributes {la.resume_of = @counted}

// CHECK-LABEL: func.func @counted_prefill(
// CHECK: %[[N:.*]] = la.map "bhn->bhn"
// CHECK: %[[ONES:.*]] = la.map %[[N]]
// CHECK: %[[COUNT:.*]] = la.reduce add %[[ONES]] along [2]
// CHECK: return %[[N]], %{{.*}}, %[[COUNT]]
// CHECK-LABEL: func.func @counted_resume(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<?x?x?xf32>, %[[S0:[a-z0-9]+]]: tensor<?x?xf32>, %[[N0:[a-z0-9]+]]: tensor<?x?xf32>)
// CHECK: %[[N:.*]] = la.map "bhn,bh->bhn" %{{.*}}, %[[N0]]
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %[[BEFORE:.*]]: f32):
// CHECK-NEXT: %[[T:.*]] = la.index 2 : f32
// CHECK-NEXT: arith.addf %[[T]], %[[BEFORE]] : f32
// CHECK: %[[COUNT:.*]] = la.reduce add %{{.*}} along [2]
// CHECK: %[[TOTAL:.*]] = la.map add %[[N0]], %[[COUNT]]
// CHECK: return %[[N]], %{{.*}}, %[[TOTAL]]

// -----

// A position read as an integer (FLASH's block of t, t / 256): the f32 counter is converted, exact below 2^24.
!x = tensor<?x?x?x?xf32>
func.func @indexed(%x: !x) -> !x {
  %s = la.scan add %x along 2 inclusive : !x -> !x
  %n = la.map "bhnd->bhnd" %s : !x -> !x {
  ^bb0(%e: f32):
    %t = la.index 2 : index
    %i = arith.index_cast %t : index to i32
    %f = arith.sitofp %i : i32 to f32
    %r = arith.divf %e, %f : f32
    la.yield %r : f32
  }
  return %n : !x
}
func.func private @indexed_resume(%x: !x, %s0: tensor<?x?x?xf32>, %n0: tensor<?x?x?xf32>)
    -> (!x, tensor<?x?x?xf32>, tensor<?x?x?xf32>) attributes {la.resume_of = @indexed}
// CHECK-LABEL: func.func @indexed_resume
// CHECK: la.map "bhnd,bhd->bhnd"
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %[[BEFORE:.*]]: f32):
// CHECK-NEXT: %[[T:.*]] = la.index 2 : index
// CHECK-NEXT: %[[WHOLE:.*]] = arith.fptoui %[[BEFORE]] : f32 to i64
// CHECK-NEXT: %[[START:.*]] = arith.index_cast %[[WHOLE]] : i64 to index
// CHECK-NEXT: %[[ABSOLUTE:.*]] = arith.addi %[[T]], %[[START]] : index
// CHECK-NEXT: arith.index_cast %[[ABSOLUTE]] : index to i32

// -----

!x = tensor<?x?x?x?xf32>
func.func @windowed(%x: !x) -> !x {
  // expected-error @+1 {{is a scan along the sequence whose state is not its running value}}
  %s = la.scan add %x along 2 inclusive window(4) : !x -> !x
  return %s : !x
}
// expected-error @+1 {{cannot be derived as the prefill variant of @windowed}}
func.func private @windowed_prefill(%x: !x) -> (!x, tensor<?x?x?xf32>) attributes {la.prefill_of = @windowed}

// -----

// The source must exist with a body, and a variant must not have one.
!x = tensor<?x?x?x?xf32>
// expected-error @+1 {{is a state-passing variant of @missing, but the module has no function of that name with a body}}
func.func private @orphan(%x: !x) -> (!x, tensor<?x?x?xf32>) attributes {la.prefill_of = @missing}

// -----

!x = tensor<?x?x?x?xf32>
func.func @running(%x: !x) -> !x {
  %s = la.scan add %x along 2 inclusive : !x -> !x
  return %s : !x
}
// expected-error @+1 {{declares itself a state-passing variant of @running but has a body; the compiler writes it}}
func.func @written(%x: !x) -> (!x, tensor<?x?x?xf32>) attributes {la.prefill_of = @running} {
  %c = tensor.empty() : tensor<1x1x1xf32>
  %d = tensor.cast %c : tensor<1x1x1xf32> to tensor<?x?x?xf32>
  return %x, %d : !x, tensor<?x?x?xf32>
}

// -----

// expected-error @+1 {{'la.resume_of' must name the source entry (@name), not "gla"}}
func.func private @bad(%x: tensor<?xf32>) -> tensor<?xf32> attributes {la.resume_of = "gla"}

// -----

// A recursive helper cannot be inlined away.
!x = tensor<?x?x?x?xf32>
func.func private @forever(%x: !x) -> !x {
  %y = func.call @forever(%x) : (!x) -> !x
  return %y : !x
}
// expected-error @+1 {{calls nest more than 64 deep (a recursive helper?); a state-passing variant needs them inlined}}
func.func @loops(%x: !x) -> !x {
  %y = func.call @forever(%x) : (!x) -> !x
  %s = la.scan add %y along 2 inclusive : !x -> !x
  return %s : !x
}
// expected-error @+1 {{cannot be derived as the prefill variant of @loops}}
func.func private @loops_prefill(%x: !x) -> (!x, tensor<?x?x?xf32>) attributes {la.prefill_of = @loops}

// -----

// Causal AFT: an online softmax carries its triple (value, running max, normaliser), so the scan returns all
// three and resume starts from them. The state variant runs the scan read only at its last position (the
// lowering then writes no position).

!a = tensor<?x?x?xf32>
!as = tensor<?x?xf32>
func.func @aft(%q: !a, %k: !a, %v: !a) -> !a {
  %avg = la.scan online_softmax %k, %v along 1 inclusive : !a, !a -> !a
  %y = la.gate sigmoid %q, %avg : !a, !a -> !a
  return %y : !a
}
func.func private @aft_prefill(%q: !a, %k: !a, %v: !a) -> (!a, !as, !as, !as) attributes {la.prefill_of = @aft}
func.func private @aft_resume(%q: !a, %k: !a, %v: !a, %y0: !as, %m0: !as, %z0: !as) -> (!a, !as, !as, !as)
    attributes {la.resume_of = @aft}
func.func private @aft_state(%q: !a, %k: !a, %v: !a, %y0: !as, %m0: !as, %z0: !as) -> (!as, !as, !as)
    attributes {la.state_of = @aft}

// CHECK-LABEL: func.func @aft_prefill(
// CHECK: %[[AVG:.*]]:3 = la.scan online_softmax %{{.*}}, %{{.*}} along 1 inclusive : tensor<?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>
// CHECK: %[[Y:.*]] = la.gate sigmoid %{{.*}}, %[[AVG]]#0
// CHECK: tensor.extract_slice %[[AVG]]#0
// CHECK: tensor.extract_slice %[[AVG]]#1
// CHECK: tensor.extract_slice %[[AVG]]#2
// CHECK: return %[[Y]], %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>
// CHECK-LABEL: func.func @aft_resume(
// CHECK-SAME: %[[Y0:[a-z0-9]+]]: tensor<?x?xf32>, %[[M0:[a-z0-9]+]]: tensor<?x?xf32>, %[[Z0:[a-z0-9]+]]: tensor<?x?xf32>)
// CHECK: la.scan online_softmax %{{.*}}, %{{.*}} init(%[[Y0]], %[[M0]], %[[Z0]] : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) along 1 inclusive
// CHECK-LABEL: func.func @aft_state(
// CHECK-NOT: la.gate
// CHECK: %[[S:.*]]:3 = la.scan online_softmax %{{.*}}, %{{.*}} init(
// CHECK-NOT: la.gate
// CHECK: return

// -----

// States on two levels: t sums values computed from s. The state variant of one level (`la.state_level`)
// returns that level's states alone and computes only what they need: level 1 is s's sum without t's
// scan; level 2 reads s from its state and t's sum.
!x = tensor<?x?x?x?xf32>
!h = tensor<?x?x?xf32>
func.func @nested(%x: !x) -> !x {
  %s = la.scan add %x along 2 inclusive : !x -> !x
  %r = la.map mul %x, %s : !x, !x -> !x
  %t = la.scan add %r along 2 inclusive : !x -> !x
  return %t : !x
}
func.func private @nested_state_1(%x: !x, %s0: !h, %t0: !h) -> !h attributes {la.state_of = @nested, la.state_level = 1}
func.func private @nested_state_2(%x: !x, %s0: !h, %t0: !h) -> !h attributes {la.state_of = @nested, la.state_level = 2}

// CHECK-LABEL: func.func @nested_state_1(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<?x?x?x?xf32>, %[[S0:[a-z0-9]+]]: tensor<?x?x?xf32>, %{{[a-z0-9]+}}: tensor<?x?x?xf32>)
// CHECK-NOT: la.scan
// CHECK: %[[SUM:.*]] = la.reduce add %[[X]] along [2]
// CHECK: %[[S:.*]] = la.map add %[[S0]], %[[SUM]]
// CHECK-NEXT: return %[[S]]
// CHECK-NOT: la.state_level
// CHECK-LABEL: func.func @nested_state_2(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<?x?x?x?xf32>, %[[S0:[a-z0-9]+]]: tensor<?x?x?xf32>, %[[T0:[a-z0-9]+]]: tensor<?x?x?xf32>)
// CHECK: %[[RUNNING:.*]] = la.scan add %[[X]] init(%[[S0]] : tensor<?x?x?xf32>) along 2 inclusive
// CHECK: %[[R:.*]] = la.map mul %[[X]], %[[RUNNING]]
// CHECK: %[[SUM:.*]] = la.reduce add %[[R]] along [2]
// CHECK: %[[T:.*]] = la.map add %[[T0]], %[[SUM]]
// CHECK-NEXT: return %[[T]]

// -----

// Only a state variant has levels.
!x = tensor<?x?x?x?xf32>
func.func @leveled(%x: !x) -> !x {
  %s = la.scan add %x along 2 inclusive : !x -> !x
  return %s : !x
}
// expected-error @+1 {{declares 'la.state_level', which only a state variant takes}}
func.func private @leveled_resume(%x: !x, %s0: tensor<?x?x?xf32>) -> (!x, tensor<?x?x?xf32>)
    attributes {la.resume_of = @leveled, la.state_level = 1}

// -----

// Contractions masked by blocks (FLASH): stretches that start on block boundaries (`la.aligned_to`, a multiple
// of every block size) hold a causal_block contraction's blocks whole, and carry a prior_block contraction's
// sum over the earlier blocks, Σ k ⊗ v, as a state: resume adds q · state to the stretch's own blocks.
!x = tensor<?x?x?xf32>
func.func @blocks(%q: !x, %k: !x, %v: !x) -> !x {
  %a = la.contract "bns,bms->bnm" %q, %k mask causal_block(n, m, 64) : !x, !x -> !x
  %local = la.contract "bnm,bme->bne" %a, %v mask causal_block(n, m, 64) : !x, !x -> !x
  %prior = la.contract "bns,bms,bme->bne" %q, %k, %v mask prior_block(n, m, 64) : !x, !x, !x -> !x
  %y = la.map add %local, %prior : !x, !x -> !x
  return %y : !x
}
func.func private @blocks_resume(%q: !x, %k: !x, %v: !x, %s0: !x) -> (!x, !x)
    attributes {la.resume_of = @blocks, la.aligned_to = 128}
func.func private @blocks_state(%q: !x, %k: !x, %v: !x, %s0: !x) -> !x
    attributes {la.state_of = @blocks, la.aligned_to = 64}
// CHECK-LABEL: func.func @blocks_resume
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<?x?x?xf32>, %[[K:[a-z0-9]+]]: tensor<?x?x?xf32>, %[[V:[a-z0-9]+]]: tensor<?x?x?xf32>, %[[S0:[a-z0-9]+]]: tensor<?x?x?xf32>)
// CHECK-NOT: la.aligned_to
// CHECK: %[[PRIOR:.*]] = la.contract "bns,bms,bme->bne" %[[Q]], %[[K]], %[[V]] mask prior_block(n, m, 64)
// CHECK-NEXT: %[[CARRIED:.*]] = la.contract "bns,bse->bne" %[[Q]], %[[S0]]
// CHECK-NEXT: %[[WHOLE:.*]] = la.map add %[[PRIOR]], %[[CARRIED]]
// CHECK-NEXT: %[[Y:.*]] = la.map add %{{.*}}, %[[WHOLE]]
// CHECK-NEXT: %[[OWN:.*]] = la.contract "bms,bme->bse" %[[K]], %[[V]]
// CHECK-NEXT: %[[AFTER:.*]] = la.map add %[[S0]], %[[OWN]]
// CHECK-NEXT: return %[[Y]], %[[AFTER]]
// The state variant computes Σ k ⊗ v alone.
// CHECK-LABEL: func.func @blocks_state
// CHECK-NEXT: %[[OWN:.*]] = la.contract "bms,bme->bse" %{{.*}}, %{{.*}} :
// CHECK-NEXT: %[[AFTER:.*]] = la.map add %{{.*}}, %[[OWN]]
// CHECK-NEXT: return %[[AFTER]]

// -----

// Without la.aligned_to a stretch may start inside a block (a decode step does): an error at the op.
!x = tensor<?x?x?xf32>
func.func @unaligned(%q: !x, %k: !x, %v: !x) -> !x {
  // expected-error @+1 {{pairs positions by blocks of 64 (mask causal_block): a stretch that starts inside a block would need the block's earlier positions as state (stretches that start on block boundaries carry it: la.aligned_to)}}
  %a = la.contract "bns,bms->bnm" %q, %k mask causal_block(n, m, 64) : !x, !x -> !x
  %y = la.contract "bnm,bme->bne" %a, %v mask causal_block(n, m, 64) : !x, !x -> !x
  return %y : !x
}
// expected-error @+1 {{cannot be derived as the prefill variant of @unaligned}}
func.func private @unaligned_prefill(%q: !x, %k: !x, %v: !x) -> (!x) attributes {la.prefill_of = @unaligned}

// -----

!x = tensor<?x?x?xf32>
func.func @cut(%q: !x, %k: !x, %v: !x) -> !x {
  // expected-error @+1 {{pairs positions by blocks of 64 (mask prior_block), which stretches aligned to 96 positions cut}}
  %y = la.contract "bns,bms,bme->bne" %q, %k, %v mask prior_block(n, m, 64) : !x, !x, !x -> !x
  return %y : !x
}
// expected-error @+1 {{cannot be derived as the resume variant of @cut}}
func.func private @cut_resume(%q: !x, %k: !x, %v: !x, %s0: !x) -> (!x, !x)
    attributes {la.resume_of = @cut, la.aligned_to = 96}

// -----

// A prior_block contraction whose input holds both positions (a [B, N, N] tensor) has no fixed-size state.
!x = tensor<?x?x?xf32>
func.func @pairs(%a: !x, %v: !x) -> !x {
  // expected-error @+1 {{pairs each position with every earlier block through input #0, which holds both positions: its state would grow with the sequence}}
  %y = la.contract "bnm,bme->bne" %a, %v mask prior_block(n, m, 64) : !x, !x -> !x
  return %y : !x
}
// expected-error @+1 {{cannot be derived as the prefill variant of @pairs}}
func.func private @pairs_prefill(%a: !x, %v: !x) -> (!x, !x) attributes {la.prefill_of = @pairs, la.aligned_to = 64}

// -----

!x = tensor<?x?x?xf32>
func.func @source(%x: !x) -> !x {
  %s = la.scan add %x along 1 inclusive : !x -> !x
  return %s : !x
}
// expected-error @+1 {{'la.aligned_to' must be a positive integer (the positions every stretch starts a multiple of), not 0 : i64}}
func.func private @source_prefill(%x: !x) -> (!x, tensor<?x?xf32>) attributes {la.prefill_of = @source, la.aligned_to = 0}
