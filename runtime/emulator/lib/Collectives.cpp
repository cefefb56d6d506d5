//===- Collectives.cpp - Warp collectives: gather, compute, release -------===//
//
// A collective gathers the lanes of its membermask: each lane deposits its operands and parks; the last one
// to arrive (or the scheduler, when a missing lane exits: PTX waits only for non-exited lanes) computes
// every lane's result from the PTX ISA's definition and releases them. Lanes that reach different
// collectives (another kind, operation or membermask) wait in different groups, so a warp that diverges
// around a collective deadlocks here as it would on the GPU, and the deadlock report says where.
//
//===----------------------------------------------------------------------===//
#include "Block.h"
#include "TensorCore.h"

#include "la/emulator/ABI.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace la::emu;

bool Block::collective(CollectiveKind kind, uint32_t op, uint32_t mask, const char *loc) {
  Thread &t = self();
  std::fill(std::begin(t.out), std::end(t.out), 0);
  t.pred = 0;
  if (draining)
    return false;
  uint32_t w = warpOf(t), bit = 1u << lane(t);
  if (!(mask & bit)) {
    findings.add({FindingKind::DivergentWarpCollective,
                  llvm::formatv("(lane {0} is not in its membermask {1:x8})", lane(t), mask).str(),
                  {site(t, loc, "calls the collective")}});
    mask |= bit;
  }
  std::vector<Collective> &list = pending[w];
  auto it = llvm::find_if(list, [&](const Collective &c) { return c.kind == kind && c.op == op && c.mask == mask; });
  if (it == list.end()) {
    list.push_back(Collective{kind, op, mask, 0, loc});
    it = list.end() - 1;
  }
  it->arrived |= bit;
  t.wait = Wait::Collective;
  t.waitLoc = loc;
  t.waitId = mask;
  tryCompleteCollectives(w);
  if (t.wait == Wait::Collective)
    park();
  if (draining) { // released by a deadlock, not by the other lanes
    std::fill(std::begin(t.out), std::end(t.out), 0);
    t.pred = 0;
    return false;
  }
  return true;
}

void Block::tryCompleteCollectives(uint32_t w) {
  std::vector<Collective> &list = pending[w];
  for (size_t i = 0; i < list.size();) {
    Collective &c = list[i];
    if (((c.arrived | exitedLanes(w)) & c.mask) != c.mask) {
      ++i;
      continue;
    }
    Collective done = c;
    list.erase(list.begin() + i);
    complete(done, w);
    i = 0;
  }
}

// shfl.sync's source lane, from the PTX ISA's pseudocode: never wraps around; out of range reads the
// lane's own value and clears the predicate.
static uint32_t shflSource(uint32_t mode, uint32_t lane, uint32_t b, uint32_t c, bool &pval) {
  uint32_t bval = b & 0x1f, cval = c & 0x1f, segmask = (c >> 8) & 0x1f;
  int32_t maxLane = (lane & segmask) | (cval & ~segmask);
  int32_t minLane = lane & segmask;
  int32_t j = lane;
  switch (mode) {
  case LA_EMU_SHFL_UP:
    j = int32_t(lane) - int32_t(bval);
    pval = j >= maxLane;
    break;
  case LA_EMU_SHFL_DOWN:
    j = int32_t(lane + bval);
    pval = j <= maxLane;
    break;
  case LA_EMU_SHFL_BFLY:
    j = int32_t(lane ^ bval);
    pval = j <= maxLane;
    break;
  default: // idx
    j = minLane | int32_t(bval & ~segmask);
    pval = j <= maxLane;
    break;
  }
  return pval ? uint32_t(j) : lane;
}

void Block::complete(Collective &c, uint32_t w) {
  auto laneThread = [&](uint32_t l) -> Thread & { return threads[w * 32 + l]; };
  auto forArrived = [&](auto fn) {
    for (uint32_t l = 0; l < 32; ++l)
      if (c.arrived & (1u << l))
        fn(l, laneThread(l));
  };
  switch (c.kind) {
  case CollectiveKind::Shfl:
    ++counters.shuffles;
    forArrived([&](uint32_t l, Thread &t) {
      bool pval = false;
      uint32_t j = shflSource(c.op, l, t.in[1], t.in[2], pval);
      // PTX: the value from a source lane that is not active is unpredictable; the emulator gives 0.
      t.out[0] = (c.arrived & (1u << j)) ? laneThread(j).in[0] : 0;
      t.pred = pval;
    });
    break;
  case CollectiveKind::Vote: {
    ++counters.votes;
    uint32_t ballot = 0;
    forArrived([&](uint32_t l, Thread &t) { ballot |= (t.in[0] ? 1u : 0u) << l; });
    uint32_t result = 0;
    switch (c.op) {
    case LA_EMU_VOTE_ALL:
      result = ballot == c.arrived;
      break;
    case LA_EMU_VOTE_ANY:
      result = ballot != 0;
      break;
    case LA_EMU_VOTE_UNI:
      result = ballot == 0 || ballot == c.arrived;
      break;
    default:
      result = ballot;
    }
    forArrived([&](uint32_t, Thread &t) {
      t.out[0] = result;
      t.pred = result != 0;
    });
    break;
  }
  case CollectiveKind::Redux: {
    ++counters.reductions;
    bool first = true;
    uint32_t acc = 0;
    forArrived([&](uint32_t, Thread &t) {
      uint32_t v = t.in[0];
      if (first) {
        acc = v;
        first = false;
        return;
      }
      switch (c.op) {
      case LA_EMU_REDUX_ADD:
        acc += v;
        break;
      case LA_EMU_REDUX_UMIN:
        acc = std::min(acc, v);
        break;
      case LA_EMU_REDUX_UMAX:
        acc = std::max(acc, v);
        break;
      case LA_EMU_REDUX_MIN:
        acc = uint32_t(std::min(int32_t(acc), int32_t(v)));
        break;
      case LA_EMU_REDUX_MAX:
        acc = uint32_t(std::max(int32_t(acc), int32_t(v)));
        break;
      case LA_EMU_REDUX_AND:
        acc &= v;
        break;
      case LA_EMU_REDUX_OR:
        acc |= v;
        break;
      default:
        acc ^= v;
      }
    });
    forArrived([&](uint32_t, Thread &t) { t.out[0] = acc; });
    break;
  }
  case CollectiveKind::WarpSync: {
    ++counters.warpSyncs;
    // Orders the shared accesses of the lanes that took part (Memory.cpp, warpOrdered).
    uint32_t seq = ++warpSyncSeq[w];
    forArrived([&](uint32_t, Thread &t) { t.lastWarpSync = seq; });
    break;
  }
  case CollectiveKind::Ldmatrix:
    ++counters.ldmatrix;
    runLdmatrix(*this, c, w);
    break;
  case CollectiveKind::MmaF16:
  case CollectiveKind::MmaBF16:
  case CollectiveKind::MmaK8F16:
  case CollectiveKind::MmaK8TF32: {
    bool k8 = c.kind == CollectiveKind::MmaK8F16 || c.kind == CollectiveKind::MmaK8TF32;
    ++counters.mmaSync;
    counters.mmaFlops += 2 * 16 * 8 * (k8 ? 8 : 16);
    runMma(*this, c, w);
    break;
  }
  case CollectiveKind::Wmma:
    ++counters.mmaSync;
    counters.mmaFlops += 2 * 16 * 16 * 16;
    runWmma(*this, c, w);
    break;
  }
  forArrived([&](uint32_t, Thread &t) {
    if (running == &t)
      t.wait = Wait::None;
    else
      makeRunnable(t.linear);
  });
}
