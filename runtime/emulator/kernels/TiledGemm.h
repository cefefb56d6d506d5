//===- TiledGemm.h - A tensor-core GEMM written against the emulator's ABI -*- C++ -*-===//
//
// C = A * B on f16 or bf16 inputs with f32 accumulators, as a CUDA kernel does it: each block of 4 warps
// computes a 64x64 tile of C, stepping K by 64 through shared memory (cp.async tiles, a barrier, ldmatrix
// into fragments, .trans for B, mma.sync m16n8k16). Shared by the emulator's tests (EmulatorGemmTest) and
// la-emulator-bench, so that the benchmark times the kernel the tests check. Not part of the library.
//
//===----------------------------------------------------------------------===//
#ifndef LA_EMULATOR_KERNELS_TILEDGEMM_H
#define LA_EMULATOR_KERNELS_TILEDGEMM_H

#include "la/emulator/ABI.h"
#include "la/emulator/Launch.h"

#include "Half.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace la::emu::kernels {

/// `n` f16 (or bf16) values drawn uniformly from [-1, 1], as bits.
inline std::vector<uint16_t> randomHalves(size_t n, bool bf16, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<uint16_t> v(n);
  for (uint16_t &h : v)
    h = bf16 ? floatToBF16(dist(rng)) : floatToHalf(dist(rng));
  return v;
}

inline float halfBitsToFloat(uint16_t h, bool bf16) { return bf16 ? bf16ToFloat(h) : halfToFloat(h); }

/// One problem: M, N and K multiples of 64.
struct TiledGemm {
  uint32_t m, n, k;
  bool bf16 = false;
  /// Without the barrier after the tile copies, or without their cp.async wait, the kernel is wrong (the
  /// checks' tests make it so).
  bool barrier = true, wait = true;
  std::vector<uint16_t> a, b; // row-major m x k and k x n
  std::vector<float> c;       // m x n, written by the kernel

  TiledGemm(uint32_t m, uint32_t n, uint32_t k, bool bf16 = false) : m(m), n(n), k(k), bf16(bf16) {
    a = randomHalves(size_t(m) * k, bf16, 3);
    b = randomHalves(size_t(k) * n, bf16, 4);
  }

  /// The launch: one block of 128 threads per 64x64 tile of C, 16 KiB of shared memory (the A tile at 0,
  /// the B tile at 8192, both row-major 64x64), buffers A, B and C. Zeroes C.
  LaunchConfig config() {
    c.assign(size_t(m) * n, 0.0f);
    LaunchConfig config;
    config.grid = {n / 64, m / 64, 1};
    config.block = {128, 1, 1};
    config.sharedBytes = 2 * 64 * 64 * 2;
    config.buffers = {{"A", a.data(), a.size() * 2}, {"B", b.data(), b.size() * 2}, {"C", c.data(), c.size() * 4}};
    return config;
  }

  /// The body of every thread; warp w of a block owns rows 16w..16w+15 of its tile. Keeps a pointer to
  /// this problem.
  Kernel kernel() {
    TiledGemm *g = this;
    return [g] {
      const uint32_t shB = 64 * 64 * 2; // the B tile's shared offset
      uint32_t tid = __la_emu_tid_x(), lane = __la_emu_laneid(), warp = __la_emu_warpid();
      uint32_t tileM = __la_emu_ctaid_y() * 64, tileN = __la_emu_ctaid_x() * 64, K = g->k, N = g->n;
      float acc[8][4] = {};
      for (uint32_t kt = 0; kt < K; kt += 64) {
        for (uint32_t i = 0; i < 4; ++i) {
          uint32_t chunk = tid + i * 128, row = chunk / 8, col = chunk % 8 * 8;
          __la_emu_cp_async((row * 64 + col) * 2, &g->a[size_t(tileM + row) * K + kt + col], 16, 16, "gemm.mlir:10:5");
          __la_emu_cp_async(shB + (row * 64 + col) * 2, &g->b[size_t(kt + row) * N + tileN + col], 16, 16,
                            "gemm.mlir:11:5");
        }
        __la_emu_cp_async_commit_group();
        if (g->wait)
          __la_emu_cp_async_wait_group(0, "gemm.mlir:13:5");
        if (g->barrier)
          __la_emu_barrier0("gemm.mlir:14:5");
        for (uint32_t kk = 0; kk < 64; kk += 16) {
          // x4: matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15).
          uint32_t i = lane / 8, r = lane % 8;
          uint32_t aRow = 16 * warp + r + (i & 1) * 8, aCol = kk + (i >> 1) * 8;
          uint32_t af[4];
          __la_emu_ldmatrix(af, 4, 0, (aRow * 64 + aCol) * 2, "gemm.mlir:18:7");
          for (uint32_t j = 0; j < 8; ++j) {
            // x2.trans of row-major B: rows k..k+7 and k+8..k+15 of columns 8j..8j+7.
            uint32_t bRow = kk + lane % 16;
            uint32_t bf[2];
            __la_emu_ldmatrix(bf, 2, 1, shB + (bRow * 64 + 8 * j) * 2, "gemm.mlir:21:9");
            if (g->bf16)
              __la_emu_mma_m16n8k16_f32_bf16(acc[j], af, bf, acc[j], "gemm.mlir:22:9");
            else
              __la_emu_mma_m16n8k16_f32_f16(acc[j], af, bf, acc[j], "gemm.mlir:22:9");
          }
        }
        __la_emu_barrier0("gemm.mlir:25:5"); // the next tiles overwrite shared memory
      }
      uint32_t gr = lane / 4, t = lane % 4;
      for (uint32_t j = 0; j < 8; ++j)
        for (uint32_t h = 0; h < 2; ++h) {
          size_t row = tileM + 16 * warp + gr + 8 * h, col = tileN + 8 * j + 2 * t;
          __la_emu_st_global(&g->c[row * N + col], &acc[j][2 * h], 8, "gemm.mlir:30:7");
        }
    };
  }

  /// C(i, j) in double precision from the same f16/bf16 inputs.
  double reference(uint32_t i, uint32_t j) const {
    double sum = 0;
    for (uint32_t l = 0; l < k; ++l)
      sum += double(halfBitsToFloat(a[size_t(i) * k + l], bf16)) * halfBitsToFloat(b[size_t(l) * n + j], bf16);
    return sum;
  }

  /// How far C may be from the reference: the tensor core's f32 sums of K products of values in [-1, 1].
  double tolerance() const { return 1e-4 * std::sqrt(double(k)); }
};

} // namespace la::emu::kernels

#endif // LA_EMULATOR_KERNELS_TILEDGEMM_H
