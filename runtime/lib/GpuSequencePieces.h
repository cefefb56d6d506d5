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
// Step 2 needs states that combine linearly (SequenceStates::linear): sums (linear attention's) add, and
// decays (simple GLA's, GLA's) scale the state before by e^G, G the sum of the piece's log-gates, which the
// prefix computes from the gate argument. Other states (Flow's nested sums, an online softmax, retention's
// gates computed from the head index, which a slice per piece would misread) run each slice whole, one
// block per slice, for now.
// No launch copies a tensor: a [.., H, N, ..] tensor whose N is `count` pieces of L positions is, byte for
// byte, a [.., H·count, L, ..] tensor with a slice per piece, so each launch reads and writes the call's
// own tensors through that view.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_LIB_GPUSEQUENCEPIECES_H
#define LA_RUNTIME_LIB_GPUSEQUENCEPIECES_H

#include "la/runtime/Tensor.h"

#include "llvm/ADT/ArrayRef.h"

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

/// A state per piece, [S_1, .., S_k · count, X...] (a piece variant's state), as [S_1, .., S_k, count, X...]:
/// the pieces of a slice along their own dimension `slicedDims`, which `piece_prefix` scans.
TensorSpec viewStatesAlongPieces(const TensorSpec &perPiece, int64_t slicedDims, const GpuPieces &pieces);

/// `spec`, [S_1, .., S_k, N, ...], as [S_1, .., S_k, count, length, ...]: the positions of each piece along a
/// dimension after the pieces' (a decay's log-gates, which the prefix sums per piece).
TensorSpec viewAlongPieces(const TensorSpec &spec, int64_t slicedDims, const GpuPieces &pieces);

/// The entry of piecePrefixSource's program.
inline constexpr const char *kPiecePrefixEntry = "piece_prefix";

/// One state as the prefix program takes it: its rank along the pieces ([S..., count, X...]) and, for a
/// state that decays, the rank of its log-gates viewed along the pieces ([S..., count, length, K...]).
struct PrefixState {
  size_t rank = 0;
  std::optional<size_t> gateRank;
};

/// An la program whose entry `piece_prefix` takes one f32 tensor per state (each piece's own state along
/// dimension `pieceDim`), then the log-gates of each state that decays, and returns for each state the
/// state before each piece: an exclusive scan along the pieces, `add` for a sum, `decay` by the sum of each
/// piece's gates for a decay (the state before piece p is e^{G_{p-1}} ⊙ the one before p − 1 plus piece
/// p − 1's own).
std::string piecePrefixSource(llvm::ArrayRef<PrefixState> states, int64_t pieceDim);

} // namespace la

#endif // LA_RUNTIME_LIB_GPUSEQUENCEPIECES_H
