//===- SequencePiecesTest.cpp - two threads on one slice's pieces ---------===//
//
// runtime/lib/SequencePieces.h: how a sequence is cut, and the handoff between the front (pieces in order
// from the start) and the runner (states alone, then the pieces from where it took over). The work here is
// simulated: a state is the number of pieces it covers, so a piece run from the wrong state is caught, and
// each role's cost is enforced by waiting on the other's progress (not by sleeping, which a loaded machine
// or ThreadSanitizer would stretch). Every piece's outputs are computed exactly once, each from the state of
// all pieces before it; a cheap state makes the runner take over about where the costs balance; a state
// that costs as much as a piece leaves every piece to the front; states that add are summed from an eighth
// in and handed over earlier. Then the runtime's own two-thread calls, repeated, so that ThreadSanitizer
// (scripts/test --tsan) sees the real schedule.
//
//===----------------------------------------------------------------------===//

#include "SequencePieces.h"
#include "Helpers.h"

#include "la/runtime/Compiler.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <cmath>

#include <array>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace {

TEST(RuntimeConcurrencySequencePieces, PlansAboutSixtyFourPiecesForTwoThreads) {
  std::optional<la::SequencePieces> pieces = la::planSequencePieces(65536);
  ASSERT_TRUE(pieces);
  EXPECT_EQ(pieces->pieceLength, 1024);
  EXPECT_EQ(pieces->count(), 64);

  // 100000 / 64 = 1562.5: pieces of 1024; the 672 left are pieces of 512, 128 and 32.
  pieces = la::planSequencePieces(100000);
  ASSERT_TRUE(pieces);
  EXPECT_EQ(pieces->pieceLength, 1024);
  EXPECT_EQ(pieces->wholePieces(), 97);
  EXPECT_EQ(pieces->count(), 100);
  EXPECT_EQ(pieces->begin(97), 99328);
  EXPECT_EQ(pieces->size(97), 512);
  EXPECT_EQ(pieces->begin(98), 99840);
  EXPECT_EQ(pieces->size(98), 128);
  EXPECT_EQ(pieces->begin(99), 99968);
  EXPECT_EQ(pieces->size(99), 32);

  // Short sequences: pieces of the minimum length, and none below four pieces.
  pieces = la::planSequencePieces(4096);
  ASSERT_TRUE(pieces);
  EXPECT_EQ(pieces->pieceLength, 256);
  EXPECT_EQ(pieces->count(), 16);
  pieces = la::planSequencePieces(1000); // 3 × 256, then 192, 32 and 8
  ASSERT_TRUE(pieces);
  EXPECT_EQ(pieces->count(), 6);
  EXPECT_EQ(pieces->size(3), 192);
  EXPECT_EQ(pieces->begin(5), 992);
  EXPECT_EQ(pieces->size(5), 8);
  EXPECT_FALSE(la::planSequencePieces(768));
  EXPECT_FALSE(la::planSequencePieces(0));
}

TEST(RuntimeConcurrencySequencePieces, PieceLengthsKeepTwoLeadingBinaryDigits) {
  EXPECT_EQ(la::longestPieceWithin(1), 1);
  EXPECT_EQ(la::longestPieceWithin(3), 3);
  EXPECT_EQ(la::longestPieceWithin(4), 4);
  EXPECT_EQ(la::longestPieceWithin(7), 6);
  EXPECT_EQ(la::longestPieceWithin(15), 12);
  EXPECT_EQ(la::longestPieceWithin(1000), 768);
  EXPECT_EQ(la::longestPieceWithin(4096), 4096);
  EXPECT_EQ(la::longestPieceWithin(16383), 12288);
  // Two lengths per octave: 1 to 2^14 map into 1, 2, 3, two for each octave from [4, 8) to [8192, 16384)
  // and 16384.
  llvm::DenseSet<int64_t> lengths;
  for (int64_t n = 1; n <= 16384; ++n) {
    int64_t piece = la::longestPieceWithin(n);
    EXPECT_TRUE(piece <= n && la::longestPieceWithin(piece) == piece) << n;
    lengths.insert(piece);
  }
  EXPECT_EQ(lengths.size(), 2u * 12 + 4);
}

TEST(RuntimeConcurrencySequencePieces, CutsAnyLengthIntoAFewPieces) {
  // One thread per slice: the longest piece within the sequence, then the longest within what is left.
  for (int64_t length : {1, 2, 63, 64, 1000, 1001, 4096, 16383}) {
    la::SequencePieces pieces = la::planSerialPieces(length, 1024, 16384);
    int64_t covered = 0;
    for (int64_t piece = 0; piece < pieces.count(); ++piece) {
      EXPECT_EQ(pieces.begin(piece), covered) << length;
      int64_t size = pieces.size(piece);
      EXPECT_EQ(la::longestPieceWithin(size), size) << length << ": piece " << piece << " has " << size;
      covered += size;
    }
    EXPECT_EQ(covered, length);
    EXPECT_LE(pieces.count(), 7) << length;
  }
  la::SequencePieces thousand = la::planSerialPieces(1000, 1024, 16384); // 768 + 192 + 32 + 8
  EXPECT_EQ(thousand.count(), 4);
  EXPECT_EQ(thousand.size(1), 192);
  EXPECT_EQ(la::planSerialPieces(4096, 1024, 16384).count(), 1) << "a length of the set runs whole";
  // Long sequences: pieces of 1024, whose tensors stay in cache; 16500 = 16 × 1024 + 96 + 16 + 4.
  la::SequencePieces longer = la::planSerialPieces(16500, 1024, 16384);
  EXPECT_EQ(longer.pieceLength, 1024);
  EXPECT_EQ(longer.count(), 19);
  EXPECT_EQ(longer.size(16), 96);
  EXPECT_EQ(longer.size(18), 4);
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

/// The pieces a simulated state covers, [begin, end); the initial state covers none, from anywhere.
struct Covered {
  int64_t begin = -1, end = -1;
  bool initial() const { return begin < 0; }
};

/// Runs both roles of one slice of `count` pieces on two threads. The front finishes piece i once
/// `frontMayFinish(i, pace)` holds (or the runner's chain is over); the runner finishes its state number k
/// (from 0) once `runnerMayFinish(k, pace)` holds (or the front is over). With `additive`, states add:
/// the runner may sum from a later start and add the front's anchor. Checks that every piece's outputs
/// are computed once, each from the state of all pieces before it; returns the piece the runner took over
/// from (count: none).
template <typename FrontGate, typename RunnerGate>
int64_t runHandoff(int64_t count, FrontGate frontMayFinish, RunnerGate runnerMayFinish, bool additive = false,
                   int64_t *runnerStart = nullptr) {
  std::array<Covered, la::PieceWork::kSlots> slots;
  std::vector<std::atomic<int>> outputRuns(count);
  Pace pace;
  auto covered = [&](int slot) { return slot < 0 ? Covered{} : slots[slot]; };
  bool frontsSlot[la::PieceWork::kSlots] = {true, true, false, false, true};
  auto withOutputs = [&](int64_t piece, int from, int to) {
    EXPECT_NE(from, to);
    Covered before = covered(from);
    EXPECT_TRUE(piece == 0 ? before.initial() : before.begin == 0 && before.end == piece)
        << "piece " << piece << " ran from a state of pieces " << before.begin << ".." << before.end;
    if (frontsSlot[to]) {
      pace.update([&] { pace.frontStarted = piece + 1; });
      pace.waitUntil([&] { return pace.chainOver || frontMayFinish(piece, pace); });
    } else {
      pace.update([&] { pace.chainOver = true; });
    }
    outputRuns[piece].fetch_add(1);
    slots[to] = {0, piece + 1};
  };
  auto stateOnly = [&](int64_t piece, int from, int to) {
    EXPECT_NE(from, to);
    EXPECT_TRUE(to == 2 || to == 3) << "the runner writes its own slots";
    Covered before = covered(from);
    EXPECT_TRUE(before.initial() || before.end == piece);
    int64_t handed = pace.statesHanded;
    pace.waitUntil([&] { return pace.frontOver || runnerMayFinish(handed, pace); });
    slots[to] = {before.initial() ? piece : before.begin, piece + 1};
    pace.update([&] { pace.statesHanded = handed + 1; });
  };
  auto addStates = [&](int a, int b, int to) {
    EXPECT_EQ(a, la::PieceWork::kAnchorSlot);
    EXPECT_TRUE(to == 2 || to == 3);
    Covered front = covered(a), runner = covered(b);
    EXPECT_EQ(front.begin, 0);
    EXPECT_EQ(front.end, runner.begin) << "the anchor and the runner's sum must meet";
    slots[to] = {front.begin, runner.end};
  };
  la::PieceWork work{withOutputs, stateOnly, additive ? llvm::function_ref<void(int, int, int)>(addStates) : nullptr};
  la::PieceHandoff handoff(count, additive);
  if (runnerStart)
    *runnerStart = handoff.runnerStartPiece();
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
  // states, and the runner finishes state f once the front has started piece ⌊f/4⌋ + 1. When the runner holds
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

TEST(RuntimeConcurrencySequencePieces, AdditiveStatesAreSummedFromAnEighthInAndHandedOverEarlier) {
  // A state costs half a piece: the front finishes piece i once the runner has handed on 2(i + 1) states,
  // and the runner finishes its state k once the front has started piece ⌊k/2⌋ + 1. Summing from the start,
  // the runner would take over at the first F with F − claimed ≥ 64 − F, claimed about F/2: 43 (64 / 1.5 is
  // 42.7). Summing from piece 8 it holds 8 + K after K states while the front has claimed ⌊K/2⌋ or one more:
  // the first balance is K = 32 or 33, and the front has passed piece 8 by then, so the anchor is ready.
  int64_t start = 0;
  int64_t handoff = runHandoff(
      64, [](int64_t piece, Pace &pace) { return pace.statesHanded >= 2 * (piece + 1); },
      [](int64_t state, Pace &pace) { return pace.frontStarted >= state / 2 + 1; }, /*additive=*/true, &start);
  EXPECT_EQ(start, 8);
  EXPECT_GE(handoff, 40);
  EXPECT_LE(handoff, 41);
  EXPECT_EQ(runHandoff(
                64, [](int64_t piece, Pace &pace) { return pace.statesHanded >= 2 * (piece + 1); },
                [](int64_t state, Pace &pace) { return pace.frontStarted >= state / 2 + 1; }),
            43);
}

TEST(RuntimeConcurrencySequencePieces, AdditiveStatesWaitForTheAnchorBeyondTheBalance) {
  // A state costs a quarter of a piece: from piece 8 the runner is at the balance after about 28 states
  // (F = 36, the front on piece 7), before the front has handed on the state before piece 8. It sums on
  // until the front has claimed piece 8, which needs 32 of its states (F = 40), or 33 if it looks first.
  int64_t handoff = runHandoff(
      64, [](int64_t piece, Pace &pace) { return pace.statesHanded >= 4 * (piece + 1); },
      [](int64_t state, Pace &pace) { return pace.frontStarted >= state / 4 + 1; }, /*additive=*/true);
  EXPECT_GE(handoff, 40);
  EXPECT_LE(handoff, 41);
}

TEST(RuntimeConcurrencySequencePieces, StatesCombinePieceByPieceLevelByLevel) {
  // Linear attention's states are sums of its inputs' maps. Simple GLA's and GLA's decay by gates they take
  // as argument #3, retention's by gates it computes from the head index; causal AFT's is an online
  // softmax (combinable, not additive). Flow's sums read values its other sums normalise: levels of sums,
  // Σ q, Σ k and the position counter, then Σ k·b and Σ q·a (b and a from the first), then Σ e^{Ô} (Ô
  // from Σ q·a), then Σ k ⊗ v·comp (comp from Σ e^{Ô}).
  using la::StateCombine;
  constexpr StateCombine Sum = StateCombine::Sum;
  struct Expectation {
    const char *file, *entry;
    bool additive, combinable;
    std::vector<StateCombine> combines;
    std::vector<int> levels;
  };
  for (const Expectation &e :
       {Expectation{"linear_attention.mlir", "linear_attention_causal", true, true, {Sum, Sum}, {1, 1}},
        Expectation{"retention.mlir", "simple_gla", false, true, {StateCombine::Decay}, {1}},
        Expectation{"retention.mlir", "gla", false, true, {StateCombine::Decay}, {1}},
        Expectation{"retention.mlir", "retention", false, true, {StateCombine::Decay}, {1}},
        Expectation{"flow_attention.mlir",
                    "flow_attention_causal",
                    false,
                    true,
                    {Sum, Sum, Sum, Sum, Sum, Sum, Sum},
                    {1, 1, 1, 2, 2, 3, 4}},
        Expectation{"aft.mlir",
                    "aft_causal",
                    false,
                    true,
                    {StateCombine::SoftmaxAverage, StateCombine::SoftmaxMax, StateCombine::SoftmaxNorm},
                    {1, 1, 1}}}) {
    auto source = llvm::MemoryBuffer::getFile(la::test::kernelPath(e.file));
    ASSERT_TRUE(bool(source)) << e.file;
    auto states = la::getSequenceStates((*source)->getBuffer(), e.file, e.entry);
    ASSERT_TRUE(bool(states)) << e.entry << ": " << llvm::toString(states.takeError());
    EXPECT_EQ(states->additive, e.additive) << e.entry;
    EXPECT_EQ(states->combinable, e.combinable) << e.entry;
    EXPECT_EQ(states->combines, e.combines) << e.entry;
    EXPECT_EQ(states->levels, e.levels) << e.entry;
  }
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
  // 4100 positions: sixteen pieces of 256 and a short last one; the runner sums from piece 2 (states add).
  // Heads of 64 make a piece cost more than a call, so that the runner gets ahead and takes over.
  la::test::AttentionInputs inputs(1, 1, 4100, 64, 5);
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
