//===- ABI.cpp - The __la_emu_* entry points ------------------------------===//
//
// Each function finds the calling thread's block (a thread-local set by the block scheduler) and forwards.
//
//===----------------------------------------------------------------------===//
#include "la/emulator/ABI.h"

#include "Block.h"
#include "Half.h"

#include <algorithm>
#include <atomic>
#include <cstring>

using namespace la::emu;

static Block &block() { return Block::current(); }
static const LaunchConfig &config() { return Block::current().launch.config; }

extern "C" {
uint32_t __la_emu_tid_x(void) { return block().self().tid.x; }
uint32_t __la_emu_tid_y(void) { return block().self().tid.y; }
uint32_t __la_emu_tid_z(void) { return block().self().tid.z; }
uint32_t __la_emu_ntid_x(void) { return config().block.x; }
uint32_t __la_emu_ntid_y(void) { return config().block.y; }
uint32_t __la_emu_ntid_z(void) { return config().block.z; }
uint32_t __la_emu_ctaid_x(void) { return block().blockId.x; }
uint32_t __la_emu_ctaid_y(void) { return block().blockId.y; }
uint32_t __la_emu_ctaid_z(void) { return block().blockId.z; }
uint32_t __la_emu_nctaid_x(void) { return config().grid.x; }
uint32_t __la_emu_nctaid_y(void) { return config().grid.y; }
uint32_t __la_emu_nctaid_z(void) { return config().grid.z; }
uint32_t __la_emu_laneid(void) { return block().self().linear % 32; }
uint32_t __la_emu_warpid(void) { return block().self().linear / 32; }
uint32_t __la_emu_nwarpid(void) { return (config().block.count() + 31) / 32; }
uint32_t __la_emu_activemask(void) {
  Block &b = block();
  uint32_t w = b.warpOf(b.self());
  return b.existingLanes(w) & ~b.exitedLanes(w);
}

void __la_emu_barrier0(const char *loc) { block().barrier(0, 0, loc); }
void __la_emu_bar_sync(uint32_t id, uint32_t count, const char *loc) { block().barrier(id, count, loc); }
void __la_emu_bar_warp_sync(uint32_t membermask, const char *loc) {
  block().collective(CollectiveKind::WarpSync, 0, membermask, loc);
}

uint32_t __la_emu_shfl_sync(uint32_t mode, uint32_t membermask, uint32_t a, uint32_t b, uint32_t c, int32_t *pred,
                            const char *loc) {
  Block &blk = block();
  Thread &t = blk.self();
  t.in[0] = a;
  t.in[1] = b;
  t.in[2] = c;
  blk.collective(CollectiveKind::Shfl, mode & 3, membermask, loc);
  if (pred)
    *pred = t.pred;
  return t.out[0];
}

uint32_t __la_emu_vote_sync(uint32_t mode, uint32_t membermask, int32_t pred, const char *loc) {
  Block &blk = block();
  Thread &t = blk.self();
  t.in[0] = pred != 0;
  blk.collective(CollectiveKind::Vote, mode, membermask, loc);
  return t.out[0];
}

uint32_t __la_emu_redux_sync(uint32_t op, uint32_t membermask, uint32_t value, const char *loc) {
  Block &blk = block();
  Thread &t = blk.self();
  t.in[0] = value;
  blk.collective(CollectiveKind::Redux, op, membermask, loc);
  return t.out[0];
}

void __la_emu_ld_global(void *dst, const void *addr, uint32_t bytes, const char *loc) {
  Block &b = block();
  b.loadGlobal(b.self(), dst, addr, bytes, loc);
}
void __la_emu_st_global(void *addr, const void *src, uint32_t bytes, const char *loc) {
  Block &b = block();
  b.storeGlobal(b.self(), addr, src, bytes, loc);
}
void __la_emu_ld_shared(void *dst, uint32_t offset, uint32_t bytes, const char *loc) {
  Block &b = block();
  b.loadShared(b.self(), dst, offset, bytes, loc);
}
void __la_emu_st_shared(uint32_t offset, const void *src, uint32_t bytes, const char *loc) {
  Block &b = block();
  b.storeShared(b.self(), offset, src, bytes, loc);
}
} // extern "C"

// One atomic read-modify-write on 4 or 8 bytes, as a compare-and-swap loop: global memory is shared with the
// blocks on other OS threads.
template <typename Bits>
static uint64_t atomicRMW(void *addr, uint32_t op, uint32_t type, uint64_t value, uint64_t compare) {
  auto *word = static_cast<Bits *>(addr);
  auto apply = [&](Bits old) -> Bits {
    auto asF = [](Bits b) {
      if constexpr (sizeof(Bits) == 4)
        return double(bitsToFloat(b));
      double d;
      std::memcpy(&d, &b, 8);
      return d;
    };
    auto fromF = [](double d) -> Bits {
      if constexpr (sizeof(Bits) == 4)
        return floatToBits(float(d));
      Bits b;
      std::memcpy(&b, &d, 8);
      return b;
    };
    bool isFloat = type == LA_EMU_TYPE_F32 || type == LA_EMU_TYPE_F64;
    bool isSigned = type == LA_EMU_TYPE_S32 || type == LA_EMU_TYPE_S64;
    using S = std::make_signed_t<Bits>;
    Bits v = Bits(value);
    switch (op) {
    case LA_EMU_ATOM_ADD:
      if (isFloat) {
        if constexpr (sizeof(Bits) == 4)
          return floatToBits(bitsToFloat(old) + bitsToFloat(v));
        return fromF(asF(old) + asF(v));
      }
      return old + v;
    case LA_EMU_ATOM_MIN:
      if (isFloat)
        return asF(v) < asF(old) ? v : old;
      return isSigned ? Bits(std::min(S(old), S(v))) : std::min(old, v);
    case LA_EMU_ATOM_MAX:
      if (isFloat)
        return asF(v) > asF(old) ? v : old;
      return isSigned ? Bits(std::max(S(old), S(v))) : std::max(old, v);
    case LA_EMU_ATOM_EXCH:
      return v;
    case LA_EMU_ATOM_CAS:
      return old == Bits(compare) ? v : old;
    case LA_EMU_ATOM_AND:
      return old & v;
    case LA_EMU_ATOM_OR:
      return old | v;
    default:
      return old ^ v;
    }
  };
  Bits old = __atomic_load_n(word, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(word, &old, apply(old), /*weak=*/true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
  }
  return old;
}

static uint32_t atomBytes(uint32_t type) {
  return type == LA_EMU_TYPE_U64 || type == LA_EMU_TYPE_S64 || type == LA_EMU_TYPE_F64 ? 8 : 4;
}

extern "C" {
uint64_t __la_emu_atom_global(uint32_t op, uint32_t type, void *addr, uint64_t value, uint64_t compare,
                              const char *loc) {
  Block &b = block();
  ++b.counters.atomics;
  uint32_t bytes = atomBytes(type);
  uint64_t old = 0;
  if (void *p = b.globalForAtomic(b.self(), addr, bytes, loc))
    old = bytes == 4 ? atomicRMW<uint32_t>(p, op, type, value, compare)
                     : atomicRMW<uint64_t>(p, op, type, value, compare);
  b.yield(); // another thread's atomic may come first, in seed order
  return old;
}

uint64_t __la_emu_atom_shared(uint32_t op, uint32_t type, uint32_t offset, uint64_t value, uint64_t compare,
                              const char *loc) {
  Block &b = block();
  ++b.counters.atomics;
  uint32_t bytes = atomBytes(type);
  uint64_t old = 0;
  if (offset % bytes == 0)
    if (uint8_t *p = b.sharedForAtomic(b.self(), offset, bytes, true, loc))
      old = bytes == 4 ? atomicRMW<uint32_t>(p, op, type, value, compare)
                       : atomicRMW<uint64_t>(p, op, type, value, compare);
  b.yield();
  return old;
}

void __la_emu_fence(const char *loc) {
  (void)loc;
  Block &b = block();
  ++b.counters.fences;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  b.yield();
}

void __la_emu_ldmatrix(uint32_t *dst, uint32_t num, int32_t trans, uint32_t rowOffset, const char *loc) {
  Block &b = block();
  Thread &t = b.self();
  if (num != 1 && num != 2 && num != 4)
    llvm::report_fatal_error("GPU emulator: ldmatrix takes 1, 2 or 4 matrices");
  t.in[0] = rowOffset;
  b.collective(CollectiveKind::Ldmatrix, num | (trans ? 8 : 0), ~0u, loc);
  std::memcpy(dst, t.out, num * 4);
}

// The fragments go to Thread::in as runMma reads them: a in[0..3], b in[4..5], c in[6..9].
static void mma(CollectiveKind kind, float *d, const uint32_t *a, uint32_t aRegs, const uint32_t *bfrag, uint32_t bRegs,
                const float *c, const char *loc) {
  Block &b = block();
  Thread &t = b.self();
  std::fill(std::begin(t.in), std::end(t.in), 0);
  std::memcpy(t.in, a, aRegs * 4);
  std::memcpy(t.in + 4, bfrag, bRegs * 4);
  std::memcpy(t.in + 6, c, 16);
  b.collective(kind, 0, ~0u, loc);
  std::memcpy(d, t.out, 16);
}

void __la_emu_mma_m16n8k16_f32_f16(float *d, const uint32_t *a, const uint32_t *b, const float *c, const char *loc) {
  mma(CollectiveKind::MmaF16, d, a, 4, b, 2, c, loc);
}
void __la_emu_mma_m16n8k16_f32_bf16(float *d, const uint32_t *a, const uint32_t *b, const float *c, const char *loc) {
  mma(CollectiveKind::MmaBF16, d, a, 4, b, 2, c, loc);
}
void __la_emu_mma_m16n8k8_f32_f16(float *d, const uint32_t *a, const uint32_t *b, const float *c, const char *loc) {
  mma(CollectiveKind::MmaK8F16, d, a, 2, b, 1, c, loc);
}
void __la_emu_mma_m16n8k8_f32_tf32(float *d, const uint32_t *a, const uint32_t *b, const float *c, const char *loc) {
  mma(CollectiveKind::MmaK8TF32, d, a, 4, b, 2, c, loc);
}

void __la_emu_cp_async(uint32_t sharedDst, const void *globalSrc, uint32_t bytes, uint32_t srcBytes, const char *loc) {
  Block &b = block();
  b.cpAsync(b.self(), sharedDst, globalSrc, bytes, srcBytes, loc);
}
void __la_emu_cp_async_commit_group(void) {
  Block &b = block();
  b.cpAsyncCommit(b.self());
}
void __la_emu_cp_async_wait_group(uint32_t n, const char *loc) {
  (void)loc;
  Block &b = block();
  b.cpAsyncWait(b.self(), n);
}
void __la_emu_cp_async_wait_all(const char *loc) {
  (void)loc;
  Block &b = block();
  b.cpAsyncCommit(b.self());
  b.cpAsyncWait(b.self(), 0);
}

void __la_emu_count_fma(uint64_t n) { block().counters.fma += n; }
} // extern "C"
