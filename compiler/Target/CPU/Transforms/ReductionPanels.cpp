//===- ReductionPanels.cpp - cache panels for long contractions -----------===//
//
// Upstream pieces do the work: `scf::tileConsumerAndFuseProducersUsingSCF` tiles the reduction loop and
// fuses the split-off prologue into it, `scf::peelForLoopAndSimplifyBounds` peels a ragged last panel.
// What is ours is the split itself: finding the row-invariant part of a fused body and giving it a
// generic of its own.
//
//===----------------------------------------------------------------------===//

#include "Target/CPU/Transforms/ReductionPanels.h"

#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir::la {

namespace {

/// The body ops of `op` that do not depend on `rowLoop` (through an input that reads it, the output, or a
/// `linalg.index`), in body order.
llvm::SetVector<Operation *> rowInvariantOps(linalg::GenericOp op, unsigned rowLoop) {
  Block *body = op.getBody();
  llvm::DenseSet<Value> invariant;
  for (OpOperand *input : op.getDpsInputOperands())
    if (!op.getMatchingIndexingMap(input).isFunctionOfDim(rowLoop))
      invariant.insert(op.getMatchingBlockArgument(input));
  auto isInvariant = [&](Value value) { return invariant.contains(value) || value.getParentBlock() != body; };
  llvm::SetVector<Operation *> ops;
  for (Operation &inner : body->without_terminator()) {
    if (isa<linalg::IndexOp>(inner) || inner.getNumRegions() != 0 || !isPure(&inner) ||
        !llvm::all_of(inner.getOperands(), isInvariant))
      continue;
    ops.insert(&inner);
    invariant.insert(inner.getResults().begin(), inner.getResults().end());
  }
  return ops;
}

/// The one row-invariant value computed in the body (not a plain input) that a row-dependent op uses, or
/// null when there is none or more than one.
Value findRowInvariantPrologue(linalg::GenericOp op, const llvm::SetVector<Operation *> &invariantOps) {
  Value prologue;
  for (Operation *inner : invariantOps)
    for (Value result : inner->getResults())
      for (Operation *user : result.getUsers())
        if (!invariantOps.contains(user)) {
          if (prologue && prologue != result)
            return Value();
          prologue = result;
        }
  return prologue;
}

/// Moves `prologue`, computed in the body of `op` from inputs that do not read the row loop, into an
/// elementwise generic over the loops those inputs read; `op` becomes a generic that reads the result as
/// one more input. Returns the new prologue generic (the contraction is replaced in place).
linalg::GenericOp splitPrologue(RewriterBase &rewriter, linalg::GenericOp &op, Value prologue,
                                const llvm::SetVector<Operation *> &invariantOps) {
  // The ops the prologue needs, and the inputs they read (in operand order).
  llvm::SetVector<Operation *> needed;
  llvm::SmallVector<Value> worklist{prologue};
  llvm::SmallBitVector readsInput(op.getNumDpsInputs());
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      if (argument.getOwner() == op.getBody())
        readsInput.set(argument.getArgNumber()); // only invariant inputs reach here, never the output
      continue;
    }
    Operation *definer = value.getDefiningOp();
    if (!invariantOps.contains(definer) || !needed.insert(definer))
      continue;
    worklist.append(definer->operand_begin(), definer->operand_end());
  }
  llvm::SmallVector<OpOperand *> inputs;
  for (unsigned index : readsInput.set_bits())
    inputs.push_back(op.getDpsInputOperand(index));

  // Its iteration space: the loops its inputs read, in the contraction's order.
  unsigned numLoops = op.getNumLoops();
  llvm::SmallBitVector unused(numLoops, true);
  for (OpOperand *input : inputs)
    for (unsigned loop = 0; loop < numLoops; ++loop)
      if (op.getMatchingIndexingMap(input).isFunctionOfDim(loop))
        unused.reset(loop);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> shape;
  SmallVector<AffineExpr> usedDims;
  for (unsigned loop = 0; loop < numLoops; ++loop)
    if (!unused.test(loop)) {
      shape.push_back(ranges[loop]);
      usedDims.push_back(rewriter.getAffineDimExpr(loop));
    }

  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<Value> prologueInputs;
  SmallVector<AffineMap> prologueMaps;
  for (OpOperand *input : inputs) {
    prologueInputs.push_back(input->get());
    prologueMaps.push_back(compressDims(op.getMatchingIndexingMap(input), unused));
  }
  prologueMaps.push_back(rewriter.getMultiDimIdentityMap(shape.size()));
  Value empty = tensor::EmptyOp::create(rewriter, loc, shape, prologue.getType());
  SmallVector<utils::IteratorType> parallel(shape.size(), utils::IteratorType::parallel);
  auto prologueOp =
      linalg::GenericOp::create(rewriter, loc, TypeRange{empty.getType()}, prologueInputs, ValueRange{empty},
                                prologueMaps, parallel, [&](OpBuilder &b, Location nested, ValueRange arguments) {
                                  IRMapping mapping;
                                  for (auto [input, argument] : llvm::zip(inputs, arguments))
                                    mapping.map(op.getMatchingBlockArgument(input), argument);
                                  for (Operation *inner : invariantOps)
                                    if (needed.contains(inner))
                                      b.clone(*inner, mapping);
                                  linalg::YieldOp::create(b, nested, mapping.lookup(prologue));
                                });

  // The contraction reads the prologue's result in place of computing it.
  SmallVector<Value> newInputs(op.getDpsInputs());
  newInputs.push_back(prologueOp.getResult(0));
  SmallVector<AffineMap> newMaps;
  for (OpOperand *input : op.getDpsInputOperands())
    newMaps.push_back(op.getMatchingIndexingMap(input));
  newMaps.push_back(AffineMap::get(numLoops, 0, usedDims, rewriter.getContext()));
  for (OpOperand &init : op.getDpsInitsMutable())
    newMaps.push_back(op.getMatchingIndexingMap(&init));
  unsigned numInputs = op.getNumDpsInputs();
  auto replacement =
      linalg::GenericOp::create(rewriter, loc, op.getResultTypes(), newInputs, op.getDpsInits(), newMaps,
                                op.getIteratorTypesArray(), [&](OpBuilder &b, Location, ValueRange arguments) {
                                  IRMapping mapping;
                                  Block *body = op.getBody();
                                  for (unsigned i = 0; i < numInputs; ++i)
                                    mapping.map(body->getArgument(i), arguments[i]);
                                  for (unsigned i = numInputs; i < body->getNumArguments(); ++i)
                                    mapping.map(body->getArgument(i), arguments[i + 1]);
                                  // Every op is cloned (the prologue's, now dead, folds away); uses after its definer
                                  // read the input.
                                  for (Operation &inner : body->getOperations()) {
                                    b.clone(inner, mapping);
                                    if (&inner == prologue.getDefiningOp())
                                      mapping.map(prologue, arguments[numInputs]);
                                  }
                                });
  replacement->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  rewriter.replaceOp(op, replacement->getResults());
  op = replacement;
  return prologueOp;
}

} // namespace

linalg::GenericOp splitRowInvariantPrologue(RewriterBase &rewriter, linalg::GenericOp &op, unsigned rowLoop) {
  llvm::SetVector<Operation *> invariantOps = rowInvariantOps(op, rowLoop);
  if (Value prologue = findRowInvariantPrologue(op, invariantOps))
    return splitPrologue(rewriter, op, prologue, invariantOps);
  return {};
}

LogicalResult tileReductionIntoPanels(RewriterBase &rewriter, linalg::GenericOp op, unsigned reductionLoop,
                                      unsigned rowLoop, int64_t panel) {
  linalg::GenericOp prologueOp = splitRowInvariantPrologue(rewriter, op, rowLoop);

  SmallVector<int64_t> tileSizes(op.getNumLoops(), 0);
  tileSizes[reductionLoop] = panel;
  scf::SCFTileAndFuseOptions options;
  options.tilingOptions.setTileSizes(getAsIndexOpFoldResult(op.getContext(), tileSizes));
  // Only the prologue moves into the panel loop: the output's fill must stay outside a loop that tiles a
  // reduction (it would reset the accumulator every panel), and other producers are shared with other ops.
  options.setFusionControlFn([&](tensor::ExtractSliceOp, OpResult producer,
                                 bool isDestination) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
    if (isDestination || !prologueOp || producer.getOwner() != prologueOp.getOperation())
      return std::nullopt;
    return scf::SCFTileAndFuseOptions::ControlFnResult{};
  });
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTileAndFuseResult> tiled =
      scf::tileConsumerAndFuseProducersUsingSCF(rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled))
    return failure();
  rewriter.replaceOp(op, tiled->replacements.lookup(op->getResult(0)));
  if (prologueOp && prologueOp->use_empty())
    rewriter.eraseOp(prologueOp);
  if (auto loop = dyn_cast<scf::ForOp>(tiled->loops.front().getOperation())) {
    scf::ForOp remainder;
    (void)scf::peelForLoopAndSimplifyBounds(rewriter, loop, remainder);
  }
  return success();
}

} // namespace mlir::la
