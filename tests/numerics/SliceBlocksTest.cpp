//===- SliceBlocksTest.cpp - small slices run a block of heads per call ---===//
//
// The CPU runtime calls a kernel once per batch×head slice, except where slices are small (a decode step's):
// then one call runs a block of consecutive heads (la-slice-positions offsets the heads' positions from the
// block's first). The block follows from the shapes alone, so a sequence's results do not depend on the
// thread count or on the batch it is served in, bit for bit; and a blocked call matches the kernel compiled
// for the whole batch, per-head decays included (retention reads its head's coordinate).
//
//===----------------------------------------------------------------------===//

#include "la/runtime/Runtime.h"

#include "SequencePositions.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

namespace {

std::unique_ptr<la::Runtime> makeRuntime(unsigned threads, bool sliced = true) {
  la::RuntimeOptions options;
  options.cacheDir = "none";
  options.numThreads = threads;
  options.compile.sliceBatchHeads = sliced;
  auto runtime = la::Runtime::create(options);
  EXPECT_TRUE(bool(runtime)) << llvm::toString(runtime.takeError());
  return runtime ? std::move(*runtime) : nullptr;
}

/// `entry`'s arguments at [batch, heads, length, width, ..], inside their domains; batch b's data does not
/// depend on how many batches there are.
std::vector<la::HostTensor> makeInputs(la::Runtime &runtime, const la::Program &program, const char *entry,
                                       int64_t batch, int64_t heads, int64_t length, int64_t width) {
  auto signature = runtime.signature(program, entry);
  EXPECT_TRUE(bool(signature)) << llvm::toString(signature.takeError());
  std::vector<la::HostTensor> inputs;
  if (!signature)
    return inputs;
  for (auto [i, declared] : llvm::enumerate(signature->arguments)) {
    la::TensorSpec spec = declared;
    spec.shape = la::test::sequenceShape(spec.shape.size(), /*seq=*/2, batch, heads, length, width);
    auto [low, high] = la::samplingInterval(signature->argumentDomains[i]);
    la::HostTensor &tensor = inputs.emplace_back(spec);
    int64_t perBatch = tensor.numElements() / batch;
    for (int64_t b = 0; b < batch; ++b) {
      std::mt19937_64 generator(100 * i + b);
      std::uniform_real_distribution<double> uniform(low, high);
      for (int64_t e = 0; e < perBatch; ++e)
        tensor.set(b * perBatch + e, uniform(generator));
    }
  }
  return inputs;
}

struct Call {
  std::vector<la::HostTensor> results;
  la::CallStats stats;
};

Call run(la::Runtime &runtime, const la::Program &program, const char *entry, std::vector<la::HostTensor> &inputs) {
  std::vector<la::TensorRef> refs;
  for (la::HostTensor &tensor : inputs)
    refs.push_back(tensor.ref());
  Call call;
  auto results = runtime.run(program, entry, refs, &call.stats);
  EXPECT_TRUE(bool(results)) << entry << ": " << llvm::toString(results.takeError());
  if (results)
    call.results.assign(results->begin(), results->end());
  return call;
}

/// Whether the first `bytes` of two tensors' data are the same bits.
bool samePrefix(const la::HostTensor &a, const la::HostTensor &b, size_t bytes) {
  return a.numBytes() >= bytes && b.numBytes() >= bytes && std::memcmp(a.data(), b.data(), bytes) == 0;
}

std::shared_ptr<la::Program> load(la::Runtime &runtime, const char *file) {
  auto program = runtime.loadFile(std::string(LA_KERNELS_DIR) + "/" + file);
  EXPECT_TRUE(bool(program)) << llvm::toString(program.takeError());
  return program ? *program : nullptr;
}

TEST(SliceBlocks, DecodeSizedSlicesRunInBlocksLikeTheWholeBatch) {
  // The reference is the kernel compiled for the whole batch, which has no slices (and so no coordinates):
  // retention's per-head decay tells a head from its neighbours.
  // One thread runs every block in turn, stepping the coordinates from one to the next.
  auto runtime = makeRuntime(1), whole = makeRuntime(2, /*sliced=*/false);
  ASSERT_TRUE(runtime && whole);
  auto program = load(*runtime, "retention.mlir");
  ASSERT_TRUE(program);
  // One position of 32 heads of a K = V = 16 state (about 1.2 KiB a slice), and a few positions.
  for (int64_t length : {1, 3}) {
    std::vector<la::HostTensor> inputs = makeInputs(*runtime, *program, "retention", 3, 32, length, 16);
    Call call = run(*runtime, *program, "retention", inputs);
    Call expected = run(*whole, *program, "retention", inputs);
    ASSERT_FALSE(call.results.empty());
    ASSERT_FALSE(expected.results.empty());
    EXPECT_GT(call.stats.slicesPerCall, 1);
    EXPECT_EQ(32 % call.stats.slicesPerCall, 0);
    double error = 0, norm = 0;
    for (int64_t e = 0; e < expected.results[0].numElements(); ++e) {
      double got = call.results[0].get(e), want = expected.results[0].get(e);
      error += (got - want) * (got - want);
      norm += want * want;
    }
    EXPECT_LE(std::sqrt(error / norm), 1e-6) << "N = " << length;
  }
}

TEST(SliceBlocks, NeitherTheThreadsNorTheBatchChangeTheBits) {
  auto one = makeRuntime(1), two = makeRuntime(2);
  ASSERT_TRUE(one && two);
  auto program = load(*one, "linear_attention.mlir");
  ASSERT_TRUE(program);
  const char *entry = "linear_attention_causal";
  std::vector<la::HostTensor> single = makeInputs(*one, *program, entry, 1, 8, 5, 16);
  std::vector<la::HostTensor> batched = makeInputs(*one, *program, entry, 3, 8, 5, 16);
  Call alone = run(*one, *program, entry, single);
  Call onTwo = run(*two, *program, entry, single);
  Call inBatch = run(*two, *program, entry, batched);
  ASSERT_FALSE(alone.results.empty());
  ASSERT_FALSE(onTwo.results.empty());
  ASSERT_FALSE(inBatch.results.empty());
  EXPECT_GT(alone.stats.slicesPerCall, 1);
  EXPECT_EQ(alone.stats.slicesPerCall, onTwo.stats.slicesPerCall);
  EXPECT_EQ(alone.stats.slicesPerCall, inBatch.stats.slicesPerCall);
  const la::HostTensor &expected = alone.results[0];
  EXPECT_TRUE(samePrefix(onTwo.results[0], expected, expected.numBytes())) << "2 threads against 1";
  EXPECT_TRUE(samePrefix(inBatch.results[0], expected, expected.numBytes())) << "batch 0 of 3 against alone";
}

TEST(SliceBlocks, LargeSlicesAndBatchOnlySlicingRunOneSlicePerCall) {
  auto runtime = makeRuntime(2);
  ASSERT_TRUE(runtime);
  auto linear = load(*runtime, "linear_attention.mlir");
  ASSERT_TRUE(linear);
  std::vector<la::HostTensor> inputs = makeInputs(*runtime, *linear, "linear_attention_causal", 1, 4, 2048, 64);
  EXPECT_EQ(run(*runtime, *linear, "linear_attention_causal", inputs).stats.slicesPerCall, 1);
  // AFT's [B, T, d] slices are batches: a server's batch never changes a sequence's code.
  auto aft = load(*runtime, "aft.mlir");
  ASSERT_TRUE(aft);
  std::vector<la::HostTensor> aftInputs = makeInputs(*runtime, *aft, "aft_causal", 8, 1, 4, 1);
  Call call = run(*runtime, *aft, "aft_causal", aftInputs);
  ASSERT_FALSE(call.results.empty());
  EXPECT_EQ(call.stats.slicesPerCall, 1);
}

} // namespace
