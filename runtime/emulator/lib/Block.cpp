//===- Block.cpp - Scheduling a block's fibers, barriers, deadlocks -------===//
#include "Block.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace la::emu;

static thread_local Block *currentBlock = nullptr;

Block &Block::current() {
  if (!currentBlock)
    llvm::report_fatal_error("GPU emulator: an __la_emu_* function was called outside a launch");
  return *currentBlock;
}

Block::Block(const LaunchContext &launch, Dim3 blockId, uint64_t seed)
    : launch(launch), blockId(blockId), rng(seed), shuffled(launch.config.seed != 0) {
  const LaunchConfig &config = launch.config;
  uint32_t count = config.block.count();
  threads.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    Thread &t = threads[i];
    t.linear = i;
    t.tid = {i % config.block.x, i / config.block.x % config.block.y, i / (config.block.x * config.block.y)};
  }
  pending.resize((count + 31) / 32);
  warpSyncSeq.assign(pending.size(), 0);
  shared.assign(config.sharedBytes, 0);
  shadow.assign(config.sharedBytes, ShadowByte());
}

static bool sameLoc(const char *a, const char *b) { return llvm::StringRef(a ? a : "") == llvm::StringRef(b ? b : ""); }

void Block::threadMain(void *arg) {
  // The launch's kernel is the body of every thread.
  static_cast<Block *>(arg)->launch.kernel();
}

void Block::run() {
  Block *outer = currentBlock;
  currentBlock = this;
  for (Thread &t : threads) {
    t.fiber = std::make_unique<Fiber>(launch.config.stackBytes, threadMain, this);
    runnable.push_back(t.linear);
  }
  while (exited < threads.size()) {
    if (runnable.empty()) {
      // Nothing can run, yet threads wait: report where, then let every wait return so the fibers finish.
      reportDeadlock();
      draining = true;
      for (Thread &t : threads)
        if (t.wait == Wait::Barrier || t.wait == Wait::Collective) {
          t.wait = Wait::None;
          runnable.push_back(t.linear);
        }
      for (Barrier &b : barriers)
        b.waiters.clear();
      for (auto &list : pending)
        list.clear();
      continue;
    }
    uint32_t next;
    if (shuffled) {
      size_t i = rng() % runnable.size();
      next = runnable[i];
      runnable.erase(runnable.begin() + i);
    } else {
      next = runnable.front();
      runnable.pop_front();
    }
    Thread &t = threads[next];
    running = &t;
    t.fiber->resume();
    running = nullptr;
    if (t.fiber->finished())
      onExit(t);
  }
  threads.clear(); // unmaps the stacks
  currentBlock = outer;
}

void Block::makeRunnable(uint32_t linear) {
  threads[linear].wait = Wait::None;
  runnable.push_back(linear);
}

void Block::park() { running->fiber->suspend(); }

void Block::yield() {
  runnable.push_back(running->linear);
  park();
}

ThreadSite Block::site(const Thread &t, const char *loc, std::string what) const {
  return ThreadSite{blockId, t.tid, loc ? loc : "", std::move(what)};
}

uint32_t Block::existingLanes(uint32_t w) const {
  uint32_t n = std::min<uint32_t>(32, threads.size() - w * 32);
  return n == 32 ? ~0u : (1u << n) - 1;
}

uint32_t Block::exitedLanes(uint32_t w) const {
  uint32_t mask = ~existingLanes(w); // lanes past the end of the block never arrive either
  for (uint32_t l = 0; l < 32 && w * 32 + l < threads.size(); ++l)
    if (threads[w * 32 + l].wait == Wait::Exited)
      mask |= 1u << l;
  return mask;
}

void Block::onExit(Thread &t) {
  t.wait = Wait::Exited;
  ++exited;
  // Copies still in flight land before the thread is gone.
  cpAsyncCommit(t);
  cpAsyncWait(t, 0);
  // A block-wide barrier counts exited threads as arrived; a collective waits only for non-exited lanes.
  for (uint32_t id = 0; id < 16; ++id)
    if (!barriers[id].waiters.empty())
      tryCompleteBarrier(id);
  tryCompleteCollectives(warpOf(t));
}

void Block::barrier(uint32_t id, uint32_t count, const char *loc) {
  if (draining)
    return;
  Thread &t = self();
  if (id >= 16) {
    findings.add({FindingKind::DivergentBarrier,
                  llvm::formatv("(barrier id {0} out of range 0..15)", id).str(),
                  {site(t, loc, "bar.sync")}});
    return;
  }
  uint32_t expected = count ? count : threads.size();
  Barrier &b = barriers[id];
  if (b.waiters.empty()) {
    b.expected = expected;
    b.wholeBlock = count == 0;
  } else if (b.expected != expected) {
    const Thread &first = threads[b.waiters.front()];
    findings.add({FindingKind::DivergentBarrier,
                  llvm::formatv("(barrier {0} reached with thread counts {1} and {2})", id, b.expected, expected).str(),
                  {site(first, first.waitLoc, "waits at barrier"), site(t, loc, "arrives at barrier")}});
  }
  t.wait = Wait::Barrier;
  t.waitLoc = loc;
  t.waitId = id;
  b.waiters.push_back(t.linear);
  tryCompleteBarrier(id);
  if (t.wait == Wait::Barrier)
    park();
}

void Block::tryCompleteBarrier(uint32_t id) {
  Barrier &b = barriers[id];
  bool wholeBlock = b.wholeBlock;
  // PTX: a barrier for the whole block completes when every thread arrived or exited; a counted barrier when
  // `count` threads arrived.
  uint32_t arrived = b.waiters.size() + (wholeBlock ? exited : 0);
  if (b.waiters.empty() || arrived < b.expected)
    return;
  // Every waiter should have come from the same barrier: threads at different barriers or threads that
  // exited mean the kernel's barrier sits in divergent code.
  bool divergent = wholeBlock && exited > 0;
  for (uint32_t w : b.waiters)
    divergent |= !sameLoc(threads[w].waitLoc, threads[b.waiters.front()].waitLoc);
  if (divergent) {
    Finding f{FindingKind::DivergentBarrier, llvm::formatv("(barrier {0})", id).str(), {}};
    // One thread per distinct place, then one that exited.
    llvm::SmallVector<const char *, 4> seen;
    for (uint32_t w : b.waiters) {
      const Thread &t = threads[w];
      if (llvm::none_of(seen, [&](const char *l) { return sameLoc(l, t.waitLoc); })) {
        seen.push_back(t.waitLoc);
        f.sites.push_back(site(t, t.waitLoc, "reaches the barrier"));
      }
    }
    if (wholeBlock && exited > 0)
      for (const Thread &t : threads)
        if (t.wait == Wait::Exited) {
          f.sites.push_back(site(t, nullptr, "exited without reaching it"));
          break;
        }
    findings.add(std::move(f));
  }
  ++counters.barriers;
  ++epoch;
  llvm::SmallVector<uint32_t, 32> released(b.waiters.begin(),
                                           b.waiters.begin() + std::min<size_t>(b.waiters.size(), b.expected));
  b.waiters.erase(b.waiters.begin(), b.waiters.begin() + released.size());
  for (uint32_t w : released)
    if (running && w == running->linear)
      running->wait = Wait::None; // the last arrival goes on without parking
    else
      makeRunnable(w);
}

void Block::reportDeadlock() {
  Finding f{FindingKind::Deadlock, "", {}};
  uint32_t listed = 0, waiting = 0;
  for (const Thread &t : threads) {
    if (t.wait != Wait::Barrier && t.wait != Wait::Collective)
      continue;
    ++waiting;
    if (listed++ >= 64)
      continue;
    std::string what = t.wait == Wait::Barrier
                           ? llvm::formatv("waits at barrier {0}", t.waitId).str()
                           : llvm::formatv("waits in a warp collective (membermask {0:x8})", t.waitId).str();
    f.sites.push_back(site(t, t.waitLoc, what));
  }
  f.detail = llvm::formatv("({0} threads waiting, {1} exited{2})", waiting, exited,
                           waiting > 64 ? "; the first 64 listed" : "")
                 .str();
  findings.add(std::move(f));
}
