//===- LARegisterTileContractions.cpp - register blocks for contractions --===//
//
// Loop vectorisers give a contraction one vector accumulator per output row and reload it every step of
// the reduction: a load, an FMA and a store per 16 lanes, about a quarter of the FMA peak. A register block
// keeps R rows × V lanes of the output in registers for the whole reduction, so each step is R broadcasts,
// ⌈V/16⌉ loads and R·⌈V/16⌉ FMAs. This pass builds those blocks from upstream pieces: `scf::tileUsingSCF`
// for the block loops, `scf::peelForLoopAndSimplifyBounds` for ragged trips, `linalg::vectorize` for the
// block body, and `hoistLoopInvariantSubsets` to carry the accumulator in registers across the reduction.
//
//===----------------------------------------------------------------------===//

#include "Transforms/BlockEpilogues.h"
#include "Transforms/Passes.h"
#include "Transforms/ReductionPanels.h"
#include "Transforms/RegisterBlockPatterns.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir::la {
#define GEN_PASS_DEF_LAREGISTERTILECONTRACTIONS
#include "Transforms/Passes.h.inc"

namespace {

/// Marks a block-sized generic between tiling and vectorisation.
constexpr StringLiteral kBlockAttr = "la.register_block";

/// How one contraction is cut into register blocks.
struct RegisterBlockPlan {
  /// Tile size per loop of the generic: the block shape.
  SmallVector<int64_t> blockShape;
  /// Order of the block loops: other parallel loops, the row loop, the vector loop, then the reductions.
  SmallVector<int64_t> loopOrder;
  /// The output's innermost loop, vectorised.
  unsigned vectorLoop = 0;
  /// The output loop cut into blocks of rows, if the output has one longer than 1.
  std::optional<unsigned> rowLoop;
  /// Inputs that read the vector loop with a stride (`k[m, d]` in `q·kᵀ`): each is copied once into a
  /// layout where the vector loop is innermost, which the blocks' reuse of it pays for many times over.
  SmallVector<unsigned> inputsToTranspose;
};

/// Smallest number of times the blocks read each element of an input for a transposed copy of that input
/// to pay off (the copy is one strided read and one write per element).
constexpr int64_t kMinReuseForTranspose = 8;

struct BlockLimits {
  int64_t vectorTile, vectorWidth, registerBudget, maxRows, reductionPanel;
};

/// Whether the body evaluates a transcendental function on a value that changes with the output position
/// (GLA's per-key decay e^{G_n,d - G_m,d} in every summand). Such a contraction is bound by that function,
/// not by FMAs, and register blocks would only multiply its code size. A function of the reduction
/// position alone (Flow's e^{x_m} in kᵀ(v·e^x)) is evaluated once per step and broadcast, so it is fine.
bool hasPerOutputTranscendental(linalg::GenericOp op) {
  auto isOutputLoop = [&](unsigned loop) {
    return op.getIteratorTypesArray()[loop] == utils::IteratorType::parallel;
  };
  llvm::DenseSet<Value> varying;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    for (unsigned loop = 0; loop < map.getNumDims(); ++loop)
      if (isOutputLoop(loop) && map.isFunctionOfDim(loop))
        varying.insert(op.getMatchingBlockArgument(input));
  }
  bool found = false;
  for (Operation &inner : op.getBody()->without_terminator()) {
    bool dependsOnOutput = llvm::any_of(inner.getOperands(), [&](Value v) { return varying.contains(v); });
    if (auto index = dyn_cast<linalg::IndexOp>(inner))
      dependsOnOutput = isOutputLoop(index.getDim());
    if (!dependsOnOutput)
      continue;
    found |= isa<math::MathDialect>(inner.getDialect());
    varying.insert(inner.getResults().begin(), inner.getResults().end());
  }
  return found;
}

/// Returns the register-block plan of `op`, or nothing when `op` is not a contraction this pass improves:
/// dynamic shapes, several outputs, no reduction, or a vector loop that some input reads with a stride
/// where a transposed copy of that input would not pay off.
std::optional<RegisterBlockPlan> planRegisterBlock(linalg::GenericOp op, const BlockLimits &limits) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
    return std::nullopt;
  if (hasPerOutputTranscendental(op))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  AffineMap outputMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (outputMap.getNumResults() == 0 || !outputMap.isProjectedPermutation())
    return std::nullopt;
  unsigned vectorLoop = outputMap.getDimPosition(outputMap.getNumResults() - 1);
  if (ranges[vectorLoop] < limits.vectorWidth / 2 || failed(linalg::vectorizeOpPrecondition(op)))
    return std::nullopt;
  // The row loop: the innermost other output loop that is longer than one.
  std::optional<unsigned> rowLoop;
  for (int result = static_cast<int>(outputMap.getNumResults()) - 2; result >= 0 && !rowLoop; --result) {
    unsigned loop = outputMap.getDimPosition(result);
    if (ranges[loop] > 1)
      rowLoop = loop;
  }
  int64_t work = 1;
  for (int64_t range : ranges)
    work *= range;
  RegisterBlockPlan plan;
  plan.vectorLoop = vectorLoop;
  plan.rowLoop = rowLoop;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!map.isProjectedPermutation())
      return std::nullopt;
    if (!map.isFunctionOfDim(vectorLoop) || map.getDimPosition(map.getNumResults() - 1) == vectorLoop)
      continue;
    // A strided vector loop: worth a transposed copy in a matrix product (there is a row loop) that
    // reuses the input enough; a dot-product shape without rows is left to the loop vectoriser.
    int64_t elements = cast<ShapedType>(input->get().getType()).getNumElements();
    if (!rowLoop || work < kMinReuseForTranspose * elements)
      return std::nullopt;
    plan.inputsToTranspose.push_back(input->getOperandNumber());
  }

  plan.blockShape.assign(ranges.size(), 1);
  int64_t lanes = std::min(ranges[vectorLoop], limits.vectorTile);
  plan.blockShape[vectorLoop] = lanes;
  int64_t registersPerRow = llvm::divideCeil(lanes, limits.vectorWidth);
  if (rowLoop) {
    int64_t rows = std::max<int64_t>(1, limits.registerBudget / registersPerRow);
    plan.blockShape[*rowLoop] = std::min({rows, limits.maxRows, ranges[*rowLoop]});
  }
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned loop = 0; loop < ranges.size(); ++loop)
    if (iterators[loop] == utils::IteratorType::parallel && loop != vectorLoop && loop != rowLoop)
      plan.loopOrder.push_back(loop);
  if (rowLoop)
    plan.loopOrder.push_back(*rowLoop);
  plan.loopOrder.push_back(vectorLoop);
  for (unsigned loop = 0; loop < ranges.size(); ++loop)
    if (iterators[loop] == utils::IteratorType::reduction)
      plan.loopOrder.push_back(loop);
  return plan;
}

/// The reduction loop of `op` to cut into panels of `limits.reductionPanel` (ReductionPanels.h): the only
/// reduction loop, at least two panels long, of a contraction whose operands each row block reads again.
std::optional<unsigned> panelLoop(linalg::GenericOp op, const RegisterBlockPlan &plan, const BlockLimits &limits) {
  if (limits.reductionPanel == 0 || !plan.rowLoop || op->hasAttr(kPanelAttr) || op.getNumReductionLoops() != 1)
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::divideCeil(ranges[*plan.rowLoop], plan.blockShape[*plan.rowLoop]) < 2)
    return std::nullopt;
  SmallVector<unsigned> reductions;
  op.getReductionDims(reductions);
  if (ranges[reductions.front()] < 2 * limits.reductionPanel)
    return std::nullopt;
  return reductions.front();
}

/// Tiles a transposed copy into `width`×`width` blocks marked for vectorisation, when both moved dimensions
/// are multiples of `width`: each block is `width` row loads, one `vector.transpose` (shuffles) and `width`
/// row stores, where the scalar loop nest moved one element at a time (7% of Flow causal at 16-position
/// chunks). Other shapes keep the scalar copy.
void tileTransposedCopy(RewriterBase &rewriter, linalg::TransposeOp copy, int64_t width) {
  ArrayRef<int64_t> permutation = copy.getPermutation();
  auto type = cast<RankedTensorType>(copy.getInit().getType());
  int64_t rank = type.getRank();
  // Result dimension `last` is contiguous in the copy; `moved` is the one contiguous in the source.
  int64_t last = rank - 1;
  int64_t moved = llvm::find(permutation, rank - 1) - permutation.begin();
  if (moved == last || type.getDimSize(last) % width != 0 || type.getDimSize(moved) % width != 0)
    return;
  SmallVector<int64_t> tile(rank, 1);
  tile[last] = tile[moved] = width;
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(copy.getContext(), tile));
  rewriter.setInsertionPoint(copy);
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileUsingSCF(rewriter, cast<TilingInterface>(copy.getOperation()), options);
  if (failed(tiled))
    return;
  for (Operation *block : tiled->tiledOps)
    block->setAttr(kBlockAttr, rewriter.getUnitAttr());
  rewriter.replaceOp(copy, tiled->replacements);
}

/// Where a copy of `value` read by `op` can be made once: in front of the outermost loop around `op` that
/// `value` is defined outside of, else in front of `op`. A product tiled into blocks before it is planned
/// (an epilogue's blocks, BlockEpilogues.h) sits in a loop over its row blocks; its copy then is made once,
/// not once per block.
Operation *getCopyInsertionPoint(Operation *op, Value value) {
  Operation *point = op;
  for (auto loop = op->getParentOfType<scf::ForOp>(); loop && loop.isDefinedOutsideOfLoop(value);
       loop = loop->getParentOfType<scf::ForOp>())
    point = loop;
  return point;
}

/// Replaces input `operandNumber` of `op` by a copy whose innermost dim is the one indexed by `vectorLoop`.
void transposeInput(RewriterBase &rewriter, linalg::GenericOp op, unsigned operandNumber, unsigned vectorLoop,
                    int64_t vectorWidth) {
  OpOperand &input = op->getOpOperand(operandNumber);
  AffineMap map = op.getMatchingIndexingMap(&input);
  SmallVector<int64_t> permutation;
  for (unsigned result = 0; result < map.getNumResults(); ++result)
    if (map.getDimPosition(result) != vectorLoop)
      permutation.push_back(result);
  permutation.push_back(*map.getResultPosition(rewriter.getAffineDimExpr(vectorLoop)));

  auto type = cast<RankedTensorType>(input.get().getType());
  SmallVector<int64_t> shape;
  SmallVector<AffineExpr> results;
  for (int64_t source : permutation) {
    shape.push_back(type.getDimSize(source));
    results.push_back(map.getResult(source));
  }
  rewriter.setInsertionPoint(getCopyInsertionPoint(op, input.get()));
  Location loc = op.getLoc();
  Value empty = tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
  auto copy = linalg::TransposeOp::create(rewriter, loc, input.get(), empty, permutation);
  Value transposed = copy->getResult(0);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  maps[operandNumber] = AffineMap::get(map.getNumDims(), 0, results, op.getContext());
  rewriter.modifyOpInPlace(op, [&] {
    input.set(transposed);
    op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
  });
  tileTransposedCopy(rewriter, copy, vectorWidth);
}

/// Peels the ragged last trip of each loop of a tile loop nest (`loops` outermost first), outer to inner.
/// Peeling a loop copies its body into the remainder loop, so the loops inside that copy are peeled too:
/// every block ends up with a static shape.
void peelOuterToInner(RewriterBase &rewriter, ArrayRef<LoopLikeOpInterface> loops) {
  SmallVector<scf::ForOp> worklist;
  for (LoopLikeOpInterface loop : llvm::reverse(loops))
    if (auto forOp = dyn_cast<scf::ForOp>(loop.getOperation()))
      worklist.push_back(forOp);
  while (!worklist.empty()) {
    scf::ForOp loop = worklist.pop_back_val();
    scf::ForOp remainder;
    if (failed(scf::peelForLoopAndSimplifyBounds(rewriter, loop, remainder)))
      continue;
    SmallVector<scf::ForOp> nested;
    remainder.getBody()->walk<WalkOrder::PreOrder>([&](scf::ForOp inner) { nested.push_back(inner); });
    worklist.append(nested.rbegin(), nested.rend());
  }
}

/// Tiles `op` into register blocks and peels ragged block loops; the block-sized generics carry
/// `kBlockAttr`.
LogicalResult tileIntoBlocks(RewriterBase &rewriter, linalg::GenericOp op, const RegisterBlockPlan &plan,
                             int64_t vectorWidth) {
  for (unsigned operandNumber : plan.inputsToTranspose)
    transposeInput(rewriter, op, operandNumber, plan.vectorLoop, vectorWidth);
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(op.getContext(), plan.blockShape));
  options.setInterchange(plan.loopOrder);
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileUsingSCF(rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled))
    return failure();
  for (Operation *block : tiled->tiledOps)
    block->setAttr(kBlockAttr, rewriter.getUnitAttr());
  rewriter.replaceOp(op, tiled->replacements);
  peelOuterToInner(rewriter, tiled->loops);
  return success();
}

/// Vectorises every marked block that has a static shape; a block left dynamic (its loop could not be
/// peeled) stays a generic and becomes scalar loops.
void vectorizeBlocks(RewriterBase &rewriter, func::FuncOp func) {
  SmallVector<linalg::LinalgOp> blocks;
  func.walk([&](linalg::LinalgOp op) {
    if (op->hasAttr(kBlockAttr))
      blocks.push_back(op);
  });
  for (linalg::LinalgOp block : blocks) {
    block->removeAttr(kBlockAttr);
    if (llvm::any_of(block.getStaticLoopRanges(), ShapedType::isDynamic))
      continue;
    // Tiling offsets index computations (`linalg.index` + the block origin) with affine.apply, which the
    // vectoriser does not take: spell them in arith.
    SmallVector<affine::AffineApplyOp> applies(block.getBlock()->getOps<affine::AffineApplyOp>());
    for (affine::AffineApplyOp apply : applies) {
      rewriter.setInsertionPoint(apply);
      std::optional<SmallVector<Value, 8>> expanded =
          affine::expandAffineMap(rewriter, apply.getLoc(), apply.getAffineMap(), apply.getOperands());
      if (expanded)
        rewriter.replaceOp(apply, (*expanded)[0]);
    }
    rewriter.setInsertionPoint(block);
    FailureOr<linalg::VectorizationResult> vectorized = linalg::vectorize(rewriter, block);
    if (succeeded(vectorized))
      rewriter.replaceOp(block, vectorized->replacements);
  }
}

/// Canonicalisation patterns of every loaded dialect and registered op, as the canonicalizer collects them.
void populateCanonicalizationPatterns(MLIRContext *context, RewritePatternSet &patterns) {
  for (Dialect *dialect : context->getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName op : context->getRegisteredOperations())
    op.getCanonicalizationPatterns(patterns, context);
}

/// Runs the elementwise consumer of each matrix product (a contraction with a row loop) on its register
/// blocks (BlockEpilogues.h). The fused products, now block-sized, are planned again with the others.
LogicalResult fuseBlockEpilogues(RewriterBase &rewriter, func::FuncOp func, const BlockLimits &limits) {
  struct EpilogueTarget {
    linalg::GenericOp contraction, epilogue;
    RegisterBlockPlan plan;
  };
  SmallVector<EpilogueTarget> targets;
  llvm::SmallPtrSet<Operation *, 4> epilogues;
  func.walk([&](linalg::GenericOp op) {
    std::optional<RegisterBlockPlan> plan = planRegisterBlock(op, limits);
    if (!plan || !plan->rowLoop)
      return;
    // A consumer of two products (AFT's num / den) is fused with the first; the second is sliced.
    linalg::GenericOp epilogue = findEpilogue(op->getResult(0));
    if (epilogue && epilogues.insert(epilogue).second)
      targets.push_back({op, epilogue, std::move(*plan)});
  });
  // Causal chunk loops write their output a chunk at a time: a consumer of that runs on each chunk.
  SmallVector<std::pair<OpResult, linalg::GenericOp>> loopTargets;
  func.walk([&](scf::ForOp loop) {
    for (OpResult result : loop.getResults()) {
      auto insert = loop.getYieldedValues()[result.getResultNumber()].getDefiningOp<tensor::InsertSliceOp>();
      if (!insert || llvm::count_if(insert.getSourceType().getShape(), [](int64_t size) { return size > 1; }) < 2)
        continue;
      if (linalg::GenericOp epilogue = findEpilogue(result))
        if (epilogues.insert(epilogue).second)
          loopTargets.emplace_back(result, epilogue);
    }
  });
  if (targets.empty() && loopTargets.empty())
    return success();
  for (auto [result, epilogue] : loopTargets)
    (void)fuseEpilogueIntoLoop(rewriter, result, epilogue, kBlockAttr); // an optimisation: unfused is fine
  for (EpilogueTarget &target : targets) {
    Location loc = target.epilogue.getLoc(); // the ops are replaced before a failure is known
    FailureOr<SmallVector<LoopLikeOpInterface>> loops = fuseEpilogueIntoBlocks(
        rewriter, target.contraction, target.epilogue, target.plan.blockShape, target.plan.loopOrder, kBlockAttr);
    if (failed(loops))
      return emitError(loc, "la-register-tile-contractions: fusing this consumer into register blocks failed");
    peelOuterToInner(rewriter, *loops);
  }
  // Static shapes for the peeled blocks, and block-sized accumulators instead of slices of N×Dv ones.
  RewritePatternSet cleanup(func.getContext());
  populateCanonicalizationPatterns(func.getContext(), cleanup);
  tensor::populateFoldTensorEmptyPatterns(cleanup);
  return applyPatternsGreedily(func, std::move(cleanup));
}

struct LARegisterTileContractionsPass : impl::LARegisterTileContractionsBase<LARegisterTileContractionsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *context = &getContext();
    BlockLimits limits{vectorTile, vectorWidth, registerBudget, maxRows, reductionPanel};
    if (limits.vectorTile < 1 || limits.vectorWidth < 1 || limits.registerBudget < 1 || limits.maxRows < 1 ||
        limits.reductionPanel < 0) {
      func.emitError("la-register-tile-contractions: every option must be positive (reduction-panel: or 0)");
      return signalPassFailure();
    }
    IRRewriter rewriter(context);

    // Long reductions first become panel loops; the panel contractions are then blocked like the others.
    struct PanelTarget {
      linalg::GenericOp op;
      unsigned reductionLoop, rowLoop;
    };
    SmallVector<PanelTarget> panelTargets;
    func.walk([&](linalg::GenericOp op) {
      if (std::optional<RegisterBlockPlan> plan = planRegisterBlock(op, limits))
        if (std::optional<unsigned> loop = panelLoop(op, *plan, limits))
          panelTargets.push_back({op, *loop, *plan->rowLoop});
    });
    for (PanelTarget &target : panelTargets) {
      Location loc = target.op.getLoc(); // the op may be replaced before a failure is known
      if (failed(tileReductionIntoPanels(rewriter, target.op, target.reductionLoop, target.rowLoop,
                                         limits.reductionPanel))) {
        emitError(loc, "la-register-tile-contractions: tiling the reduction into panels failed");
        return signalPassFailure();
      }
    }
    if (!panelTargets.empty()) {
      // Static shapes for the peeled last panel; and a fused prologue writes a slice of a sequence-long
      // tensor.empty: a panel-sized one of its own becomes one small buffer reused by every panel.
      RewritePatternSet panelCleanup(context);
      populateCanonicalizationPatterns(context, panelCleanup);
      tensor::populateFoldTensorEmptyPatterns(panelCleanup);
      if (failed(applyPatternsGreedily(func, std::move(panelCleanup))))
        return signalPassFailure();
    }

    if (fuseEpilogues && failed(fuseBlockEpilogues(rewriter, func, limits)))
      return signalPassFailure();

    SmallVector<std::pair<linalg::GenericOp, RegisterBlockPlan>> targets;
    func.walk([&](linalg::GenericOp op) {
      if (std::optional<RegisterBlockPlan> plan = planRegisterBlock(op, limits))
        targets.emplace_back(op, std::move(*plan));
    });
    // Fused epilogues are marked for vectorisation even where no contraction is left to block.
    bool hasMarkedBlocks = func.walk([](linalg::LinalgOp op) {
                                 return op->hasAttr(kBlockAttr) ? WalkResult::interrupt() : WalkResult::advance();
                               }).wasInterrupted();
    if (targets.empty() && !hasMarkedBlocks)
      return;
    for (auto &[op, plan] : targets)
      if (failed(tileIntoBlocks(rewriter, op, plan, limits.vectorWidth))) {
        op.emitError("la-register-tile-contractions: tiling failed");
        return signalPassFailure();
      }

    // Fold the peeled bounds into static block shapes before vectorising.
    RewritePatternSet canonicalization(context);
    populateCanonicalizationPatterns(context, canonicalization);
    FrozenRewritePatternSet frozenCanonicalization(std::move(canonicalization));
    if (failed(applyPatternsGreedily(func, frozenCanonicalization)))
      return signalPassFailure();
    vectorizeBlocks(rewriter, func);

    // Broadcasting reads become read + vector.broadcast, and elementwise ops move above the broadcasts,
    // so a fused `exp(x[m])` runs once per block row instead of once per lane.
    RewritePatternSet vectorCleanup(context);
    vector::populateVectorTransferPermutationMapLoweringPatterns(vectorCleanup);
    vector::populateSinkVectorOpsPatterns(vectorCleanup);
    vector::populateCastAwayVectorLeadingOneDimPatterns(vectorCleanup);
    populateRegisterBlockCleanupPatterns(vectorCleanup);
    populateCanonicalizationPatterns(context, vectorCleanup);
    if (failed(applyPatternsGreedily(func, std::move(vectorCleanup))))
      return signalPassFailure();

    // Carry each accumulator block across its reduction loops in registers.
    func.walk<WalkOrder::PostOrder>([&](scf::ForOp loop) {
      hoistLoopInvariantSubsets(rewriter, cast<LoopLikeOpInterface>(loop.getOperation()));
    });
    if (failed(applyPatternsGreedily(func, frozenCanonicalization)))
      return signalPassFailure();
  }
};

} // namespace
} // namespace mlir::la
