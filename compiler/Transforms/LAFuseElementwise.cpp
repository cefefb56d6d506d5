//===- LAFuseElementwise.cpp - fuse lowered maps into their consumers -----===//
//
// Upstream's elementwise fusion patterns do the rewriting; this pass only decides what to fuse. A producer
// with one use always fuses. A producer with several uses fuses into each consumer (and then dies) when its
// body is cheap (`q + eps`); a costly one (`sigmoid(q)`: an exp and a division per element) is cheaper to
// materialise once and read back than to recompute in every sweep.
//
//===----------------------------------------------------------------------===//

#include "Transforms/Passes.h"
#include "Transforms/RecomputeCost.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::la {
#define GEN_PASS_DEF_LAFUSEELEMENTWISE
#include "Transforms/Passes.h.inc"

namespace {

/// `x + R` where R is a reduction generic that starts from zero and has no other use ⇒ R started from x.
/// The state update of a chunked causal contraction, `S + k_cᵀ v_c`, then accumulates into S's buffer
/// instead of zero-filling a [D, Dv] tile, computing into it and adding it to S in one more sweep (8% of
/// Flow causal's time at chunk 16). Only the association of the sum changes.
struct FoldAddIntoReductionInit : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp add, PatternRewriter &rewriter) const override {
    if (add.getNumDpsInputs() != 2 || add.getNumDpsInits() != 1 || add.getNumReductionLoops() != 0 ||
        !llvm::all_of(add.getIndexingMapsArray(), [](AffineMap m) { return m.isIdentity(); }))
      return failure();
    Block *body = add.getBody();
    auto yield = cast<linalg::YieldOp>(body->getTerminator());
    auto sum = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
    if (!sum || body->getOperations().size() != 2)
      return failure();
    for (unsigned i = 0; i < 2; ++i) {
      Value reduced = add.getDpsInputs()[i], other = add.getDpsInputs()[1 - i];
      auto reduction = reduced.getDefiningOp<linalg::GenericOp>();
      if (!reduction || !reduction->hasOneUse() || reduction.getNumDpsInits() != 1 ||
          reduction.getNumReductionLoops() == 0 || other.getType() != reduced.getType() ||
          !DominanceInfo().properlyDominates(other, reduction))
        continue;
      // The add must read the two values as its two block arguments, in either order.
      if (!((sum.getLhs() == body->getArgument(0) && sum.getRhs() == body->getArgument(1)) ||
            (sum.getLhs() == body->getArgument(1) && sum.getRhs() == body->getArgument(0))))
        return failure();
      auto fill = reduction.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
      if (!fill || !matchPattern(fill.getInputs()[0], m_AnyZeroFloat()))
        continue;
      // The reduction's body must accumulate with an add into its output.
      Block *rbody = reduction.getBody();
      auto ryield = cast<linalg::YieldOp>(rbody->getTerminator());
      auto acc = ryield.getValues()[0].getDefiningOp<arith::AddFOp>();
      Value out = rbody->getArguments().back();
      if (!acc || (acc.getLhs() != out && acc.getRhs() != out))
        continue;
      rewriter.modifyOpInPlace(reduction, [&] { reduction.getDpsInitsMutable()[0].set(other); });
      rewriter.replaceOp(add, reduction->getResults());
      return success();
    }
    return failure();
  }
};

/// Whether `generic` only widens a tensor elementwise (an f16/bf16 argument to f32, as la-specialize
/// computes a half-precision entry): one input, identity maps, a body of one `arith.extf`. Reading a part
/// of it is cheaper from the narrow input than from a materialised wide copy.
bool isWidening(linalg::GenericOp generic) {
  if (!generic || generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumReductionLoops() != 0 ||
      !llvm::all_of(generic.getIndexingMapsArray(), [](AffineMap m) { return m.isIdentity(); }) ||
      !isa<RankedTensorType>(generic.getDpsInputs()[0].getType()))
    return false;
  Block *body = generic.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto extf = yield.getValues()[0].getDefiningOp<arith::ExtFOp>();
  return body->getOperations().size() == 2 && extf && extf.getIn() == body->getArgument(0);
}

/// `tensor.extract %g[i]` of a widening generic ⇒ the input's element at i, widened.
/// A scalar read (AFT-full's exact fallback reading its logits by position) then needs no materialised
/// copy of a widened argument: the [T, T] bias in f32 was 64 MiB a slice at T = 4096 on the GPU, written
/// before anything else ran, where the f16 argument can be read.
struct ExtractFromWidening : OpRewritePattern<tensor::ExtractOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExtractOp extract, PatternRewriter &rewriter) const override {
    auto generic = extract.getTensor().getDefiningOp<linalg::GenericOp>();
    if (!isWidening(generic))
      return failure();
    Block *body = generic.getBody();
    IRMapping mapping;
    for (auto [input, argument] : llvm::zip(generic.getDpsInputs(), body->getArguments()))
      mapping.map(argument,
                  tensor::ExtractOp::create(rewriter, extract.getLoc(), input, extract.getIndices()).getResult());
    for (Operation &op : body->without_terminator())
      rewriter.clone(op, mapping);
    Value yielded = cast<linalg::YieldOp>(body->getTerminator()).getValues()[0];
    rewriter.replaceOp(extract, mapping.lookupOrDefault(yielded));
    return success();
  }
};

/// `tensor.extract_slice` of a widening generic over two or more of its dimensions (a tile of a pairs
/// tensor: la-chunk-scans' pairs tiles of AFT-full's widened bias) ⇒ the generic on that tile of its input
/// (upstream's TilingInterface swap), so each tile is widened where it is read and no whole widened copy is
/// built for the tiles. A slice along one dimension (a chunk of the sequence) is left to the target: the
/// CUDA target widens a chunk loop's slices itself (la-gpu-fuse-producers-into-loops) into buffers its
/// tensor cores read, which a widening fused into both of a chunk's contractions would not be.
struct ExtractTileOfWidening : OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExtractSliceOp slice, PatternRewriter &rewriter) const override {
    auto generic = slice.getSource().getDefiningOp<linalg::GenericOp>();
    if (!isWidening(generic) || !slice.hasUnitStride() || slice.getSourceType().getRank() != slice.getType().getRank())
      return failure();
    int64_t slicedDims = 0;
    for (auto [size, whole] : llvm::zip(slice.getMixedSizes(), slice.getSourceType().getShape()))
      slicedDims += getConstantIntValue(size) != whole;
    if (slicedDims < 2)
      return failure();
    FailureOr<TilingResult> tiled =
        tensor::replaceExtractSliceWithTiledProducer(rewriter, slice, cast<OpResult>(slice.getSource()));
    if (failed(tiled))
      return failure();
    rewriter.replaceOp(slice, tiled->tiledValues);
    return success();
  }
};

/// Bytes of `value`, a tensor of static shape (0 otherwise).
int64_t tensorBytes(Value value) {
  auto tensor = dyn_cast<RankedTensorType>(value.getType());
  if (!tensor || !tensor.hasStaticShape() || !tensor.getElementType().isIntOrFloat())
    return 0;
  return tensor.getNumElements() * llvm::divideCeil(tensor.getElementTypeBitWidth(), 8);
}

/// Whether `op` is a product of two matrices: a two-input multiply-add contraction with one m, one n and
/// one k dimension, as a target's matrix units run it (not a matrix-vector product, which has no n).
bool isMatrixProduct(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || !linalg::isaContractionOpInterface(op))
    return false;
  FailureOr<linalg::ContractionDimensions> dims = linalg::inferContractionDims(op);
  return succeeded(dims) && dims->m.size() == 1 && dims->n.size() == 1 && dims->k.size() == 1;
}

struct LAFuseElementwisePass : impl::LAFuseElementwiseBase<LAFuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t maxCost = maxRecomputeCost, maxLargeCost = maxLargeRecomputeCost, largeBytes = largeResultBytes;
    bool keepContractions = this->keepContractions;
    linalg::ControlFusionFn control = [=](OpOperand *fused) {
      auto producer = fused->get().getDefiningOp<linalg::GenericOp>();
      if (!producer)
        return false;
      int64_t cost = recomputeCost(*producer.getBody());
      auto consumer = cast<linalg::LinalgOp>(fused->getOwner());
      if (keepContractions && !isWidening(producer) && isMatrixProduct(consumer))
        return false;
      // A producer that does not vary along the consumer's innermost loop is evaluated once per vector
      // lane there (16x the work with AVX-512), or once per block in a register-tiled contraction.
      AffineMap map = consumer.getMatchingIndexingMap(fused);
      unsigned innermost = consumer.getNumLoops() - 1;
      bool variesInnermost = consumer.getNumLoops() == 0 || map.isFunctionOfDim(innermost);
      if (!variesInnermost && cost > kCheapRecomputeCost)
        return false;
      // In a contraction whose innermost loop is the reduction (a row-times-row dot product, GLA's chunk scores
      // q ⊙ e^{b} · (k ⊙ e^{-b})ᵀ), an operand is read in place, not packed: a producer that does not vary
      // along another loop is evaluated again on each of its iterations (C times per chunk for GLA's keys).
      SmallVector<utils::IteratorType> iterators = consumer.getIteratorTypesArray();
      bool dotProduct =
          consumer.getNumDpsInputs() >= 2 && !iterators.empty() && iterators.back() == utils::IteratorType::reduction;
      bool broadcast = llvm::any_of(llvm::seq<unsigned>(0, consumer.getNumLoops()),
                                    [&](unsigned loop) { return !map.isFunctionOfDim(loop); });
      if (dotProduct && broadcast && cost > kCheapRecomputeCost)
        return false;
      if (producer->hasOneUse())
        return true;
      // A producer some user reads by position (a tensor.extract in a region, not an operand fusion can
      // absorb) is materialised anyway: its other consumers read it back. Recomputing a masking select there
      // costs more than the read: LLVM turns `max(acc, select(c, x, -inf))` into a conditional reduction it
      // does not vectorise (causal AFT-full's row maxima: at B = 1, T = 2048 on one thread the kernel takes
      // 16 instead of 37 ms).
      if (llvm::any_of(producer->getUsers(), [](Operation *user) { return !isa<linalg::LinalgOp>(user); }))
        return false;
      if (largeBytes > 0 && tensorBytes(fused->get()) > largeBytes)
        return cost <= std::max(maxCost, maxLargeCost);
      return cost <= maxCost;
    };
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    patterns.add<FoldAddIntoReductionInit, ExtractFromWidening, ExtractTileOfWidening>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::la
