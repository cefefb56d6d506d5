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
// Where states add (linear attention's sums: the state after pieces a..b is the state before a plus what
// a..b hand on from zero), the runner does not sum from the start but from piece s = count/8, and adds the
// state the front hands on before s (the anchor) when it takes over. Both threads then work on the state
// at once: the front runs pieces 0..s while the runner sums s..f. The start suits states that cost about a
// third of a piece (the best, c/(1 + c) of the front's share, is a sixth of the pieces at c = 0.37); the
// call takes (1 − c/8)/(2 − c) of one thread's time, 1.71× faster at c = 0.37 against 1.63×. A runner
// that reaches the balance before the front has passed s sums on until it has.
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

/// The longest piece length within `positions` (at least 1): `positions` itself below 4, else its two
/// leading binary digits followed by zeros (1000 = 0b1111101000 gives 0b1100000000 = 768). Piece lengths are
/// therefore 1, 2, 3 or 2^e and 3·2^e: two per octave, a set that does not depend on any sequence's length
/// (28 lengths up to 16384), and any length is a few of them (each takes away its two leading digits).
/// Measured against one and three digits (docs/BENCHMARKS.md, session 33): one digit cuts 1000 positions
/// into six pieces, and each piece's state handoff and cold start cost up to 4% more at N = 1000; three
/// digits save one piece there for no measurable gain and twice the kernels.
int64_t longestPieceWithin(int64_t positions);

/// How a sequence is cut: pieces of `pieceLength` positions (a length longestPieceWithin gives), then what
/// is left as the longest pieces within it, one after another (1000 = 768 + 192 + 32 + 8). A runtime that cuts
/// every call this way compiles kernels for those lengths only, whatever lengths its calls bring, and a
/// sequence is a handful of pieces, each paying for a state handed on once.
struct SequencePieces {
  int64_t length = 0;
  int64_t pieceLength = 0;

  /// Pieces of `pieceLength`, before the shorter ones.
  int64_t wholePieces() const { return length / pieceLength; }
  int64_t count() const;
  int64_t begin(int64_t piece) const;
  int64_t size(int64_t piece) const;
};

/// The pieces of a sequence of `length` positions for two threads on a slice: about 64 (the handoff then lands
/// within 1/64 of the balance), the longest power of two that makes at least that many and is at least
/// `minPieceLength` (a power of two), then the rest as above; none where that makes fewer than four pieces.
std::optional<SequencePieces> planSequencePieces(int64_t length, int64_t minPieceLength = 256);

/// The pieces of a sequence of `length` positions for one thread on a slice: of `pieceLength` (a power of
/// two) from `longLength` positions on, where a piece's tensors staying in cache pays for its calls; below it
/// of the longest piece within `length`, so that a sequence whose length is one runs in one piece.
SequencePieces planSerialPieces(int64_t length, int64_t pieceLength, int64_t longLength);

/// One slice's work, as the two roles ask for it. State slots: -1 is the state before the first piece (the
/// caller's, or the initial state), -2 the zero state a runner sums from where states add, 0 and 1 the
/// front's, 2 and 3 the runner's, 4 the anchor (where states add: the front's state before the runner's first
/// piece); a piece reads `from` and writes `to`, never the same.
struct PieceWork {
  static constexpr int kInitialSlot = -1, kZeroSlot = -2, kAnchorSlot = 4, kSlots = 5;
  /// Piece `piece`'s outputs and the state after it (prefill where `from` is -1, else resume).
  llvm::function_ref<void(int64_t piece, int from, int to)> withOutputs;
  /// The state after piece `piece` alone (the state variant).
  llvm::function_ref<void(int64_t piece, int from, int to)> stateOnly;
  /// Where states add: slot `to` = slot `a` + slot `b`, each state element by element. Null otherwise.
  llvm::function_ref<void(int a, int b, int to)> addStates;
};

/// The two roles of one slice; each runs on its own thread, and both return once the pieces are done.
class PieceHandoff {
public:
  /// `additive`: the work's states add, so the runner sums from piece count/8 rather than from the start.
  explicit PieceHandoff(int64_t count, bool additive = false)
      : count(count), runnerStart(additive ? count / 8 : 0), limit(count) {}
  void runFront(const PieceWork &work);
  void runRunner(const PieceWork &work);
  /// The piece the runner took over from (count: none); for tests and statistics, after both returned.
  int64_t handoffPiece() const { return limit; }
  /// The first piece the runner sums (0 where states do not add).
  int64_t runnerStartPiece() const { return runnerStart; }

private:
  const int64_t count;
  /// The runner's first piece; where it is not 0, the front leaves the state before it in the anchor slot.
  const int64_t runnerStart;
  std::mutex mutex;
  /// Pieces the front has claimed (it runs them in order), and the first piece it may not claim.
  int64_t claimed = 0;
  int64_t limit;
};

} // namespace la

#endif // LA_RUNTIME_LIB_SEQUENCEPIECES_H
