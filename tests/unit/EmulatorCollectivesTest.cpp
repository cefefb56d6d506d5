//===- EmulatorCollectivesTest.cpp - Collectives vs their PTX definitions -===//
//
// Each warp collective runs on the emulator over many operand sets and membermasks, and is compared with a
// scalar model written here from the PTX ISA's description of the instruction (not from the emulator).
//
//===----------------------------------------------------------------------===//
#include "EmulatorTestUtil.h"

#include <cstring>
#include <random>

using namespace la::emu;
using namespace la::emu::test;

namespace {

LaunchConfig oneWarp(std::vector<Buffer> buffers, uint32_t threads = 32) {
  LaunchConfig config;
  config.block = {threads, 1, 1};
  config.buffers = std::move(buffers);
  return config;
}

TEST(EmulatorRegisters, SpecialRegistersOfEveryThread) {
  LaunchConfig config;
  config.grid = {2, 3, 1};
  config.block = {8, 4, 2};
  uint32_t perBlock = 64, blocks = 6;
  std::vector<uint32_t> out(blocks * perBlock * 8, ~0u);
  config.buffers = {buffer("out", out)};
  uint32_t *o = out.data();
  LaunchReport report = run(
      [o] {
        uint32_t block = __la_emu_ctaid_x() + __la_emu_nctaid_x() * __la_emu_ctaid_y();
        uint32_t *slot = o + (block * __la_emu_ntid_x() * __la_emu_ntid_y() * __la_emu_ntid_z() + linearTid()) * 8;
        uint32_t values[8] = {__la_emu_tid_x(),  __la_emu_tid_y(),   __la_emu_tid_z(),    __la_emu_laneid(),
                              __la_emu_warpid(), __la_emu_nwarpid(), __la_emu_nctaid_y(), __la_emu_ctaid_z()};
        __la_emu_st_global(slot, values, sizeof values, "regs.mlir:1:1");
      },
      config);
  ASSERT_TRUE(report.clean()) << text(report);
  for (uint32_t b = 0; b < blocks; ++b)
    for (uint32_t t = 0; t < perBlock; ++t) {
      const uint32_t *s = &out[(b * perBlock + t) * 8];
      EXPECT_EQ(s[0], t % 8);
      EXPECT_EQ(s[1], t / 8 % 4);
      EXPECT_EQ(s[2], t / 32);
      EXPECT_EQ(s[3], t % 32);
      EXPECT_EQ(s[4], t / 32);
      EXPECT_EQ(s[5], 2u);
      EXPECT_EQ(s[6], 3u);
      EXPECT_EQ(s[7], 0u);
    }
  EXPECT_EQ(report.counters.globalBytesStored, blocks * perBlock * 32);
}

// shfl.sync, from the PTX ISA: lane j = f(lane, b) within the segment; out of [minLane, maxLane] (never
// wrapping) the lane reads its own value and p is false.
struct ShflModel {
  uint32_t d;
  bool p;
};
ShflModel shflModel(uint32_t mode, uint32_t lane, const uint32_t *a, uint32_t b, uint32_t c) {
  uint32_t bval = b & 31, clamp = c & 31, seg = (c >> 8) & 31;
  int maxLane = int((lane & seg) | (clamp & ~seg)), minLane = int(lane & seg);
  int j;
  bool p;
  if (mode == LA_EMU_SHFL_UP) {
    j = int(lane) - int(bval);
    p = j >= maxLane;
  } else if (mode == LA_EMU_SHFL_DOWN) {
    j = int(lane) + int(bval);
    p = j <= maxLane;
  } else if (mode == LA_EMU_SHFL_BFLY) {
    j = int(lane ^ bval);
    p = j <= maxLane;
  } else {
    j = minLane | int(bval & ~seg);
    p = j <= maxLane;
  }
  return {p ? a[j] : a[lane], p};
}

TEST(EmulatorShfl, EveryModeClampAndSegmentAgainstPTXModel) {
  // gpu.shuffle's lowering: width w gives c = ((32 - w) << 8) | (up ? 0 : 31).
  std::vector<uint32_t> cs;
  for (uint32_t width : {32u, 16u, 8u, 4u, 2u})
    for (uint32_t clampUp : {0u, 31u})
      cs.push_back(((32 - width) << 8) | clampUp);
  cs.push_back(0x1f05); // segment mask 31 with clamp 5: every lane is its own segment
  cs.push_back(0x0007); // no segments, clamp 7
  for (uint32_t mode = 0; mode < 4; ++mode)
    for (uint32_t c : cs)
      for (uint32_t b : {0u, 1u, 2u, 3u, 5u, 8u, 16u, 31u, 33u}) {
        std::vector<uint32_t> out(64, 0);
        LaunchReport report = run(
            [&] {
              uint32_t lane = __la_emu_laneid();
              int32_t p = -1;
              uint32_t d = __la_emu_shfl_sync(mode, ~0u, 1000 + lane * 7, b, c, &p, "shfl.mlir:2:3");
              stGlobal(&out[2 * lane], d, "shfl.mlir:3:3");
              stGlobal(&out[2 * lane + 1], uint32_t(p), "shfl.mlir:4:3");
            },
            oneWarp({buffer("out", out)}));
        ASSERT_TRUE(report.clean()) << text(report);
        uint32_t a[32];
        for (uint32_t l = 0; l < 32; ++l)
          a[l] = 1000 + l * 7;
        for (uint32_t l = 0; l < 32; ++l) {
          ShflModel m = shflModel(mode, l, a, b, c);
          ASSERT_EQ(out[2 * l], m.d) << "mode " << mode << " b " << b << " c " << c << " lane " << l;
          ASSERT_EQ(out[2 * l + 1], uint32_t(m.p)) << "mode " << mode << " b " << b << " c " << c << " lane " << l;
        }
        EXPECT_EQ(report.counters.shuffles, 1u);
      }
}

TEST(EmulatorShfl, PartialMaskSourceOutsideTheMaskIsNotWrapped) {
  // Lanes 0..15 shuffle among themselves (mask 0xffff) while lanes 16..31 do their own shuffle: the two
  // groups complete separately; a source lane outside a group's mask is inactive for it (0 here).
  std::vector<uint32_t> out(32, 7);
  LaunchReport report = run(
      [&] {
        uint32_t lane = __la_emu_laneid();
        uint32_t mask = lane < 16 ? 0x0000ffffu : 0xffff0000u;
        uint32_t d = __la_emu_shfl_sync(LA_EMU_SHFL_DOWN, mask, lane + 1, 4, 31, nullptr, "shfl.mlir:9:1");
        stGlobal(&out[lane], d, "shfl.mlir:10:1");
      },
      oneWarp({buffer("out", out)}));
  ASSERT_TRUE(report.clean()) << text(report);
  for (uint32_t l = 0; l < 32; ++l) {
    bool inOwnGroup = (l < 16) == (l + 4 < 16) && l + 4 < 32;
    uint32_t expected = l + 4 > 31 ? l + 1 : inOwnGroup ? l + 5 : 0;
    EXPECT_EQ(out[l], expected) << "lane " << l;
  }
  EXPECT_EQ(report.counters.shuffles, 2u);
}

TEST(EmulatorVote, AllAnyUniBallotAgainstModel) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    uint32_t preds = trial < 4 ? (trial == 0 ? 0u : trial == 1 ? ~0u : trial == 2 ? 1u : 0x80000000u) : uint32_t(rng());
    uint32_t mask = trial % 3 == 0 ? ~0u : (uint32_t(rng()) | 1u);
    std::vector<uint32_t> out(32 * 4, 0);
    LaunchReport report = run(
        [&] {
          uint32_t lane = __la_emu_laneid();
          if (!(mask & (1u << lane)))
            return; // not a member: exits
          int32_t p = (preds >> lane) & 1;
          for (uint32_t mode = 0; mode < 4; ++mode)
            stGlobal(&out[lane * 4 + mode], __la_emu_vote_sync(mode, mask, p, "vote.mlir:1:1"), "vote.mlir:2:1");
        },
        oneWarp({buffer("out", out)}));
    ASSERT_TRUE(report.clean()) << text(report);
    uint32_t ballot = preds & mask;
    for (uint32_t l = 0; l < 32; ++l) {
      if (!(mask & (1u << l)))
        continue;
      EXPECT_EQ(out[l * 4 + LA_EMU_VOTE_ALL], uint32_t(ballot == mask));
      EXPECT_EQ(out[l * 4 + LA_EMU_VOTE_ANY], uint32_t(ballot != 0));
      EXPECT_EQ(out[l * 4 + LA_EMU_VOTE_UNI], uint32_t(ballot == 0 || ballot == mask));
      EXPECT_EQ(out[l * 4 + LA_EMU_VOTE_BALLOT], ballot);
    }
  }
}

TEST(EmulatorRedux, EveryOperationAgainstModel) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    uint32_t mask = trial % 2 ? ~0u : (uint32_t(rng()) | 0x10u);
    uint32_t values[32];
    for (uint32_t &v : values)
      v = trial % 4 == 1 ? rng() % 100 : uint32_t(rng());
    std::vector<uint32_t> out(32 * 8, 0);
    LaunchReport report = run(
        [&] {
          uint32_t lane = __la_emu_laneid();
          if (!(mask & (1u << lane)))
            return;
          for (uint32_t op = 0; op < 8; ++op)
            stGlobal(&out[lane * 8 + op], __la_emu_redux_sync(op, mask, values[lane], "redux.mlir:1:1"),
                     "redux.mlir:2:1");
        },
        oneWarp({buffer("out", out)}));
    ASSERT_TRUE(report.clean()) << text(report);
    uint32_t add = 0, umin = ~0u, umax = 0, band = ~0u, bor = 0, bxor = 0;
    int32_t smin = INT32_MAX, smax = INT32_MIN;
    for (uint32_t l = 0; l < 32; ++l)
      if (mask & (1u << l)) {
        uint32_t v = values[l];
        add += v;
        umin = std::min(umin, v);
        umax = std::max(umax, v);
        smin = std::min(smin, int32_t(v));
        smax = std::max(smax, int32_t(v));
        band &= v;
        bor |= v;
        bxor ^= v;
      }
    uint32_t expected[8] = {add, umin, umax, uint32_t(smin), uint32_t(smax), band, bor, bxor};
    for (uint32_t l = 0; l < 32; ++l)
      if (mask & (1u << l))
        for (uint32_t op = 0; op < 8; ++op)
          EXPECT_EQ(out[l * 8 + op], expected[op]) << "op " << op << " lane " << l;
    EXPECT_EQ(report.counters.reductions, 8u);
  }
}

TEST(EmulatorWarpSync, WarpSyncAndActiveMask) {
  std::vector<uint32_t> out(32, 0);
  LaunchReport report = run(
      [&] {
        uint32_t lane = __la_emu_laneid();
        if (lane >= 24)
          return;
        // The whole warp's mask: PTX waits only for the lanes that have not exited, so this returns once
        // lanes 24..31 have exited.
        __la_emu_bar_warp_sync(~0u, "sync.mlir:1:1");
        stGlobal(&out[lane], __la_emu_activemask(), "sync.mlir:2:1");
      },
      oneWarp({buffer("out", out)}));
  ASSERT_TRUE(report.clean()) << text(report);
  // activemask is the lanes that have not exited: after the sync lanes 24..31 are gone, and in thread order
  // each lane below 24 runs to its end before the next one reads the mask.
  for (uint32_t l = 0; l < 24; ++l)
    EXPECT_EQ(out[l], 0x00ffffffu & ~((1u << l) - 1)) << "lane " << l;
  EXPECT_EQ(report.counters.warpSyncs, 1u);
}

// ldmatrix from the PTX ISA: each of the num 8x8 b16 matrices has its 8 rows at the addresses of lanes
// 8i..8i+7; lane l receives elements (l/4, 2(l%4)) and (l/4, 2(l%4)+1) of matrix i (of its transpose with
// .trans) in register i, the first in the low half.
TEST(EmulatorLdmatrix, X1X2X4AndTransAgainstModel) {
  // A 64x16 b16 matrix in shared memory, row-major with a padded stride so rows are not contiguous.
  const uint32_t stride = 24, rows = 64;
  std::vector<uint16_t> host(rows * stride);
  for (uint32_t i = 0; i < host.size(); ++i)
    host[i] = uint16_t(i * 37 + 5);
  for (uint32_t num : {1u, 2u, 4u})
    for (int trans : {0, 1}) {
      std::vector<uint32_t> out(32 * 4, 0);
      LaunchConfig config = oneWarp({buffer("out", out), buffer("in", host)});
      config.sharedBytes = rows * stride * 2;
      // Row r of matrix i is matrix row 8i + r, starting at column 4 (an arbitrary 16-byte-aligned start).
      auto rowOf = [](uint32_t lane) { return (lane / 8) * 8 + lane % 8 + (lane / 8) * 3; };
      LaunchReport report = run(
          [&] {
            uint32_t lane = __la_emu_laneid();
            // Each thread copies two rows into shared memory, then a barrier.
            for (uint32_t r = lane * 2; r < lane * 2 + 2; ++r) {
              uint16_t row[24];
              __la_emu_ld_global(row, &host[r * stride], sizeof row, "ldm.mlir:1:1");
              __la_emu_st_shared(r * stride * 2, row, sizeof row, "ldm.mlir:2:1");
            }
            __la_emu_barrier0("ldm.mlir:3:1");
            uint32_t d[4] = {0, 0, 0, 0};
            __la_emu_ldmatrix(d, num, trans, (rowOf(lane) * stride + 8) * 2, "ldm.mlir:4:1");
            __la_emu_st_global(&out[lane * 4], d, sizeof d, "ldm.mlir:5:1");
          },
          config);
      ASSERT_TRUE(report.clean()) << text(report);
      auto element = [&](uint32_t i, uint32_t r, uint32_t c) { return host[rowOf(8 * i + r) * stride + 8 + c]; };
      for (uint32_t l = 0; l < 32; ++l)
        for (uint32_t i = 0; i < num; ++i) {
          uint32_t r = l / 4, c = 2 * (l % 4);
          uint16_t lo = trans ? element(i, c, r) : element(i, r, c);
          uint16_t hi = trans ? element(i, c + 1, r) : element(i, r, c + 1);
          EXPECT_EQ(out[l * 4 + i], uint32_t(lo) | uint32_t(hi) << 16)
              << "num " << num << " trans " << trans << " lane " << l;
        }
      EXPECT_EQ(report.counters.ldmatrix, 1u);
    }
}

TEST(EmulatorAtomics, GlobalAndSharedAtomicsAcrossBlocks) {
  std::vector<uint32_t> counter(2, 0);
  std::vector<float> sum(1, 0.0f);
  LaunchConfig config;
  config.grid = {8, 1, 1};
  config.block = {64, 1, 1};
  config.sharedBytes = 4;
  config.numThreads = 4;
  config.buffers = {buffer("counter", counter), buffer("sum", sum)};
  LaunchReport report = run(
      [&] {
        if (linearTid() == 0)
          stShared<uint32_t>(0, 0, "atom.mlir:1:1");
        __la_emu_barrier0("atom.mlir:2:1");
        __la_emu_atom_shared(LA_EMU_ATOM_ADD, LA_EMU_TYPE_U32, 0, 1, 0, "atom.mlir:3:1");
        __la_emu_atom_global(LA_EMU_ATOM_ADD, LA_EMU_TYPE_U32, &counter[0], 1, 0, "atom.mlir:4:1");
        __la_emu_atom_global(LA_EMU_ATOM_MAX, LA_EMU_TYPE_U32, &counter[1], __la_emu_ctaid_x() * 100 + linearTid(), 0,
                             "atom.mlir:5:1");
        uint64_t half;
        float h = 0.5f;
        std::memcpy(&half, &h, 4);
        __la_emu_atom_global(LA_EMU_ATOM_ADD, LA_EMU_TYPE_F32, &sum[0], half & 0xffffffffu, 0, "atom.mlir:6:1");
        __la_emu_fence("atom.mlir:7:1");
        __la_emu_barrier0("atom.mlir:8:1");
        if (linearTid() == 0) {
          uint32_t n = ldShared<uint32_t>(0, "atom.mlir:9:1");
          if (n != 64)
            stGlobal(&counter[0], 0u, "atom.mlir:10:1"); // makes the check below fail
        }
      },
      config);
  ASSERT_TRUE(report.clean()) << text(report);
  EXPECT_EQ(counter[0], 8u * 64);
  EXPECT_EQ(counter[1], 7u * 100 + 63);
  EXPECT_EQ(sum[0], 8 * 64 * 0.5f);
  EXPECT_EQ(report.counters.atomics, 8u * 64 * 4);
}

} // namespace
