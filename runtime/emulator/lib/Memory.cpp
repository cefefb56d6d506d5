//===- Memory.cpp - Checked global and shared accesses, cp.async ----------===//
//
// Global accesses are checked against the launch's buffers. Shared accesses go to the block's arena, with
// one shadow record per byte (a word would flag two threads writing the two halves of one f16 pair): the
// barrier epoch and thread of the last write, up to two readers of the current epoch, whether anything
// wrote it in this launch, and a cp.async whose wait has not returned yet. Two accesses of different
// threads to one byte in one barrier epoch, at least one a write, are a race.
//
//===----------------------------------------------------------------------===//
#include "Block.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cstring>

using namespace la::emu;

const Buffer *Block::findBuffer(const void *addr, uint32_t bytes) const {
  auto p = reinterpret_cast<uintptr_t>(addr);
  const std::vector<Buffer> &buffers = launch.buffers;
  // The last buffer that starts at or before addr is the only one that can hold it.
  auto it = std::upper_bound(buffers.begin(), buffers.end(), p,
                             [](uintptr_t v, const Buffer &b) { return v < reinterpret_cast<uintptr_t>(b.data); });
  if (it == buffers.begin())
    return nullptr;
  --it;
  uintptr_t base = reinterpret_cast<uintptr_t>(it->data);
  return p + bytes <= base + it->bytes ? &*it : nullptr;
}

static std::string describeGlobal(const std::vector<Buffer> &buffers, const void *addr, uint32_t bytes) {
  // Name the nearest buffer, so "one past the end of C" reads as such.
  auto p = reinterpret_cast<intptr_t>(addr);
  const Buffer *nearest = nullptr;
  intptr_t best = INTPTR_MAX, offset = 0;
  for (const Buffer &b : buffers) {
    intptr_t base = reinterpret_cast<intptr_t>(b.data), d = p < base ? base - p : p - (base + intptr_t(b.bytes));
    if (d < best) {
      best = d;
      nearest = &b;
      offset = p - base;
    }
  }
  if (!nearest)
    return llvm::formatv("({0} bytes at {1}; no buffers)", bytes, addr).str();
  return llvm::formatv("({0} bytes at byte offset {1} of '{2}', {3} bytes long)", bytes, offset, nearest->name,
                       nearest->bytes)
      .str();
}

void Block::loadGlobal(Thread &t, void *dst, const void *addr, uint32_t bytes, const char *loc) {
  if (draining || !findBuffer(addr, bytes)) {
    if (!draining)
      findings.add(
          {FindingKind::OutOfBoundsGlobalLoad, describeGlobal(launch.buffers, addr, bytes), {site(t, loc, "load")}});
    std::memset(dst, 0, bytes);
    return;
  }
  std::memcpy(dst, addr, bytes);
  counters.globalBytesLoaded += bytes;
}

void Block::storeGlobal(Thread &t, void *addr, const void *src, uint32_t bytes, const char *loc) {
  if (draining)
    return;
  if (!findBuffer(addr, bytes)) {
    findings.add(
        {FindingKind::OutOfBoundsGlobalStore, describeGlobal(launch.buffers, addr, bytes), {site(t, loc, "store")}});
    return;
  }
  std::memcpy(addr, src, bytes);
  counters.globalBytesStored += bytes;
}

void *Block::globalForAtomic(Thread &t, void *addr, uint32_t bytes, const char *loc) {
  if (draining)
    return nullptr;
  if (!findBuffer(addr, bytes)) {
    findings.add(
        {FindingKind::OutOfBoundsGlobalStore, describeGlobal(launch.buffers, addr, bytes), {site(t, loc, "atomic")}});
    return nullptr;
  }
  counters.globalBytesLoaded += bytes;
  counters.globalBytesStored += bytes;
  return addr;
}

bool Block::sharedInBounds(Thread &t, uint32_t offset, uint32_t bytes, bool store, const char *loc) {
  if (uint64_t(offset) + bytes <= shared.size())
    return true;
  findings.add(
      {store ? FindingKind::OutOfBoundsSharedStore : FindingKind::OutOfBoundsSharedLoad,
       llvm::formatv("({0} bytes at shared offset {1}; the block has {2} bytes)", bytes, offset, shared.size()).str(),
       {site(t, loc, store ? "store" : "load")}});
  return false;
}

static std::string sharedAt(uint32_t offset) { return llvm::formatv("at shared[{0}]", offset).str(); }

bool Block::warpOrdered(int32_t before, uint32_t seq, const Thread &after) const {
  if (before == int32_t(after.linear))
    return true;
  const Thread &b = threads[before];
  return warpOf(b) == warpOf(after) && b.lastWarpSync > seq && after.lastWarpSync > seq;
}

void Block::checkSharedAccess(Thread &t, uint32_t offset, uint32_t bytes, bool store, const char *loc) {
  int32_t me = t.linear;
  // One finding of each kind per access, at its first byte that shows it.
  bool raw = false, war = false, waw = false, uninit = false, early = false;
  for (uint32_t i = offset; i < offset + bytes; ++i) {
    ShadowByte &s = shadow[i];
    if (s.asyncOwner >= 0 && !early) {
      early = true;
      findings.add({FindingKind::CpAsyncReadBeforeWait,
                    sharedAt(i),
                    {site(threads[s.asyncOwner], s.asyncLoc, "cp.async"), site(t, loc, store ? "write" : "read")}});
    }
    uint32_t mySeq = warpSyncSeq[warpOf(t)];
    bool writtenNow = s.writeEpoch == epoch && s.writer >= 0 && !warpOrdered(s.writer, s.writeWarpSeq, t);
    if (!store) {
      if (!s.written && !uninit && s.asyncOwner < 0) {
        uninit = true;
        findings.add({FindingKind::UninitialisedSharedRead, sharedAt(i), {site(t, loc, "read")}});
      }
      if (writtenNow && !raw) {
        raw = true;
        findings.add({FindingKind::SharedRaceRAW,
                      sharedAt(i),
                      {site(threads[s.writer], s.writeLoc, "write"), site(t, loc, "read")}});
      }
      // Keep up to two readers of this epoch that a later write could race with: a reader ordered before
      // this one (itself, or a lane synchronised since) gives its slot up.
      if (s.readEpoch != epoch) {
        s.readEpoch = epoch;
        s.reader1 = -1;
        s.reader0 = -1;
      }
      if (s.reader0 < 0 || warpOrdered(s.reader0, s.readWarpSeq0, t)) {
        s.reader0 = me;
        s.readLoc0 = loc;
        s.readWarpSeq0 = mySeq;
      } else if (s.reader1 < 0 || warpOrdered(s.reader1, s.readWarpSeq1, t)) {
        s.reader1 = me;
        s.readLoc1 = loc;
        s.readWarpSeq1 = mySeq;
      }
      continue;
    }
    if (writtenNow && !waw) {
      waw = true;
      findings.add({FindingKind::SharedRaceWAW,
                    sharedAt(i),
                    {site(threads[s.writer], s.writeLoc, "write"), site(t, loc, "write")}});
    }
    if (s.readEpoch == epoch && !war) {
      bool race0 = s.reader0 >= 0 && !warpOrdered(s.reader0, s.readWarpSeq0, t);
      bool race1 = s.reader1 >= 0 && !warpOrdered(s.reader1, s.readWarpSeq1, t);
      if (race0 || race1) {
        war = true;
        findings.add({FindingKind::SharedRaceWAR,
                      sharedAt(i),
                      {site(threads[race0 ? s.reader0 : s.reader1], race0 ? s.readLoc0 : s.readLoc1, "read"),
                       site(t, loc, "write")}});
      }
    }
    s.writeEpoch = epoch;
    s.writeWarpSeq = mySeq;
    s.writer = me;
    s.writeLoc = loc;
    s.written = true;
  }
}

void Block::loadShared(Thread &t, void *dst, uint32_t offset, uint32_t bytes, const char *loc) {
  if (draining || !sharedInBounds(t, offset, bytes, false, loc)) {
    std::memset(dst, 0, bytes);
    return;
  }
  checkSharedAccess(t, offset, bytes, false, loc);
  std::memcpy(dst, shared.data() + offset, bytes);
  counters.sharedBytesLoaded += bytes;
}

void Block::storeShared(Thread &t, uint32_t offset, const void *src, uint32_t bytes, const char *loc) {
  if (draining || !sharedInBounds(t, offset, bytes, true, loc))
    return;
  checkSharedAccess(t, offset, bytes, true, loc);
  std::memcpy(shared.data() + offset, src, bytes);
  counters.sharedBytesStored += bytes;
}

uint8_t *Block::sharedForAtomic(Thread &t, uint32_t offset, uint32_t bytes, bool store, const char *loc) {
  if (draining || !sharedInBounds(t, offset, bytes, store, loc))
    return nullptr;
  // Atomics never race with each other; they still initialise the bytes for the uninitialised-read check.
  for (uint32_t i = offset; i < offset + bytes; ++i)
    shadow[i].written = true;
  counters.sharedBytesLoaded += bytes;
  counters.sharedBytesStored += bytes;
  return shared.data() + offset;
}

void Block::cpAsync(Thread &t, uint32_t dst, const void *src, uint32_t bytes, uint32_t srcBytes, const char *loc) {
  if (draining || !sharedInBounds(t, dst, bytes, true, loc))
    return;
  if (srcBytes > bytes)
    srcBytes = bytes;
  // PTX: both addresses aligned to the copy's size (4, 8 or 16 bytes); a GPU faults otherwise. The shared
  // offset stands for the address: the shared window is aligned far more coarsely than 16 bytes.
  if (dst % bytes != 0 || reinterpret_cast<uintptr_t>(src) % bytes != 0) {
    findings.add({FindingKind::MisalignedCpAsync,
                  llvm::formatv("({0} bytes from global {1} to shared offset {2})", bytes, src, dst).str(),
                  {site(t, loc, "cp.async")}});
    return;
  }
  // Until its wait, the destination belongs to this copy: reading it is a finding.
  for (uint32_t i = dst; i < dst + bytes; ++i) {
    shadow[i].asyncOwner = t.linear;
    shadow[i].asyncLoc = loc;
  }
  t.uncommitted.push_back({dst, src, bytes, srcBytes, loc});
}

void Block::cpAsyncCommit(Thread &t) {
  if (!t.uncommitted.empty())
    t.groups.push_back(std::move(t.uncommitted));
  else
    t.groups.emplace_back(); // PTX: an empty group is a group too
  t.uncommitted.clear();
}

void Block::cpAsyncWait(Thread &t, uint32_t pendingGroups) {
  while (t.groups.size() > pendingGroups) {
    for (const PendingCopy &c : t.groups.front()) {
      for (uint32_t i = c.sharedDst; i < c.sharedDst + c.bytes; ++i)
        shadow[i].asyncOwner = -1;
      // PTX copies 4, 8 or 16 bytes; the ABI takes any size. Bytes past srcBytes are zeros.
      llvm::SmallVector<uint8_t, 16> data(c.bytes, 0);
      if (c.srcBytes)
        loadGlobal(t, data.data(), c.globalSrc, c.srcBytes, c.loc);
      storeShared(t, c.sharedDst, data.data(), c.bytes, c.loc);
      counters.cpAsyncBytes += c.bytes;
    }
    t.groups.pop_front();
  }
}
