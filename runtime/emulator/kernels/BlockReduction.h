//===- BlockReduction.h - A block sum written against the emulator's ABI -*- C++ -*-===//
//
// The classic CUDA block reduction: 256 threads per block, each loads 4 floats with one 16-byte load and
// adds them, the block halves its 256 partial sums in shared memory (a barrier per step) down to 64, and
// warp 0 finishes with shfl.sync.down (offsets 16 .. 1) after adding the last two halves. Lane 0 stores the
// block's sum; the host adds the blocks'. Timed by la-emulator-bench (barriers and shuffles, where the GEMM
// times tensor-core operations). Not part of the library.
//
//===----------------------------------------------------------------------===//
#ifndef LA_EMULATOR_KERNELS_BLOCKREDUCTION_H
#define LA_EMULATOR_KERNELS_BLOCKREDUCTION_H

#include "la/emulator/ABI.h"
#include "la/emulator/Launch.h"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace la::emu::kernels {

struct BlockReduction {
  static constexpr uint32_t kThreads = 256, kPerThread = 4, kPerBlock = kThreads * kPerThread;

  std::vector<float> in;   // a multiple of kPerBlock values, uniform in [-1, 1]
  std::vector<float> sums; // one per block, written by the kernel

  explicit BlockReduction(size_t n) : in(n) {
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float &x : in)
      x = dist(rng);
  }

  uint32_t blocks() const { return uint32_t(in.size() / kPerBlock); }

  /// One block of 256 threads per 1024 values, 1 KiB of shared memory, buffers `in` and `sums`. Zeroes the
  /// sums.
  LaunchConfig config() {
    sums.assign(blocks(), 0.0f);
    LaunchConfig config;
    config.grid = {blocks(), 1, 1};
    config.block = {kThreads, 1, 1};
    config.sharedBytes = kThreads * 4;
    config.buffers = {{"in", in.data(), in.size() * 4}, {"sums", sums.data(), sums.size() * 4}};
    return config;
  }

  /// The body of every thread. Keeps a pointer to this problem.
  Kernel kernel() {
    BlockReduction *r = this;
    return [r] {
      uint32_t tid = __la_emu_tid_x(), block = __la_emu_ctaid_x();
      float v[kPerThread];
      __la_emu_ld_global(v, &r->in[(size_t(block) * kThreads + tid) * kPerThread], sizeof(v), "reduce.mlir:5:9");
      float sum = (v[0] + v[1]) + (v[2] + v[3]);
      __la_emu_st_shared(tid * 4, &sum, 4, "reduce.mlir:7:5");
      __la_emu_barrier0("reduce.mlir:8:5");
      for (uint32_t half = kThreads / 2; half >= 64; half /= 2) {
        if (tid < half) {
          float other;
          __la_emu_ld_shared(&other, (tid + half) * 4, 4, "reduce.mlir:11:11");
          sum += other;
          __la_emu_st_shared(tid * 4, &sum, 4, "reduce.mlir:12:9");
        }
        __la_emu_barrier0("reduce.mlir:14:7");
      }
      if (tid >= 32)
        return;
      float other;
      __la_emu_ld_shared(&other, (tid + 32) * 4, 4, "reduce.mlir:17:9");
      sum += other;
      for (uint32_t offset = 16; offset >= 1; offset /= 2) {
        uint32_t bits;
        std::memcpy(&bits, &sum, 4);
        // c = 0x1f: clamp at lane 31, no segments (CUDA's __shfl_down_sync with width 32).
        bits = __la_emu_shfl_sync(LA_EMU_SHFL_DOWN, 0xffffffffu, bits, offset, 0x1f, nullptr, "reduce.mlir:20:13");
        float down;
        std::memcpy(&down, &bits, 4);
        sum += down;
      }
      if (tid == 0)
        __la_emu_st_global(&r->sums[block], &sum, 4, "reduce.mlir:23:7");
    };
  }

  /// Block b's sum in double precision, and a bound on the f32 kernel's error: each value goes through at
  /// most 10 f32 additions (2 per thread, 2 halving steps, 1 + 5 in the warp), each off by at most half an
  /// ulp of a partial sum no larger than the sum of the magnitudes.
  double reference(uint32_t b, double *bound) const {
    double sum = 0, magnitude = 0;
    for (size_t i = size_t(b) * kPerBlock; i < size_t(b + 1) * kPerBlock; ++i) {
      sum += in[i];
      magnitude += std::fabs(in[i]);
    }
    *bound = 10 * (FLT_EPSILON / 2) * magnitude;
    return sum;
  }
};

} // namespace la::emu::kernels

#endif // LA_EMULATOR_KERNELS_BLOCKREDUCTION_H
