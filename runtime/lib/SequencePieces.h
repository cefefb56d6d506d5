//===- SequencePieces.h - one slice of a causal kernel on two threads -*- C++ -*-===//
//
// A causal kernel carries state from each position to the next, so a batch×head slice runs on one thread
// however many the runtime has: at B = H = 1 a second core idles. A sequence-parallel call cuts the
// sequence into pieces and puts two threads on the slice, using the entry's derived variants (SPEC §8):
//
//   front    runs the pieces in order from the start with their outputs: prefill on piece 0, then resume
//            from the state the previous piece handed on.
//   runner   runs ahead with the `state` variant (the state a piece hands on, without its outputs: Kᵀ V for
//            linear attention, about a third of the piece's time) until, at some piece f, the pieces the
//            front has still to claim before f are as many as those from f to the end. It then runs pieces
//            f.. with their outputs from the state it holds, and the front stops before f.
//
// The runner decides from the front's progress, not from a cost model, so the split follows what the state
// costs for this kernel on this machine. With state cost c (a fraction of a piece's) the call takes
// 1/(2 − c) of one thread's time: 1.67× faster at c = 1/3. Every piece runs resume from the state before it,
// as prefill + resumes do, so the outputs match the whole-sequence kernel as those do.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_LIB_SEQUENCEPIECES_H
#define LA_RUNTIME_LIB_SEQUENCEPIECES_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <optional>

namespace la {

/// How a sequence is cut: pieces of `pieceLength` positions, the last one shorter where it does not divide.
struct SequencePieces {
  int64_t length = 0;
  int64_t pieceLength = 0;

  int64_t count() const { return (length + pieceLength - 1) / pieceLength; }
  int64_t begin(int64_t piece) const { return piece * pieceLength; }
  int64_t size(int64_t piece) const { return std::min(pieceLength, length - begin(piece)); }
};

/// The pieces of a sequence of `length` positions: about 64 (the handoff then lands within 1/64 of the
/// balance), each a multiple of 64 positions (whole chunks of the chunked kernels) and at least
/// `minPieceLength`; none where the sequence makes fewer than four pieces (the last one may be shorter).
std::optional<SequencePieces> planSequencePieces(int64_t length, int64_t minPieceLength = 256);

/// One slice's work, as the two roles ask for it. State slots: -1 is the initial state, 0 and 1 the front's,
/// 2 and 3 the runner's; a piece reads `from` and writes `to`, never the same.
struct PieceWork {
  /// Piece `piece`'s outputs and the state after it (prefill where `from` is -1, else resume).
  llvm::function_ref<void(int64_t piece, int from, int to)> withOutputs;
  /// The state after piece `piece` alone (the state variant).
  llvm::function_ref<void(int64_t piece, int from, int to)> stateOnly;
};

/// The two roles of one slice; each runs on its own thread, and both return once the pieces are done.
class PieceHandoff {
public:
  explicit PieceHandoff(int64_t count) : count(count), limit(count) {}
  void runFront(const PieceWork &work);
  void runRunner(const PieceWork &work);
  /// The piece the runner took over from (count: none); for tests and statistics, after both returned.
  int64_t handoffPiece() const { return limit; }

private:
  const int64_t count;
  std::mutex mutex;
  /// Pieces the front has claimed (it runs them in order), and the first piece it may not claim.
  int64_t claimed = 0;
  int64_t limit;
};

} // namespace la

#endif // LA_RUNTIME_LIB_SEQUENCEPIECES_H
