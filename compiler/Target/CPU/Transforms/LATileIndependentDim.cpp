//===- LATileIndependentDim.cpp - one loop over an independent dimension --===//
//
// AFT-conv ([B, X, Y, h, c]) computes every head independently, but the runtime slices only its leading
// batch dimension, so each op of a batch slice runs over all heads before the next op starts: e^K and
// e^K ⊙ V are written as two padded copies of 10 MB and read back head by head after they have left the
// caches. Tiled along the heads with every producer fused, one head's copies (1.3 MB each) stay in L2 and
// L3 between the op that writes them and the window sums that read them.
//
// The dimension is found by propagation through indexing maps: starting at a loop of the function's final
// op, each operand indexed by that loop alone names the dimension of its producer's result, whose loop is
// followed in turn. A loop fails when it is a reduction, when it indexes an operand within a sum (a window
// offset: tiling would recompute the halo), or when a producer of the chain also feeds an op outside it.
//
//===----------------------------------------------------------------------===//

#include "Target/CPU/Transforms/CPUPasses.h"
#include "Target/CPU/Transforms/FusedTiles.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "la-tile-independent-dim"

namespace mlir::la {
#define GEN_PASS_DEF_LATILEINDEPENDENTDIM
#include "Target/CPU/Transforms/CPUPasses.h.inc"

namespace {

/// The ops that compute one dimension independently, each with the loop (for a pad, the dimension) that
/// does: the chain of producers a tile of the final op needs.
class IndependentChain {
public:
  /// The chain of `root`'s loop `loop`, or nothing when that loop writes no dimension of the result or some
  /// op of the chain does not compute it independently.
  static std::optional<IndependentChain> follow(linalg::GenericOp root, unsigned loop) {
    AffineMap written = root.getIndexingMapMatchingResult(root->getResult(0));
    std::optional<unsigned> dim = written.getResultPosition(getAffineDimExpr(loop, root.getContext()));
    IndependentChain chain(root);
    if (!dim || !chain.visit(root->getResult(0), *dim) || !chain.isClosed())
      return std::nullopt;
    return chain;
  }

  bool contains(Operation *op) const { return loops.contains(op); }

  /// Bytes of the tensors the chain computes, the root's result excepted (it is written either way).
  int64_t intermediateBytes() const {
    int64_t bytes = 0;
    for (Operation *op : loops.keys()) {
      if (op == root)
        continue;
      for (Type type : op->getResultTypes())
        if (auto tensor = dyn_cast<RankedTensorType>(type); tensor && tensor.hasStaticShape())
          bytes += tensor.getNumElements() * tensor.getElementTypeBitWidth() / 8;
    }
    return bytes;
  }

private:
  explicit IndependentChain(Operation *root) : root(root) {}

  bool visit(Value value, int64_t dim) {
    Operation *producer = value.getDefiningOp();
    // Arguments are sliced; empty tensors are destinations with nothing to compute.
    if (!producer || isa<tensor::EmptyOp, bufferization::AllocTensorOp>(producer))
      return true;
    if (auto pad = dyn_cast<tensor::PadOp>(producer)) {
      // Padding along the dimension would shift a tile's indices.
      if (!isZeroInteger(pad.getMixedLowPad()[dim]) || !isZeroInteger(pad.getMixedHighPad()[dim]))
        return false;
      if (!record(pad, dim))
        return false;
      return visit(pad.getSource(), dim);
    }
    auto linalgOp = dyn_cast<linalg::LinalgOp>(producer);
    if (!linalgOp || !linalgOp.hasPureTensorSemantics())
      return false;
    AffineMap written = linalgOp.getIndexingMapMatchingResult(cast<OpResult>(value));
    auto loopExpr = dyn_cast<AffineDimExpr>(written.getResult(dim));
    if (!loopExpr)
      return false;
    unsigned loop = loopExpr.getPosition();
    if (linalgOp.getIteratorTypesArray()[loop] != utils::IteratorType::parallel)
      return false;
    if (loops.contains(producer))
      return loops.lookup(producer) == loop;
    record(producer, loop);
    for (OpOperand &operand : producer->getOpOperands()) {
      if (!isa<RankedTensorType>(operand.get().getType()))
        continue;
      std::optional<int64_t> operandDim;
      for (auto [position, expr] : llvm::enumerate(linalgOp.getMatchingIndexingMap(&operand).getResults())) {
        if (!expr.isFunctionOfDim(loop))
          continue;
        // A window offset (i + u) or a second dimension along the same loop (a diagonal).
        if (!isa<AffineDimExpr>(expr) || operandDim)
          return false;
        operandDim = position;
      }
      // An operand without the dimension is read whole by every tile and stays outside the loop.
      if (operandDim && !visit(operand.get(), *operandDim))
        return false;
    }
    return true;
  }

  /// Records that `op` computes along `loop`; false when it was reached along another.
  bool record(Operation *op, unsigned loop) {
    auto [it, inserted] = loops.try_emplace(op, loop);
    return inserted || it->second == loop;
  }

  /// Whether nothing outside the chain reads a value it computes (the root's result aside): such a value
  /// would be computed twice, tile by tile in the loop and whole for its other reader.
  bool isClosed() const {
    for (Operation *op : loops.keys())
      if (op != root)
        for (Operation *user : op->getUsers())
          if (!loops.contains(user))
            return false;
    return true;
  }

  Operation *root;
  llvm::MapVector<Operation *, unsigned> loops;
};

/// The op whose result `func` returns, when it returns one value computed by a linalg.generic on static
/// shapes.
linalg::GenericOp findRoot(func::FuncOp func) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  if (ret.getNumOperands() != 1)
    return {};
  auto root = ret.getOperand(0).getDefiningOp<linalg::GenericOp>();
  if (!root || root->getNumResults() != 1 || !root.hasPureTensorSemantics() ||
      llvm::any_of(root.getStaticLoopRanges(), ShapedType::isDynamic))
    return {};
  return root;
}

/// The largest divisor of `size` whose share of `bytes` fits `budget`, or 1.
int64_t chooseTile(int64_t size, int64_t bytes, int64_t budget) {
  for (int64_t tile = size; tile > 1; --tile)
    if (size % tile == 0 && bytes / size * tile <= budget)
      return tile;
  return 1;
}

struct LATileIndependentDimPass : impl::LATileIndependentDimBase<LATileIndependentDimPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (cacheTileBytes < 1) {
      func.emitError("la-tile-independent-dim: cache-tile-bytes must be positive");
      return signalPassFailure();
    }
    if (func.isExternal())
      return;
    linalg::GenericOp root = findRoot(func);
    if (!root)
      return;
    // Loops in the order of the result's dimensions, outermost first; the innermost dimension is what the
    // register blocks vectorise and is never tiled.
    AffineMap written = root.getIndexingMapMatchingResult(root->getResult(0));
    SmallVector<int64_t> ranges = root.getStaticLoopRanges();
    for (AffineExpr expr : written.getResults().drop_back()) {
      auto loopExpr = dyn_cast<AffineDimExpr>(expr);
      if (!loopExpr || ranges[loopExpr.getPosition()] < 2)
        continue;
      unsigned loop = loopExpr.getPosition();
      std::optional<IndependentChain> chain = IndependentChain::follow(root, loop);
      if (!chain)
        continue;
      int64_t bytes = chain->intermediateBytes();
      if (bytes <= cacheTileBytes)
        return;
      int64_t tile = chooseTile(ranges[loop], bytes, cacheTileBytes);
      LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << root.getLoc() << ": loop " << loop << " of " << ranges[loop]
                              << ", " << bytes << " bytes of intermediates, tile " << tile << "\n");
      if (failed(tileAndFuse(root, loop, tile, *chain)))
        return signalPassFailure();
      return;
    }
  }

  LogicalResult tileAndFuse(linalg::GenericOp root, unsigned loop, int64_t tile, const IndependentChain &chain) {
    IRRewriter rewriter(&getContext());
    SmallVector<int64_t> tileSizes(root.getNumLoops(), 0);
    tileSizes[loop] = tile;
    scf::SCFTileAndFuseOptions options;
    options.tilingOptions.setTileSizes(getAsIndexOpFoldResult(&getContext(), tileSizes));
    options.setFusionControlFn([&](tensor::ExtractSliceOp, OpResult producer,
                                   bool) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
      if (!chain.contains(producer.getOwner()))
        return std::nullopt;
      return scf::SCFTileAndFuseOptions::ControlFnResult{};
    });
    rewriter.setInsertionPoint(root);
    FailureOr<scf::SCFTileAndFuseResult> tiled =
        scf::tileConsumerAndFuseProducersUsingSCF(rewriter, cast<TilingInterface>(root.getOperation()), options);
    if (failed(tiled))
      return root.emitError("la-tile-independent-dim: tiling along loop ") << loop << " failed";
    rewriter.replaceAllUsesWith(root->getResult(0), tiled->replacements.lookup(root->getResult(0)));
    func::FuncOp func = getOperation();
    return giveFusedTilesOwnDestinations(rewriter, func);
  }
};

} // namespace
} // namespace mlir::la
