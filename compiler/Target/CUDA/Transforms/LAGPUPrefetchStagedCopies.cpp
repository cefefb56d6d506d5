//===- LAGPUPrefetchStagedCopies.cpp - staged operands by cp.async, a chunk ahead ===//
//
// A staged operand copy (StagedOperands.h) that la-gpu-outline-slice-kernel placed in shared memory is
// copied by cp.async instead of loads and stores through registers. Where the copy sits in a loop and the
// outline pass reserved a second slot for it (kPrefetchSlotStrideAttr), the slots alternate: iteration i
// issues the copy for iteration i+1 into the slot iteration i-1 read, then waits for its own, which the
// previous iteration issued. CUDAPasses.td has the contract.
//
//===----------------------------------------------------------------------===//

#include "Target/CUDA/Transforms/BufferRoots.h"
#include "Target/CUDA/Transforms/CUDAPasses.h"
#include "Target/CUDA/Transforms/StagedOperands.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "la-gpu-prefetch-staged-copies"

namespace mlir::la {
#define GEN_PASS_DEF_LAGPUPREFETCHSTAGEDCOPIES
#include "Target/CUDA/Transforms/CUDAPasses.h.inc"

namespace {

/// A staged copy into shared memory and how it is issued.
struct StagedCopy {
  /// Op handles (pointers): mutable so that a const StagedCopy can still rewrite them.
  mutable memref::ViewOp view;
  mutable memref::CopyOp copy;
  /// Bytes per cp.async: 16, 8 or 4.
  int64_t bytes;
  /// The view's byte offset into the shared buffer.
  int64_t shift;
  /// The loop it is issued one iteration ahead in, and the bytes to its second slot; null and 0 otherwise.
  mutable scf::ForOp loop;
  int64_t slotStride = 0;
};

/// Whether every address cp.async copies of `bytes` read in `copy`'s source is a multiple of `bytes`:
/// the source is a chain of subviews of a kernel argument whose rows start on such a multiple (its slice of
/// each block, its strides but the innermost, the innermost offsets of the subviews) and are read in
/// contiguous pieces of `bytes`. Kernel arguments themselves are taken to be 16-byte aligned (cuMemAlloc
/// gives 256; the emulator reports a misaligned cp.async as a finding).
bool sourceAligned(memref::CopyOp copy, gpu::GPUFuncOp kernel, int64_t bytes) {
  auto source = cast<MemRefType>(copy.getSource().getType());
  int64_t element = source.getElementTypeBitWidth() / 8;
  auto [strides, offset] = source.getStridesAndOffset();
  if (strides.empty() || strides.back() != 1 || (source.getShape().back() * element) % bytes != 0)
    return false;
  Value root = rootBuffer(copy.getSource());
  auto argument = dyn_cast<BlockArgument>(root);
  auto sliceBytes = kernel->getAttrOfType<DenseI64ArrayAttr>(kSliceBytesAttr);
  if (!argument || argument.getOwner() != &kernel.getBody().front() || !sliceBytes ||
      argument.getArgNumber() >= sliceBytes.size() || sliceBytes[argument.getArgNumber()] % bytes != 0)
    return false;
  auto rootType = cast<MemRefType>(root.getType());
  if (!rootType.getLayout().isIdentity() || !rootType.hasStaticShape())
    return false;
  auto [rootStrides, rootOffset] = rootType.getStridesAndOffset();
  for (int64_t stride : ArrayRef<int64_t>(rootStrides).drop_back())
    if ((stride * element) % bytes != 0)
      return false;
  int64_t innermostOffset = 0;
  for (Value view = copy.getSource(); view != root;) {
    auto subview = view.getDefiningOp<memref::SubViewOp>();
    if (!subview || ShapedType::isDynamic(subview.getStaticOffsets().back()))
      return false;
    innermostOffset += subview.getStaticOffsets().back();
    view = subview.getSource();
  }
  return (innermostOffset * element) % bytes == 0;
}

/// The staged copy filling `view`, if cp.async can issue it: the largest of 16, 8 and 4 bytes per copy that
/// the element type and the alignment of both ends allow.
std::optional<StagedCopy> matchStagedCopy(memref::ViewOp view, gpu::GPUFuncOp kernel) {
  auto type = view.getType();
  std::optional<int64_t> shift = getConstantIntValue(view.getByteShift());
  memref::CopyOp copy = stagingCopy(view.getResult());
  if (!shift || !copy || !type.hasStaticShape() || type.getRank() == 0 || !type.getLayout().isIdentity() ||
      type.getElementTypeBitWidth() % 8 != 0)
    return std::nullopt;
  int64_t element = type.getElementTypeBitWidth() / 8;
  for (int64_t bytes : {16, 8, 4}) {
    if (bytes % element != 0 || *shift % bytes != 0 || !sourceAligned(copy, kernel, bytes))
      continue;
    StagedCopy staged{view, copy, bytes, *shift, {}, 0};
    if (auto stride = view->getAttrOfType<IntegerAttr>(kPrefetchSlotStrideAttr)) {
      staged.loop = prefetchLoop(copy);
      staged.slotStride = staged.loop ? stride.getInt() : 0;
    }
    return staged;
  }
  LLVM_DEBUG(llvm::dbgs() << "la-gpu-prefetch-staged-copies: plain copy at " << copy.getLoc()
                          << ": no cp.async size fits its alignment\n");
  return std::nullopt;
}

/// `source` into `target` (same shape) by cp.async of `bytes` each: a parallel loop over the rows and the
/// pieces of a row, which la-gpu-distribute-to-threads spreads over the block's threads.
void issueAsyncCopies(OpBuilder &b, Location loc, Value source, Value target, int64_t bytes) {
  auto type = cast<MemRefType>(target.getType());
  int64_t perCopy = bytes / (type.getElementTypeBitWidth() / 8);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0), one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> lower(type.getRank(), zero), steps(type.getRank(), one), upper;
  for (int64_t extent : type.getShape().drop_back())
    upper.push_back(arith::ConstantIndexOp::create(b, loc, extent));
  upper.push_back(arith::ConstantIndexOp::create(b, loc, type.getShape().back() / perCopy));
  scf::ParallelOp::create(b, loc, lower, upper, steps, [&](OpBuilder &nested, Location loc, ValueRange ivs) {
    SmallVector<Value> indices(ivs);
    indices.back() =
        arith::MulIOp::create(nested, loc, ivs.back(), arith::ConstantIndexOp::create(nested, loc, perCopy));
    // 16-byte copies skip L1 (.cg): the block reads each operand byte once, from shared memory afterwards.
    nvgpu::DeviceAsyncCopyOp::create(nested, loc, target, indices, source, indices, nested.getIndexAttr(perCopy),
                                     /*srcElements=*/Value(), bytes == 16 ? nested.getUnitAttr() : UnitAttr());
  });
}

/// Commits this thread's copies issued since the last commit as a group (none when `wait` is empty), or
/// else waits until at most `*wait` groups are in flight and then at a barrier, after which every thread's
/// copies of the finished groups are visible to the block. NVVM's own ops: nvgpu's take tokens, which the
/// copies, inside the parallel loops, cannot hand out.
void commit(OpBuilder &b, Location loc, std::optional<int32_t> wait) {
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
  if (!wait)
    return;
  NVVM::CpAsyncWaitGroupOp::create(b, loc, *wait);
  gpu::BarrierOp::create(b, loc);
}

Value viewAt(OpBuilder &b, Location loc, memref::ViewOp like, Value shift) {
  return memref::ViewOp::create(b, loc, like.getType(), like.getSource(), shift, ValueRange{});
}

/// The copies of one loop issued an iteration ahead, together: one group per iteration.
void prefetchInLoop(scf::ForOp loop, ArrayRef<StagedCopy> copies) {
  Location loc = loop.getLoc();
  OpBuilder b(loop);
  // Before the loop: the first iteration's operands, into the first slots.
  Value lower = loop.getLowerBound(), upper = loop.getUpperBound(), step = loop.getStep();
  Value runs = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, lower, upper);
  auto first = scf::IfOp::create(b, loc, runs, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(first.thenBlock()->getTerminator());
    for (const StagedCopy &c : copies)
      issueAsyncCopies(b, c.copy.getLoc(), sourceInIteration(b, c.copy, loop, lower),
                       viewAt(b, loc, c.view, arith::ConstantIndexOp::create(b, loc, c.shift)), c.bytes);
  }
  commit(b, loc, std::nullopt);

  // At the top of each iteration: the slots by parity, the next iteration's copies into the other ones,
  // then the wait for this iteration's. The previous iteration read the other slots: the barrier that
  // la-gpu-distribute-to-threads puts before every thread loop (the copies') orders those reads first.
  b.setInsertionPointToStart(loop.getBody());
  Value iv = loop.getInductionVar();
  Value iteration = arith::DivUIOp::create(b, loc, arith::SubIOp::create(b, loc, iv, lower), step);
  Value parity = arith::RemUIOp::create(b, loc, iteration, arith::ConstantIndexOp::create(b, loc, 2));
  Value otherParity = arith::SubIOp::create(b, loc, arith::ConstantIndexOp::create(b, loc, 1), parity);
  auto slot = [&](const StagedCopy &c, Value which) {
    Value offset = arith::MulIOp::create(b, loc, which, arith::ConstantIndexOp::create(b, loc, c.slotStride));
    return viewAt(b, loc, c.view,
                  arith::AddIOp::create(b, loc, offset, arith::ConstantIndexOp::create(b, loc, c.shift)));
  };
  SmallVector<Value> current, next;
  for (const StagedCopy &c : copies) {
    current.push_back(slot(c, parity));
    next.push_back(slot(c, otherParity));
  }
  Value nextIv = arith::AddIOp::create(b, loc, iv, step);
  Value more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, nextIv, upper);
  auto ahead = scf::IfOp::create(b, loc, more, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ahead.thenBlock()->getTerminator());
    for (auto [c, target] : llvm::zip(copies, next))
      issueAsyncCopies(b, c.copy.getLoc(), sourceInIteration(b, c.copy, loop, nextIv), target, c.bytes);
  }
  // The last iteration commits an empty group, so that "all but the newest group" is always its own.
  commit(b, loc, /*wait=*/1);
  for (auto [c, target] : llvm::zip(copies, current)) {
    c.copy.erase();
    c.view.replaceAllUsesWith(target);
    c.view.erase();
  }
}

/// A copy issued where it stood, waited for at once.
void copyInPlace(const StagedCopy &c) {
  OpBuilder b(c.copy);
  issueAsyncCopies(b, c.copy.getLoc(), c.copy.getSource(), c.view.getResult(), c.bytes);
  commit(b, c.copy.getLoc(), /*wait=*/0);
  c.copy.erase();
}

struct LAGPUPrefetchStagedCopiesPass : impl::LAGPUPrefetchStagedCopiesBase<LAGPUPrefetchStagedCopiesPass> {
  void runOnOperation() override {
    for (auto kernel : getOperation().getOps<gpu::GPUFuncOp>()) {
      SmallVector<StagedCopy> copies;
      kernel.walk([&](memref::ViewOp view) {
        if (!view->hasAttr(kStagedCopyAttr) ||
            !gpu::GPUDialect::isWorkgroupMemoryAddressSpace(view.getType().getMemorySpace()))
          return;
        if (std::optional<StagedCopy> staged = matchStagedCopy(view, kernel))
          copies.push_back(*staged);
      });
      llvm::MapVector<Operation *, SmallVector<StagedCopy>> byLoop;
      for (const StagedCopy &c : copies) {
        if (c.loop)
          byLoop[c.loop].push_back(c);
        else
          copyInPlace(c);
      }
      for (auto &[loop, inLoop] : byLoop)
        prefetchInLoop(cast<scf::ForOp>(loop), inLoop);
      LLVM_DEBUG(llvm::dbgs() << kernel.getName() << ": " << copies.size() << " staged copies by cp.async, "
                              << byLoop.size() << " loop(s) prefetching\n");
    }
  }
};

} // namespace
} // namespace mlir::la
