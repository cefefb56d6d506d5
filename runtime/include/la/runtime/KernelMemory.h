//===- KernelMemory.h - scratch memory of generated kernels -----*- C++ -*-===//
//
// Generated kernels allocate their temporaries (materialised feature maps, chunk tiles) through MLIR's
// generic allocation functions instead of malloc/free. The runtime implements them with a per-thread cache
// of freed blocks, so a kernel called again with the same shapes reuses its temporaries instead of asking
// the OS for fresh pages on every call (glibc serves blocks of 128 KiB and more with mmap, and every first
// touch of those pages is a page fault; docs/BENCHMARKS.md, "Figures behind the defaults", has the cost).
//
// Objects from `lac compile --emit=obj` reference these symbols too; link them against LARuntime, or define
// the three functions yourself (plain malloc / aligned_alloc / free are correct, just slower).
//
//===----------------------------------------------------------------------===//

#ifndef LA_RUNTIME_KERNELMEMORY_H
#define LA_RUNTIME_KERNELMEMORY_H

#include <cstddef>
#include <cstdint>

extern "C" {
/// `size` bytes aligned to 64, from this thread's cache when a block of that size was freed before.
void *_mlir_memref_to_llvm_alloc(uint64_t size);
/// `size` bytes aligned to `alignment` (at least 64).
void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t size);
/// Returns a block from either function above to the calling thread's cache (or to the system when the
/// cache holds more than its limit).
void _mlir_memref_to_llvm_free(void *pointer);
}

namespace la {

/// Bytes of freed kernel scratch blocks one thread keeps for reuse.
constexpr size_t kKernelScratchCacheBytes = size_t(256) << 20;

/// Bytes currently cached by the calling thread (for tests and benchmarks).
size_t kernelScratchCachedBytes();

} // namespace la

#endif // LA_RUNTIME_KERNELMEMORY_H
