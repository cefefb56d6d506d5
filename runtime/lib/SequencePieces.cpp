//===- SequencePieces.cpp - one slice of a causal kernel on two threads ---===//

#include "SequencePieces.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/MathExtras.h"

namespace la {

int64_t longestPieceWithin(int64_t positions) {
  constexpr int64_t kLeadingDigits = 2;
  if (positions < (int64_t(1) << kLeadingDigits))
    return std::max<int64_t>(positions, 1);
  int64_t dropped = llvm::Log2_64(static_cast<uint64_t>(positions)) + 1 - kLeadingDigits;
  return positions >> dropped << dropped;
}

int64_t SequencePieces::count() const {
  int64_t pieces = wholePieces();
  for (int64_t rest = length % pieceLength; rest > 0; rest -= longestPieceWithin(rest))
    ++pieces;
  return pieces;
}

int64_t SequencePieces::begin(int64_t piece) const {
  int64_t whole = wholePieces();
  if (piece <= whole)
    return piece * pieceLength;
  int64_t position = whole * pieceLength;
  for (int64_t i = whole; i < piece; ++i)
    position += longestPieceWithin(length - position);
  return position;
}

int64_t SequencePieces::size(int64_t piece) const {
  return piece < wholePieces() ? pieceLength : longestPieceWithin(length - begin(piece));
}

std::optional<SequencePieces> planSequencePieces(int64_t length, int64_t minPieceLength) {
  constexpr int64_t kTargetPieces = 64, kMinPieces = 4;
  if (length <= 0)
    return std::nullopt;
  int64_t pieceLength = static_cast<int64_t>(llvm::bit_floor(static_cast<uint64_t>(length / kTargetPieces)));
  SequencePieces pieces{length, std::max(minPieceLength, pieceLength)};
  if (pieces.count() < kMinPieces)
    return std::nullopt;
  return pieces;
}

SequencePieces planSerialPieces(int64_t length, int64_t pieceLength, int64_t longLength) {
  if (length >= longLength)
    return {length, pieceLength};
  return {length, longestPieceWithin(length)};
}

void PieceHandoff::runFront(const PieceWork &work) {
  // The state after `piece`: alternate slots, except the anchor the runner adds its sum to.
  auto slotAfter = [&](int64_t piece) {
    return runnerStart > 0 && piece + 1 == runnerStart ? PieceWork::kAnchorSlot : static_cast<int>(piece % 2);
  };
  for (int64_t piece = 0;; ++piece) {
    {
      std::lock_guard lock(mutex);
      if (piece >= limit)
        return;
      claimed = piece + 1;
    }
    work.withOutputs(piece, piece == 0 ? PieceWork::kInitialSlot : slotAfter(piece - 1), slotAfter(piece));
  }
}

void PieceHandoff::runRunner(const PieceWork &work) {
  // The runner holds, in slot `held`, the state of pieces runnerStart..frontier - 1: from the state before
  // the first piece, or where it sums from a later start (states that add), from zero.
  int held = runnerStart > 0 ? PieceWork::kZeroSlot : PieceWork::kInitialSlot;
  int64_t frontier = runnerStart;
  auto nextSlot = [&] { return held == 2 ? 3 : 2; };
  for (;; ++frontier) {
    bool takeOver = false;
    if (frontier > runnerStart) {
      std::lock_guard lock(mutex);
      // The front has claimed the piece the runner would start from: it cannot help any more.
      if (claimed > frontier)
        return;
      // Summing from a later start, the runner needs the anchor: the front has finished the piece before
      // the start once it has claimed the start.
      bool anchorReady = runnerStart == 0 || claimed > runnerStart;
      takeOver = anchorReady && frontier - claimed >= count - frontier;
      if (takeOver)
        limit = frontier;
    }
    if (takeOver)
      break;
    // The last piece is only ever run with its outputs: past it nothing needs a state.
    if (frontier + 1 >= count)
      return;
    int to = nextSlot();
    work.stateOnly(frontier, held, to);
    held = to;
  }
  if (runnerStart > 0) {
    int to = nextSlot();
    work.addStates(PieceWork::kAnchorSlot, held, to);
    held = to;
  }
  for (int64_t piece = frontier; piece < count; ++piece) {
    int to = nextSlot();
    work.withOutputs(piece, held, to);
    held = to;
  }
}

} // namespace la
