//===- EmulatorGemmTest.cpp - mma.sync and ldmatrix GEMMs vs a reference --===//
//
// One mma.sync with fragments placed by the PTX ISA's layout tables (written out here), then a tiled GEMM as
// a CUDA kernel would do it (runtime/emulator/kernels/TiledGemm.h, which la-emulator-bench times too):
// cp.async tiles into shared memory, a barrier, ldmatrix (.trans for B) into fragments, mma.sync m16n8k16
// with f32 accumulators. Both are compared with a double-precision reference of the same f16/bf16 inputs.
// The same GEMM without its barrier, or without its cp.async wait, is flagged at the operations involved.
//
//===----------------------------------------------------------------------===//
#include "EmulatorTestUtil.h"
#include "Half.h"
#include "TiledGemm.h"

#include "gmock/gmock.h"

#include <cmath>
#include <random>

using namespace la::emu;
using namespace la::emu::test;

namespace {

using kernels::randomHalves;

float toFloat(uint16_t h, bool bf16) { return kernels::halfBitsToFloat(h, bf16); }

TEST(EmulatorHalf, ConversionsRoundTrip) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.5f), 0xc100);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00); // rounds to infinity
  EXPECT_EQ(floatToHalf(5.960464477539063e-08f), 0x0001);
  EXPECT_EQ(halfToFloat(0x0001), 5.960464477539063e-08f);
  for (uint32_t h = 0; h < 0x7c00; ++h)
    ASSERT_EQ(floatToHalf(halfToFloat(uint16_t(h))), h);
  EXPECT_EQ(floatToBF16(1.0f), 0x3f80);
  EXPECT_EQ(bf16ToFloat(0xc040), -3.0f);
}

// One mma.sync.m16n8k16: lane fragments placed by the PTX ISA's tables for .row.col f32 += f16 * f16.
TEST(EmulatorMma, SingleInstructionFragmentsAgainstModel) {
  for (bool bf16 : {false, true}) {
    std::vector<uint16_t> a = randomHalves(16 * 16, bf16, 1), b = randomHalves(16 * 8, bf16, 2); // A row-major, B k x n
    std::vector<float> c(16 * 8), d(16 * 8, 0.0f);
    for (size_t i = 0; i < c.size(); ++i)
      c[i] = float(i % 7) - 3.0f;
    LaunchConfig config;
    config.block = {32, 1, 1};
    config.buffers = {buffer("d", d)};
    LaunchReport report = run(
        [&] {
          uint32_t lane = __la_emu_laneid(), g = lane / 4, t = lane % 4;
          auto pack = [](uint16_t lo, uint16_t hi) { return uint32_t(lo) | uint32_t(hi) << 16; };
          auto A = [&](uint32_t r, uint32_t k) { return a[r * 16 + k]; };
          auto B = [&](uint32_t k, uint32_t n) { return b[k * 8 + n]; };
          // a0,a1: (g, 2t..2t+1); a2,a3: (g+8, 2t..); a4,a5: (g, 2t+8..); a6,a7: (g+8, 2t+8..)
          uint32_t af[4] = {pack(A(g, 2 * t), A(g, 2 * t + 1)), pack(A(g + 8, 2 * t), A(g + 8, 2 * t + 1)),
                            pack(A(g, 2 * t + 8), A(g, 2 * t + 9)), pack(A(g + 8, 2 * t + 8), A(g + 8, 2 * t + 9))};
          // b0,b1: (k = 2t..2t+1, n = g); b2,b3: (k = 2t+8..2t+9, n = g)
          uint32_t bf[2] = {pack(B(2 * t, g), B(2 * t + 1, g)), pack(B(2 * t + 8, g), B(2 * t + 9, g))};
          // c0,c1: (g, 2t..2t+1); c2,c3: (g+8, 2t..2t+1)
          float cf[4] = {c[g * 8 + 2 * t], c[g * 8 + 2 * t + 1], c[(g + 8) * 8 + 2 * t], c[(g + 8) * 8 + 2 * t + 1]};
          float df[4];
          if (bf16)
            __la_emu_mma_m16n8k16_f32_bf16(df, af, bf, cf, "mma.mlir:1:1");
          else
            __la_emu_mma_m16n8k16_f32_f16(df, af, bf, cf, "mma.mlir:1:1");
          stGlobal(&d[g * 8 + 2 * t], df[0], "mma.mlir:2:1");
          stGlobal(&d[g * 8 + 2 * t + 1], df[1], "mma.mlir:2:1");
          stGlobal(&d[(g + 8) * 8 + 2 * t], df[2], "mma.mlir:2:1");
          stGlobal(&d[(g + 8) * 8 + 2 * t + 1], df[3], "mma.mlir:2:1");
        },
        config);
    ASSERT_TRUE(report.clean()) << text(report);
    for (uint32_t i = 0; i < 16; ++i)
      for (uint32_t j = 0; j < 8; ++j) {
        double ref = c[i * 8 + j];
        for (uint32_t k = 0; k < 16; ++k)
          ref += double(toFloat(a[i * 16 + k], bf16)) * toFloat(b[k * 8 + j], bf16);
        EXPECT_NEAR(d[i * 8 + j], ref, 1e-5) << "bf16 " << bf16 << " at " << i << "," << j;
      }
    EXPECT_EQ(report.counters.mmaSync, 1u);
    EXPECT_EQ(report.counters.mmaFlops, 2u * 16 * 8 * 16);
  }
}

// m16n8k8: f16 (A 2 regs, B 1 reg) and tf32 (A 4 regs, B 2 regs of f32 bits), placed by the PTX ISA's tables.
TEST(EmulatorMma, K8F16AndTF32FragmentsAgainstModel) {
  for (bool tf32 : {false, true}) {
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    // Values exact in both formats' inputs: f16 bits, or f32 with the low 13 mantissa bits clear (tf32).
    std::vector<uint32_t> a(16 * 8), b(8 * 8);
    auto value = [&] { return tf32 ? floatToBits(dist(rng)) & 0xffffe000u : uint32_t(floatToHalf(dist(rng))); };
    for (uint32_t &v : a)
      v = value();
    for (uint32_t &v : b)
      v = value();
    auto real = [&](uint32_t v) { return tf32 ? double(bitsToFloat(v)) : double(halfToFloat(uint16_t(v))); };
    std::vector<float> d(16 * 8, 0.0f);
    LaunchConfig config;
    config.block = {32, 1, 1};
    config.buffers = {buffer("d", d)};
    LaunchReport report = run(
        [&] {
          uint32_t lane = __la_emu_laneid(), g = lane / 4, t = lane % 4;
          auto A = [&](uint32_t r, uint32_t k) { return a[r * 8 + k]; };
          auto B = [&](uint32_t k, uint32_t n) { return b[k * 8 + n]; };
          float cf[4] = {1.0f, 2.0f, 3.0f, 4.0f}, df[4];
          if (tf32) {
            // a0: (g, t), a1: (g+8, t), a2: (g, t+4), a3: (g+8, t+4); b0: (t, g), b1: (t+4, g)
            uint32_t af[4] = {A(g, t), A(g + 8, t), A(g, t + 4), A(g + 8, t + 4)};
            uint32_t bf[2] = {B(t, g), B(t + 4, g)};
            __la_emu_mma_m16n8k8_f32_tf32(df, af, bf, cf, "mma8.mlir:1:1");
          } else {
            // a0,a1: (g, 2t..2t+1); a2,a3: (g+8, 2t..2t+1); b0,b1: (2t..2t+1, g)
            uint32_t af[2] = {A(g, 2 * t) | A(g, 2 * t + 1) << 16, A(g + 8, 2 * t) | A(g + 8, 2 * t + 1) << 16};
            uint32_t bf[1] = {B(2 * t, g) | B(2 * t + 1, g) << 16};
            __la_emu_mma_m16n8k8_f32_f16(df, af, bf, cf, "mma8.mlir:1:1");
          }
          float *rows[2] = {&d[g * 8 + 2 * t], &d[(g + 8) * 8 + 2 * t]};
          __la_emu_st_global(rows[0], df, 8, "mma8.mlir:2:1");
          __la_emu_st_global(rows[1], df + 2, 8, "mma8.mlir:2:1");
        },
        config);
    ASSERT_TRUE(report.clean()) << text(report);
    for (uint32_t i = 0; i < 16; ++i)
      for (uint32_t j = 0; j < 8; ++j) {
        double ref = (i < 8 ? 1.0 : 3.0) + (j % 2);
        for (uint32_t k = 0; k < 8; ++k)
          ref += real(a[i * 8 + k]) * real(b[k * 8 + j]);
        EXPECT_NEAR(d[i * 8 + j], ref, 1e-5) << "tf32 " << tf32 << " at " << i << "," << j;
      }
    EXPECT_EQ(report.counters.mmaFlops, 2u * 16 * 8 * 8);
  }
}

using Gemm = kernels::TiledGemm;

LaunchReport runGemm(Gemm &gemm) { return run(gemm.kernel(), gemm.config()); }

void expectMatchesReference(const Gemm &g) {
  for (uint32_t i = 0; i < g.m; ++i)
    for (uint32_t j = 0; j < g.n; ++j)
      ASSERT_NEAR(g.c[size_t(i) * g.n + j], g.reference(i, j), g.tolerance()) << "at " << i << "," << j;
}

TEST(EmulatorGemm, MmaLdmatrix64x64x64F16MatchesReference) {
  Gemm g(64, 64, 64);
  LaunchReport report = runGemm(g);
  ASSERT_TRUE(report.clean()) << text(report);
  expectMatchesReference(g);
  const Counters &c = report.counters;
  EXPECT_EQ(c.mmaSync, 4u * 4 * 8);
  EXPECT_EQ(c.ldmatrix, 4u * 4 * 9);
  EXPECT_EQ(c.globalBytesLoaded, 2u * 64 * 64 * 2);
  EXPECT_EQ(c.globalBytesStored, 64u * 64 * 4);
  EXPECT_EQ(c.cpAsyncBytes, 2u * 64 * 64 * 2);
  EXPECT_EQ(c.barriers, 2u);
}

TEST(EmulatorGemm, MmaLdmatrix64x128x128BF16MatchesReference) {
  Gemm g(64, 128, 128, /*bf16=*/true);
  LaunchReport report = runGemm(g);
  ASSERT_TRUE(report.clean()) << text(report);
  expectMatchesReference(g);
}

TEST(EmulatorGemm, Gemm256x256x256F16OnManyBlocks) {
  Gemm g(256, 256, 256);
  LaunchReport report = runGemm(g);
  ASSERT_TRUE(report.clean()) << text(report);
  expectMatchesReference(g);
  EXPECT_EQ(report.counters.mmaSync, 16u * 4 * 16 * 8);
  EXPECT_EQ(report.counters.mmaFlops, 2ull * 256 * 256 * 256);
}

TEST(EmulatorGemm, WithoutItsBarrierIsARaceAtTheOpsInvolved) {
  Gemm g(64, 64, 64);
  g.barrier = false;
  LaunchReport report = runGemm(g);
  const Finding *race = find(report, FindingKind::SharedRaceRAW);
  ASSERT_NE(race, nullptr) << text(report);
  EXPECT_THAT(race->sites[0].loc, ::testing::AnyOf("gemm.mlir:10:5", "gemm.mlir:11:5"));
  EXPECT_THAT(race->sites[1].loc, ::testing::AnyOf("gemm.mlir:18:7", "gemm.mlir:21:9"));
}

TEST(EmulatorGemm, WithoutItsCpAsyncWaitReadsBeforeTheWait) {
  Gemm g(64, 64, 64);
  g.wait = false;
  LaunchReport report = runGemm(g);
  const Finding *early = find(report, FindingKind::CpAsyncReadBeforeWait);
  ASSERT_NE(early, nullptr) << text(report);
  EXPECT_THAT(early->sites[1].loc, ::testing::AnyOf("gemm.mlir:18:7", "gemm.mlir:21:9"));
}

} // namespace

namespace {

// WMMA m16n16k16: one warp per 16x16 tile of C; A staged through shared memory (row-major), B read from
// global memory as column-major (a transposed copy), C accumulated in f32 or f16.
void wmmaGemm(bool f32Acc) {
  const uint32_t M = 32, N = 48, K = 64;
  std::vector<uint16_t> a = randomHalves(M * K, false, 8), b = randomHalves(K * N, false, 9), bt(N * K);
  for (uint32_t k = 0; k < K; ++k)
    for (uint32_t n = 0; n < N; ++n)
      bt[n * K + k] = b[k * N + n];
  std::vector<float> c32(M * N, 0.0f);
  std::vector<uint16_t> c16(M * N, 0);
  LaunchConfig config;
  config.grid = {N / 16, M / 16, 1};
  config.block = {32, 1, 1};
  config.sharedBytes = 16 * 16 * 2;
  config.buffers = {buffer("A", a), buffer("Bt", bt), buffer("C32", c32), buffer("C16", c16)};
  LaunchReport report = run(
      [&] {
        uint32_t lane = __la_emu_laneid(), row0 = __la_emu_ctaid_y() * 16, col0 = __la_emu_ctaid_x() * 16;
        uint32_t acc[8] = {};
        for (uint32_t k0 = 0; k0 < K; k0 += 16) {
          // Each lane copies 8 halves of the A tile into shared memory.
          uint32_t r = lane / 2, c = lane % 2 * 8;
          uint16_t part[8];
          __la_emu_ld_global(part, &a[(row0 + r) * K + k0 + c], 16, "wmma.mlir:3:5");
          __la_emu_st_shared((r * 16 + c) * 2, part, 16, "wmma.mlir:4:5");
          __la_emu_barrier0("wmma.mlir:5:5");
          uint32_t af[8], bf[8];
          __la_emu_wmma_load(af, LA_EMU_WMMA_A, 0, 0, LA_EMU_SPACE_SHARED, 0, 16, "wmma.mlir:6:5");
          __la_emu_wmma_load(bf, LA_EMU_WMMA_B, 1, 0, LA_EMU_SPACE_GLOBAL, uint64_t(uintptr_t(&bt[col0 * K + k0])), K,
                             "wmma.mlir:7:5");
          __la_emu_wmma_mma(acc, af, bf, acc, f32Acc, "wmma.mlir:8:5");
          __la_emu_barrier0("wmma.mlir:9:5");
        }
        void *out = f32Acc ? static_cast<void *>(&c32[row0 * N + col0]) : static_cast<void *>(&c16[row0 * N + col0]);
        __la_emu_wmma_store(acc, 0, f32Acc, LA_EMU_SPACE_GLOBAL, uint64_t(uintptr_t(out)), N, "wmma.mlir:11:3");
      },
      config);
  ASSERT_TRUE(report.clean()) << text(report);
  for (uint32_t i = 0; i < M; ++i)
    for (uint32_t j = 0; j < N; ++j) {
      double ref = 0;
      for (uint32_t k = 0; k < K; ++k)
        ref += double(halfToFloat(a[i * K + k])) * halfToFloat(b[k * N + j]);
      double got = f32Acc ? c32[i * N + j] : halfToFloat(c16[i * N + j]);
      // An f16 accumulator rounds after every 16-deep step.
      ASSERT_NEAR(got, ref, f32Acc ? 1e-4 : 2e-2) << "at " << i << "," << j;
    }
  EXPECT_EQ(report.counters.mmaSync, (M / 16) * (N / 16) * (K / 16));
  EXPECT_EQ(report.counters.mmaFlops, 2ull * M * N * K);
}

TEST(EmulatorWmma, GemmF32AccumulatorMatchesReference) { wmmaGemm(true); }
TEST(EmulatorWmma, GemmF16AccumulatorMatchesReference) { wmmaGemm(false); }

} // namespace
