//===- ScanToLinalg.cpp - la.scan to an scf.for carrying the scan state ---===//
//
// A scan along dimension `k` becomes one `scf.for` over `k` whose iteration state is the running
// combination (the input without `k`, in the accumulation type) and the result tensor; each step combines
// one slice elementwise with a `linalg.generic`. This is the sequential form: the chunked form of causal
// scans of outer products is produced before this lowering (`la-chunk-scans`), and loops over the other
// dimensions vectorise inside each step.
//
// A small state (a sliced kernel's [1, 1, D] running sum) is carried as a vector instead (the register
// form): a tensor state bufferises to a buffer that every step loads, combines and stores, so each step
// waits on a store-to-load forward; a vector iter_arg stays in registers and the steps pipeline.
//
//===----------------------------------------------------------------------===//

#include "Conversion/LAToLinalg/LoweringUtils.h"
#include "Conversion/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::la {
namespace {

/// How one scan step updates its state from the elements at position t, elementwise over the state shape.
/// Named combiners with one state (add, max, min, logaddexp) carry the running combination; `decay` carries
/// S (S' = exp(g_t) S + x_t); `online_softmax` carries the running max m, weighted sum n and normaliser z.
struct StepRule {
  Combiner combiner;
  Type accType;

  unsigned numStates() const { return combiner == Combiner::online_softmax ? 3 : 1; }

  /// Identity of each state before the first element.
  SmallVector<double> initialStates() const {
    if (combiner == Combiner::online_softmax)
      return {-std::numeric_limits<double>::infinity(), 0.0, 0.0};
    if (combiner == Combiner::decay)
      return {0.0};
    return {*getCombinerIdentity(combiner)};
  }

  /// New states from the old ones and this position's input elements (already in `accType`).
  SmallVector<Value> combine(OpBuilder &b, Location loc, ValueRange states, ValueRange elements) const {
    switch (combiner) {
    case Combiner::decay: {
      Value decay = math::ExpOp::create(b, loc, elements[1]);
      Value kept = arith::MulFOp::create(b, loc, decay, states[0]);
      return {arith::AddFOp::create(b, loc, kept, elements[0])};
    }
    case Combiner::online_softmax: {
      // m' = max(m, k); n' = n e^{m-m'} + e^{k-m'} v; z' = z e^{m-m'} + e^{k-m'}. Both exponents are ≤ 0,
      // so nothing overflows for any finite logits (m = -inf at the start gives e^{-inf} = 0).
      Value k = elements[0], v = elements[1];
      Value m = arith::MaximumFOp::create(b, loc, states[0], k);
      Value rescale = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, states[0], m));
      Value weight = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, k, m));
      Value n = math::FmaOp::create(b, loc, states[1], rescale, arith::MulFOp::create(b, loc, weight, v));
      Value z = math::FmaOp::create(b, loc, states[2], rescale, weight);
      return {m, n, z};
    }
    default:
      return {buildCombine(b, loc, combiner, states[0], elements[0])};
    }
  }

  /// The scan's value at a position from the states there.
  Value output(OpBuilder &b, Location loc, ValueRange states) const {
    if (combiner == Combiner::online_softmax)
      return arith::DivFOp::create(b, loc, states[1], states[2]);
    return states[0];
  }
};

/// The lowering supports every named combiner; region combiners are still rejected.
LogicalResult checkSupported(ScanOp op) {
  if (!op.getCombiner())
    return op.emitOpError("with a region combiner is not supported by the CPU lowering yet; use a named "
                          "combiner (add, max, min, logaddexp, decay, online_softmax)");
  if (op.getWindow())
    return op.emitOpError("with a window is not supported by the CPU lowering yet");
  return success();
}

/// The register form applies when the state is static with one non-unit dimension, the innermost (so
/// each state is one 1-D vector and needs no n-D unrolling), every input is read with the state's shape
/// (no prefix broadcast: decay gates and online-softmax logits of a smaller rank keep the tensor form),
/// and all states together have at most `maxElements` elements.
std::optional<VectorType> getRegisterStateType(ValueRange inputs, Value values, ArrayRef<int64_t> stateShape,
                                               const StepRule &rule, int64_t maxElements) {
  if (stateShape.empty() || ShapedType::isDynamicShape(stateShape) ||
      llvm::any_of(stateShape.drop_back(), [](int64_t size) { return size != 1; }) ||
      stateShape.back() * static_cast<int64_t>(rule.numStates()) > maxElements)
    return std::nullopt;
  ArrayRef<int64_t> shape = cast<RankedTensorType>(values.getType()).getShape();
  if (llvm::any_of(inputs, [&](Value input) { return cast<RankedTensorType>(input.getType()).getShape() != shape; }))
    return std::nullopt;
  return VectorType::get({stateShape.back()}, rule.accType);
}

/// Offsets, sizes and strides of the slice of `tensor` at `position` along `dim`.
struct PositionSlice {
  SmallVector<OpFoldResult> offsets, sizes, strides;
};
PositionSlice getPositionSlice(OpBuilder &b, Location loc, Value tensor, int64_t dim, Value position) {
  int64_t rank = cast<RankedTensorType>(tensor.getType()).getRank();
  PositionSlice slice{SmallVector<OpFoldResult>(rank, b.getIndexAttr(0)), getSizes(b, loc, tensor),
                      SmallVector<OpFoldResult>(rank, b.getIndexAttr(1))};
  slice.offsets[dim] = position;
  slice.sizes[dim] = b.getIndexAttr(1);
  return slice;
}

/// The rank-reduced slice of `tensor` at `position` along `dim` (the state's shape).
Value slicePosition(OpBuilder &b, Location loc, Value tensor, int64_t dim, Value position) {
  auto type = cast<RankedTensorType>(tensor.getType());
  // A scan of one position (a decode step): the whole tensor, its unit dimension folded away explicitly. As a
  // rank-reducing slice at the constant position 0, the canonicaliser re-infers which unit dimension to drop
  // and picked the wrong one for [1, H, 1, D].
  if (type.getDimSize(dim) == 1)
    return tensor::CollapseShapeOp::create(b, loc, tensor, getUnitDimReassociation(type.getRank(), dim));
  PositionSlice slice = getPositionSlice(b, loc, tensor, dim, position);
  SmallVector<int64_t> sliceShape = llvm::to_vector(type.getShape());
  sliceShape.erase(sliceShape.begin() + dim);
  auto sliceType = RankedTensorType::get(sliceShape, type.getElementType());
  return tensor::ExtractSliceOp::create(b, loc, sliceType, tensor, slice.offsets, slice.sizes, slice.strides);
}

/// `row` (the state's shape) inserted into `dest` at `position` along `dim`.
Value insertPosition(OpBuilder &b, Location loc, Value row, Value dest, int64_t dim, Value position) {
  auto destType = cast<RankedTensorType>(dest.getType());
  if (destType.getDimSize(dim) == 1 && destType.hasStaticShape())
    return tensor::ExpandShapeOp::create(b, loc, destType, row, getUnitDimReassociation(destType.getRank(), dim));
  PositionSlice slice = getPositionSlice(b, loc, dest, dim, position);
  return tensor::InsertSliceOp::create(b, loc, row, dest, slice.offsets, slice.sizes, slice.strides);
}

/// `tensor` (the state's shape: unit dimensions, then the vector's) read as one vector of `elementType`.
Value readRow(OpBuilder &b, Location loc, Value tensor, VectorType vectorType, Type elementType) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<Value> zeros(type.getRank(), arith::ConstantIndexOp::create(b, loc, 0));
  Value padding = createFloat(b, loc, type.getElementType(), 0.0);
  Value row = vector::TransferReadOp::create(b, loc, vectorType.clone(type.getElementType()), tensor, zeros, padding,
                                             SmallVector<bool>{true});
  return convertFloat(b, loc, row, elementType);
}

/// `row` written over `tensor` (the state's shape).
Value writeRow(OpBuilder &b, Location loc, Value row, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<Value> zeros(type.getRank(), arith::ConstantIndexOp::create(b, loc, 0));
  return vector::TransferWriteOp::create(b, loc, convertFloat(b, loc, row, type.getElementType()), tensor, zeros,
                                         SmallVector<bool>{true})
      .getResult();
}

/// la.scan with a named combiner ⇒ scf.for over the scanned dimension carrying the states and the result.
struct ScanToLoop : OpConversionPattern<ScanOp> {
  ScanToLoop(MLIRContext *context, int64_t registerStateElements)
      : OpConversionPattern(context), registerStateElements(registerStateElements) {}

  LogicalResult matchAndRewrite(ScanOp op, OpAdaptor adaptor, ConversionPatternRewriter &rewriter) const override {
    if (failed(checkSupported(op)))
      return failure();
    // The state has the shape of the scanned values: the input for one-input combiners and decay (whose
    // gate prefix-broadcasts into it), the values (second input) for online_softmax.
    Value values = *op.getCombiner() == Combiner::online_softmax ? adaptor.getInputs()[1] : adaptor.getInputs()[0];
    auto valueType = cast<RankedTensorType>(values.getType());
    Type elementType = cast<RankedTensorType>(op.getResult(0).getType()).getElementType();
    StepRule rule{*op.getCombiner(), getAccumulationType(op.getAcc(), elementType)};
    int64_t dim = op.getDimAttr().getInt();
    SmallVector<int64_t> stateShape = llvm::to_vector(valueType.getShape());
    stateShape.erase(stateShape.begin() + dim);
    Value result;
    if (std::optional<VectorType> vectorType =
            getRegisterStateType(adaptor.getInputs(), values, stateShape, rule, registerStateElements))
      result = buildRegisterLoop(rewriter, op, adaptor, rule, values, *vectorType);
    else
      result = buildTensorLoop(rewriter, op, adaptor, rule, values, stateShape);
    rewriter.replaceOp(op, castToType(rewriter, op.getLoc(), result, op.getResult(0).getType()));
    return success();
  }

private:
  /// The loop's position for step `i` (counted down when the scan is reversed).
  static Value getPosition(OpBuilder &b, Location loc, ScanOp op, Value i, Value length) {
    if (!op.getReverse())
      return i;
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    return arith::SubIOp::create(b, loc, arith::SubIOp::create(b, loc, length, one), i);
  }

  /// The register form: each state is a vector iter_arg; a step reads one row of every input, combines,
  /// and writes one row of the result in place.
  static Value buildRegisterLoop(ConversionPatternRewriter &rewriter, ScanOp op, OpAdaptor adaptor,
                                 const StepRule &rule, Value values, VectorType vectorType) {
    Location loc = op.getLoc();
    Type elementType = cast<RankedTensorType>(op.getResult(0).getType()).getElementType();
    int64_t dim = op.getDimAttr().getInt();
    bool exclusive = op.getKind() == ScanKind::exclusive;
    SmallVector<Value> initial;
    for (double identity : rule.initialStates())
      initial.push_back(createFloat(rewriter, loc, vectorType, identity));
    if (!adaptor.getInit().empty())
      initial[0] = readRow(rewriter, loc, adaptor.getInit().front(), vectorType, rule.accType);
    SmallVector<OpFoldResult> sizes = getSizes(rewriter, loc, values);
    initial.push_back(createEmpty(rewriter, loc, sizes, elementType));
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value length = getValueOrCreateConstantIndexOp(rewriter, loc, sizes[dim]);
    unsigned numStates = rule.numStates();
    auto loop = scf::ForOp::create(
        rewriter, loc, zero, length, one, initial, [&](OpBuilder &b, Location nested, Value i, ValueRange carried) {
          Value position = getPosition(b, nested, op, i, length);
          SmallVector<Value> elements;
          for (Value input : adaptor.getInputs())
            elements.push_back(
                readRow(b, nested, slicePosition(b, nested, input, dim, position), vectorType, rule.accType));
          ValueRange states = carried.take_front(numStates);
          SmallVector<Value> next = rule.combine(b, nested, states, elements);
          Value out = rule.output(b, nested, exclusive ? states : ValueRange(next));
          // Written through a slice of the result itself, so bufferisation stores the row in place.
          Value outRow = writeRow(b, nested, out, slicePosition(b, nested, carried.back(), dim, position));
          next.push_back(insertPosition(b, nested, outRow, carried.back(), dim, position));
          scf::YieldOp::create(b, nested, next);
        });
    return loop.getResults().back();
  }

  /// The tensor form: the states are tensors, and each step is one elementwise linalg.generic over them.
  static Value buildTensorLoop(ConversionPatternRewriter &rewriter, ScanOp op, OpAdaptor adaptor, const StepRule &rule,
                               Value values, ArrayRef<int64_t> stateShape) {
    Location loc = op.getLoc();
    ValueRange inputs = adaptor.getInputs();
    Type elementType = cast<RankedTensorType>(op.getResult(0).getType()).getElementType();
    int64_t rank = cast<RankedTensorType>(values.getType()).getRank();
    int64_t dim = op.getDimAttr().getInt();
    bool exclusive = op.getKind() == ScanKind::exclusive;
    SmallVector<OpFoldResult> sizes = getSizes(rewriter, loc, values);
    SmallVector<OpFoldResult> stateSizes = sizes;
    stateSizes.erase(stateSizes.begin() + dim);
    auto stateType = RankedTensorType::get(stateShape, rule.accType);

    SmallVector<Value> initial;
    for (double identity : rule.initialStates())
      initial.push_back(createFilled(rewriter, loc, stateSizes, rule.accType, identity));
    if (!adaptor.getInit().empty())
      initial[0] = convertElementType(rewriter, loc, adaptor.getInit().front(), rule.accType);
    initial.push_back(createEmpty(rewriter, loc, sizes, elementType));

    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value length = getValueOrCreateConstantIndexOp(rewriter, loc, sizes[dim]);
    auto outSliceType = RankedTensorType::get(stateShape, elementType);
    unsigned numStates = rule.numStates();

    auto loop = scf::ForOp::create(
        rewriter, loc, zero, length, one, initial, [&](OpBuilder &b, Location nested, Value i, ValueRange carried) {
          Value position = getPosition(b, nested, op, i, length);
          // Every input's slice at `position` (rank-reduced) and the map from the state's dimensions to it:
          // an input is a prefix of the value shape (decay's gate), so its slice reads the state's leading dims.
          SmallVector<Value> slices;
          SmallVector<AffineMap> maps;
          for (Value input : inputs) {
            int64_t inputRank = cast<RankedTensorType>(input.getType()).getRank();
            slices.push_back(slicePosition(b, nested, input, dim, position));
            SmallVector<AffineExpr> prefix;
            for (int64_t d = 0; d + 1 < inputRank; ++d)
              prefix.push_back(b.getAffineDimExpr(d));
            maps.push_back(AffineMap::get(rank - 1, 0, prefix, b.getContext()));
          }
          AffineMap identity = b.getMultiDimIdentityMap(rank - 1);
          SmallVector<Value> outs(carried.begin(), carried.begin() + numStates);
          SmallVector<Type> outTypes(numStates, stateType);
          // The output slice is written by the same step (the exclusive form writes the old states).
          outs.push_back(createEmpty(b, nested, stateSizes, elementType));
          outTypes.push_back(outSliceType);
          maps.append(numStates + 1, identity);
          SmallVector<utils::IteratorType> iterators(rank - 1, utils::IteratorType::parallel);
          auto step = linalg::GenericOp::create(
              b, nested, outTypes, slices, outs, maps, iterators, [&](OpBuilder &nb, Location body, ValueRange args) {
                SmallVector<Value> elements;
                for (Value element : args.take_front(slices.size()))
                  elements.push_back(convertFloat(nb, body, element, rule.accType));
                ValueRange states = args.slice(slices.size(), numStates);
                SmallVector<Value> next = rule.combine(nb, body, states, elements);
                Value out = rule.output(nb, body, exclusive ? states : ValueRange(next));
                next.push_back(convertFloat(nb, body, out, elementType));
                linalg::YieldOp::create(nb, body, next);
              });
          SmallVector<Value> yielded(step.getResults().begin(), step.getResults().begin() + numStates);
          yielded.push_back(insertPosition(b, nested, step.getResult(numStates), carried.back(), dim, position));
          scf::YieldOp::create(b, nested, yielded);
        });
    return loop.getResults().back();
  }

  int64_t registerStateElements;
};

} // namespace

void populateLAScanToLinalgPatterns(RewritePatternSet &patterns, int64_t registerStateElements) {
  patterns.add<ScanToLoop>(patterns.getContext(), registerStateElements);
}

} // namespace mlir::la
