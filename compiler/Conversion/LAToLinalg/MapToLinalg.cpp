//===- MapToLinalg.cpp - la.map, la.gate and la.size to linalg/tensor -----===//
//
// Elementwise ops become all-parallel `linalg.generic`s whose indexing maps carry the broadcasting, so the
// upstream elementwise fusion can later merge them into their producers and consumers.
//
//===----------------------------------------------------------------------===//

#include "Conversion/LAToLinalg/LoweringUtils.h"
#include "Conversion/Passes.h"
#include "LA/IR/LAMapFns.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::la {
namespace {

/// Sizes of a result whose dimension `d` is spanned by some input dimension (`inputToResult`).
SmallVector<OpFoldResult> getSpannedSizes(OpBuilder &b, Location loc, RankedTensorType resultType, ValueRange inputs,
                                          ArrayRef<SmallVector<int64_t>> inputToResult) {
  SmallVector<OpFoldResult> sizes(resultType.getRank());
  for (int64_t d = 0; d < resultType.getRank(); ++d) {
    if (!resultType.isDynamicDim(d)) {
      sizes[d] = b.getIndexAttr(resultType.getDimSize(d));
      continue;
    }
    // Prefer a static input size: it lets the generic's loop bound be a constant.
    for (auto [input, dims] : llvm::zip(inputs, inputToResult)) {
      auto inputType = cast<RankedTensorType>(input.getType());
      for (auto [inputDim, resultDim] : llvm::enumerate(dims))
        if (resultDim == d && !sizes[d] && !inputType.isDynamicDim(inputDim))
          sizes[d] = b.getIndexAttr(inputType.getDimSize(inputDim));
    }
    for (auto [input, dims] : llvm::zip(inputs, inputToResult))
      for (auto [inputDim, resultDim] : llvm::enumerate(dims))
        if (resultDim == d && !sizes[d])
          sizes[d] = tensor::DimOp::create(b, loc, input, inputDim).getResult();
  }
  return sizes;
}

/// Clones a la.map region into a linalg.generic body: `la.index D` ⇒ `linalg.index loopOf(D)` (+ a cast to
/// the requested type), `la.yield` ⇒ `linalg.yield`.
void cloneMapBody(OpBuilder &b, Location loc, Region &body, ValueRange scalarArgs,
                  function_ref<int64_t(int64_t)> loopOf) {
  IRMapping mapping;
  for (auto [arg, scalar] : llvm::zip(body.front().getArguments(), scalarArgs))
    mapping.map(arg, scalar);
  for (Operation &op : body.front()) {
    if (auto index = dyn_cast<IndexOp>(op)) {
      Value position = linalg::IndexOp::create(b, loc, loopOf(index.getDimAttr().getInt()));
      Type type = index.getType();
      if (!type.isIndex()) {
        Value asInt = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), position);
        position = arith::UIToFPOp::create(b, loc, type, asInt);
      }
      mapping.map(index.getResult(), position);
      continue;
    }
    if (auto yield = dyn_cast<YieldOp>(op)) {
      SmallVector<Value> values =
          llvm::map_to_vector(yield.getValues(), [&](Value v) { return mapping.lookupOrDefault(v); });
      linalg::YieldOp::create(b, loc, values);
      continue;
    }
    b.clone(op, mapping);
  }
}

/// The result dimensions a map's value depends on when its body reads none of its inputs, only positions
/// (`la.index`): a shape-only map such as retention's per-head gate log(1 − 2^{−5−h}) over [B, H, T]. None
/// when the body reads an input or every dimension.
std::optional<SmallVector<int64_t>> getIndexOnlyDims(MapOp op) {
  if (op.getFn())
    return std::nullopt;
  Block &body = op.getBody().front();
  if (llvm::any_of(body.getArguments(), [](BlockArgument arg) { return !arg.use_empty(); }))
    return std::nullopt;
  llvm::SmallSetVector<int64_t, 4> dims;
  body.walk([&](IndexOp index) { dims.insert(index.getDimAttr().getInt()); });
  if (static_cast<int64_t>(dims.size()) == op.getResult().getType().getRank())
    return std::nullopt;
  SmallVector<int64_t> sorted = dims.takeVector();
  llvm::sort(sorted);
  return sorted;
}

/// A shape-only map (getIndexOnlyDims) ⇒ a generic over the dimensions its body reads, broadcast to the
/// result by a second generic. The transcendental body then runs once per head, not once per [B, H, T]
/// element (retention: 2·8·4096 exp2 and log1p calls per call, 5-10% of the kernel), and elementwise
/// fusion folds the broadcast into each consumer's indexing map.
Value buildIndexOnlyMap(ConversionPatternRewriter &rewriter, MapOp op, ArrayRef<OpFoldResult> sizes,
                        ArrayRef<int64_t> readDims) {
  Location loc = op.getLoc();
  auto resultType = op.getResult().getType();
  int64_t rank = resultType.getRank();
  MLIRContext *context = rewriter.getContext();
  SmallVector<OpFoldResult> readSizes = llvm::map_to_vector(readDims, [&](int64_t d) { return sizes[d]; });
  Value readInit = createEmpty(rewriter, loc, readSizes, resultType.getElementType());
  int64_t readRank = readDims.size();
  auto values = linalg::GenericOp::create(rewriter, loc, readInit.getType(), ValueRange{}, readInit,
                                          {rewriter.getMultiDimIdentityMap(readRank)},
                                          SmallVector<utils::IteratorType>(readRank, utils::IteratorType::parallel),
                                          [&](OpBuilder &b, Location nested, ValueRange) {
                                            cloneMapBody(b, nested, op.getBody(), {}, [&](int64_t dim) {
                                              return llvm::find(readDims, dim) - readDims.begin();
                                            });
                                          });
  SmallVector<AffineExpr> readExprs =
      llvm::map_to_vector(readDims, [&](int64_t d) { return getAffineDimExpr(d, context); });
  Value init = createEmpty(rewriter, loc, sizes, resultType.getElementType());
  auto broadcast = linalg::GenericOp::create(
      rewriter, loc, init.getType(), values.getResult(0), init,
      {AffineMap::get(rank, 0, readExprs, context), rewriter.getMultiDimIdentityMap(rank)},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &b, Location nested, ValueRange args) { linalg::YieldOp::create(b, nested, args[0]); });
  return broadcast.getResult(0);
}

/// la.map ⇒ all-parallel linalg.generic; the subscripts become the input indexing maps.
struct MapToGeneric : OpConversionPattern<MapOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(MapOp op, OpAdaptor adaptor, ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = op.getResult().getType();
    int64_t rank = resultType.getRank();
    SmallVector<SmallVector<int64_t>> inputToResult = op.getInputToResultDims();
    ValueRange inputs = adaptor.getInputs();

    SmallVector<OpFoldResult> sizes = getSpannedSizes(rewriter, loc, resultType, inputs, inputToResult);
    if (std::optional<SmallVector<int64_t>> readDims = getIndexOnlyDims(op)) {
      Value broadcast = buildIndexOnlyMap(rewriter, op, sizes, *readDims);
      rewriter.replaceOp(op, castToType(rewriter, loc, broadcast, resultType));
      return success();
    }
    Value init = createEmpty(rewriter, loc, sizes, resultType.getElementType());

    SmallVector<AffineMap> maps;
    for (const SmallVector<int64_t> &dims : inputToResult) {
      SmallVector<AffineExpr> exprs =
          llvm::map_to_vector(dims, [&](int64_t d) { return getAffineDimExpr(d, rewriter.getContext()); });
      maps.push_back(AffineMap::get(rank, 0, exprs, rewriter.getContext()));
    }
    maps.push_back(rewriter.getMultiDimIdentityMap(rank));
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);

    std::optional<MapFn> fn = op.getFn();
    SmallVector<double> params = llvm::to_vector(op.getParams());
    Region &body = op.getBody();
    auto generic =
        linalg::GenericOp::create(rewriter, loc, init.getType(), inputs, init, maps, iterators,
                                  [&](OpBuilder &b, Location nested, ValueRange args) {
                                    ValueRange scalars = args.drop_back();
                                    if (fn) {
                                      linalg::YieldOp::create(b, nested, buildMapFn(b, nested, *fn, params, scalars));
                                      return;
                                    }
                                    cloneMapBody(b, nested, body, scalars, [](int64_t dim) { return dim; });
                                  });
    rewriter.replaceOp(op, castToType(rewriter, loc, generic.getResult(0), resultType));
    return success();
  }
};

/// la.gate ⇒ linalg.generic computing f(gate) · Σ branches; the gate broadcasts along trailing dims.
struct GateToGeneric : OpConversionPattern<GateOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(GateOp op, OpAdaptor adaptor, ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = op.getResult().getType();
    int64_t rank = resultType.getRank();
    Value first = adaptor.getBranches().front();
    Value init = createEmpty(rewriter, loc, getSizes(rewriter, loc, first), resultType.getElementType());

    int64_t gateRank = cast<RankedTensorType>(adaptor.getGate().getType()).getRank();
    // The gate spans a prefix of the dimensions: (d0..d_{r-1}) -> (d0..d_{k-1}).
    SmallVector<AffineMap> maps{rewriter.getMultiDimIdentityMap(rank).getMajorSubMap(gateRank)};
    for (size_t i = 0; i < adaptor.getBranches().size() + 1; ++i)
      maps.push_back(rewriter.getMultiDimIdentityMap(rank));
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);

    SmallVector<Value> inputs{adaptor.getGate()};
    llvm::append_range(inputs, adaptor.getBranches());
    GateFn fn = op.getFn();
    auto generic = linalg::GenericOp::create(rewriter, loc, init.getType(), inputs, init, maps, iterators,
                                             [&](OpBuilder &b, Location nested, ValueRange args) {
                                               Value sum = args[1];
                                               for (Value branch : args.slice(2, args.size() - 3))
                                                 sum = arith::AddFOp::create(b, nested, sum, branch);
                                               Value gate = buildGateFn(b, nested, fn, args[0]);
                                               linalg::YieldOp::create(
                                                   b, nested, arith::MulFOp::create(b, nested, gate, sum).getResult());
                                             });
    rewriter.replaceOp(op, castToType(rewriter, loc, generic.getResult(0), resultType));
    return success();
  }
};

/// la.size ⇒ tensor.dim converted to a float rank-0 tensor.
struct SizeToDim : OpConversionPattern<SizeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(SizeOp op, OpAdaptor adaptor, ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value dim = tensor::DimOp::create(rewriter, loc, adaptor.getInput(), op.getDimAttr().getInt());
    Value asInt = arith::IndexCastUIOp::create(rewriter, loc, rewriter.getI64Type(), dim);
    Type elementType = op.getResult().getType().getElementType();
    Value asFloat = arith::UIToFPOp::create(rewriter, loc, elementType, asInt);
    rewriter.replaceOpWithNewOp<tensor::FromElementsOp>(op, op.getResult().getType(), asFloat);
    return success();
  }
};

} // namespace

void populateLAMapToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<MapToGeneric, GateToGeneric, SizeToDim>(patterns.getContext());
}

} // namespace mlir::la
