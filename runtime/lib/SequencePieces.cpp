//===- SequencePieces.cpp - one slice of a causal kernel on two threads ---===//

#include "SequencePieces.h"

namespace la {

std::optional<SequencePieces> planSequencePieces(int64_t length, int64_t minPieceLength) {
  constexpr int64_t kTargetPieces = 64, kAlignment = 64, kMinPieces = 4;
  int64_t pieceLength = (length + kTargetPieces - 1) / kTargetPieces;
  pieceLength = std::max(minPieceLength, (pieceLength + kAlignment - 1) / kAlignment * kAlignment);
  SequencePieces pieces{length, pieceLength};
  if (pieceLength <= 0 || pieces.count() < kMinPieces)
    return std::nullopt;
  return pieces;
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
  // The runner holds, in slot `held`, the state of pieces runnerStart..frontier - 1 from the initial state.
  int held = PieceWork::kInitialSlot;
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
