//===- Block.h - One thread block running on one OS thread ----------------===//
//
// A Block owns the fibers of its CUDA threads, its shared-memory arena with the race detector's shadow, its
// barriers and its warps' pending collectives. Its scheduler resumes runnable threads one at a time (in
// thread order, or in an order drawn from the launch seed); a thread runs until it parks at a barrier or a
// warp collective, yields at an atomic or fence, or exits. When nothing is runnable and threads still wait,
// the block has deadlocked: the finding lists where each waits, and the block is drained (every wait returns
// at once and memory accesses do nothing) so each fiber runs to its end.
//
//===----------------------------------------------------------------------===//
#ifndef LA_EMULATOR_LIB_BLOCK_H
#define LA_EMULATOR_LIB_BLOCK_H

#include "Fiber.h"
#include "Findings.h"

#include "la/emulator/Launch.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <vector>

namespace la::emu {

/// What the whole launch shares between blocks (read-only while blocks run).
struct LaunchContext {
  const Kernel &kernel;
  const LaunchConfig &config;
  std::vector<Buffer> buffers; // sorted by address
};

enum class Wait { None, Barrier, Collective, Exited };

/// The warp collectives; a pending collective gathers the lanes of one membermask and one kind.
enum class CollectiveKind {
  Shfl,
  Vote,
  Redux,
  WarpSync,
  Ldmatrix,
  MmaF16,    // m16n8k16 f16
  MmaBF16,   // m16n8k16 bf16
  MmaK8F16,  // m16n8k8 f16
  MmaK8TF32, // m16n8k8 tf32
  Wmma,      // wmma.mma m16n16k16 f16 inputs; op: 1 when C/D are f16
};

struct PendingCopy {
  uint32_t sharedDst;
  const void *globalSrc;
  uint32_t bytes, srcBytes;
  const char *loc;
};

struct Thread {
  std::unique_ptr<Fiber> fiber;
  uint32_t linear = 0; // x + y*ntid.x + z*ntid.x*ntid.y
  Dim3 tid;
  Wait wait = Wait::None;
  const char *waitLoc = nullptr;
  uint32_t waitId = 0; // the barrier id, or the collective's membermask
  // A collective's operands (deposited on arrival) and this lane's results (written by the last lane).
  uint32_t op = 0;
  uint32_t in[24] = {};
  uint32_t out[8] = {};
  int32_t pred = 0;
  // cp.async: copies not yet committed, and committed groups oldest first.
  std::vector<PendingCopy> uncommitted;
  std::deque<std::vector<PendingCopy>> groups;
  // The warp's bar.warp.sync sequence number at the last one this lane took part in.
  uint32_t lastWarpSync = 0;
};

struct Barrier {
  llvm::SmallVector<uint32_t, 32> waiters; // linear thread ids, in arrival order
  uint32_t expected = 0;
  bool wholeBlock = false; // no count: every thread of the block, and exited threads count as arrived
};

struct Collective {
  CollectiveKind kind;
  uint32_t op; // mode / operation / x-count of the kind
  uint32_t mask;
  uint32_t arrived = 0;
  const char *loc;
};

/// The race detector's record of one shared byte. An access is also stamped with its warp's bar.warp.sync
/// sequence number, so accesses of two lanes separated by a warp sync both took part in are ordered.
struct ShadowByte {
  uint32_t writeEpoch = 0, readEpoch = 0;
  int32_t writer = -1, reader0 = -1, reader1 = -1, asyncOwner = -1;
  uint32_t writeWarpSeq = 0, readWarpSeq0 = 0, readWarpSeq1 = 0;
  const char *writeLoc = nullptr, *readLoc0 = nullptr, *readLoc1 = nullptr, *asyncLoc = nullptr;
  bool written = false;
};

class Block {
public:
  Block(const LaunchContext &launch, Dim3 blockId, uint64_t seed);
  /// Runs every thread to its end; findings and counters are then in `findings` and `counters`.
  void run();

  /// The block and thread of the calling fiber (aborts outside a launch).
  static Block &current();
  Thread &self() { return *running; }

  // Barriers (Block.cpp).
  void barrier(uint32_t id, uint32_t count, const char *loc);
  /// Atomics and fences: let the other threads run first (in seed order).
  void yield();

  // Warp collectives (Collectives.cpp): deposits the caller's operands (already in self().in), waits for
  // the lanes of `mask`, and returns when self().out holds the result. False when the block is drained.
  bool collective(CollectiveKind kind, uint32_t op, uint32_t mask, const char *loc);

  // Memory (Memory.cpp).
  void loadGlobal(Thread &t, void *dst, const void *addr, uint32_t bytes, const char *loc);
  void storeGlobal(Thread &t, void *addr, const void *src, uint32_t bytes, const char *loc);
  void loadShared(Thread &t, void *dst, uint32_t offset, uint32_t bytes, const char *loc);
  void storeShared(Thread &t, uint32_t offset, const void *src, uint32_t bytes, const char *loc);
  /// Bounds-checked shared address for an atomic (null when out of bounds).
  uint8_t *sharedForAtomic(Thread &t, uint32_t offset, uint32_t bytes, bool store, const char *loc);
  /// Bounds-checked global address for an atomic (null when out of bounds).
  void *globalForAtomic(Thread &t, void *addr, uint32_t bytes, const char *loc);
  void cpAsync(Thread &t, uint32_t dst, const void *src, uint32_t bytes, uint32_t srcBytes, const char *loc);
  void cpAsyncCommit(Thread &t);
  void cpAsyncWait(Thread &t, uint32_t pendingGroups);

  ThreadSite site(const Thread &t, const char *loc, std::string what) const;
  uint32_t lane(const Thread &t) const { return t.linear % 32; }
  uint32_t warpOf(const Thread &t) const { return t.linear / 32; }
  /// The lanes of warp w that exist and have exited.
  uint32_t exitedLanes(uint32_t w) const;
  uint32_t existingLanes(uint32_t w) const;

  const LaunchContext &launch;
  Dim3 blockId;
  std::vector<Thread> threads;
  FindingSink findings;
  Counters counters;
  /// After a deadlock: waits return at once, memory accesses do nothing, no more findings.
  bool draining = false;

private:
  static void threadMain(void *arg);
  void makeRunnable(uint32_t linear);
  void park();
  void onExit(Thread &t);
  void tryCompleteBarrier(uint32_t id);
  void tryCompleteCollectives(uint32_t warp);
  void complete(Collective &c, uint32_t warp);
  void reportDeadlock();
  void checkSharedAccess(Thread &t, uint32_t offset, uint32_t bytes, bool store, const char *loc);
  bool sharedInBounds(Thread &t, uint32_t offset, uint32_t bytes, bool store, const char *loc);
  const Buffer *findBuffer(const void *addr, uint32_t bytes) const;

  Thread *running = nullptr;
  std::deque<uint32_t> runnable;
  std::mt19937_64 rng;
  bool shuffled;
  uint32_t exited = 0;
  Barrier barriers[16];
  std::vector<std::vector<Collective>> pending; // per warp
  std::vector<uint8_t> shared;
  std::vector<ShadowByte> shadow;
  uint32_t epoch = 1;                // advanced by every completed block barrier
  std::vector<uint32_t> warpSyncSeq; // per warp: completed bar.warp.sync
  /// Whether thread `before`'s access, stamped `seq`, is ordered before thread `after`'s access now (same
  /// barrier epoch): same thread, or same warp and both lanes took part in a warp sync since.
  bool warpOrdered(int32_t before, uint32_t seq, const Thread &after) const;
};

} // namespace la::emu

#endif // LA_EMULATOR_LIB_BLOCK_H
