//===- TemporaryPlacement.h - where a GPU kernel's temporaries live -*- C++ -*-===//
//
// la-gpu-outline-slice-kernel turns each allocation of a bufferised kernel body into a view of one of two
// per-block buffers: shared memory (at most `shared-memory-bytes`) or a global scratch buffer. Which
// allocations get shared memory, and at which offsets each buffer holds them, is decided here.
//
// A buffer is live from the first top-level op of the body that uses it (or a view of it) to the last, and
// throughout any such op (a chunk loop): after bufferisation without allocations returned from loops, no
// temporary carries data past its uses. Buffers whose lifetimes do not overlap share bytes.
//
//===----------------------------------------------------------------------===//
#ifndef LA_TARGET_CUDA_TRANSFORMS_TEMPORARYPLACEMENT_H
#define LA_TARGET_CUDA_TRANSFORMS_TEMPORARYPLACEMENT_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::la {

/// Offsets (and the whole buffer) are aligned to this, the natural alignment of the widest vector access.
inline constexpr int64_t kScratchAlignment = 64;

/// The allocations of one kernel body and their lifetimes, computed once for every placement asked of them.
class KernelTemporaries {
public:
  KernelTemporaries(Block &body, ArrayRef<memref::AllocOp> allocs);

  /// Which allocations (of `bytes` each) go to shared memory: a knapsack in which each costs its bytes
  /// (less where lifetimes do not overlap) and saves the global traffic of its loads, stores and copies
  /// (times the static trip counts around them). Two greedy orders fill `budget`, each taking every
  /// allocation `mayBeShared` allows that still fits: the smallest first (a chunk's state and tiles before a
  /// whole-sequence temporary) and the most accessed per byte first; the one that leaves less traffic in
  /// global memory wins.
  SmallVector<bool> chooseShared(ArrayRef<int64_t> bytes, int64_t budget,
                                 llvm::function_ref<bool(memref::AllocOp)> mayBeShared) const;

  /// Places the allocations `chosen` marks in one buffer, largest first, each at the lowest aligned offset
  /// that no placed one with an overlapping lifetime covers; writes their offsets into `offsets` (indexed
  /// like the allocations) and returns the bytes the buffer needs.
  int64_t pack(ArrayRef<int64_t> bytes, ArrayRef<bool> chosen, MutableArrayRef<int64_t> offsets) const;

  /// The top-level ops of the body, by position, between which a buffer holds data.
  struct LiveRange {
    unsigned first = ~0u, last = 0;
    bool overlaps(const LiveRange &other) const { return first <= other.last && other.first <= last; }
  };

private:
  SmallVector<memref::AllocOp> allocs;
  SmallVector<LiveRange> lifetimes;
};

} // namespace mlir::la

#endif // LA_TARGET_CUDA_TRANSFORMS_TEMPORARYPLACEMENT_H
