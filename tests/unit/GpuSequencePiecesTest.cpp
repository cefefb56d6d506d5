//===- GpuSequencePiecesTest.cpp - how a chunk-parallel GPU call cuts a call ===//
//
// runtime/lib/GpuSequencePieces.h: the pieces of a sequence, the views that give each piece a slice of its
// own without a copy, and the generated program that sums the pieces' states into the state before each
// (run here on the CPU target; tests/gpu/cuda-emu-sequence-pieces.test runs the whole call on the emulator).
//
//===----------------------------------------------------------------------===//

#include "GpuSequencePieces.h"

#include "la/runtime/Compiler.h"
#include "la/runtime/Runtime.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace {

TEST(GpuSequencePieces, PiecesCutTheSequenceExactly) {
  std::optional<la::GpuPieces> pieces = la::planGpuPieces(4096, 256);
  ASSERT_TRUE(pieces);
  EXPECT_EQ(pieces->count, 16);
  EXPECT_EQ(pieces->length, 256);
  // One piece is the sequential form; a length the pieces do not cover exactly has no view.
  EXPECT_FALSE(la::planGpuPieces(256, 256));
  EXPECT_FALSE(la::planGpuPieces(200, 256));
  EXPECT_FALSE(la::planGpuPieces(4100, 256));
  EXPECT_FALSE(la::planGpuPieces(4096, 0));
}

TEST(GpuSequencePieces, ViewsKeepTheBytes) {
  la::GpuPieces pieces{16, 256};
  la::TensorSpec q;
  q.shape = {2, 8, 4096, 64};
  la::TensorSpec view = la::viewAsPieces(q, 2, pieces);
  EXPECT_EQ(view.shape, (llvm::SmallVector<int64_t, 4>{2, 128, 256, 64}));
  EXPECT_EQ(view.numBytes(), q.numBytes());
  // AFT's [B, T, d]: the batch is the one sliced dimension.
  la::TensorSpec x;
  x.shape = {3, 1024, 32};
  EXPECT_EQ(la::viewAsPieces(x, 1, {4, 256}).shape, (llvm::SmallVector<int64_t, 4>{12, 256, 32}));

  la::TensorSpec state;
  state.shape = {2, 128, 64, 32};
  la::TensorSpec along = la::viewStatesAlongPieces(state, 2, pieces);
  EXPECT_EQ(along.shape, (llvm::SmallVector<int64_t, 4>{2, 8, 16, 64, 32}));
  EXPECT_EQ(along.numBytes(), state.numBytes());
  // A GLA gate total per piece, [B, H·P, K], along the pieces: [B, H, P, K].
  la::TensorSpec total;
  total.shape = {2, 128, 64};
  EXPECT_EQ(la::viewStatesAlongPieces(total, 2, pieces).shape, (llvm::SmallVector<int64_t, 4>{2, 8, 16, 64}));
}

TEST(GpuSequencePieces, ASelectionOfStatesNamesItsDecaysAmongAll) {
  // States [sum, decay, sum, decay, decay]: decays #0, #1, #2 of all. Picking states 1, 2 and 4 gives decays
  // #0 and #2, the order a state variant of those states returns their gate totals in.
  using la::StateCombine;
  std::vector<StateCombine> combines{StateCombine::Sum, StateCombine::Decay, StateCombine::Sum, StateCombine::Decay,
                                     StateCombine::Decay};
  la::StateSelection some = la::selectStates(combines, [](size_t i) { return i == 1 || i == 2 || i == 4; });
  EXPECT_EQ(some.states, (llvm::SmallVector<size_t, 8>{1, 2, 4}));
  EXPECT_EQ(some.decays, (llvm::SmallVector<size_t, 8>{0, 2}));
  la::StateSelection none = la::selectStates(combines, [](size_t) { return false; });
  EXPECT_TRUE(none.states.empty() && none.decays.empty());
}

/// The prefix program for `states` along dimension 2, loaded into a CPU runtime (which `runtime` keeps).
std::shared_ptr<la::Program> loadPrefixProgram(std::unique_ptr<la::Runtime> &runtime,
                                               llvm::ArrayRef<la::PrefixState> states, la::PrefixCall call = {}) {
  la::RuntimeOptions options;
  options.cacheDir = "none";
  options.numThreads = 1;
  auto created = la::Runtime::create(options);
  EXPECT_TRUE(bool(created)) << llvm::toString(created.takeError());
  if (!created)
    return nullptr;
  runtime = std::move(*created);
  auto program = runtime->loadSource(la::piecePrefixSource(states, 2, call), "piece_prefix.mlir");
  EXPECT_TRUE(bool(program)) << llvm::toString(program.takeError());
  return program ? *program : nullptr;
}

TEST(GpuSequencePieces, ThePrefixProgramSumsThePiecesBeforeEach) {
  std::unique_ptr<la::Runtime> runtime;
  std::shared_ptr<la::Program> program =
      loadPrefixProgram(runtime, {{5, la::StateCombine::Sum, std::nullopt}, {4, la::StateCombine::Sum, std::nullopt}});
  ASSERT_TRUE(program);
  // Two slices ([1, 2]) of three pieces each, states of [2, 2] and [2].
  la::TensorSpec matrices, vectors;
  matrices.shape = {1, 2, 3, 2, 2};
  vectors.shape = {1, 2, 3, 2};
  la::HostTensor s(matrices), z(vectors);
  for (int64_t i = 0; i < s.numElements(); ++i)
    s.set(i, static_cast<double>(i + 1));
  for (int64_t i = 0; i < z.numElements(); ++i)
    z.set(i, static_cast<double>(10 * (i + 1)));
  auto before = runtime->run(*program, la::kPiecePrefixEntry, {s.ref(), z.ref()});
  ASSERT_TRUE(bool(before)) << llvm::toString(before.takeError());
  ASSERT_EQ(before->size(), 2u);
  // Element e of piece p in slice h: the sum of that element over the pieces before p (zero for the first).
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t p = 0; p < 3; ++p) {
      for (int64_t e = 0; e < 4; ++e) {
        double expected = 0;
        for (int64_t earlier = 0; earlier < p; ++earlier)
          expected += s.get((h * 3 + earlier) * 4 + e);
        EXPECT_EQ((*before)[0].get((h * 3 + p) * 4 + e), expected) << "slice " << h << " piece " << p;
      }
      for (int64_t e = 0; e < 2; ++e) {
        double expected = 0;
        for (int64_t earlier = 0; earlier < p; ++earlier)
          expected += z.get((h * 3 + earlier) * 2 + e);
        EXPECT_EQ((*before)[1].get((h * 3 + p) * 2 + e), expected) << "slice " << h << " piece " << p;
      }
    }
}

TEST(GpuSequencePieces, ThePrefixProgramDecaysByEachPiecesGateTotal) {
  // A per-head decay (simple GLA): states [1, 2, P = 3, 2, 2], each piece's log-gate total [1, 2, P = 3].
  std::unique_ptr<la::Runtime> runtime;
  std::shared_ptr<la::Program> program = loadPrefixProgram(runtime, {{5, la::StateCombine::Decay, 3}});
  ASSERT_TRUE(program);
  la::TensorSpec states, gates;
  states.shape = {1, 2, 3, 2, 2};
  gates.shape = {1, 2, 3};
  la::HostTensor s(states), g(gates);
  for (int64_t i = 0; i < s.numElements(); ++i)
    s.set(i, static_cast<double>(i % 7) - 2.5);
  for (int64_t i = 0; i < g.numElements(); ++i)
    g.set(i, -0.2 * static_cast<double>(i % 5 + 1));
  auto before = runtime->run(*program, la::kPiecePrefixEntry, {s.ref(), g.ref()});
  ASSERT_TRUE(bool(before)) << llvm::toString(before.takeError());
  for (int64_t h = 0; h < 2; ++h) {
    double expected[4] = {0, 0, 0, 0};
    for (int64_t p = 0; p < 3; ++p) {
      for (int64_t e = 0; e < 4; ++e)
        EXPECT_NEAR((*before)[0].get((h * 3 + p) * 4 + e), expected[e], 1e-5) << "slice " << h << " piece " << p;
      // The state before piece p + 1: piece p's decay of the state before it, plus its own.
      double total = g.get(h * 3 + p);
      for (int64_t e = 0; e < 4; ++e)
        expected[e] = std::exp(total) * expected[e] + s.get((h * 3 + p) * 4 + e);
    }
  }
}

TEST(GpuSequencePieces, ThePrefixProgramMergesSoftmaxPiecesAndEndsWithTheFinalState) {
  // An online softmax over [B = 1, H = 2, P = 3, d = 2] pieces: each piece's average y, running max m and
  // normaliser z (z·e^m = Σ e^k over its positions), from the empty prefix; the call returns its final state.
  std::unique_ptr<la::Runtime> runtime;
  la::PrefixCall call;
  call.final = true;
  std::shared_ptr<la::Program> program = loadPrefixProgram(runtime,
                                                           {{4, la::StateCombine::SoftmaxAverage, std::nullopt},
                                                            {4, la::StateCombine::SoftmaxMax, std::nullopt},
                                                            {4, la::StateCombine::SoftmaxNorm, std::nullopt}},
                                                           call);
  ASSERT_TRUE(program);
  la::TensorSpec along, initial;
  along.shape = {1, 2, 3, 2};
  initial.shape = {1, 2, 2};
  la::HostTensor y(along), m(along), z(along), y0(initial), m0(initial), z0(initial);
  for (int64_t i = 0; i < y.numElements(); ++i) {
    y.set(i, static_cast<double>(i % 5) - 1.5);
    m.set(i, 30.0 * static_cast<double>(i % 3) - 20.0); // far apart: the merge must rescale, not add
    z.set(i, 1.0 + 0.25 * static_cast<double>(i % 4));
  }
  for (int64_t i = 0; i < m0.numElements(); ++i)
    m0.set(i, -std::numeric_limits<double>::infinity());
  auto merged =
      runtime->run(*program, la::kPiecePrefixEntry, {y.ref(), m.ref(), z.ref(), y0.ref(), m0.ref(), z0.ref()});
  ASSERT_TRUE(bool(merged)) << llvm::toString(merged.takeError());
  ASSERT_EQ(merged->size(), 6u);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t e = 0; e < 2; ++e) {
      // Σ z e^m and Σ z e^m y over the pieces so far, relative to e^20 (the largest max).
      double weight = 0, weighted = 0;
      for (int64_t p = 0; p <= 3; ++p) {
        const auto &out = *merged;
        int64_t at = (b * 3 + std::min<int64_t>(p, 2)) * 2 + e;
        if (p < 3) {
          // The state before piece p: the pieces before it merged.
          // SPEC §8's triple: the running max is the largest key's (the largest piece max), −inf before any.
          double largest = -std::numeric_limits<double>::infinity();
          for (int64_t q = 0; q < p; ++q)
            largest = std::max(largest, m.get((b * 3 + q) * 2 + e));
          EXPECT_EQ(out[1].get(at), largest) << "b " << b << " piece " << p;
          if (p == 0) {
            // The empty prefix: no weight, and SPEC §8's average of 0 (not the scan's 0/0).
            EXPECT_EQ(out[2].get(at), 0.0) << "b " << b;
            EXPECT_EQ(out[0].get(at), 0.0) << "b " << b;
          } else {
            EXPECT_NEAR(out[2].get(at) * std::exp(out[1].get(at) - 20.0), weight, 1e-6 * weight)
                << "b " << b << " piece " << p;
            EXPECT_NEAR(out[0].get(at), weighted / weight, 1e-5) << "b " << b << " piece " << p;
          }
          double w = z.get(at) * std::exp(m.get(at) - 20.0);
          weight += w;
          weighted += w * y.get(at);
        } else {
          // After the last piece: the call's final state.
          int64_t last = b * 2 + e;
          EXPECT_EQ(out[4].get(last), std::max({m.get(b * 6 + e), m.get(b * 6 + 2 + e), m.get(b * 6 + 4 + e)}));
          EXPECT_NEAR(out[5].get(last) * std::exp(out[4].get(last) - 20.0), weight, 1e-6 * weight) << "b " << b;
          EXPECT_NEAR(out[3].get(last), weighted / weight, 1e-5) << "b " << b;
        }
      }
    }
}

TEST(GpuSequencePieces, StateShapesComeFromSpecialisationAlone) {
  // A GPU call in pieces needs the shapes of the states a piece hands on: prefill specialised to the pieces'
  // view gives them without a compile, and they are the compiled kernel's.
  auto buffer = llvm::MemoryBuffer::getFile(std::string(LA_KERNELS_DIR) + "/flow_attention.mlir");
  ASSERT_TRUE(bool(buffer));
  auto source = la::withStateVariants((*buffer)->getBuffer(), "flow_attention.mlir", "flow_attention_causal");
  ASSERT_TRUE(bool(source)) << llvm::toString(source.takeError());
  la::TensorSpec piece;
  piece.shape = {2, 12, 64, 16};
  std::vector<la::TensorSpec> arguments(3, piece);
  auto inferred = la::inferResultSpecs(*source, "flow_attention.mlir", "flow_attention_causal.prefill", arguments);
  ASSERT_TRUE(bool(inferred)) << llvm::toString(inferred.takeError());

  la::RuntimeOptions options;
  options.cacheDir = "none";
  auto runtime = la::Runtime::create(options);
  ASSERT_TRUE(bool(runtime));
  auto program = (*runtime)->loadSource(*source, "flow_attention.mlir");
  ASSERT_TRUE(bool(program));
  auto compiled = (*runtime)->resultSpecs(**program, "flow_attention_causal.prefill", arguments);
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  ASSERT_EQ(inferred->size(), compiled->size());
  for (size_t i = 0; i < inferred->size(); ++i) {
    EXPECT_EQ((*inferred)[i].shape, (*compiled)[i].shape) << "result #" << i;
    EXPECT_EQ((*inferred)[i].dtype, (*compiled)[i].dtype) << "result #" << i;
  }
  // Flow's states: Σ q and Σ k [B, H, D], the counter [B, H], ..., Σ k ⊗ v·comp [B, H, D, Dv].
  EXPECT_EQ((*inferred)[1].shape, (llvm::SmallVector<int64_t, 4>{2, 12, 16}));
  EXPECT_EQ((*inferred)[3].shape, (llvm::SmallVector<int64_t, 4>{2, 12}));
  EXPECT_EQ(inferred->back().shape, (llvm::SmallVector<int64_t, 4>{2, 12, 16, 16}));
}

} // namespace
