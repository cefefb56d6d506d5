//===- LAStreamLargeResults.cpp - write large results past the caches -----===//
//
// A cached store to a line that is not in cache first reads the line from memory (read for ownership) and
// then keeps it in cache, where it evicts data the kernel still reads. For a result far larger than what
// a core's cache keeps, written once and never read back by the kernel, both are waste: a non-temporal
// store writes the whole line to memory directly. aft_conv writes a 4 MiB result per batch slice at
// T = 4096, one head's 256 bytes of every 2 KiB row at a time; with non-temporal stores it runs about 15%
// faster (docs/BENCHMARKS.md, session 35).
//
// x86 stores a vector non-temporally only at an address aligned to its size, and a caller's buffer need
// not be aligned (a `la::TensorRef` may point anywhere): the function body is versioned on the alignment
// of the streamed buffers, and in the aligned version each store carries the alignment its offset is known
// to have (a multiple of the line: the pass proves it from constants, loop steps and subview offsets, and
// leaves a result alone where it cannot), so LLVM emits `vmovntps`. Non-temporal stores are weakly
// ordered: the aligned version ends with a store fence, so that whoever waits for the kernel (the runtime's
// join) sees them.
//
//===----------------------------------------------------------------------===//

#include "Target/CPU/Transforms/CPUPasses.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/Debug.h"
#include <numeric>

#define DEBUG_TYPE "la-stream-large-results"

namespace mlir::la {
#define GEN_PASS_DEF_LASTREAMLARGERESULTS
#include "Target/CPU/Transforms/CPUPasses.h.inc"

namespace {

/// The cache line, and the alignment a non-temporal vector store needs (64 bytes for AVX-512).
constexpr int64_t kLineBytes = 64;

/// Alignment is all that is asked of the divisors below, so they keep only powers of two, capped so that
/// their products stay far from overflowing.
constexpr int64_t kMaxDivisor = int64_t(1) << 24;

/// The largest power of two (up to kMaxDivisor) dividing `x`; 0 for 0.
int64_t powerOfTwoDivisor(int64_t x) {
  if (x == 0)
    return 0;
  unsigned zeros = llvm::countr_zero(static_cast<uint64_t>(x));
  return zeros >= 24 ? kMaxDivisor : int64_t(1) << zeros;
}

/// The product of two divisors, capped.
int64_t multiplyDivisors(int64_t a, int64_t b) { return a == 0 || b == 0 ? 0 : std::min(kMaxDivisor, a * b); }

/// The largest power of two known to divide `value` (an index), 0 when it is known to be 0: from constants,
/// loop induction variables (their lower bound and step), sums, products and affine maps of those.
int64_t knownDivisor(Value value);

int64_t knownDivisor(AffineExpr expr, ValueRange dims, ValueRange symbols) {
  if (auto constant = dyn_cast<AffineConstantExpr>(expr))
    return powerOfTwoDivisor(constant.getValue());
  if (auto dim = dyn_cast<AffineDimExpr>(expr))
    return knownDivisor(dims[dim.getPosition()]);
  if (auto symbol = dyn_cast<AffineSymbolExpr>(expr))
    return knownDivisor(symbols[symbol.getPosition()]);
  auto binary = cast<AffineBinaryOpExpr>(expr);
  int64_t lhs = knownDivisor(binary.getLHS(), dims, symbols), rhs = knownDivisor(binary.getRHS(), dims, symbols);
  if (expr.getKind() == AffineExprKind::Add)
    return std::gcd(lhs, rhs);
  if (expr.getKind() == AffineExprKind::Mul)
    return multiplyDivisors(lhs, rhs);
  return 1;
}

int64_t knownDivisor(Value value) {
  if (std::optional<int64_t> constant = getConstantIntValue(value))
    return powerOfTwoDivisor(*constant);
  if (auto iv = dyn_cast<BlockArgument>(value)) {
    auto loop = dyn_cast<scf::ForOp>(iv.getOwner()->getParentOp());
    if (!loop || iv != loop.getInductionVar())
      return 1;
    return std::gcd(knownDivisor(loop.getLowerBound()), knownDivisor(loop.getStep()));
  }
  Operation *op = value.getDefiningOp();
  if (isa<arith::AddIOp, arith::SubIOp>(op))
    return std::gcd(knownDivisor(op->getOperand(0)), knownDivisor(op->getOperand(1)));
  if (isa<arith::MulIOp>(op))
    return multiplyDivisors(knownDivisor(op->getOperand(0)), knownDivisor(op->getOperand(1)));
  if (auto apply = dyn_cast<affine::AffineApplyOp>(op))
    return knownDivisor(apply.getAffineMap().getResult(0), apply.getDimOperands(), apply.getSymbolOperands());
  return 1;
}

/// The largest power of two known to divide the element offset of `indices` in `memref` from the start of
/// the function argument it is a view of (0: the offset is 0), or 1 when a view in between is not understood.
int64_t knownOffsetDivisor(Value memref, ArrayRef<OpFoldResult> indices) {
  auto type = cast<MemRefType>(memref.getType());
  auto [strides, offset] = type.getStridesAndOffset();
  int64_t divisor = 0;
  for (auto [index, stride] : llvm::zip(indices, strides)) {
    if (ShapedType::isDynamic(stride))
      return 1;
    std::optional<int64_t> constant = getConstantIntValue(index);
    divisor =
        std::gcd(divisor, multiplyDivisors(powerOfTwoDivisor(stride),
                                           constant ? powerOfTwoDivisor(*constant) : knownDivisor(cast<Value>(index))));
  }
  if (isa<BlockArgument>(memref))
    return type.getLayout().isIdentity() ? divisor : 1;
  if (auto subview = memref.getDefiningOp<memref::SubViewOp>())
    return std::gcd(divisor, knownOffsetDivisor(subview.getSource(), subview.getMixedOffsets()));
  return 1;
}

/// A write that streams: a 1-D, unmasked, in-bounds vector write of whole cache lines along a memref's
/// contiguous innermost dimension.
bool isStreamingWrite(vector::TransferWriteOp write) {
  VectorType type = write.getVectorType();
  auto memref = dyn_cast<MemRefType>(write.getBase().getType());
  if (!memref || type.getRank() != 1 || write.getMask() || !write.getPermutationMap().isMinorIdentity() ||
      write.hasOutOfBoundsDim())
    return false;
  int64_t bits = type.getNumElements() * type.getElementTypeBitWidth();
  if (bits % (8 * kLineBytes) != 0)
    return false;
  auto [strides, offset] = memref.getStridesAndOffset();
  if (strides.empty() || strides.back() != 1)
    return false;
  // From a line-aligned buffer, every write must start on a line: the offset's known divisor, in bytes, a
  // multiple of the line.
  int64_t divisor = knownOffsetDivisor(write.getBase(), getAsOpFoldResult(write.getIndices()));
  int64_t elementBytes = type.getElementTypeBitWidth() / 8;
  return divisor == 0 || (divisor * elementBytes) % kLineBytes == 0;
}

/// The streaming writes to `buffer` through subviews of it, or nothing when anything else uses it: a read
/// (the kernel computes a temporary in its result), a copy, a scalar store, or an op with unknown effects.
/// With `scope`, only the uses inside it count.
std::optional<SmallVector<vector::TransferWriteOp>> collectStreamingWrites(Value buffer, Region *scope = nullptr) {
  SmallVector<vector::TransferWriteOp> writes;
  SmallVector<Value> worklist{buffer};
  while (!worklist.empty()) {
    Value view = worklist.pop_back_val();
    for (OpOperand &use : view.getUses()) {
      Operation *user = use.getOwner();
      if (scope && !scope->isAncestor(user->getParentRegion()))
        continue;
      if (auto subview = dyn_cast<memref::SubViewOp>(user); subview && subview.getSource() == view) {
        worklist.push_back(subview.getResult());
        continue;
      }
      auto write = dyn_cast<vector::TransferWriteOp>(user);
      if (!write || write.getBase() != view || !isStreamingWrite(write))
        return std::nullopt;
      writes.push_back(write);
    }
  }
  return writes;
}

/// The arguments to stream: statically shaped buffers of at least `minBytes` that the function only
/// writes, with streaming writes alone.
SmallVector<BlockArgument> findStreamedResults(func::FuncOp func, int64_t minBytes) {
  SmallVector<BlockArgument> streamed;
  for (BlockArgument argument : func.getArguments()) {
    auto type = dyn_cast<MemRefType>(argument.getType());
    if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity() || !type.getElementType().isIntOrFloat())
      continue;
    int64_t bytes = type.getNumElements() * type.getElementTypeBitWidth() / 8;
    if (bytes < minBytes)
      continue;
    std::optional<SmallVector<vector::TransferWriteOp>> writes = collectStreamingWrites(argument);
    if (writes && !writes->empty())
      streamed.push_back(argument);
  }
  return streamed;
}

/// Rewrites the streaming writes to `buffer` (through subviews) inside `scope` as non-temporal, line-aligned
/// `vector.store`s.
void storeNonTemporally(RewriterBase &rewriter, Value buffer, Region &scope) {
  SmallVector<vector::TransferWriteOp> writes = *collectStreamingWrites(buffer, &scope);
  for (vector::TransferWriteOp write : writes) {
    rewriter.setInsertionPoint(write);
    rewriter.replaceOpWithNewOp<vector::StoreOp>(write, write.getVector(), write.getBase(), write.getIndices(),
                                                 /*nontemporal=*/true, llvm::Align(kLineBytes));
  }
}

struct LAStreamLargeResultsPass : impl::LAStreamLargeResultsBase<LAStreamLargeResultsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (minBytes < 1) {
      func.emitError("la-stream-large-results: min-bytes must be positive");
      return signalPassFailure();
    }
    if (func.isExternal() || !func.getBody().hasOneBlock())
      return;
    Block &body = func.getBody().front();
    auto terminator = dyn_cast<func::ReturnOp>(body.getTerminator());
    if (!terminator || terminator.getNumOperands() != 0)
      return; // results are out-parameters by now; a function returning values is not a kernel body
    SmallVector<BlockArgument> streamed = findStreamedResults(func, minBytes);
    if (streamed.empty())
      return;
    LLVM_DEBUG(for (BlockArgument argument : streamed) llvm::dbgs()
               << "[" DEBUG_TYPE "] " << func.getSymName() << ": argument " << argument.getArgNumber()
               << " streamed\n");

    // if (every streamed buffer is aligned) { the body, streaming } else { the body }
    IRRewriter rewriter(&getContext());
    Location loc = func.getLoc();
    rewriter.setInsertionPointToStart(&body);
    Value aligned;
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value line = arith::ConstantIndexOp::create(rewriter, loc, kLineBytes);
    for (BlockArgument argument : streamed) {
      Value address = memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, argument);
      Value misalignment = arith::RemUIOp::create(rewriter, loc, address, line);
      Value isAligned = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, misalignment, zero);
      aligned = aligned ? arith::AndIOp::create(rewriter, loc, aligned, isAligned) : isAligned;
    }
    auto version = scf::IfOp::create(rewriter, loc, aligned, /*withElseRegion=*/true);
    // The original body (past the checks) moves into the else branch and is cloned into the then branch.
    Block *fallback = version.elseBlock();
    fallback->getOperations().splice(fallback->begin(), body.getOperations(), std::next(Block::iterator(version)),
                                     Block::iterator(terminator));
    rewriter.setInsertionPointToStart(version.thenBlock());
    IRMapping mapping;
    for (Operation &op : fallback->without_terminator())
      rewriter.clone(op, mapping);
    // x86 lowers a seq_cst fence as `lock or` on some CPUs (Zen, Skylake), which AMD does not document as
    // ordering non-temporal stores; SFENCE is what both vendors prescribe for them.
    if (sfence)
      LLVM::CallIntrinsicOp::create(rewriter, loc, rewriter.getStringAttr("llvm.x86.sse.sfence"), ValueRange());
    else
      LLVM::FenceOp::create(rewriter, loc, LLVM::AtomicOrdering::seq_cst);
    for (BlockArgument argument : streamed)
      storeNonTemporally(rewriter, argument, version.getThenRegion());
  }
};

} // namespace
} // namespace mlir::la
