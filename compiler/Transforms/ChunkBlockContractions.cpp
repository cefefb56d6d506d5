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

#include "LA/IR/LAOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::la {
namespace {

bool isBlockMask(MaskAttr mask) {
  return mask && (mask.getKind() == MaskKind::block || mask.getKind() == MaskKind::causal_block);
}

/// Slices of operands to one diagonal block: positions [start, start + size) along every dimension that
/// indexes the block's rows or columns.
struct BlockSlicer {
  PatternRewriter &rewriter;
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

  Value extract(Value value, ArrayRef<int64_t> dims) {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<OpFoldResult> offsets(type.getRank(), rewriter.getIndexAttr(0)), sizes, strides;
    for (int64_t s : type.getShape())
      sizes.push_back(rewriter.getIndexAttr(s));
    strides.assign(type.getRank(), rewriter.getIndexAttr(1));
    for (int64_t d : dims) {
      offsets[d] = start;
      sizes[d] = rewriter.getIndexAttr(size);
    }
    return tensor::ExtractSliceOp::create(rewriter, loc, value, offsets, sizes, strides);
  }

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

    auto emitBlock = [&](Value start, int64_t size, Value result) {
      BlockSlicer slicer{rewriter, loc, start, size, block};
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
      Value part = ContractOp::create(rewriter, loc, slicer.slicedType(op.getResult(), rowDims), op.getSubscripts(),
                                      inputs, inner, Value(), op.getAccAttr());
      SmallVector<OpFoldResult> offsets(resultType.getRank(), rewriter.getIndexAttr(0)), sizes, strides;
      for (int64_t sz : resultType.getShape())
        sizes.push_back(rewriter.getIndexAttr(sz));
      sizes[rowDim] = rewriter.getIndexAttr(size);
      offsets[rowDim] = start;
      strides.assign(resultType.getRank(), rewriter.getIndexAttr(1));
      return tensor::InsertSliceOp::create(rewriter, loc, part, result, offsets, sizes, strides).getResult();
    };

    Value result = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(), resultType.getElementType());
    int64_t fullBlocks = length / block, tail = length % block;
    Value end = arith::ConstantIndexOp::create(rewriter, loc, fullBlocks * block);
    if (fullBlocks > 0) {
      Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
      Value step = arith::ConstantIndexOp::create(rewriter, loc, block);
      auto loop = scf::ForOp::create(rewriter, loc, zero, end, step, ValueRange{result});
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(loop.getBody());
      Value updated = emitBlock(loop.getInductionVar(), block, loop.getRegionIterArgs()[0]);
      scf::YieldOp::create(rewriter, loc, updated);
      result = loop.getResult(0);
    }
    if (tail > 0)
      result = emitBlock(end, tail, result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateChunkBlockContractionPatterns(RewritePatternSet &patterns) {
  patterns.add<ChunkBlockContraction>(patterns.getContext());
}

} // namespace mlir::la
