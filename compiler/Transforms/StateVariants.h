//===- StateVariants.h - prefill, resume and state variants of a causal entry -*- C++ -*-===//
//
// The derivation behind la-derive-state-variants (LADeriveStateVariants.cpp), for callers that want a variant
// the kernel file does not declare (`lac run --variant`).
//
//===----------------------------------------------------------------------===//
#ifndef LA_TRANSFORMS_STATEVARIANTS_H
#define LA_TRANSFORMS_STATEVARIANTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

#include <optional>

namespace mlir::la {

/// prefill(x) = (y, s); resume(x, s_in) = (y, s); state(x, s_in) = (s, G), the state a piece of the sequence
/// hands on without its outputs (a sequence-parallel call runs ahead with it to where another thread starts),
/// then the total G of each decay scan's log-gates over the piece (StateOrigin::decays).
enum class StateVariant { Prefill, Resume, State };

/// "prefill", "resume" or "state".
StringRef getStateVariantName(StateVariant variant);
/// The variant named `name`; none for another name.
std::optional<StateVariant> parseStateVariant(StringRef name);
/// The attribute that declares a variant in a kernel file: la.prefill_of, la.resume_of, la.state_of.
StringRef getStateVariantAttrName(StateVariant variant);

/// How the state a stretch of the sequence hands on combines with the state before the stretch
/// (DerivedStateVariant::combinable).
enum class StateCombine {
  /// Added: an add scan's running sum, a position counter.
  Sum,
  /// e^G ⊙ (the state before) plus the stretch's: a decay scan, G the total of its log-gates over the
  /// stretch, which the `state` variant returns after every state (one result per decaying state, in
  /// their order), so that stretches' states combine without the gates themselves.
  Decay,
  /// An online-softmax scan's triple: its normalised weighted sum, running max and normaliser (roles "",
  /// "max", "norm", consecutive). Stretches merge as one softmax step each, with the stretch's average as
  /// the value and m + log z as the logit.
  SoftmaxAverage,
  SoftmaxMax,
  SoftmaxNorm,
};

/// Where one state of a derived variant comes from.
struct StateOrigin {
  /// The scan (or position-reading map) that carries it.
  Location location;
  /// Which of that scan's states it is, "" for the scan's value ("max" and "norm" for an online softmax's
  /// running max and normaliser), to name the state after the scan's result.
  StringRef role;
  /// How it combines across stretches of the sequence.
  StateCombine combine = StateCombine::Sum;
  /// 1 when what it scans is computed from no state (a counter's is 1 too), else one more than the highest
  /// level among the states it is computed from (Flow's Σ k·b reads b, computed from Σ q: level 2). A
  /// stretch's own state at level l follows from the exact states before it at levels below l alone, so the
  /// states of all stretches can be found level by level (DerivedStateVariant::combinable).
  int level = 1;
};

/// A derived variant: a new public function beside its source, and where each state comes from.
struct DerivedStateVariant {
  func::FuncOp function;
  /// One per state, in signature order.
  SmallVector<StateOrigin> states;
  /// The dimension the scans run along, at the same position in every operand.
  int64_t sequenceDim = 0;
  /// Whether the state after a stretch of the sequence follows from the state before it and the state the
  /// stretch hands on from the initial state (StateCombine), given the exact states before it at lower
  /// levels (StateOrigin::level): every state is an add scan or a position counter, a decay scan or an
  /// online-softmax scan. Linear attention's Σ φ(k) ⊗ v and Σ φ(k), the decayed sums of retention, simple
  /// GLA and GLA, causal AFT's online softmax (all level 1), Flow's four levels of sums. The states of
  /// stretches can then be computed at once per level and combined.
  bool combinable = false;
  /// `combinable` with every state a sum at level 1: the states of stretches add.
  bool additive = false;
  /// Every stretch must start at a multiple of this many positions: 1, or the least common multiple of the
  /// block sizes of the block-masked contractions along the sequence. Those pair positions within a block
  /// (causal_block, block), which a stretch that starts on a block boundary holds whole, and with the blocks
  /// before (prior_block: a sum of the earlier blocks' products, carried as a state). FLASH's causal form
  /// needs 256; a decode step, which starts anywhere, cannot run it.
  int64_t alignment = 1;
};

/// deriveStateVariant's `alignedTo` that lets the block-masked contractions set the alignment.
inline constexpr int64_t kAnyBlockAlignment = 0;

/// Builds `variant` of the causal `source` as a new function `name` inserted before `source`: prefill takes
/// the source's arguments, resume and state those and then the states of each scan along the sequence (one,
/// or an online softmax's three); prefill and resume return the source's results, then each scan's states
/// after the last position; state returns the states alone. Emits an error at the op that makes `source` non-causal,
/// and fails. A state variant for `onlyLevel` returns only the states of that level (StateOrigin::level) and
/// their decays' totals, and computes nothing else: a GPU call in pieces runs one per level. `alignedTo` is
/// where the variant's stretches start (DerivedStateVariant::alignment): 1, anywhere (a contraction masked
/// by blocks is an error); N, at multiples of N (each block size must divide it); kAnyBlockAlignment, at
/// multiples of what the block masks need.
FailureOr<DerivedStateVariant> deriveStateVariant(func::FuncOp source, StateVariant variant, StringRef name,
                                                  SymbolTable &symbols, std::optional<int> onlyLevel = std::nullopt,
                                                  int64_t alignedTo = 1);

} // namespace mlir::la

#endif // LA_TRANSFORMS_STATEVARIANTS_H
