//===- LinearFlowNumericsTest.cpp - generated kernels vs fp64 oracles -----===//
//
// Every linear-attention and Flow-Attention entry of kernels/ is compiled by the runtime (the same path as
// `lac run`) and compared with the fp64 quadratic oracles of SPEC §7 (Oracles.h, written from the spec, not
// from the dialect). Shapes cover T = 1, T not a multiple of any chunk, D and Dv that differ and are not
// powers of two, M ≠ N for the non-causal forms, and several chunk sizes for the causal forms.
//
//===----------------------------------------------------------------------===//

#include "Oracles.h"

#include "la/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using la::oracle::AttnDims;

struct Case {
  const char *file;
  const char *entry;
  bool flow;
  bool causal;
  int64_t n;
  int64_t d;
  int64_t chunk;
};

/// gtest prints a failing case with this instead of its raw bytes.
void PrintTo(const Case &c, std::ostream *os) {
  *os << c.entry << " N=" << c.n << " D=" << c.d << " chunk=" << c.chunk;
}

std::string caseName(const testing::TestParamInfo<Case> &info) {
  const Case &c = info.param;
  return std::string(c.entry) + "_N" + std::to_string(c.n) + "_D" + std::to_string(c.d) + "_C" +
         std::to_string(c.chunk);
}

/// SPEC §7: relative RMS ≤ 1e-5 for T ≤ 256 and ≤ 1e-4 up to 16K in fp32.
double relRmsTolerance(int64_t n) { return n <= 256 ? 1e-5 : 1e-4; }

class LinearFlowNumerics : public testing::TestWithParam<Case> {};

TEST_P(LinearFlowNumerics, MatchesFp64Oracle) {
  const Case &c = GetParam();
  AttnDims dims;
  dims.batch = 2;
  dims.heads = 3;
  dims.n = c.n;
  dims.m = c.causal ? c.n : (c.n == 1 ? 5 : c.n + 3);
  dims.d = c.d;
  dims.dv = c.d == 48 ? 40 : 80;

  std::vector<float> q = la::oracle::uniform(dims.qSize(), 1, -1.0f, 1.0f);
  std::vector<float> k = la::oracle::uniform(dims.kSize(), 2, -1.0f, 1.0f);
  std::vector<float> v = la::oracle::uniform(dims.vSize(), 3, -1.0f, 1.0f);

  la::RuntimeOptions options;
  options.cacheDir = "none";
  options.numThreads = 2;
  options.compile.chunkSize = c.chunk;
  auto runtime = la::Runtime::create(options);
  ASSERT_TRUE(static_cast<bool>(runtime)) << llvm::toString(runtime.takeError());
  auto program = (*runtime)->loadFile(std::string(LA_KERNELS_DIR) + "/" + c.file);
  ASSERT_TRUE(static_cast<bool>(program)) << llvm::toString(program.takeError());

  auto spec = [](std::initializer_list<int64_t> shape) {
    la::TensorSpec s;
    s.shape.assign(shape.begin(), shape.end());
    return s;
  };
  std::vector<la::TensorRef> inputs = {
      {q.data(), spec({dims.batch, dims.heads, dims.n, dims.d})},
      {k.data(), spec({dims.batch, dims.heads, dims.m, dims.d})},
      {v.data(), spec({dims.batch, dims.heads, dims.m, dims.dv})},
  };
  auto outputs = (*runtime)->run(**program, c.entry, inputs);
  ASSERT_TRUE(static_cast<bool>(outputs)) << llvm::toString(outputs.takeError());
  ASSERT_EQ(outputs->size(), 1u);
  const la::HostTensor &out = (*outputs)[0];
  ASSERT_EQ(out.numElements(), dims.outSize());

  std::vector<double> reference = c.flow ? la::oracle::flowAttention(dims, q.data(), k.data(), v.data(), c.causal)
                                         : la::oracle::linearAttention(dims, q.data(), k.data(), v.data(), c.causal);
  la::oracle::ErrorStats error =
      la::oracle::compare(reference.data(), static_cast<const float *>(out.data()), dims.outSize());
  double refMax = 0;
  for (double x : reference)
    refMax = std::max(refMax, std::abs(x));

  EXPECT_EQ(error.firstNonFinite, -1) << "first non-finite output at flat index " << error.firstNonFinite;
  EXPECT_LE(error.relRms, relRmsTolerance(c.n)) << "max abs error " << error.maxAbs;
  // Max-abs bound: ten times the RMS bound, relative to the largest reference magnitude.
  EXPECT_LE(error.maxAbs, 10 * relRmsTolerance(c.n) * refMax) << "relative RMS " << error.relRms;
}

std::vector<Case> allCases() {
  std::vector<Case> cases;
  struct Kernel {
    const char *file;
    const char *entry;
    bool flow;
    bool causal;
  };
  const Kernel kernels[] = {{"linear_attention.mlir", "linear_attention", false, false},
                            {"linear_attention.mlir", "linear_attention_causal", false, true},
                            {"flow_attention.mlir", "flow_attention", true, false},
                            {"flow_attention.mlir", "flow_attention_causal", true, true}};
  for (const Kernel &kernel : kernels)
    for (int64_t n : {1, 37, 1000})
      for (int64_t d : {48, 64}) {
        cases.push_back({kernel.file, kernel.entry, kernel.flow, kernel.causal, n, d, 64});
        // Chunk sizes that do not divide N (and one larger than N) for the chunked causal forms.
        if (kernel.causal && d == 48)
          for (int64_t chunk : {16, 100})
            cases.push_back({kernel.file, kernel.entry, kernel.flow, kernel.causal, n, d, chunk});
      }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Kernels, LinearFlowNumerics, testing::ValuesIn(allCases()), caseName);

} // namespace
