//===- KernelMemoryTest.cpp - the per-thread kernel scratch cache ---------===//

#include "la/runtime/KernelMemory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <thread>

namespace {

bool isAligned(void *pointer, uintptr_t alignment) { return reinterpret_cast<uintptr_t>(pointer) % alignment == 0; }

TEST(KernelMemory, FreedBlockIsReusedForTheSameSize) {
  size_t before = la::kernelScratchCachedBytes();
  void *first = _mlir_memref_to_llvm_alloc(1 << 20);
  ASSERT_NE(first, nullptr);
  std::memset(first, 1, 1 << 20);
  _mlir_memref_to_llvm_free(first);
  EXPECT_EQ(la::kernelScratchCachedBytes(), before + (1 << 20));
  void *second = _mlir_memref_to_llvm_alloc(1 << 20);
  EXPECT_EQ(second, first);
  EXPECT_EQ(la::kernelScratchCachedBytes(), before);
  // A different size does not take the cached block.
  void *other = _mlir_memref_to_llvm_alloc((1 << 20) + 4);
  EXPECT_NE(other, second);
  _mlir_memref_to_llvm_free(other);
  _mlir_memref_to_llvm_free(second);
}

TEST(KernelMemory, BlocksAreAligned) {
  void *plain = _mlir_memref_to_llvm_alloc(12);
  void *wide = _mlir_memref_to_llvm_aligned_alloc(256, 1000);
  EXPECT_TRUE(isAligned(plain, 64));
  EXPECT_TRUE(isAligned(wide, 256));
  // An alignment that is not a power of two is refused, not misaligned.
  EXPECT_EQ(_mlir_memref_to_llvm_aligned_alloc(96, 1000), nullptr);
  _mlir_memref_to_llvm_free(plain);
  _mlir_memref_to_llvm_free(wide);
  _mlir_memref_to_llvm_free(nullptr);
}

TEST(KernelMemory, CacheIsBounded) {
  // Two blocks of 3/4 of the limit: the second one freed does not fit and goes back to the system.
  size_t big = la::kKernelScratchCacheBytes / 4 * 3;
  void *a = _mlir_memref_to_llvm_alloc(big);
  void *b = _mlir_memref_to_llvm_alloc(big);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  size_t before = la::kernelScratchCachedBytes();
  _mlir_memref_to_llvm_free(a);
  _mlir_memref_to_llvm_free(b);
  EXPECT_LE(la::kernelScratchCachedBytes(), la::kKernelScratchCacheBytes);
  EXPECT_EQ(la::kernelScratchCachedBytes(), before + big);
  void *again = _mlir_memref_to_llvm_alloc(big);
  EXPECT_EQ(again, a);
  _mlir_memref_to_llvm_free(again);
}

TEST(KernelMemory, BlockFreedOnAnotherThreadIsCachedThere) {
  void *block = _mlir_memref_to_llvm_alloc(4096);
  size_t cachedHere = la::kernelScratchCachedBytes();
  size_t cachedThere = 0;
  std::thread other([&] {
    _mlir_memref_to_llvm_free(block);
    cachedThere = la::kernelScratchCachedBytes();
  });
  other.join();
  EXPECT_EQ(cachedThere, 4096u);
  EXPECT_EQ(la::kernelScratchCachedBytes(), cachedHere);
}

} // namespace
