//===- Wmma.cpp - wmma m16n16k16 in the emulator's fragment layout --------===//
//
// PTX leaves wmma fragment layouts unspecified (a kernel may only load, mma, store them, or apply the same
// operation to every element), so any layout that the emulator's load, mma and store agree on is exact.
// The register counts are NVVM's (A and B: 8 f16x2 registers, C/D: 8 f32 or 4 f16x2):
//   A (16x16, m x k): lane l holds row l % 16, all 16 columns (two lanes hold each row);
//   B (16x16, k x n): lane l holds column l % 16, all 16 rows;
//   C/D (16x16): lane l holds row l / 2, columns 8 * (l % 2) .. +7.
//
//===----------------------------------------------------------------------===//
#include "Block.h"
#include "Half.h"
#include "TensorCore.h"

#include "la/emulator/ABI.h"

#include <cstring>

using namespace la::emu;

namespace {
// The element of a fragment's matrix that holds (element index e of lane l).
struct Coord {
  uint32_t row, col;
};
Coord coordOf(uint32_t which, uint32_t lane, uint32_t e) {
  if (which == LA_EMU_WMMA_A)
    return {lane % 16, e};
  if (which == LA_EMU_WMMA_B)
    return {e, lane % 16};
  return {lane / 2, 8 * (lane % 2) + e};
}
uint32_t elementsOf(uint32_t which) { return which == LA_EMU_WMMA_C ? 8 : 16; }
} // namespace

void la::emu::runWmma(Block &block, const Collective &c, uint32_t warp) {
  bool f16Acc = c.op == 1;
  float a[16][16] = {}, b[16][16] = {}, acc[16][16] = {};
  for (uint32_t l = 0; l < 32; ++l) {
    if (!(c.arrived & (1u << l)))
      continue;
    const Thread &t = block.threads[warp * 32 + l];
    auto half = [&](uint32_t base, uint32_t e) { return halfToFloat(uint16_t(t.in[base + e / 2] >> (16 * (e % 2)))); };
    for (uint32_t e = 0; e < 16; ++e) {
      Coord ca = coordOf(LA_EMU_WMMA_A, l, e), cb = coordOf(LA_EMU_WMMA_B, l, e);
      a[ca.row][ca.col] = half(0, e);
      b[cb.row][cb.col] = half(8, e);
    }
    for (uint32_t e = 0; e < 8; ++e) {
      Coord cc = coordOf(LA_EMU_WMMA_C, l, e);
      acc[cc.row][cc.col] = f16Acc ? half(16, e) : bitsToFloat(t.in[16 + e]);
    }
  }
  for (uint32_t i = 0; i < 16; ++i)
    for (uint32_t j = 0; j < 16; ++j)
      for (uint32_t k = 0; k < 16; ++k)
        acc[i][j] += a[i][k] * b[k][j];
  for (uint32_t l = 0; l < 32; ++l) {
    if (!(c.arrived & (1u << l)))
      continue;
    Thread &t = block.threads[warp * 32 + l];
    std::fill(std::begin(t.out), std::end(t.out), 0);
    for (uint32_t e = 0; e < 8; ++e) {
      Coord cc = coordOf(LA_EMU_WMMA_C, l, e);
      if (f16Acc)
        t.out[e / 2] |= uint32_t(floatToHalf(acc[cc.row][cc.col])) << (16 * (e % 2));
      else
        t.out[e] = floatToBits(acc[cc.row][cc.col]);
    }
  }
}

// Loads and stores are per lane (each lane reads or writes its own elements), through the checked accesses.
static void access(bool store, uint32_t *frag, uint32_t which, int32_t colMajor, int32_t f32, uint32_t space,
                   uint64_t ptr, uint32_t stride, const char *loc) {
  Block &block = Block::current();
  Thread &t = block.self();
  uint32_t lane = block.lane(t), count = elementsOf(which);
  uint32_t bytes = which == LA_EMU_WMMA_C && f32 ? 4 : 2;
  if (!store)
    std::memset(frag, 0, count * bytes);
  for (uint32_t e = 0; e < count; ++e) {
    Coord c = coordOf(which, lane, e);
    uint64_t offset = uint64_t(colMajor ? c.col * stride + c.row : c.row * stride + c.col) * bytes;
    uint8_t *slot = reinterpret_cast<uint8_t *>(frag) + e * bytes; // f16 elements pack two per register
    if (space == LA_EMU_SPACE_SHARED) {
      if (store)
        block.storeShared(t, uint32_t(ptr + offset), slot, bytes, loc);
      else
        block.loadShared(t, slot, uint32_t(ptr + offset), bytes, loc);
    } else {
      auto *addr = reinterpret_cast<uint8_t *>(uintptr_t(ptr)) + offset;
      if (store)
        block.storeGlobal(t, addr, slot, bytes, loc);
      else
        block.loadGlobal(t, slot, addr, bytes, loc);
    }
  }
}

extern "C" {
void __la_emu_wmma_load(uint32_t *frag, uint32_t which, int32_t colMajor, int32_t f32, uint32_t space, uint64_t ptr,
                        uint32_t stride, const char *loc) {
  access(false, frag, which, colMajor, f32, space, ptr, stride, loc);
}

void __la_emu_wmma_store(const uint32_t *frag, int32_t colMajor, int32_t f32, uint32_t space, uint64_t ptr,
                         uint32_t stride, const char *loc) {
  access(true, const_cast<uint32_t *>(frag), LA_EMU_WMMA_C, colMajor, f32, space, ptr, stride, loc);
}

void __la_emu_wmma_mma(uint32_t *d, const uint32_t *a, const uint32_t *b, const uint32_t *c, int32_t f32,
                       const char *loc) {
  Block &block = Block::current();
  Thread &t = block.self();
  std::memcpy(t.in, a, 32);
  std::memcpy(t.in + 8, b, 32);
  std::memset(t.in + 16, 0, 32);
  std::memcpy(t.in + 16, c, f32 ? 32 : 16);
  block.collective(CollectiveKind::Wmma, f32 ? 0 : 1, ~0u, loc);
  std::memcpy(d, t.out, f32 ? 32 : 16);
}
} // extern "C"
