//===- LibraryNumericsTest.cpp - AFT, GAU/FLASH and decay kernels vs fp64 oracles -===//
//
// Every entry of kernels/aft.mlir, kernels/flash.mlir and kernels/retention.mlir is compiled by the runtime
// (the `lac run` path) and compared with the fp64 oracles of LibraryOracles.h, written from SPEC §3–§5 and
// not from the dialect. Shapes follow SPEC §7: T = 1, T not a multiple of any chunk (the kernels' 64/256 and
// the decay chunk sizes tried here), feature sizes that are not powers of two, FLASH's partial last chunk
// (padded keys), large-magnitude inputs on every exp path, and the decay kernels' state round trip.
//
//===----------------------------------------------------------------------===//

#include "LibraryOracles.h"

#include "la/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>

#include <cmath>

namespace {

using namespace la::oracle;

/// SPEC §7: relative RMS ≤ 1e-5 for T ≤ 256 and ≤ 1e-4 up to 16K in fp32, ≤ 5e-3 for f16/bf16 storage with
/// fp32 accumulation; max-abs within ten times that, relative to the largest reference magnitude.
double relRmsTolerance(int64_t t, la::DType dtype = la::DType::F32) {
  if (dtype != la::DType::F32)
    return 5e-3;
  return t <= 256 ? 1e-5 : 1e-4;
}

/// One kernel argument: its values (exactly representable in `dtype`), its shape and storage type.
struct Argument {
  std::vector<float> data;
  std::vector<int64_t> shape;
  la::DType dtype = la::DType::F32;
};

/// Seeded uniform values, rounded to `dtype` so that the oracle sees exactly what the kernel reads.
Argument randomArgument(std::vector<int64_t> shape, uint64_t seed, float lo, float hi,
                        la::DType dtype = la::DType::F32) {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  Argument arg{uniform(count, seed, lo, hi), std::move(shape), dtype};
  if (dtype != la::DType::F32) {
    la::TensorSpec spec;
    spec.dtype = dtype;
    spec.shape.assign(arg.shape.begin(), arg.shape.end());
    la::HostTensor rounded(spec);
    for (int64_t i = 0; i < count; ++i) {
      rounded.set(i, arg.data[i]);
      arg.data[i] = static_cast<float>(rounded.get(i));
    }
  }
  return arg;
}

/// Compiles `entry` of kernels/`file` for these arguments and runs it; `sliced`: per batch×head slice where
/// the entry allows it, else whole; `cacheTileBytes` (0: the default) sets la-tile-independent-dim's budget,
/// small enough to tile the small shapes of these tests.
std::vector<la::HostTensor> runKernel(const char *file, const char *entry, const std::vector<Argument> &args,
                                      int64_t chunk = 64, bool sliced = true, int64_t cacheTileBytes = 0) {
  la::RuntimeOptions options;
  options.cacheDir = "none";
  if (cacheTileBytes > 0)
    options.compile.cacheTileBytes = cacheTileBytes;
  options.numThreads = 2;
  options.compile.chunkSize = chunk;
  options.compile.sliceBatchHeads = sliced;
  auto runtime = la::Runtime::create(options);
  if (!runtime) {
    ADD_FAILURE() << llvm::toString(runtime.takeError());
    return {};
  }
  auto program = (*runtime)->loadFile(std::string(LA_KERNELS_DIR) + "/" + file);
  if (!program) {
    ADD_FAILURE() << llvm::toString(program.takeError());
    return {};
  }
  std::vector<la::HostTensor> stored;
  for (const Argument &arg : args) {
    la::TensorSpec spec;
    spec.dtype = arg.dtype;
    spec.shape.assign(arg.shape.begin(), arg.shape.end());
    stored.emplace_back(spec);
    for (size_t i = 0; i < arg.data.size(); ++i)
      stored.back().set(static_cast<int64_t>(i), arg.data[i]);
  }
  std::vector<la::TensorRef> refs;
  for (la::HostTensor &tensor : stored)
    refs.push_back(tensor.ref());
  auto outputs = (*runtime)->run(**program, entry, refs);
  if (!outputs) {
    ADD_FAILURE() << entry << ": " << llvm::toString(outputs.takeError());
    return {};
  }
  return std::vector<la::HostTensor>(std::make_move_iterator(outputs->begin()),
                                     std::make_move_iterator(outputs->end()));
}

/// Checks `got` against the fp64 `reference` with the SPEC §7 tolerance for sequence length `t` and inputs
/// stored as `dtype`. Results come back in that storage type, except a state (`resultDType`): f32.
void expectMatches(const std::vector<double> &reference, const la::HostTensor &got, int64_t t, const std::string &what,
                   la::DType dtype = la::DType::F32, std::optional<la::DType> resultDType = std::nullopt) {
  ASSERT_EQ(got.numElements(), static_cast<int64_t>(reference.size())) << what;
  ASSERT_EQ(got.spec().dtype, resultDType.value_or(dtype)) << what << ": the result's storage type";
  std::vector<double> values(got.numElements());
  for (int64_t i = 0; i < got.numElements(); ++i)
    values[i] = got.get(i);
  ErrorStats error = compare(reference.data(), values.data(), got.numElements());
  double refMax = 0;
  for (double x : reference)
    refMax = std::max(refMax, std::abs(x));
  EXPECT_EQ(error.firstNonFinite, -1) << what << ": first non-finite output at flat index " << error.firstNonFinite;
  EXPECT_LE(error.relRms, relRmsTolerance(t, dtype)) << what << ": max abs error " << error.maxAbs;
  EXPECT_LE(error.maxAbs, 10 * relRmsTolerance(t, dtype) * refMax) << what << ": relative RMS " << error.relRms;
}

std::vector<double> widen(const la::HostTensor &tensor) {
  std::vector<double> values(tensor.numElements());
  for (int64_t i = 0; i < tensor.numElements(); ++i)
    values[i] = tensor.get(i);
  return values;
}

//===----------------------------------------------------------------------===//
// AFT (SPEC §3): q, k, v [B, T, d]; w [T, T].
//===----------------------------------------------------------------------===//

struct AftCase {
  const char *entry;
  int64_t t;
  float logitRange; // k (and w for the full forms) uniform in ±logitRange
  la::DType dtype = la::DType::F32;
  int64_t cacheTileBytes = 0; // la-tile-independent-dim's budget; 0: the default
};

void PrintTo(const AftCase &c, std::ostream *os) {
  *os << c.entry << " T=" << c.t << " logits ±" << c.logitRange << " " << la::dtypeName(c.dtype).str();
}

class AftNumerics : public testing::TestWithParam<AftCase> {};

TEST_P(AftNumerics, MatchesFp64Oracle) {
  const AftCase &c = GetParam();
  std::string entry = c.entry;
  const int64_t batch = 2, t = c.t;
  // The quadratic forms build [B, T, T, d] logits; a narrower d keeps T = 1000 quick.
  const int64_t d = entry == "aft_causal" || entry == "aft_simple" ? 24 : 12;
  Argument q = randomArgument({batch, t, d}, 11, -2.0f, 2.0f, c.dtype);
  Argument k = randomArgument({batch, t, d}, 12, -c.logitRange, c.logitRange, c.dtype);
  Argument v = randomArgument({batch, t, d}, 13, -1.0f, 1.0f, c.dtype);
  // AFT-local adds (e^w - 1)-weighted band terms to global sums (SPEC §3's formula), which cancels for
  // strongly negative w and overflows for w ≳ 88 (docs/design-notes.md): its bias stays in ±2.
  float biasRange = entry == "aft_local" ? 2.0f : c.logitRange;
  Argument w = randomArgument({t, t}, 14, -biasRange, biasRange, c.dtype);

  std::vector<Argument> args = {q, k, v};
  std::vector<double> reference;
  if (entry == "aft_causal") {
    reference = aftCausal(batch, t, d, q.data.data(), k.data.data(), v.data.data());
  } else if (entry == "aft_simple") {
    reference = aftSimple(batch, t, d, q.data.data(), k.data.data(), v.data.data());
  } else {
    args.push_back(w);
    if (entry == "aft_local")
      reference = aftLocal(batch, t, d, q.data.data(), k.data.data(), v.data.data(), w.data.data(), 64);
    else
      reference =
          aftFull(batch, t, d, q.data.data(), k.data.data(), v.data.data(), w.data.data(), entry == "aft_full_causal");
  }
  std::vector<la::HostTensor> outputs = runKernel("aft.mlir", c.entry, args, 64, true, c.cacheTileBytes);
  ASSERT_EQ(outputs.size(), 1u);
  expectMatches(reference, outputs[0], t, entry, c.dtype);
}

/// Seeded standard normal values times `scale`.
Argument normalArgument(std::vector<int64_t> shape, uint64_t seed, float scale) {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  std::mt19937_64 generator(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  Argument arg{std::vector<float>(count), std::move(shape)};
  for (float &value : arg.data)
    value = normal(generator);
  return arg;
}

/// The (b, t, c) of AFT-full whose denominator, with k and w shifted by their own maxima over s as
/// la-factor-joint-softmax evaluates it, is below the 2^-64 the pass trusts: the rows it recomputes jointly.
int64_t countJointFallbacks(const Argument &k, const Argument &w, int64_t batch, int64_t t, int64_t d, bool causal) {
  std::vector<double> wMax(t, -INFINITY), kMax(batch * d, -INFINITY);
  for (int64_t r = 0; r < t; ++r)
    for (int64_t s = 0; s <= (causal ? r : t - 1); ++s)
      wMax[r] = std::max<double>(wMax[r], w.data[r * t + s]);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < t; ++s)
      for (int64_t c = 0; c < d; ++c)
        kMax[b * d + c] = std::max<double>(kMax[b * d + c], k.data[(b * t + s) * d + c]);
  int64_t fallbacks = 0;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t r = 0; r < t; ++r)
      for (int64_t c = 0; c < d; ++c) {
        double denominator = 0;
        for (int64_t s = 0; s <= (causal ? r : t - 1); ++s)
          denominator +=
              std::exp(w.data[r * t + s] - wMax[r]) * std::exp(k.data[(b * t + s) * d + c] - kMax[b * d + c]);
        fallbacks += denominator < 0x1p-64;
      }
  return fallbacks;
}

// Issue 24: AFT-full runs as two matrix products of separately shifted exponentials; where those shifts
// underflow a row's denominator, the row is recomputed in the joint form. Logits of standard normal × 40
// (up to about ±160) put rows on each side of that threshold (about 90% below it); both must match the fp64
// joint softmax.
TEST(AftFullNumerics, LargeLogitsRecomputeUnderflowingRowsJointly) {
  const int64_t batch = 2, t = 1000, d = 12;
  Argument q = randomArgument({batch, t, d}, 21, -2.0f, 2.0f);
  Argument k = normalArgument({batch, t, d}, 22, 40.0f);
  Argument v = randomArgument({batch, t, d}, 23, -1.0f, 1.0f);
  Argument w = normalArgument({t, t}, 24, 40.0f);
  for (bool causal : {false, true}) {
    const char *entry = causal ? "aft_full_causal" : "aft_full";
    int64_t fallbacks = countJointFallbacks(k, w, batch, t, d, causal);
    // Not a vacuous test: some rows take each path.
    EXPECT_GT(fallbacks, 0) << entry;
    EXPECT_LT(fallbacks, batch * t * d) << entry;
    std::vector<double> reference =
        aftFull(batch, t, d, q.data.data(), k.data.data(), v.data.data(), w.data.data(), causal);
    std::vector<la::HostTensor> outputs = runKernel("aft.mlir", entry, {q, k, v, w});
    ASSERT_EQ(outputs.size(), 1u);
    expectMatches(reference, outputs[0], t, entry);
  }
}

// Causal AFT-full shifts the bias by its whole rows' maxima (read without the mask), so a bias far larger
// above the diagonal than on and below it (what the mask hides) underflows every visible factor: each row
// but the last, which hides nothing, must come out of the joint form, and still match the fp64 softmax.
TEST(AftFullNumerics, HiddenBiasAboveTheDiagonalSendsRowsToTheJointForm) {
  const int64_t batch = 2, t = 600, d = 8;
  Argument q = randomArgument({batch, t, d}, 31, -2.0f, 2.0f);
  Argument k = randomArgument({batch, t, d}, 32, -1.0f, 1.0f);
  Argument v = randomArgument({batch, t, d}, 33, -1.0f, 1.0f);
  Argument w = randomArgument({t, t}, 34, -1.0f, 1.0f);
  for (int64_t r = 0; r < t; ++r)
    for (int64_t c = r + 1; c < t; ++c)
      w.data[r * t + c] = 200.0f;
  std::vector<double> reference =
      aftFull(batch, t, d, q.data.data(), k.data.data(), v.data.data(), w.data.data(), /*causal=*/true);
  std::vector<la::HostTensor> outputs = runKernel("aft.mlir", "aft_full_causal", {q, k, v, w});
  ASSERT_EQ(outputs.size(), 1u);
  expectMatches(reference, outputs[0], t, "aft_full_causal");
}

std::vector<AftCase> aftCases() {
  std::vector<AftCase> cases;
  for (const char *entry : {"aft_causal", "aft_simple", "aft_full", "aft_full_causal", "aft_local"})
    for (int64_t t : {1, 37, 1000}) {
      cases.push_back({entry, t, 1.0f});
      // Large-magnitude logits on every exp path (SPEC §3: finite for ±80 in fp32).
      if (t == 37) {
        cases.push_back({entry, t, 80.0f});
        // Half-precision storage (f32 accumulation).
        cases.push_back({entry, t, 1.0f, la::DType::F16});
        cases.push_back({entry, t, 1.0f, la::DType::BF16});
      }
    }
  // T = 200 is just past one banded row block's column span (64 + 2·63 = 190 for the kernel's window of
  // 64), so the band-chunked form runs with clamped windows at both ends, one interior block and a tail.
  cases.push_back({"aft_local", 200, 1.0f});
  // AFT-full in row tiles (la-tile-independent-dim), which the default budget leaves whole at these sizes:
  // tiles of 50 rows at T = 1000, and single rows at T = 37 with logits of ±80 (the joint-form fallback rows
  // then lie inside tiles).
  cases.push_back({"aft_full", 1000, 1.0f, la::DType::F32, 262144});
  cases.push_back({"aft_full", 37, 80.0f, la::DType::F32, 1024});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Kernels, AftNumerics, testing::ValuesIn(aftCases()),
                         [](const testing::TestParamInfo<AftCase> &info) {
                           return std::string(info.param.entry) + "_T" + std::to_string(info.param.t) + "_L" +
                                  std::to_string(static_cast<int>(info.param.logitRange)) + "_" +
                                  la::dtypeName(info.param.dtype).str() + (info.param.cacheTileBytes ? "_tiled" : "");
                         });

//===----------------------------------------------------------------------===//
// AFT-conv (SPEC §3): q, k, v [B, X, Y, h, c]; w [h, 7, 7] (the kernel's window size).
//===----------------------------------------------------------------------===//

struct AftConvCase {
  int64_t x, y;
  float logitRange; // k uniform in ±logitRange
  la::DType dtype = la::DType::F32;
  int64_t cacheTileBytes = 0; // la-tile-independent-dim's budget; 0: the default
};

void PrintTo(const AftConvCase &c, std::ostream *os) {
  *os << "aft_conv " << c.x << "x" << c.y << " logits ±" << c.logitRange << " " << la::dtypeName(c.dtype).str();
}

class AftConvNumerics : public testing::TestWithParam<AftConvCase> {};

TEST_P(AftConvNumerics, MatchesFp64Oracle) {
  const AftConvCase &c = GetParam();
  const int64_t batch = 2, heads = 3, channels = 5, kernel = 7;
  std::vector<int64_t> shape = {batch, c.x, c.y, heads, channels};
  Argument q = randomArgument(shape, 21, -2.0f, 2.0f, c.dtype);
  Argument k = randomArgument(shape, 22, -c.logitRange, c.logitRange, c.dtype);
  Argument v = randomArgument(shape, 23, -1.0f, 1.0f, c.dtype);
  // The (e^w − 1)-weighted local terms cancel against the global sums as for AFT-local: w stays in ±2.
  Argument w = randomArgument({heads, kernel, kernel}, 24, -2.0f, 2.0f, c.dtype);
  std::vector<double> reference =
      aftConv(batch, c.x, c.y, heads, channels, q.data.data(), k.data.data(), v.data.data(), w.data.data(), kernel);
  std::vector<la::HostTensor> outputs = runKernel("aft.mlir", "aft_conv", {q, k, v, w}, 64, true, c.cacheTileBytes);
  ASSERT_EQ(outputs.size(), 1u);
  std::ostringstream what;
  PrintTo(c, &what);
  expectMatches(reference, outputs[0], c.x * c.y, what.str(), c.dtype);
}

// 1×1 (every window is all padding but its centre), a 5×9 image narrower than the kernel along X and wider
// along Y, and 23×30 (interior windows and every edge case), with logits of ±80 on the exp path; and one
// head at a time (la-tile-independent-dim with a 1 KiB budget, which the default leaves whole here).
INSTANTIATE_TEST_SUITE_P(Kernels, AftConvNumerics,
                         testing::Values(AftConvCase{1, 1, 1.0f}, AftConvCase{5, 9, 1.0f}, AftConvCase{5, 9, 80.0f},
                                         AftConvCase{5, 9, 1.0f, la::DType::F16},
                                         AftConvCase{5, 9, 1.0f, la::DType::BF16}, AftConvCase{23, 30, 1.0f},
                                         AftConvCase{23, 30, 1.0f, la::DType::F32, 1024},
                                         AftConvCase{5, 9, 80.0f, la::DType::BF16, 1024}),
                         [](const testing::TestParamInfo<AftConvCase> &info) {
                           return "aft_conv_" + std::to_string(info.param.x) + "x" + std::to_string(info.param.y) +
                                  "_L" + std::to_string(static_cast<int>(info.param.logitRange)) + "_" +
                                  la::dtypeName(info.param.dtype).str() + (info.param.cacheTileBytes ? "_tiled" : "");
                         });

// A result written with non-temporal stores (la-stream-large-results, here for every result of 64 bytes or
// more; 16 channels, so every store is a whole cache line): into the runtime's aligned buffer, which takes
// the streaming version of the body, and into a caller's buffer 4 bytes off a line, which must take the
// other. Both match the oracle, and each other exactly (they differ only in how the stores reach memory).
// tests/Pipelines/cpu-stream-large-results.test checks that this shape takes the streaming version.
TEST(AftConvStreamed, MatchesFp64OracleInAlignedAndMisalignedOutputs) {
  const int64_t batch = 2, x = 8, y = 16, heads = 2, channels = 16, kernel = 7;
  std::vector<int64_t> shape = {batch, x, y, heads, channels};
  std::vector<Argument> args = {randomArgument(shape, 31, -2.0f, 2.0f), randomArgument(shape, 32, -1.0f, 1.0f),
                                randomArgument(shape, 33, -1.0f, 1.0f),
                                randomArgument({heads, kernel, kernel}, 34, -2.0f, 2.0f)};
  std::vector<double> reference = aftConv(batch, x, y, heads, channels, args[0].data.data(), args[1].data.data(),
                                          args[2].data.data(), args[3].data.data(), kernel);
  la::RuntimeOptions options;
  options.cacheDir = "none";
  options.numThreads = 2;
  options.compile.streamResultBytes = 64;
  auto runtime = la::Runtime::create(options);
  ASSERT_TRUE(static_cast<bool>(runtime)) << llvm::toString(runtime.takeError());
  auto program = (*runtime)->loadFile(std::string(LA_KERNELS_DIR) + "/aft.mlir");
  ASSERT_TRUE(static_cast<bool>(program)) << llvm::toString(program.takeError());
  std::vector<la::HostTensor> inputs;
  std::vector<la::TensorRef> refs;
  for (const Argument &arg : args) {
    la::TensorSpec spec;
    spec.shape.assign(arg.shape.begin(), arg.shape.end());
    inputs.emplace_back(spec);
    std::copy(arg.data.begin(), arg.data.end(), static_cast<float *>(inputs.back().data()));
    refs.push_back(inputs.back().ref());
  }
  la::TensorSpec resultSpec;
  resultSpec.shape = {batch, x, y, heads, channels};
  la::HostTensor aligned(resultSpec);
  // One element more than the result, viewed from its second element: every slice starts 4 bytes off a line.
  la::TensorSpec paddedSpec;
  paddedSpec.shape = {static_cast<int64_t>(reference.size()) + 1};
  la::HostTensor padded(paddedSpec);
  la::TensorRef misaligned{static_cast<float *>(padded.data()) + 1, resultSpec};
  for (la::TensorRef output : {aligned.ref(), misaligned})
    if (llvm::Error error = (*runtime)->call(**program, "aft_conv", refs, {output}))
      FAIL() << llvm::toString(std::move(error));
  expectMatches(reference, aligned, x * y, "aft_conv streamed, aligned result");
  const float *misalignedValues = static_cast<const float *>(misaligned.data);
  for (size_t i = 0; i < reference.size(); ++i)
    ASSERT_EQ(misalignedValues[i], static_cast<const float *>(aligned.data())[i]) << "flat index " << i;
}

//===----------------------------------------------------------------------===//
// GAU / FLASH (SPEC §4): u, v [B, N, e]; q, k [B, N, s]; FLASH chunk 256 (the kernels' mask size).
//===----------------------------------------------------------------------===//

struct FlashCase {
  const char *entry;
  int64_t n;
  la::DType dtype = la::DType::F32;
};

void PrintTo(const FlashCase &c, std::ostream *os) {
  *os << c.entry << " N=" << c.n << " " << la::dtypeName(c.dtype).str();
}

class FlashNumerics : public testing::TestWithParam<FlashCase> {};

TEST_P(FlashNumerics, MatchesFp64Oracle) {
  const FlashCase &c = GetParam();
  std::string entry = c.entry;
  const int64_t batch = 2, n = c.n, s = 24, e = 40;
  Argument u = randomArgument({batch, n, e}, 21, -1.0f, 1.0f, c.dtype);
  Argument v = randomArgument({batch, n, e}, 22, -1.0f, 1.0f, c.dtype);
  Argument qq = randomArgument({batch, n, s}, 23, -1.0f, 1.0f, c.dtype);
  Argument kq = randomArgument({batch, n, s}, 24, -1.0f, 1.0f, c.dtype);
  Argument ql = randomArgument({batch, n, s}, 25, -1.0f, 1.0f, c.dtype);
  Argument kl = randomArgument({batch, n, s}, 26, -1.0f, 1.0f, c.dtype);
  std::vector<double> reference;
  std::vector<Argument> args;
  if (entry == "gau") {
    args = {u, v, qq, kq};
    reference = gau(batch, n, s, e, u.data.data(), v.data.data(), qq.data.data(), kq.data.data(), false);
  } else {
    args = {u, v, qq, kq, ql, kl};
    reference = flash(batch, n, s, e, u.data.data(), v.data.data(), qq.data.data(), kq.data.data(), ql.data.data(),
                      kl.data.data(), 256, entry == "flash_causal");
  }
  std::vector<la::HostTensor> outputs = runKernel("flash.mlir", c.entry, args);
  ASSERT_EQ(outputs.size(), 1u);
  expectMatches(reference, outputs[0], n, entry, c.dtype);
}

std::vector<FlashCase> flashCases() {
  std::vector<FlashCase> cases;
  for (const char *entry : {"gau", "flash", "flash_causal"})
    for (int64_t n : {1, 37, 1000}) {
      cases.push_back({entry, n});
      if (n == 1000)
        for (la::DType dtype : {la::DType::F16, la::DType::BF16})
          cases.push_back({entry, n, dtype});
    }
  // A multiple of the chunk, so the last chunk is full.
  cases.push_back({"flash_causal", 512});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Kernels, FlashNumerics, testing::ValuesIn(flashCases()),
                         [](const testing::TestParamInfo<FlashCase> &info) {
                           return std::string(info.param.entry) + "_N" + std::to_string(info.param.n) + "_" +
                                  la::dtypeName(info.param.dtype).str();
                         });

//===----------------------------------------------------------------------===//
// Decay scans (SPEC §5): q, k [B, H, T, K]; v [B, H, T, V]; g [B, H, T] or [B, H, T, K]; h0 [B, H, K, V].
//===----------------------------------------------------------------------===//

struct DecayCase {
  const char *entry; // retention, simple_gla or gla
  int64_t t;
  int64_t chunk;
  float minGate; // log-gates uniform in [minGate, 0]
  la::DType dtype = la::DType::F32;
};

void PrintTo(const DecayCase &c, std::ostream *os) {
  *os << c.entry << " T=" << c.t << " chunk=" << c.chunk << " gates≥" << c.minGate << " "
      << la::dtypeName(c.dtype).str();
}

/// Inputs of one decay problem and the oracle's answer from `h0`.
struct DecayProblem {
  DecayDims dims;
  Argument q, k, v, g;
  bool perKey = false;

  DecayProblem(const std::string &entry, int64_t t, float minGate, la::DType dtype = la::DType::F32, int64_t batch = 2,
               int64_t heads = 3) {
    dims.batch = batch;
    dims.heads = heads;
    dims.t = t;
    dims.k = 24;
    dims.v = 40;
    perKey = entry == "gla";
    q = randomArgument({dims.batch, dims.heads, t, dims.k}, 31, -1.0f, 1.0f, dtype);
    k = randomArgument({dims.batch, dims.heads, t, dims.k}, 32, -1.0f, 1.0f, dtype);
    v = randomArgument({dims.batch, dims.heads, t, dims.v}, 33, -1.0f, 1.0f, dtype);
    g = perKey ? randomArgument({dims.batch, dims.heads, t, dims.k}, 34, minGate, 0.0f, dtype)
               : randomArgument({dims.batch, dims.heads, t}, 34, minGate, 0.0f, dtype);
  }

  DecayResult oracle(const std::string &entry, const float *h0) const {
    if (entry == "retention")
      return retention(dims, q.data.data(), k.data.data(), v.data.data(), h0);
    if (entry == "gla")
      return gla(dims, q.data.data(), k.data.data(), v.data.data(), g.data.data(), h0);
    return simpleGla(dims, q.data.data(), k.data.data(), v.data.data(), g.data.data(), h0);
  }

  std::vector<Argument> arguments(const std::string &entry) const {
    if (entry == "retention")
      return {q, k, v};
    return {q, k, v, g};
  }
};

class DecayNumerics : public testing::TestWithParam<DecayCase> {};

TEST_P(DecayNumerics, MatchesFp64Oracle) {
  const DecayCase &c = GetParam();
  std::string entry = c.entry;
  DecayProblem problem(entry, c.t, c.minGate, c.dtype);
  std::vector<la::HostTensor> outputs = runKernel("retention.mlir", c.entry, problem.arguments(entry), c.chunk);
  ASSERT_EQ(outputs.size(), 1u);
  expectMatches(problem.oracle(entry, nullptr).o, outputs[0], c.t, entry, c.dtype);
}

TEST_P(DecayNumerics, WithStateMatchesFp64Oracle) {
  const DecayCase &c = GetParam();
  std::string entry = c.entry;
  DecayProblem problem(entry, c.t, c.minGate, c.dtype);
  Argument h0 = randomArgument({problem.dims.batch, problem.dims.heads, problem.dims.k, problem.dims.v}, 35, -1.0f,
                               1.0f, c.dtype);
  std::vector<Argument> args = problem.arguments(entry);
  args.push_back(h0);
  std::vector<la::HostTensor> outputs = runKernel("retention.mlir", (entry + "_with_state").c_str(), args, c.chunk);
  ASSERT_EQ(outputs.size(), 2u);
  DecayResult reference = problem.oracle(entry, h0.data.data());
  expectMatches(reference.o, outputs[0], c.t, entry + " output", c.dtype);
  expectMatches(reference.finalState, outputs[1], c.t, entry + " final state", c.dtype, la::DType::F32);
}

std::vector<DecayCase> decayCases() {
  std::vector<DecayCase> cases;
  for (const char *entry : {"retention", "simple_gla", "gla"})
    for (int64_t t : {1, 37, 1000}) {
      cases.push_back({entry, t, 64, -1.0f});
      if (t == 1000)
        for (int64_t chunk : {16, 100})
          cases.push_back({entry, t, chunk, -1.0f});
      // Strong decays: e^{g} underflows within a few steps; every exponent must stay ≤ 0.
      if (t == 1000 && std::string(entry) != "retention")
        cases.push_back({entry, t, 64, -30.0f});
      // GLA's chunk scores are a product of q ⊙ e^{b} and k ⊙ e^{-b} while a chunk's decay stays within e^{-40}
      // on every key dimension, and exact otherwise: gates in [-5, 0] over 16 positions sum to about -40 ± 12,
      // so a run takes both forms, and the factored one with factors up to e^{40}.
      if (t == 1000 && std::string(entry) == "gla")
        cases.push_back({entry, t, 16, -5.0f});
      if (t == 1000)
        for (la::DType dtype : {la::DType::F16, la::DType::BF16})
          cases.push_back({entry, t, 64, -1.0f, dtype});
    }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Kernels, DecayNumerics, testing::ValuesIn(decayCases()),
                         [](const testing::TestParamInfo<DecayCase> &info) {
                           return std::string(info.param.entry) + "_T" + std::to_string(info.param.t) + "_C" +
                                  std::to_string(info.param.chunk) + "_G" +
                                  std::to_string(static_cast<int>(-info.param.minGate)) + "_" +
                                  la::dtypeName(info.param.dtype).str();
                         });

/// One batch and one head: the final state's [B, H, 1, K, V] slice has several unit dimensions (a
/// rank-reducing slice there once dropped the wrong one).
TEST(DecayState, SingleBatchAndHead) {
  for (const char *name : {"retention", "simple_gla", "gla"}) {
    std::string entry = name;
    DecayProblem problem(entry, 150, -1.0f, la::DType::F32, 1, 1);
    Argument h0 = randomArgument({1, 1, problem.dims.k, problem.dims.v}, 36, -1.0f, 1.0f);
    std::vector<Argument> args = problem.arguments(entry);
    args.push_back(h0);
    std::vector<la::HostTensor> outputs = runKernel("retention.mlir", (entry + "_with_state").c_str(), args);
    ASSERT_EQ(outputs.size(), 2u) << entry;
    DecayResult reference = problem.oracle(entry, h0.data.data());
    expectMatches(reference.o, outputs[0], 150, entry + " output");
    expectMatches(reference.finalState, outputs[1], 150, entry + " final state");
  }
}

/// Compiled whole (as `lac compile` does) rather than per slice: the chunk loops then run inside loops over
/// batch and head, each slice with its own state, initial state slice and final-state slot.
TEST(DecayState, UnslicedBatchAndHeads) {
  for (const char *name : {"retention", "simple_gla", "gla"}) {
    std::string entry = name;
    DecayProblem problem(entry, 100, -1.0f);
    std::vector<la::HostTensor> outputs = runKernel("retention.mlir", name, problem.arguments(entry), 16, false);
    ASSERT_EQ(outputs.size(), 1u) << entry;
    expectMatches(problem.oracle(entry, nullptr).o, outputs[0], 100, entry + " unsliced");
    Argument h0 =
        randomArgument({problem.dims.batch, problem.dims.heads, problem.dims.k, problem.dims.v}, 37, -1.0f, 1.0f);
    std::vector<Argument> args = problem.arguments(entry);
    args.push_back(h0);
    outputs = runKernel("retention.mlir", (entry + "_with_state").c_str(), args, 16, false);
    ASSERT_EQ(outputs.size(), 2u) << entry;
    DecayResult reference = problem.oracle(entry, h0.data.data());
    expectMatches(reference.o, outputs[0], 100, entry + " unsliced output");
    expectMatches(reference.finalState, outputs[1], 100, entry + " unsliced final state");
  }
}

/// Running two pieces of a sequence with the state passed between them equals one run (SPEC §5 state
/// in/out), for split points inside and at the edge of a chunk.
TEST(DecayStateRoundTrip, TwoPiecesEqualOneRun) {
  for (const char *name : {"simple_gla", "gla"}) {
    std::string entry = name;
    const int64_t t = 150;
    DecayProblem whole(entry, t, -1.0f);
    Argument h0{std::vector<float>(whole.dims.batch * whole.dims.heads * whole.dims.k * whole.dims.v, 0.0f),
                {whole.dims.batch, whole.dims.heads, whole.dims.k, whole.dims.v}};
    std::vector<Argument> args = whole.arguments(entry);
    args.push_back(h0);
    std::vector<la::HostTensor> one = runKernel("retention.mlir", (entry + "_with_state").c_str(), args);
    ASSERT_EQ(one.size(), 2u);

    for (int64_t split : {1, 64, 97}) {
      // Cut every [B, H, T, ...] argument at `split` along T.
      auto cut = [&](const Argument &arg, int64_t begin, int64_t end) {
        int64_t outer = arg.shape[0] * arg.shape[1], inner = 1;
        for (size_t i = 3; i < arg.shape.size(); ++i)
          inner *= arg.shape[i];
        Argument piece;
        piece.shape = arg.shape;
        piece.shape[2] = end - begin;
        for (int64_t o = 0; o < outer; ++o)
          piece.data.insert(piece.data.end(), arg.data.begin() + (o * t + begin) * inner,
                            arg.data.begin() + (o * t + end) * inner);
        return piece;
      };
      std::vector<Argument> first, second;
      for (size_t i = 0; i + 1 < args.size(); ++i) {
        first.push_back(cut(args[i], 0, split));
        second.push_back(cut(args[i], split, t));
      }
      first.push_back(h0);
      std::vector<la::HostTensor> a = runKernel("retention.mlir", (entry + "_with_state").c_str(), first);
      ASSERT_EQ(a.size(), 2u);
      const float *state = static_cast<const float *>(a[1].data());
      second.push_back({std::vector<float>(state, state + a[1].numElements()), h0.shape});
      std::vector<la::HostTensor> b = runKernel("retention.mlir", (entry + "_with_state").c_str(), second);
      ASSERT_EQ(b.size(), 2u);

      // Reassemble the output along T and compare both pieces with the single run.
      std::vector<double> joined;
      int64_t outer = whole.dims.batch * whole.dims.heads, vd = whole.dims.v;
      std::vector<double> wa = widen(a[0]), wb = widen(b[0]);
      for (int64_t o = 0; o < outer; ++o) {
        joined.insert(joined.end(), wa.begin() + o * split * vd, wa.begin() + (o + 1) * split * vd);
        joined.insert(joined.end(), wb.begin() + o * (t - split) * vd, wb.begin() + (o + 1) * (t - split) * vd);
      }
      std::string what = entry + " split at " + std::to_string(split);
      expectMatches(joined, one[0], t, what + " output");
      expectMatches(widen(b[1]), one[1], t, what + " final state");
    }
  }
}

//===----------------------------------------------------------------------===//
// Half-precision storage of the linear-attention and Flow-Attention kernels (their f32 cases are in
// LinearFlowNumericsTest.cpp).
//===----------------------------------------------------------------------===//

TEST(HalfPrecision, LinearAndFlowKernels) {
  struct Kernel {
    const char *file, *entry;
    bool flow, causal;
  };
  const Kernel kernels[] = {{"linear_attention.mlir", "linear_attention", false, false},
                            {"linear_attention.mlir", "linear_attention_causal", false, true},
                            {"flow_attention.mlir", "flow_attention", true, false},
                            {"flow_attention.mlir", "flow_attention_causal", true, true}};
  for (la::DType dtype : {la::DType::F16, la::DType::BF16})
    for (const Kernel &kernel : kernels) {
      AttnDims dims{2, 3, 300, 300, 48, 40};
      Argument q = randomArgument({2, 3, 300, 48}, 41, -1.0f, 1.0f, dtype);
      Argument k = randomArgument({2, 3, 300, 48}, 42, -1.0f, 1.0f, dtype);
      Argument v = randomArgument({2, 3, 300, 40}, 43, -1.0f, 1.0f, dtype);
      std::vector<double> reference =
          kernel.flow ? flowAttention(dims, q.data.data(), k.data.data(), v.data.data(), kernel.causal)
                      : linearAttention(dims, q.data.data(), k.data.data(), v.data.data(), kernel.causal);
      std::vector<la::HostTensor> outputs = runKernel(kernel.file, kernel.entry, {q, k, v});
      ASSERT_EQ(outputs.size(), 1u) << kernel.entry;
      expectMatches(reference, outputs[0], dims.n, std::string(kernel.entry) + " " + la::dtypeName(dtype).str(), dtype);
    }
}

} // namespace
