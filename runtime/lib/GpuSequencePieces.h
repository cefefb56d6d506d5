//===- GpuSequencePieces.h - a causal call's chunks spread over a GPU's blocks -*- C++ -*-===//
//
// A CUDA kernel runs one batch×head slice per thread block, and a causal slice carries its state from each
// position to the next, so B·H = 16 slices fill 16 of an H100's 132 SMs however long the sequence. A
// chunk-parallel call cuts each slice's sequence into pieces of `sequence-piece-length` positions and runs
// it in three launches of kernels generated from the entry's one source (its derived variants, SPEC §8):
//
//   1. states   the `state` variant on every piece at once, each from the initial (zero) state: the state a
//               piece hands on by itself. One block per (slice, piece).
//   2. prefix   `piece_prefix`, an la program of exclusive add scans along the pieces: the state before each
//               piece, the sum of those of the pieces before it. One block per slice.
//   3. outputs  the `resume` variant on every piece at once from the state before it. One block per
//               (slice, piece).
//
// Step 2 needs states that combine piece by piece (SequenceStates::combinable): sums (linear attention's)
// add, decays (retention's, simple GLA's, GLA's) scale the state before by e^G, G the sum of the piece's
// log-gates, which the state variant returns beside the states, and an online softmax's triple (causal
// AFT's) merges as one softmax step per piece. States that depend on other states (Flow's Σ k·b reads b,
// computed from Σ q) are found level by level (SequenceStates::levels): steps 1 and 2 run once per level,
// the state variant then starting each piece from the exact states before it at the levels below, so
// Flow's four levels take nine launches. Any other state (a running maximum, say) runs each slice whole,
// one block per slice. FLASH's causal form pairs positions by blocks of 256 (SequenceStates::alignment): its
// pieces are rounded up to whole blocks, and its state is the sum over the earlier blocks. A state-passing
// variant (a `*_with_state` entry, `--variant prefill|resume`) runs as its entry, from the states it is
// given, and step 2 also writes the states after the last position.
// No launch copies a tensor: a [.., H, N, ..] tensor whose N is `count` pieces of L positions is, byte for
// byte, a [.., H·count, L, ..] tensor with a slice per piece, so each launch reads and writes the call's
// own tensors through that view. Its kernels are compiled knowing it (SliceLayout::pieces): a position read
// along H (retention's per-head decay) is the block's coordinate over `count`.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_LIB_GPUSEQUENCEPIECES_H
#define LA_RUNTIME_LIB_GPUSEQUENCEPIECES_H

#include "la/runtime/Compiler.h"
#include "la/runtime/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <string>

namespace la {

/// How a chunk-parallel GPU call cuts each slice's sequence: `count` pieces of `length` positions.
struct GpuPieces {
  int64_t count = 1;
  int64_t length = 0;
};

/// The pieces of a sequence of `sequenceLength` positions at `pieceLength` each; none where that makes one
/// piece, or where the pieces do not cover the sequence exactly (the view needs whole pieces).
std::optional<GpuPieces> planGpuPieces(int64_t sequenceLength, int64_t pieceLength);

/// `spec`, [S_1, .., S_k, N, ...] with k = `slicedDims` leading slice dimensions and the sequence next, as
/// the same bytes cut into pieces: [S_1, .., S_k · count, length, ...].
TensorSpec viewAsPieces(const TensorSpec &spec, int64_t slicedDims, const GpuPieces &pieces);

/// A state per piece, [S_1, .., S_k · count, X...] (a piece variant's state, or a decay's gate total), as
/// [S_1, .., S_k, count, X...]: the pieces of a slice along their own dimension `slicedDims`, which
/// `piece_prefix` scans.
TensorSpec viewStatesAlongPieces(const TensorSpec &perPiece, int64_t slicedDims, const GpuPieces &pieces);

/// The entry of piecePrefixSource's program.
inline constexpr const char *kPiecePrefixEntry = "piece_prefix";

/// What the call in pieces is: the entry itself, which starts from the empty prefix and returns no state,
/// or a state-passing variant of it (SPEC §8: `resume`, e.g. the `*_with_state` entries, and `prefill`).
struct PrefixCall {
  /// The call starts from states it is given (resume), not from the empty prefix.
  bool fromInitial = false;
  /// The call returns the states after its last position (prefill, resume).
  bool final = false;
};

/// Whether the prefix program takes the state before the first piece of a state that combines so: the
/// call's own, or for a softmax (whose exclusive scan starts from an init) the empty prefix.
inline bool prefixNeedsInitial(StateCombine combine, const PrefixCall &call) {
  return call.fromInitial || combine == StateCombine::SoftmaxAverage || combine == StateCombine::SoftmaxMax ||
         combine == StateCombine::SoftmaxNorm;
}

/// One state as the prefix program takes it: its rank along the pieces ([S..., count, X...]), how it
/// combines, and, for a state that decays, the rank of each piece's log-gate total viewed along the pieces
/// ([S..., count, K...]). An online softmax's triple is three consecutive states.
struct PrefixState {
  size_t rank = 0;
  StateCombine combine = StateCombine::Sum;
  std::optional<size_t> gateRank;
};

/// Some of a call's states (SequenceStates::combines, in signature order): their indices, and the indices
/// among all the decays of the decays among them. A state variant returns its states and then their decays'
/// gate totals in this order, and a prefix takes them so.
struct StateSelection {
  llvm::SmallVector<size_t, 8> states, decays;
};
StateSelection selectStates(llvm::ArrayRef<StateCombine> combines, llvm::function_ref<bool(size_t)> selected);

/// An la program whose entry `piece_prefix` takes one f32 tensor per state (each piece's own state along
/// dimension `pieceDim`), then the log-gate totals of each state that decays, then the state before the
/// first piece of each state where prefixNeedsInitial, and returns for each state the state before each piece: an
/// exclusive scan along the pieces, `add` for a sum, `decay` by each piece's total for a decay (the state
/// before piece p is e^{G_{p-1}} ⊙ the one before p − 1 plus piece p − 1's own), `online_softmax` for a
/// softmax's triple (each piece one step, its average the value and m + log z its logit: the pieces' sums
/// Σ e^k, z·e^m, are the weights); then (`call.final`) the state after the last piece of each.
std::string piecePrefixSource(llvm::ArrayRef<PrefixState> states, int64_t pieceDim, const PrefixCall &call = {});

} // namespace la

#endif // LA_RUNTIME_LIB_GPUSEQUENCEPIECES_H
