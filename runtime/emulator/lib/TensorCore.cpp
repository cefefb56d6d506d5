//===- TensorCore.cpp - ldmatrix and mma.sync fragment layouts ------------===//
#include "TensorCore.h"

#include "Block.h"
#include "Half.h"

using namespace la::emu;

void la::emu::runLdmatrix(Block &block, const Collective &c, uint32_t warp) {
  uint32_t num = c.op & 7;
  bool trans = c.op & 8;
  // Matrix i's row r comes from the address lane 8*i + r gave: 8 b16 elements, 16 contiguous bytes.
  uint16_t m[4][8][8] = {};
  for (uint32_t i = 0; i < num; ++i)
    for (uint32_t r = 0; r < 8; ++r) {
      uint32_t l = 8 * i + r;
      if (!(c.arrived & (1u << l)))
        continue;
      Thread &t = block.threads[warp * 32 + l];
      block.loadShared(t, m[i][r], t.in[0], 16, t.waitLoc);
    }
  // Lane l holds elements (l/4, 2*(l%4)) and (l/4, 2*(l%4)+1) of each matrix, or of its transpose.
  for (uint32_t l = 0; l < 32; ++l) {
    if (!(c.arrived & (1u << l)))
      continue;
    Thread &t = block.threads[warp * 32 + l];
    uint32_t row = l / 4, col = 2 * (l % 4);
    for (uint32_t i = 0; i < num; ++i) {
      uint16_t lo = trans ? m[i][col][row] : m[i][row][col];
      uint16_t hi = trans ? m[i][col + 1][row] : m[i][row][col + 1];
      t.out[i] = uint32_t(lo) | uint32_t(hi) << 16;
    }
  }
}

// tf32 is an f32 whose low 13 mantissa bits the tensor core ignores.
static float tf32ToFloat(uint32_t bits) { return bitsToFloat(bits & 0xffffe000u); }

void la::emu::runMma(Block &block, const Collective &c, uint32_t warp) {
  bool bf16 = c.kind == CollectiveKind::MmaBF16;
  bool k8 = c.kind == CollectiveKind::MmaK8F16 || c.kind == CollectiveKind::MmaK8TF32;
  bool tf32 = c.kind == CollectiveKind::MmaK8TF32;
  uint32_t K = k8 ? 8 : 16;
  auto toFloat = [&](uint16_t h) { return bf16 ? bf16ToFloat(h) : halfToFloat(h); };
  float a[16][16] = {}, b[16][8] = {}, acc[16][8] = {};
  // PTX ISA, "Matrix fragments for mma.m16n8k16 / mma.m16n8k8": groupID g = lane / 4, threadID_in_group
  // t = lane % 4.
  //   m16n8k16 f16/bf16:
  //     A (row-major 16x16, 4 regs of 2 halves): regs 0..3 hold rows g, g+8, g, g+8 at columns 2t, 2t+1
  //       (regs 0, 1) or 2t+8, 2t+9 (regs 2, 3).
  //     B (16x8, "col", 2 regs): rows 2t, 2t+1 (reg 0) and 2t+8, 2t+9 (reg 1) of column g.
  //   m16n8k8 f16: A 2 regs: rows g (reg 0) and g+8 (reg 1) at columns 2t, 2t+1; B 1 reg: rows 2t, 2t+1 of
  //     column g.
  //   m16n8k8 tf32: A 4 regs: (g, t), (g+8, t), (g, t+4), (g+8, t+4); B 2 regs: (t, g), (t+4, g).
  //   C/D (16x8 f32) for all: c0, c1 at row g, columns 2t, 2t+1; c2, c3 at row g+8.
  for (uint32_t l = 0; l < 32; ++l) {
    if (!(c.arrived & (1u << l)))
      continue;
    const Thread &t = block.threads[warp * 32 + l];
    uint32_t g = l / 4, tg = l % 4;
    if (tf32) {
      for (uint32_t r = 0; r < 4; ++r)
        a[g + (r & 1) * 8][tg + (r >> 1) * 4] = tf32ToFloat(t.in[r]);
      for (uint32_t r = 0; r < 2; ++r)
        b[tg + r * 4][g] = tf32ToFloat(t.in[4 + r]);
    } else {
      for (uint32_t r = 0; r < (k8 ? 2u : 4u); ++r) {
        uint32_t row = g + (r & 1) * 8, col = 2 * tg + (r >> 1) * 8;
        a[row][col] = toFloat(t.in[r] & 0xffff);
        a[row][col + 1] = toFloat(t.in[r] >> 16);
      }
      for (uint32_t r = 0; r < (k8 ? 1u : 2u); ++r) {
        b[2 * tg + r * 8][g] = toFloat(t.in[4 + r] & 0xffff);
        b[2 * tg + r * 8 + 1][g] = toFloat(t.in[4 + r] >> 16);
      }
    }
    for (uint32_t r = 0; r < 4; ++r)
      acc[g + (r >> 1) * 8][2 * tg + (r & 1)] = bitsToFloat(t.in[6 + r]);
  }
  // Products of f16/bf16 values are exact in f32 (tf32 products nearly so); the sum runs in f32, in k order.
  for (uint32_t i = 0; i < 16; ++i)
    for (uint32_t j = 0; j < 8; ++j)
      for (uint32_t k = 0; k < K; ++k)
        acc[i][j] += a[i][k] * b[k][j];
  for (uint32_t l = 0; l < 32; ++l) {
    if (!(c.arrived & (1u << l)))
      continue;
    Thread &t = block.threads[warp * 32 + l];
    uint32_t g = l / 4, tg = l % 4;
    for (uint32_t r = 0; r < 4; ++r)
      t.out[r] = floatToBits(acc[g + (r >> 1) * 8][2 * tg + (r & 1)]);
  }
}
