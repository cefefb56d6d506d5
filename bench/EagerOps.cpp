//===- EagerOps.cpp - Memory of the unfused references' intermediates ----===//
#include "EagerOps.h"

#include <map>
#include <mutex>

using namespace la::bench;

namespace {

/// Where intermediates get their memory. `Cached` keeps freed blocks for reuse by later requests of the same
/// size, like a framework's caching allocator; `Fresh` returns them to the C library, which hands large
/// blocks back to the OS, so every call page-faults its intermediates in again (PyTorch's default CPU
/// allocator behaves like this).
class BlockCache {
public:
  float *acquire(size_t count) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = blocks.find(count);
      if (it != blocks.end()) {
        float *block = it->second;
        blocks.erase(it);
        return block;
      }
    }
    return static_cast<float *>(std::aligned_alloc(64, (count * sizeof(float) + 63) / 64 * 64));
  }
  void release(float *block, size_t count) {
    std::lock_guard<std::mutex> lock(mutex);
    blocks.emplace(count, block);
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto &entry : blocks)
      std::free(entry.second);
    blocks.clear();
  }
  ~BlockCache() { clear(); }

private:
  std::mutex mutex;
  std::multimap<size_t, float *> blocks;
};

BlockCache &blockCache() {
  static BlockCache cache;
  return cache;
}

ReferenceMemory currentMemory = ReferenceMemory::Cached;

} // namespace

void eager::setMemory(ReferenceMemory memory) { currentMemory = memory; }

float *eager::acquireBlock(size_t count) {
  if (currentMemory == ReferenceMemory::Cached)
    return blockCache().acquire(count);
  return static_cast<float *>(std::aligned_alloc(64, (count * sizeof(float) + 63) / 64 * 64));
}

void eager::releaseBlock(float *block, size_t count) {
  if (currentMemory == ReferenceMemory::Cached)
    blockCache().release(block, count);
  else
    std::free(block);
}

void la::bench::releaseReferenceMemory() { blockCache().clear(); }
