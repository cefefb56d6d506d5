//===- SequencePieces.cpp - one slice of a causal kernel on two threads ---===//

#include "SequencePieces.h"

namespace la {

int64_t SequencePieces::begin(int64_t piece) const {
  int64_t whole = wholePieces();
  if (piece <= whole)
    return piece * pieceLength;
  // The shorter pieces take the remainder's binary digits from the highest: drop the `piece - whole` highest.
  int64_t position = whole * pieceLength;
  uint64_t rest = static_cast<uint64_t>(length % pieceLength);
  for (int64_t i = whole; i < piece; ++i) {
    uint64_t digit = llvm::bit_floor(rest);
    position += static_cast<int64_t>(digit);
    rest -= digit;
  }
  return position;
}

int64_t SequencePieces::size(int64_t piece) const {
  if (piece < wholePieces())
    return pieceLength;
  return static_cast<int64_t>(llvm::bit_floor(static_cast<uint64_t>(length - begin(piece))));
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
  return {length, static_cast<int64_t>(llvm::bit_floor(static_cast<uint64_t>(std::max<int64_t>(length, 1))))};
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
