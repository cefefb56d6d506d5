//===- KernelMemory.cpp - per-thread cache of kernel scratch blocks -------===//
//
// Every block carries a small header just below the pointer handed out (its size and alignment), so a
// block can be freed on any thread and cached by size there. Kernels allocate and free within one call on
// one thread, so in practice each pool thread reuses its own blocks.
//
//===----------------------------------------------------------------------===//

#include "la/runtime/KernelMemory.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <utility>
#include <vector>

namespace la {
namespace {

constexpr size_t kMinAlignment = 64;

struct BlockHeader {
  size_t size;
  size_t alignment;
};

BlockHeader *headerOf(void *pointer) {
  return reinterpret_cast<BlockHeader *>(static_cast<char *>(pointer) - sizeof(BlockHeader));
}

void *systemAllocate(size_t size, size_t alignment) {
  // The header lives in the `alignment` bytes in front of the block.
  size_t total = (alignment + size + alignment - 1) / alignment * alignment;
  char *raw = static_cast<char *>(std::aligned_alloc(alignment, total));
  if (!raw)
    return nullptr;
  void *block = raw + alignment;
  *headerOf(block) = {size, alignment};
  return block;
}

void systemFree(void *block) { std::free(static_cast<char *>(block) - headerOf(block)->alignment); }

/// Freed blocks of one thread, by (size, alignment).
struct ScratchCache {
  std::map<std::pair<size_t, size_t>, std::vector<void *>> blocks;
  size_t bytes = 0;

  ~ScratchCache() {
    for (auto &[key, list] : blocks)
      for (void *block : list)
        systemFree(block);
  }

  void *take(size_t size, size_t alignment) {
    auto it = blocks.find({size, alignment});
    if (it == blocks.end() || it->second.empty())
      return nullptr;
    void *block = it->second.back();
    it->second.pop_back();
    bytes -= size;
    return block;
  }

  void give(void *block) {
    BlockHeader header = *headerOf(block);
    if (bytes + header.size > kKernelScratchCacheBytes) {
      systemFree(block);
      return;
    }
    blocks[{header.size, header.alignment}].push_back(block);
    bytes += header.size;
  }
};

ScratchCache &threadCache() {
  thread_local ScratchCache cache;
  return cache;
}

void *allocate(size_t size, size_t alignment) {
  alignment = std::max(alignment, kMinAlignment);
  if (alignment & (alignment - 1))
    return nullptr;
  if (void *block = threadCache().take(size, alignment))
    return block;
  return systemAllocate(size, alignment);
}

} // namespace

size_t kernelScratchCachedBytes() { return threadCache().bytes; }

} // namespace la

extern "C" void *_mlir_memref_to_llvm_alloc(uint64_t size) { return la::allocate(size, 0); }

extern "C" void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t size) {
  return la::allocate(size, alignment);
}

extern "C" void _mlir_memref_to_llvm_free(void *pointer) {
  if (pointer)
    la::threadCache().give(pointer);
}
