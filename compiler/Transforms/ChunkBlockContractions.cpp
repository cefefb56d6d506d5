//===- ChunkBlockContractions.cpp - block-diagonal contractions in chunks -===//
//
// FLASH's quadratic part is block-diagonal: scores relu(q kᵀ)² are kept only inside chunks of c positions,
// `contract "bns,bms->bnm" mask block(n, m, c)`, then mapped and contracted with v under the same mask. Built
// as written, the scores are [B, N, N] although only N·c of them are ever kept. This rewrite evaluates the
// consumer contraction one diagonal block at a time: for the rows [g·c, g·c + c) only the columns of the
// same block contribute, so every operand is sliced to that block, and the elementwise maps and the masked
// contraction that produced the scores are recomputed on the slices ([B, c, c] each). `causal_block` keeps
// `tril` inside the block (the block starts at the same position for rows and columns).
//
//===----------------------------------------------------------------------===//

#include "Transforms/ChunkBlockContractions.h"
#include "Transforms/ChunkLoops.h"
#include "Transforms/ProducerSlicer.h"

#include "LA/IR/LAOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::la {
namespace {

bool isBlockMask(MaskAttr mask) {
  return mask && (mask.getKind() == MaskKind::block || mask.getKind() == MaskKind::causal_block);
}

/// contract(.., mask block(n, m, c)) with n a result letter and m contracted ⇒ scf.for over diagonal blocks.
struct ChunkBlockContraction : OpRewritePattern<ContractOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ContractOp op, PatternRewriter &rewriter) const override {
    MaskAttr mask = op.getMaskAttr();
    if (!isBlockMask(mask))
      return failure();
    SubscriptsAttr s = op.getSubscripts();
    char n = mask.getRow(), m = mask.getCol();
    size_t rowDim = s.getResult().find(n);
    if (rowDim == StringRef::npos || s.getResult().contains(m))
      return rewriter.notifyMatchFailure(op, "the block's rows are not a result letter or its columns are");
    auto resultType = op.getResult().getType();
    if (!resultType.hasStaticShape() ||
        llvm::any_of(op.getInputs(), [](Value v) { return !cast<RankedTensorType>(v.getType()).hasStaticShape(); }))
      return failure();
    int64_t length = resultType.getDimSize(rowDim);
    int64_t block = mask.getSize();
    Location loc = op.getLoc();

    auto emitBlock = [&](OpBuilder &b, Value start, int64_t size, ValueRange carried) -> SmallVector<Value> {
      ProducerSlicer slicer(b, loc, block);
      Window window{start, size};
      SmallVector<Value> inputs;
      for (auto [input, term] : llvm::zip(op.getInputs(), s.getInputs())) {
        SmallVector<DimWindow> windows;
        for (auto [d, letter] : llvm::enumerate(term))
          if (letter == n || letter == m)
            windows.push_back({static_cast<int64_t>(d), window});
        inputs.push_back(slicer.slice(input, windows));
      }
      DimWindow rows{static_cast<int64_t>(rowDim), window};
      MaskAttr inner =
          mask.getKind() == MaskKind::causal_block ? MaskAttr::get(getContext(), MaskKind::tril, n, m, 0) : MaskAttr();
      Value part = ContractOp::create(b, loc, ProducerSlicer::slicedType(op.getResult(), rows), op.getSubscripts(),
                                      inputs, inner, op.getAccAttr());
      return {insertChunk(b, loc, part, carried[0], rowDim, start)};
    };

    Value empty = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(), resultType.getElementType());
    Value result = buildChunkLoop(rewriter, loc, length, block, {empty}, emitBlock)[0];
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateChunkBlockContractionPatterns(RewritePatternSet &patterns) {
  patterns.add<ChunkBlockContraction>(patterns.getContext());
}

} // namespace mlir::la
