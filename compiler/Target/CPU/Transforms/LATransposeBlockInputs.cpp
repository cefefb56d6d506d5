//===- LATransposeBlockInputs.cpp - copies that make the vector loop contiguous ===//
//
// Carries out the `transpose` list of each #la.register_block: the input is copied once into a layout
// where the vector loop is innermost, and the config forgets the list (the contraction now reads the copy).
//
//===----------------------------------------------------------------------===//

#include "Target/CPU/Transforms/CPUPasses.h"
#include "Target/CPU/Transforms/RegisterBlockConfig.h"

#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "la-transpose-block-inputs"

namespace mlir::la {
#define GEN_PASS_DEF_LATRANSPOSEBLOCKINPUTS
#include "Target/CPU/Transforms/CPUPasses.h.inc"

namespace {

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
  auto block = RegisterBlockAttr::getBlock(rewriter.getContext(), tile);
  for (Operation *op : tiled->tiledOps)
    op->setAttr(RegisterBlockAttr::kName, block);
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

struct LATransposeBlockInputsPass : impl::LATransposeBlockInputsBase<LATransposeBlockInputsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (vectorWidth < 1) {
      getOperation().emitError("la-transpose-block-inputs: vector-width must be positive");
      return signalPassFailure();
    }
    SmallVector<std::pair<linalg::GenericOp, RegisterBlockAttr>> targets;
    getOperation().walk([&](linalg::GenericOp op) {
      RegisterBlockAttr config = getRegisterBlock(op);
      if (config && !config.getTransposeInputs().empty())
        targets.emplace_back(op, config);
    });
    IRRewriter rewriter(&getContext());
    for (auto [op, config] : targets) {
      for (int64_t operandNumber : config.getTransposeInputs()) {
        LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << op.getLoc() << ": operand " << operandNumber
                                << " copied with loop " << config.getVectorLoop() << " innermost\n");
        transposeInput(rewriter, op, operandNumber, config.getVectorLoop(), vectorWidth);
      }
      op->setAttr(RegisterBlockAttr::kName, config.withoutTransposes());
    }
  }
};

} // namespace
} // namespace mlir::la
