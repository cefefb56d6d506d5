//===- SequencePiecesTest.cpp - two threads on one slice's pieces ---------===//
//
// runtime/lib/SequencePieces.h: how a sequence is cut, and the handoff between the front (pieces in order
// from the start) and the runner (states alone, then the pieces from where it took over). The work here is
// simulated: a state is the number of pieces it covers, so a piece run from the wrong state is caught, and
// each role's cost is enforced by waiting on the other's progress (not by sleeping, which a loaded machine
// or ThreadSanitizer would stretch). Every piece's outputs are computed exactly once, each from the state of
// all pieces before it; a cheap state makes the runner take over about where the costs balance; a state
// that costs as much as a piece leaves every piece to the front. Then the runtime's own two-thread calls,
// repeated, so that ThreadSanitizer (scripts/test --tsan) sees the real schedule.
//
//===----------------------------------------------------------------------===//

#include "SequencePieces.h"
#include "Helpers.h"

#include <gtest/gtest.h>

#include <cmath>

#include <array>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace {

TEST(RuntimeConcurrencySequencePieces, PlansAboutSixtyFourPiecesOfWholeChunks) {
  std::optional<la::SequencePieces> pieces = la::planSequencePieces(65536);
  ASSERT_TRUE(pieces);
  EXPECT_EQ(pieces->pieceLength, 1024);
  EXPECT_EQ(pieces->count(), 64);

  // 100000 / 64 = 1562.5 rounds up to 1600 positions; the last piece has the 800 left.
  pieces = la::planSequencePieces(100000);
  ASSERT_TRUE(pieces);
  EXPECT_EQ(pieces->pieceLength, 1600);
  EXPECT_EQ(pieces->count(), 63);
  EXPECT_EQ(pieces->begin(62), 99200);
  EXPECT_EQ(pieces->size(62), 800);

  // Short sequences: pieces of the minimum length, and none below four of them.
  pieces = la::planSequencePieces(4096);
  ASSERT_TRUE(pieces);
  EXPECT_EQ(pieces->pieceLength, 256);
  EXPECT_EQ(pieces->count(), 16);
  pieces = la::planSequencePieces(1000);
  ASSERT_TRUE(pieces);
  EXPECT_EQ(pieces->count(), 4);
  EXPECT_EQ(pieces->size(3), 232);
  EXPECT_FALSE(la::planSequencePieces(768));
  EXPECT_FALSE(la::planSequencePieces(0));
}

/// How far each role has got, for the other to wait on: the simulated costs are enforced by waiting, not by
/// sleeping, so the schedule's decisions do not depend on how the machine runs the two threads.
struct Pace {
  std::mutex mutex;
  std::condition_variable changed;
  int64_t frontStarted = 0, statesHanded = 0;
  bool frontOver = false, chainOver = false;

  template <typename Ready> void waitUntil(Ready ready) {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return ready(); });
  }
  template <typename Update> void update(Update change) {
    {
      std::lock_guard lock(mutex);
      change();
    }
    changed.notify_all();
  }
};

/// Runs both roles of one slice of `count` pieces on two threads. The front finishes piece i once
/// `frontMayFinish(i, pace)` holds (or the runner's chain is over); the runner finishes the state of piece f
/// once `runnerMayFinish(f, pace)` holds (or the front is over). Checks that every piece's outputs
/// are computed once, each from the state of all pieces before it; returns the piece the runner took over
/// from (count: none).
template <typename FrontGate, typename RunnerGate>
int64_t runHandoff(int64_t count, FrontGate frontMayFinish, RunnerGate runnerMayFinish) {
  // Slot s holds the number of pieces its state covers; -1 is the initial state (none).
  std::array<int64_t, 4> slots{-2, -2, -2, -2};
  std::vector<std::atomic<int>> outputRuns(count);
  Pace pace;
  auto covered = [&](int from) { return from < 0 ? 0 : slots[from]; };
  auto withOutputs = [&](int64_t piece, int from, int to) {
    EXPECT_NE(from, to);
    EXPECT_EQ(covered(from), piece) << "piece " << piece << " ran from a state of " << covered(from) << " pieces";
    if (to < 2) {
      pace.update([&] { pace.frontStarted = piece + 1; });
      pace.waitUntil([&] { return pace.chainOver || frontMayFinish(piece, pace); });
    } else {
      pace.update([&] { pace.chainOver = true; });
    }
    outputRuns[piece].fetch_add(1);
    slots[to] = piece + 1;
  };
  auto stateOnly = [&](int64_t piece, int from, int to) {
    EXPECT_NE(from, to);
    EXPECT_GE(to, 2) << "the runner writes its own slots";
    EXPECT_EQ(covered(from), piece);
    pace.waitUntil([&] { return pace.frontOver || runnerMayFinish(piece, pace); });
    slots[to] = piece + 1;
    pace.update([&] { pace.statesHanded = piece + 1; });
  };
  la::PieceWork work{withOutputs, stateOnly};
  la::PieceHandoff handoff(count);
  std::thread runner([&] {
    handoff.runRunner(work);
    pace.update([&] { pace.chainOver = true; });
  });
  handoff.runFront(work);
  pace.update([&] { pace.frontOver = true; });
  runner.join();
  for (int64_t piece = 0; piece < count; ++piece)
    EXPECT_EQ(outputRuns[piece].load(), 1) << "piece " << piece;
  return handoff.handoffPiece();
}

TEST(RuntimeConcurrencySequencePieces, CheapStatesHandOverAtTheBalance) {
  // A state costs a quarter of a piece: the front finishes piece i once the runner has handed on 4(i + 1)
  // states, and the runner finishes state f once the front has started piece ⌊f/4⌋. When the runner holds
  // F states the front has claimed ⌊F/4⌋ or ⌊F/4⌋ + 1 pieces, and the first F with F − claimed ≥ 64 − F is
  // 37 either way (the balance, 64 / (2 − 1/4), is 36.6).
  int64_t handoff = runHandoff(
      64, [](int64_t piece, Pace &pace) { return pace.statesHanded >= 4 * (piece + 1); },
      [](int64_t state, Pace &pace) { return pace.frontStarted >= state / 4 + 1; });
  EXPECT_EQ(handoff, 37);
}

TEST(RuntimeConcurrencySequencePieces, StatesAsCostlyAsPiecesLeaveEverythingToTheFront) {
  // A state costs four pieces: the runner finishes state f once the front has started piece 4(f + 1). It
  // never gets ahead of the front, so it gives up and the front runs every piece.
  EXPECT_EQ(runHandoff(
                16, [](int64_t, Pace &) { return true; },
                [](int64_t state, Pace &pace) { return pace.frontStarted >= 4 * (state + 1); }),
            16);
}

TEST(RuntimeConcurrencySequencePieces, RepeatedTwoThreadCallsMatchOneThread) {
  la::RuntimeOptions options;
  options.cacheDir = "none";
  options.numThreads = 1;
  auto one = la::Runtime::create(options);
  options.numThreads = 2;
  auto two = la::Runtime::create(options);
  ASSERT_TRUE(bool(one) && bool(two));
  auto program = (*one)->loadFile(la::test::kernelPath("linear_attention.mlir"));
  ASSERT_TRUE(bool(program)) << llvm::toString(program.takeError());
  // 1100 positions: four pieces of 256 and a short last one.
  la::test::AttentionInputs inputs(1, 1, 1100, 8, 5);
  auto expected = (*one)->run(**program, "linear_attention_causal", inputs.refs);
  ASSERT_TRUE(bool(expected)) << llvm::toString(expected.takeError());
  for (int call = 0; call < 20; ++call) {
    la::CallStats stats;
    auto split = (*two)->run(**program, "linear_attention_causal", inputs.refs, &stats);
    ASSERT_TRUE(bool(split)) << llvm::toString(split.takeError());
    EXPECT_EQ(stats.sequenceThreadsPerSlice, 2);
    double error = 0, norm = 0;
    for (int64_t i = 0; i < (*expected)[0].numElements(); ++i) {
      double x = (*split)[0].get(i), y = (*expected)[0].get(i);
      error += (x - y) * (x - y);
      norm += y * y;
    }
    EXPECT_LE(std::sqrt(error / norm), 1e-5) << "call " << call;
  }
}

} // namespace
