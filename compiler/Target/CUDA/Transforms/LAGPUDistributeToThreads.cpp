//===- LAGPUDistributeToThreads.cpp - a kernel body over its block's threads ===//

#include "Target/CUDA/Transforms/CUDAPasses.h"

#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "la-gpu-distribute-to-threads"

namespace mlir::la {
#define GEN_PASS_DEF_LAGPUDISTRIBUTETOTHREADS
#include "Target/CUDA/Transforms/CUDAPasses.h.inc"

namespace {

/// True when `memref` is (a view of) a `memref.alloca`: memory only the thread itself sees.
bool isThreadPrivate(Value memref) {
  return memref::skipViewLikeOps(cast<MemrefValue>(memref)).getDefiningOp<memref::AllocaOp>() != nullptr;
}

/// True when `op` itself (not an op nested in it) writes memory that other threads may read.
bool writesSharedMemory(Operation *op) {
  if (op->getNumRegions() != 0)
    return false;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  return llvm::any_of(instances, [](const MemoryEffects::EffectInstance &effect) {
    if (!isa<MemoryEffects::Write>(effect.getEffect()))
      return false;
    Value value = effect.getValue();
    return !value || !isa<MemRefType>(value.getType()) || !isThreadPrivate(value);
  });
}

/// `memref.copy %src, %dst` ⇒ an `scf.parallel` over the shape that loads and stores each element.
void expandCopy(memref::CopyOp copy) {
  OpBuilder b(copy);
  Location loc = copy.getLoc();
  auto type = cast<MemRefType>(copy.getTarget().getType());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> lower(type.getRank(), zero), steps(type.getRank(), one), upper;
  for (int64_t d = 0; d < type.getRank(); ++d)
    upper.push_back(memref::DimOp::create(b, loc, copy.getTarget(), d));
  scf::ParallelOp::create(b, loc, lower, upper, steps, [&](OpBuilder &nested, Location loc, ValueRange ivs) {
    Value element = memref::LoadOp::create(nested, loc, copy.getSource(), ivs);
    memref::StoreOp::create(nested, loc, element, copy.getTarget(), ivs);
  });
  copy.erase();
}

/// `scf.parallel` (no reductions) ⇒ the same iterations as an `scf.for` nest, run by one thread.
void sequentialise(scf::ParallelOp parallel) {
  OpBuilder b(parallel);
  Location loc = parallel.getLoc();
  SmallVector<Value> ivs;
  for (auto [lower, upper, step] : llvm::zip(parallel.getLowerBound(), parallel.getUpperBound(), parallel.getStep())) {
    auto loop = scf::ForOp::create(b, loc, lower, upper, step);
    ivs.push_back(loop.getInductionVar());
    b.setInsertionPoint(loop.getBody()->getTerminator());
  }
  Block *body = parallel.getBody();
  body->getTerminator()->erase();
  for (auto [old, iv] : llvm::zip(parallel.getInductionVars(), ivs))
    old.replaceAllUsesWith(iv);
  Block *innermost = b.getInsertionBlock();
  innermost->getOperations().splice(b.getInsertionPoint(), body->getOperations());
  parallel.erase();
}

/// The memref dimension a 1-D transfer walks, when its permutation map is a single dimension.
std::optional<unsigned> transferDim(VectorTransferOpInterface transfer) {
  AffineMap map = transfer.getPermutationMap();
  if (map.getNumResults() != 1 || transfer.getVectorType().getRank() != 1)
    return std::nullopt;
  auto dim = dyn_cast<AffineDimExpr>(map.getResult(0));
  if (!dim)
    return std::nullopt;
  return dim.getPosition();
}

/// Indices of element `i` of a 1-D transfer along memref dimension `dim`.
SmallVector<Value> elementIndices(OpBuilder &b, Location loc, ValueRange indices, unsigned dim, int64_t i) {
  SmallVector<Value> at(indices.begin(), indices.end());
  at[dim] = arith::AddIOp::create(b, loc, at[dim], arith::ConstantIndexOp::create(b, loc, i));
  return at;
}

/// An in-bounds 1-D `vector.transfer_read` that is not contiguous (a strided column), which the upstream
/// transfer lowering leaves alone: one `memref.load` per element.
struct StridedTransferReadToLoads : OpRewritePattern<vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::TransferReadOp read, PatternRewriter &rewriter) const override {
    std::optional<unsigned> dim = transferDim(read);
    if (!dim || !isa<MemRefType>(read.getBase().getType()) || read.getMask() || !read.isDimInBounds(0))
      return failure();
    Location loc = read.getLoc();
    SmallVector<Value> elements;
    for (int64_t i = 0, e = read.getVectorType().getNumElements(); i < e; ++i)
      elements.push_back(memref::LoadOp::create(rewriter, loc, read.getBase(),
                                                elementIndices(rewriter, loc, read.getIndices(), *dim, i)));
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(read, read.getVectorType(), elements);
    return success();
  }
};

/// The same for `vector.transfer_write`: one `memref.store` per element.
struct StridedTransferWriteToStores : OpRewritePattern<vector::TransferWriteOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::TransferWriteOp write, PatternRewriter &rewriter) const override {
    std::optional<unsigned> dim = transferDim(write);
    if (!dim || !isa<MemRefType>(write.getBase().getType()) || write.getMask() || !write.isDimInBounds(0))
      return failure();
    Location loc = write.getLoc();
    for (int64_t i = 0, e = write.getVectorType().getNumElements(); i < e; ++i) {
      Value element = vector::ExtractOp::create(rewriter, loc, write.getVector(), ArrayRef<int64_t>{i});
      memref::StoreOp::create(rewriter, loc, element, write.getBase(),
                              elementIndices(rewriter, loc, write.getIndices(), *dim, i));
    }
    rewriter.eraseOp(write);
    return success();
  }
};

struct Distributor {
  gpu::GPUFuncOp kernel;
  Value threadId, numThreads;
  /// The loops that replaced the outermost scf.parallels: their writes are already spread over threads.
  llvm::DenseSet<Operation *> threadLoops;
  /// The `if (tid == 0)` around single-thread regions: their writes are already on one thread.
  llvm::DenseSet<Operation *> threadZeroRegions;

  /// `parallel` ⇒ for t = tid; t < Π extents; t += ntid { ivs = lower + delinearise(t) · step; body }.
  void distribute(scf::ParallelOp parallel) {
    SmallVector<scf::ParallelOp> nested;
    parallel.getBody()->walk([&](scf::ParallelOp inner) { nested.push_back(inner); });
    for (scf::ParallelOp inner : llvm::reverse(nested))
      sequentialise(inner);

    OpBuilder b(parallel);
    Location loc = parallel.getLoc();
    SmallVector<Value> extents;
    Value total = arith::ConstantIndexOp::create(b, loc, 1);
    for (auto [lower, upper, step] :
         llvm::zip(parallel.getLowerBound(), parallel.getUpperBound(), parallel.getStep())) {
      Value span = arith::SubIOp::create(b, loc, upper, lower);
      extents.push_back(arith::CeilDivUIOp::create(b, loc, span, step));
      total = arith::MulIOp::create(b, loc, total, extents.back());
    }
    auto loop = scf::ForOp::create(b, loc, threadId, total, numThreads);
    threadLoops.insert(loop);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    Value rest = loop.getInductionVar();
    SmallVector<Value> ivs(extents.size());
    for (int64_t d = static_cast<int64_t>(extents.size()) - 1; d >= 0; --d) {
      Value position = d == 0 ? rest : arith::RemUIOp::create(b, loc, rest, extents[d]);
      if (d > 0)
        rest = arith::DivUIOp::create(b, loc, rest, extents[d]);
      Value scaled = arith::MulIOp::create(b, loc, position, parallel.getStep()[d]);
      ivs[d] = arith::AddIOp::create(b, loc, parallel.getLowerBound()[d], scaled);
    }
    Block *body = parallel.getBody();
    body->getTerminator()->erase();
    for (auto [old, iv] : llvm::zip(parallel.getInductionVars(), ivs))
      old.replaceAllUsesWith(iv);
    loop.getBody()->getOperations().splice(Block::iterator(loop.getBody()->getTerminator()), body->getOperations());
    parallel.erase();
    fence(loop);
  }

  /// A barrier right before and right after `op`.
  void fence(Operation *op) {
    OpBuilder b(op);
    gpu::BarrierOp::create(b, op->getLoc());
    b.setInsertionPointAfter(op);
    gpu::BarrierOp::create(b, op->getLoc());
  }

  bool insideThreadLoop(Operation *op) {
    for (Operation *parent = op->getParentOp(); parent && parent != kernel; parent = parent->getParentOp())
      if (threadLoops.contains(parent))
        return true;
    return false;
  }

  /// A loop or branch outside the thread loops that only thread 0 needs to run: it writes memory other
  /// threads read, yields nothing, and holds no thread loop, barrier or warp-wide op (which need every
  /// thread, as cp.async commits and waits do). A scan over a chunk's rows is the typical one: run by every thread, its
  /// loads would be issued once per thread of the block for one thread's stores.
  bool isSingleThreadRegion(Operation *op) {
    if (op->getNumRegions() == 0 || !op->use_empty() || insideThreadLoop(op))
      return false;
    bool writes = false;
    WalkResult blocked = op->walk([&](Operation *inner) {
      if (threadLoops.contains(inner) ||
          isa_and_nonnull<gpu::GPUDialect, nvgpu::NVGPUDialect, NVVM::NVVMDialect>(inner->getDialect()))
        return WalkResult::interrupt();
      writes |= writesSharedMemory(inner);
      return WalkResult::advance();
    });
    return writes && !blocked.wasInterrupted();
  }

  /// Runs each single-thread region (isSingleThreadRegion) on thread 0 alone, fenced by barriers.
  void runSingleThreadRegionsOnThreadZero() {
    SmallVector<Operation *> regions;
    kernel.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op == kernel.getOperation() || !isSingleThreadRegion(op))
        return WalkResult::advance();
      regions.push_back(op);
      return WalkResult::skip();
    });
    for (Operation *op : regions) {
      scf::IfOp guard = guardOnThreadZero(op, op);
      threadZeroRegions.insert(guard);
    }
    LLVM_DEBUG(llvm::dbgs() << kernel.getName() << ": " << regions.size() << " regions on thread 0\n");
  }

  /// Moves `first`..`last` (consecutive ops of one block) into `if (tid == 0)`, fenced by barriers.
  scf::IfOp guardOnThreadZero(Operation *first, Operation *last) {
    OpBuilder b(first);
    Location loc = first->getLoc();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, threadId, zero);
    auto guard = scf::IfOp::create(b, loc, isFirst, /*withElseRegion=*/false);
    Operation *end = last->getNextNode();
    for (Operation *op = first; op != end;) {
      Operation *next = op->getNextNode();
      op->moveBefore(guard.thenBlock()->getTerminator());
      op = next;
    }
    fence(guard);
    return guard;
  }

  bool insideThreadZeroRegion(Operation *op) {
    for (Operation *parent = op->getParentOp(); parent && parent != kernel; parent = parent->getParentOp())
      if (threadZeroRegions.contains(parent))
        return true;
    return false;
  }

  /// Runs each maximal run of consecutive shared-memory writes outside the thread loops on thread 0.
  LogicalResult guardRemainingWrites() {
    SmallVector<SmallVector<Operation *>> runs;
    WalkResult result = kernel.walk([&](Operation *op) {
      if (!writesSharedMemory(op) || insideThreadLoop(op) || insideThreadZeroRegion(op))
        return WalkResult::advance();
      if (op->getNumResults() != 0) {
        op->emitError() << "la-gpu-distribute-to-threads: cannot run '" << op->getName()
                        << "' on one thread: its results would be missing on the others";
        return WalkResult::interrupt();
      }
      if (!runs.empty() && runs.back().back()->getNextNode() == op)
        runs.back().push_back(op);
      else
        runs.push_back({op});
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return failure();
    for (ArrayRef<Operation *> run : runs)
      guardOnThreadZero(run.front(), run.back());
    return success();
  }

  /// A barrier after another one with nothing that touches memory in between (index arithmetic, views)
  /// orders nothing.
  void removeRedundantBarriers() {
    SmallVector<gpu::BarrierOp> redundant;
    kernel.walk([&](gpu::BarrierOp barrier) {
      Operation *previous = barrier->getPrevNode();
      while (previous && previous->getNumRegions() == 0 && isMemoryEffectFree(previous))
        previous = previous->getPrevNode();
      if (isa_and_nonnull<gpu::BarrierOp>(previous))
        redundant.push_back(barrier);
    });
    for (gpu::BarrierOp barrier : redundant)
      barrier.erase();
  }

  LogicalResult run() {
    // Contiguous transfers become vector loads and stores (the upstream patterns win by benefit), strided
    // ones element by element.
    RewritePatternSet patterns(kernel.getContext());
    vector::populateVectorTransferLoweringPatterns(patterns, /*maxTransferRank=*/1, /*benefit=*/2);
    patterns.add<StridedTransferReadToLoads, StridedTransferWriteToStores>(kernel.getContext());
    if (failed(applyPatternsGreedily(kernel, std::move(patterns))))
      return kernel.emitError() << "la-gpu-distribute-to-threads: lowering vector transfers did not converge";
    WalkResult leftover = kernel.walk([](VectorTransferOpInterface transfer) {
      transfer->emitError() << "la-gpu-distribute-to-threads: cannot lower this vector transfer for the GPU (a "
                               "1-D, in-bounds transfer on a memref is needed)";
      return WalkResult::interrupt();
    });
    if (leftover.wasInterrupted())
      return failure();
    SmallVector<memref::CopyOp> copies;
    kernel.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      // A buffer copied onto itself (what bufferization leaves of a scan updated in place) moves nothing;
      // expanded, it would be a thread loop with barriers inside the scan.
      if (copy.getSource() == copy.getTarget())
        copy.erase();
      else
        expandCopy(copy);
    }

    OpBuilder b(&kernel.getBody().front(), kernel.getBody().front().begin());
    threadId = gpu::ThreadIdOp::create(b, kernel.getLoc(), gpu::Dimension::x);
    numThreads = gpu::BlockDimOp::create(b, kernel.getLoc(), gpu::Dimension::x);

    SmallVector<scf::ParallelOp> outermost;
    WalkResult result = kernel.walk<WalkOrder::PreOrder>([&](Operation *op) {
      auto parallel = dyn_cast<scf::ParallelOp>(op);
      if (!parallel)
        return WalkResult::advance();
      if (parallel.getNumReductions() != 0) {
        parallel.emitError() << "la-gpu-distribute-to-threads: a parallel loop with reductions is not supported";
        return WalkResult::interrupt();
      }
      outermost.push_back(parallel);
      WalkResult lanes = parallel.getBody()->walk([](scf::ParallelOp inner) {
        if (!inner->hasAttr(kWarpLanesAttr))
          return WalkResult::advance();
        inner.emitError() << "la-gpu-distribute-to-threads: a loop over warp lanes (" << kWarpLanesAttr
                          << ") inside another parallel loop would run on one thread";
        return WalkResult::interrupt();
      });
      return lanes.wasInterrupted() ? WalkResult::interrupt() : WalkResult::skip();
    });
    if (result.wasInterrupted())
      return failure();
    LLVM_DEBUG(llvm::dbgs() << kernel.getName() << ": " << outermost.size() << " parallel loops\n");
    for (scf::ParallelOp parallel : outermost)
      distribute(parallel);
    runSingleThreadRegionsOnThreadZero();
    if (failed(guardRemainingWrites()))
      return failure();
    removeRedundantBarriers();
    return success();
  }
};

struct LAGPUDistributeToThreadsPass : impl::LAGPUDistributeToThreadsBase<LAGPUDistributeToThreadsPass> {
  void runOnOperation() override {
    for (auto kernel : getOperation().getOps<gpu::GPUFuncOp>())
      if (kernel.isKernel() && failed(Distributor{kernel}.run()))
        return signalPassFailure();
  }
};

} // namespace
} // namespace mlir::la
