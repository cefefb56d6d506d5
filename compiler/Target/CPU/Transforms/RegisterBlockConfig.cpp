//===- RegisterBlockConfig.cpp - how a contraction becomes register blocks -===//

#include "Target/CPU/Transforms/RegisterBlockConfig.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace mlir::la {

namespace {

/// Smallest number of times the blocks read each element of an input for a transposed copy of that input
/// to pay off (the copy is one strided read and one write per element).
constexpr int64_t kMinReuseForTranspose = 8;

/// Whether the body evaluates a transcendental function on a value that changes with the output position
/// (GLA's per-key decay e^{G_n,d - G_m,d} in every summand). Such a contraction is bound by that function,
/// not by FMAs, and register blocks would only multiply its code size. A function of the reduction
/// position alone (Flow's e^{x_m} in kᵀ(v·e^x)) is evaluated once per step and broadcast, so it is fine.
bool hasPerOutputTranscendental(linalg::GenericOp op) {
  auto isOutputLoop = [&](unsigned loop) { return op.getIteratorTypesArray()[loop] == utils::IteratorType::parallel; };
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

/// The reduction loop of `op` to cut into panels of `limits.reductionPanel` (ReductionPanels.h): the only
/// reduction loop, at least two panels long, of a contraction whose operands each row block reads again.
std::optional<int64_t> planPanelLoop(linalg::GenericOp op, ArrayRef<int64_t> ranges, ArrayRef<int64_t> blockShape,
                                     std::optional<int64_t> rowLoop, const RegisterBlockLimits &limits) {
  if (limits.reductionPanel == 0 || !rowLoop || op.getNumReductionLoops() != 1)
    return std::nullopt;
  if (llvm::divideCeil(ranges[*rowLoop], blockShape[*rowLoop]) < 2)
    return std::nullopt;
  SmallVector<unsigned> reductions;
  op.getReductionDims(reductions);
  if (ranges[reductions.front()] < 2 * limits.reductionPanel)
    return std::nullopt;
  return reductions.front();
}

} // namespace

/// Whether `map`, an input map of `op`, reads a window (la.window fused into its consumer, WindowToLinalg.cpp):
/// each result a loop, or a parallel loop plus a reduction loop (a position and its offset), no loop twice.
static bool isWindowRead(linalg::GenericOp op, AffineMap map) {
  if (map.isProjectedPermutation())
    return false;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  llvm::SmallBitVector seen(map.getNumDims());
  auto use = [&](AffineExpr expr) {
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim || seen.test(dim.getPosition()))
      return std::optional<unsigned>();
    seen.set(dim.getPosition());
    return std::optional<unsigned>(dim.getPosition());
  };
  for (AffineExpr result : map.getResults()) {
    if (isa<AffineDimExpr>(result)) {
      if (!use(result))
        return false;
      continue;
    }
    auto sum = dyn_cast<AffineBinaryOpExpr>(result);
    if (!sum || sum.getKind() != AffineExprKind::Add)
      return false;
    std::optional<unsigned> position = use(sum.getLHS()), offset = use(sum.getRHS());
    if (!position || !offset || iterators[*position] != utils::IteratorType::parallel ||
        iterators[*offset] != utils::IteratorType::reduction)
      return false;
  }
  return true;
}

/// The loops that are a window position (the `x` of `x + u`) in some window read of `op`.
static llvm::SmallBitVector getWindowPositions(linalg::GenericOp op) {
  llvm::SmallBitVector positions(op.getNumLoops());
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!isWindowRead(op, map))
      continue;
    for (AffineExpr result : map.getResults())
      if (auto sum = dyn_cast<AffineBinaryOpExpr>(result))
        positions.set(cast<AffineDimExpr>(sum.getLHS()).getPosition());
  }
  return positions;
}

void dropWindowOffsets(linalg::GenericOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  bool changed = false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap &map = maps[input->getOperandNumber()];
    if (!isWindowRead(op, map))
      continue;
    SmallVector<AffineExpr> results;
    bool unitOffsets = true;
    for (AffineExpr result : map.getResults()) {
      auto sum = dyn_cast<AffineBinaryOpExpr>(result);
      if (sum && ranges[cast<AffineDimExpr>(sum.getRHS()).getPosition()] != 1)
        unitOffsets = false;
      results.push_back(sum ? sum.getLHS() : result);
    }
    if (!unitOffsets)
      continue;
    map = AffineMap::get(map.getNumDims(), 0, results, op.getContext());
    changed = true;
  }
  if (changed)
    op.setIndexingMapsAttr(Builder(op.getContext()).getAffineMapArrayAttr(maps));
}

std::optional<RegisterBlockAttr> planRegisterBlock(linalg::GenericOp op, const RegisterBlockLimits &limits) {
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
  // The vector loop: the output's innermost loop.
  int64_t vectorLoop = outputMap.getDimPosition(outputMap.getNumResults() - 1);
  // The vectoriser takes no window read (every window read has a position); a block steps the window's
  // offsets one at a time, where dropWindowOffsets makes it a plain read the vectoriser takes.
  llvm::SmallBitVector windowPositions = getWindowPositions(op);
  bool readsWindows = windowPositions.any();
  if (ranges[vectorLoop] < limits.vectorWidth / 2 || (!readsWindows && failed(linalg::vectorizeOpPrecondition(op))))
    return std::nullopt;
  // The row loop: the innermost other output loop that is longer than one; with window reads, the innermost
  // window position among them, so that the rows' windows overlap and each row's loads are mostly the
  // previous row's (aft_conv at B = 2, 32×128 positions, 8 heads of 64: rows over heads 23 ms, over
  // positions 19.5 ms, `lac run --threads 2`).
  std::optional<int64_t> rowLoop;
  for (bool windowsOnly : {true, false}) {
    if (windowsOnly && !readsWindows)
      continue;
    for (int result = static_cast<int>(outputMap.getNumResults()) - 2; result >= 0 && !rowLoop; --result) {
      unsigned loop = outputMap.getDimPosition(result);
      if (ranges[loop] > 1 && (!windowsOnly || windowPositions.test(loop)))
        rowLoop = loop;
    }
  }
  int64_t work = 1;
  for (int64_t range : ranges)
    work *= range;
  // Inputs that read the vector loop with a stride (`k[m, d]` in `q·kᵀ`): each is copied once into a layout
  // where the vector loop is innermost, which the blocks' reuse of it pays for many times over.
  SmallVector<int64_t> transposeInputs;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (isWindowRead(op, map)) {
      // A window read steps its offset loops one at a time in a block, where it is a shifted plain read;
      // it must read the vector loop contiguously (transposing a window is not worth it).
      if (map.getResult(map.getNumResults() - 1) != getAffineDimExpr(vectorLoop, op.getContext()))
        return std::nullopt;
      continue;
    }
    if (!map.isProjectedPermutation())
      return std::nullopt;
    if (!map.isFunctionOfDim(vectorLoop) ||
        map.getDimPosition(map.getNumResults() - 1) == static_cast<unsigned>(vectorLoop))
      continue;
    // A strided vector loop: worth a transposed copy in a matrix product (there is a row loop) that
    // reuses the input enough; a dot-product shape without rows is left to the loop vectoriser.
    int64_t elements = cast<ShapedType>(input->get().getType()).getNumElements();
    if (!rowLoop || work < kMinReuseForTranspose * elements)
      return std::nullopt;
    transposeInputs.push_back(input->getOperandNumber());
  }

  // The block: up to vectorTile lanes, as many rows as the accumulators' registers allow, 1 elsewhere. The
  // lanes are a power of two (a 48-wide loop runs as a 32-lane block and a peeled 16-lane one): LLVM widens a
  // vector of another length to the next power of two and assembles its loads and stores lane by lane
  // (linear attention at D = 48 took 7.6 times as long as at D = 64).
  SmallVector<int64_t> blockShape(ranges.size(), 1);
  int64_t lanes =
      static_cast<int64_t>(llvm::bit_floor(static_cast<uint64_t>(std::min(ranges[vectorLoop], limits.vectorTile))));
  blockShape[vectorLoop] = lanes;
  int64_t registersPerRow = llvm::divideCeil(lanes, limits.vectorWidth);
  if (rowLoop) {
    int64_t rows = std::max<int64_t>(1, limits.registerBudget / registersPerRow);
    blockShape[*rowLoop] = std::min({rows, limits.maxRows, ranges[*rowLoop]});
  }
  // The block loops: other parallel loops, the row loop, the vector loop, then the reductions.
  SmallVector<int64_t> loopOrder;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (int64_t loop = 0, e = ranges.size(); loop < e; ++loop)
    if (iterators[loop] == utils::IteratorType::parallel && loop != vectorLoop && loop != rowLoop)
      loopOrder.push_back(loop);
  if (rowLoop)
    loopOrder.push_back(*rowLoop);
  loopOrder.push_back(vectorLoop);
  for (int64_t loop = 0, e = ranges.size(); loop < e; ++loop)
    if (iterators[loop] == utils::IteratorType::reduction)
      loopOrder.push_back(loop);

  std::optional<int64_t> panelLoop = planPanelLoop(op, ranges, blockShape, rowLoop, limits);
  return RegisterBlockAttr::get(op.getContext(), ArrayRef<int64_t>(blockShape), ArrayRef<int64_t>(loopOrder),
                                vectorLoop, rowLoop, ArrayRef<int64_t>(transposeInputs), panelLoop,
                                panelLoop ? limits.reductionPanel : 0);
}

RegisterBlockAttr getRegisterBlock(Operation *op) {
  return op->getAttrOfType<RegisterBlockAttr>(RegisterBlockAttr::kName);
}

bool isOneRegisterBlock(linalg::LinalgOp op) {
  RegisterBlockAttr config = getRegisterBlock(op);
  return config && config.fitsInOneBlock(op.getStaticLoopRanges());
}

} // namespace mlir::la
