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

#include "LA/IR/LAOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::la {
namespace {

bool isBlockMask(MaskAttr mask) {
  return mask && (mask.getKind() == MaskKind::block || mask.getKind() == MaskKind::causal_block);
}

/// Slices of operands to one diagonal block: positions [start, start + size) along every dimension that
/// indexes the block's rows or columns.
struct BlockSlicer {
  OpBuilder &rewriter;
  Location loc;
  Value start;
  int64_t size;
  int64_t blockSize;

  /// `value` restricted to the block along `dims`, recomputing maps and block-masked contractions on the
  /// sliced operands instead of slicing their (large) results.
  Value slice(Value value, ArrayRef<int64_t> dims) {
    if (dims.empty())
      return value;
    Operation *producer = value.getDefiningOp();
    if (auto map = dyn_cast_or_null<MapOp>(producer); map && !usesIndex(map))
      return sliceMap(map, dims);
    if (auto contract = dyn_cast_or_null<ContractOp>(producer))
      if (Value sliced = sliceBlockContract(contract, dims))
        return sliced;
    return extract(value, dims);
  }

  Value extract(Value value, ArrayRef<int64_t> dims) { return extractChunk(rewriter, loc, value, dims, start, size); }

  RankedTensorType slicedType(Value value, ArrayRef<int64_t> dims) {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> shape = llvm::to_vector(type.getShape());
    for (int64_t d : dims)
      shape[d] = size;
    return RankedTensorType::get(shape, type.getElementType());
  }

  /// `la.index` reads absolute positions, which slicing would shift.
  static bool usesIndex(MapOp map) {
    bool found = false;
    map.getBody().walk([&](IndexOp) { found = true; });
    return found;
  }

  Value sliceMap(MapOp map, ArrayRef<int64_t> dims) {
    SmallVector<Value> inputs;
    for (auto [input, toResult] : llvm::zip(map.getInputs(), map.getInputToResultDims())) {
      SmallVector<int64_t> inputDims;
      for (auto [inputDim, resultDim] : llvm::enumerate(toResult))
        if (llvm::is_contained(dims, resultDim))
          inputDims.push_back(inputDim);
      inputs.push_back(slice(input, inputDims));
    }
    Operation *clone = rewriter.clone(*map);
    clone->setOperands(inputs);
    clone->getResult(0).setType(slicedType(map.getResult(), dims));
    return clone->getResult(0);
  }

  /// A contraction whose mask is a block mask of the same size on exactly the two sliced result dimensions:
  /// inside a diagonal block its mask is all-true (block) or tril (causal_block).
  Value sliceBlockContract(ContractOp contract, ArrayRef<int64_t> dims) {
    MaskAttr mask = contract.getMaskAttr();
    if (!isBlockMask(mask) || mask.getSize() != blockSize || dims.size() != 2)
      return Value();
    Subscripts s = contract.getParsedSubscripts();
    std::string sliced = {s.result[dims[0]], s.result[dims[1]]};
    if (!StringRef(sliced).contains(mask.getRow()) || !StringRef(sliced).contains(mask.getCol()))
      return Value();
    SmallVector<Value> inputs;
    for (auto [input, term] : llvm::zip(contract.getInputs(), s.inputs)) {
      SmallVector<int64_t> inputDims;
      for (auto [d, letter] : llvm::enumerate(term))
        if (letter == mask.getRow() || letter == mask.getCol())
          inputDims.push_back(d);
      inputs.push_back(slice(input, inputDims));
    }
    auto clone = cast<ContractOp>(rewriter.clone(*contract));
    clone->setOperands(inputs);
    clone.getResult().setType(slicedType(contract.getResult(), dims));
    if (mask.getKind() == MaskKind::causal_block)
      clone.setMaskAttr(MaskAttr::get(contract.getContext(), MaskKind::tril, mask.getRow(), mask.getCol(), 0));
    else
      clone.removeMaskAttr();
    return clone.getResult();
  }
};

/// contract(.., mask block(n, m, c)) with n a result letter and m contracted ⇒ scf.for over diagonal blocks.
struct ChunkBlockContraction : OpRewritePattern<ContractOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ContractOp op, PatternRewriter &rewriter) const override {
    MaskAttr mask = op.getMaskAttr();
    if (!isBlockMask(mask))
      return failure();
    Subscripts s = op.getParsedSubscripts();
    char n = mask.getRow(), m = mask.getCol();
    size_t rowDim = s.result.find(n);
    if (rowDim == std::string::npos || s.result.find(m) != std::string::npos)
      return rewriter.notifyMatchFailure(op, "the block's rows are not a result letter or its columns are");
    auto resultType = op.getResult().getType();
    if (!resultType.hasStaticShape() ||
        llvm::any_of(op.getInputs(), [](Value v) { return !cast<RankedTensorType>(v.getType()).hasStaticShape(); }))
      return failure();
    int64_t length = resultType.getDimSize(rowDim);
    int64_t block = mask.getSize();
    Location loc = op.getLoc();

    auto emitBlock = [&](OpBuilder &b, Value start, int64_t size, ValueRange carried) -> SmallVector<Value> {
      BlockSlicer slicer{b, loc, start, size, block};
      SmallVector<Value> inputs;
      for (auto [input, term] : llvm::zip(op.getInputs(), s.inputs)) {
        SmallVector<int64_t> dims;
        for (auto [d, letter] : llvm::enumerate(term))
          if (letter == n || letter == m)
            dims.push_back(d);
        inputs.push_back(slicer.slice(input, dims));
      }
      SmallVector<int64_t> rowDims = {static_cast<int64_t>(rowDim)};
      MaskAttr inner = mask.getKind() == MaskKind::causal_block
                           ? MaskAttr::get(getContext(), MaskKind::tril, n, m, 0)
                           : MaskAttr();
      Value part = ContractOp::create(b, loc, slicer.slicedType(op.getResult(), rowDims), op.getSubscripts(),
                                      inputs, inner, Value(), op.getAccAttr());
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
