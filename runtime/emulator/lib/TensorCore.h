//===- TensorCore.h - ldmatrix and mma.sync over a gathered warp ----------===//
//
// Called by the last lane to arrive at the collective: every lane's operands are in Thread::in, and each
// lane's results go to Thread::out, with the fragment layouts of the PTX ISA ("Matrix fragments for
// mma.m16n8k16", "Warp-level matrix load instruction: ldmatrix").
//
//===----------------------------------------------------------------------===//
#ifndef LA_EMULATOR_LIB_TENSORCORE_H
#define LA_EMULATOR_LIB_TENSORCORE_H

#include <cstdint>

namespace la::emu {
class Block;
struct Collective;

/// ldmatrix.m8n8.x{op & 7}, .trans when op & 8; lane l's in[0] is its row offset.
void runLdmatrix(Block &block, const Collective &c, uint32_t warp);
/// mma.sync.m16n8k{16,8} f32 += {f16|bf16|tf32}: in[0..3] a, in[4..5] b, in[6..9] c (f32 bits), unused
/// registers of the smaller fragments zero; out[0..3] d.
void runMma(Block &block, const Collective &c, uint32_t warp);
/// wmma.mma.sync m16n16k16 with f16 inputs in the emulator's fragment layout (Wmma.cpp): in[0..7] a,
/// in[8..15] b, in[16..23] c; out[0..7] d.
void runWmma(Block &block, const Collective &c, uint32_t warp);
} // namespace la::emu

#endif // LA_EMULATOR_LIB_TENSORCORE_H
