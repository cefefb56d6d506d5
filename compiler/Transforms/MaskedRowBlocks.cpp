//===- MaskedRowBlocks.cpp - masked contractions cut into blocks of rows --===//

#include "Transforms/MaskedRowBlocks.h"
#include "Transforms/ProducerSlicer.h"

namespace mlir::la {

FailureOr<MaskedRows> matchMaskedRows(ContractOp op, MaskKind kind, PatternRewriter &rewriter) {
  MaskAttr mask = op.getMaskAttr();
  if (!mask || mask.getKind() != kind || mask.getOffset() != 0 || op.getGate())
    return failure();
  SubscriptsAttr s = op.getSubscripts();
  size_t rowDim = s.getResult().find(mask.getRow());
  if (rowDim == StringRef::npos || s.getResult().contains(mask.getCol()))
    return rewriter.notifyMatchFailure(op, "the mask's rows are not a result letter or its columns are");
  auto resultType = op.getResult().getType();
  if (!resultType.hasStaticShape() ||
      llvm::any_of(op.getInputs(), [](Value v) { return !cast<RankedTensorType>(v.getType()).hasStaticShape(); }))
    return rewriter.notifyMatchFailure(op, "a dynamic shape");
  MaskedRows masked{mask, static_cast<int64_t>(rowDim), resultType.getDimSize(rowDim), -1};
  for (auto [input, term] : llvm::zip(op.getInputs(), s.getInputs()))
    if (size_t d = term.find(mask.getCol()); d != std::string::npos)
      masked.cols = cast<RankedTensorType>(input.getType()).getDimSize(d);
  return masked;
}

SmallVector<Value> sliceMaskedInputs(OpBuilder &b, Location loc, ContractOp op, const MaskedRows &masked, Window rows,
                                     Window cols, ProducerSlicer::TrilWindows triangles) {
  ProducerSlicer slicer(b, loc);
  if (triangles != ProducerSlicer::TrilWindows::Unknown)
    slicer.recomputeContractions().recomputeTril(triangles);
  SmallVector<Value> inputs;
  for (auto [input, term] : llvm::zip(op.getInputs(), op.getSubscripts().getInputs())) {
    SmallVector<DimWindow> windows;
    for (auto [d, letter] : llvm::enumerate(term)) {
      if (letter == masked.mask.getRow())
        windows.push_back({static_cast<int64_t>(d), rows});
      else if (letter == masked.mask.getCol())
        windows.push_back({static_cast<int64_t>(d), cols});
    }
    inputs.push_back(slicer.slice(input, windows));
  }
  return inputs;
}

} // namespace mlir::la
