//===- ScanToLinalg.cpp - la.scan to an scf.for carrying the scan state ---===//
//
// A scan along dimension `k` becomes one `scf.for` over `k` whose iteration state is the running
// combination (the input without `k`, in the accumulation type) and the result tensor; each step combines
// one slice elementwise with a `linalg.generic`. This is the sequential form: the chunked form of causal
// scans of outer products is produced before this lowering (`la-chunk-scans`), and loops over the other
// dimensions vectorise inside each step.
//
// A result read only at its last position (a derived variant's final state, matchFinalState) is not written
// per position: the states the loop ends with give it, so a state variant's online softmax is one pass that
// stores nothing but its [.., D] states.
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
/// Every builder works on scalars (a linalg.generic's body) and on vectors (the register form) alike.
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

  /// The states from the scan's `init`, one value per result (in `accType`): online_softmax's (y0, m0, z0)
  /// give m = m0, n = y0 z0, z = z0 (m0 = -inf, z0 = 0 is the identity); other combiners carry their init.
  SmallVector<Value> statesFromInit(OpBuilder &b, Location loc, ValueRange init) const {
    if (combiner != Combiner::online_softmax)
      return {init[0]};
    return {init[1], arith::MulFOp::create(b, loc, init[0], init[2]), init[2]};
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
      // so nothing overflows for any finite logits (m = -inf at the start gives e^{-inf} = 0). One of the two
      // exponents is 0 (m' is m or k), so one exp serves: e^{-|k-m|} rescales the old sums when k is the new max and
      // weighs k otherwise. NaNs propagate as in the two-exp form (through m' and the exp of k - m).
      Value k = elements[0], v = elements[1];
      Value m = arith::MaximumFOp::create(b, loc, states[0], k);
      Value gap = arith::SubFOp::create(b, loc, k, states[0]);
      Value factor = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, math::AbsFOp::create(b, loc, gap)));
      Value one = createFloat(b, loc, gap.getType(), 1.0);
      Value zero = createFloat(b, loc, gap.getType(), 0.0);
      Value grew = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, gap, zero);
      Value rescale = arith::SelectOp::create(b, loc, grew, factor, one);
      Value weight = arith::SelectOp::create(b, loc, grew, one, factor);
      Value n = math::FmaOp::create(b, loc, states[1], rescale, arith::MulFOp::create(b, loc, weight, v));
      Value z = math::FmaOp::create(b, loc, states[2], rescale, weight);
      return {m, n, z};
    }
    default:
      return {buildCombine(b, loc, combiner, states[0], elements[0])};
    }
  }

  /// The scan's first `count` results at a position from the states there: online_softmax's y = n / z, m and
  /// z; the running value for the others.
  SmallVector<Value> outputs(OpBuilder &b, Location loc, ValueRange states, unsigned count) const {
    if (combiner != Combiner::online_softmax)
      return {states[0]};
    SmallVector<Value> all{arith::DivFOp::create(b, loc, states[1], states[2]), states[0], states[2]};
    all.resize(count);
    return all;
  }
};

/// Tensors of one shape mapped elementwise by `fn` (scalars in, one scalar per `elementTypes` out): a
/// linalg.generic with identity maps.
SmallVector<Value> mapElementwise(OpBuilder &b, Location loc, ValueRange tensors, ArrayRef<OpFoldResult> sizes,
                                  TypeRange elementTypes,
                                  function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> fn) {
  int64_t rank = static_cast<int64_t>(sizes.size());
  SmallVector<Value> outs;
  for (Type elementType : elementTypes)
    outs.push_back(createEmpty(b, loc, sizes, elementType));
  SmallVector<AffineMap> maps(tensors.size() + outs.size(), b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(b, loc, ValueRange(outs).getTypes(), tensors, outs, maps, iterators,
                                           [&](OpBuilder &nb, Location body, ValueRange args) {
                                             SmallVector<Value> values = fn(nb, body, args.take_front(tensors.size()));
                                             for (auto [value, elementType] : llvm::zip(values, elementTypes))
                                               value = convertFloat(nb, body, value, elementType);
                                             linalg::YieldOp::create(nb, body, values);
                                           });
  return SmallVector<Value>(generic.getResults());
}

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

/// Where each result of a scan goes: written at every position, or only its last position read (a derived
/// variant's final state, matchFinalState), which the lowering takes from the states the loop ends with.
struct ResultUses {
  /// Per result: whether a reader needs every position.
  SmallVector<bool> perPosition;
  /// Per result: the collapses that read only its last position.
  SmallVector<SmallVector<tensor::CollapseShapeOp>> finals;

  explicit ResultUses(ScanOp op) : perPosition(op.getNumResults(), false), finals(op.getNumResults()) {
    // An exclusive or reversed scan does not end with its last position's value.
    bool endsWithLast = op.getKind() == ScanKind::inclusive && !op.getReverse();
    int64_t dim = op.getDimAttr().getInt();
    for (auto [i, result] : llvm::enumerate(op.getResults()))
      for (Operation *user : result.getUsers()) {
        tensor::CollapseShapeOp collapse = endsWithLast ? matchFinalState(user, result, dim) : nullptr;
        if (collapse)
          finals[i].push_back(collapse);
        else
          perPosition[i] = true;
      }
  }
};

/// What a scan loop gives: the states after the last position (vectors in the register form, tensors in the
/// tensor form) and, per result, the tensor written at every position (null where no reader needs it).
struct LoopResults {
  SmallVector<Value> states;
  SmallVector<Value> positions;
};

/// la.scan with a named combiner ⇒ scf.for over the scanned dimension carrying the states and the results
/// read per position.
struct ScanToLoop : OpConversionPattern<ScanOp> {
  ScanToLoop(MLIRContext *context, int64_t registerStateElements)
      : OpConversionPattern(context), registerStateElements(registerStateElements) {}

  LogicalResult matchAndRewrite(ScanOp op, OpAdaptor adaptor, ConversionPatternRewriter &rewriter) const override {
    if (failed(checkSupported(op)))
      return failure();
    Location loc = op.getLoc();
    // The state has the shape of the scanned values: the input for one-input combiners and decay (whose
    // gate prefix-broadcasts into it), the values (second input) for online_softmax.
    Value values = *op.getCombiner() == Combiner::online_softmax ? adaptor.getInputs()[1] : adaptor.getInputs()[0];
    auto valueType = cast<RankedTensorType>(values.getType());
    Type elementType = cast<RankedTensorType>(op.getResult(0).getType()).getElementType();
    StepRule rule{*op.getCombiner(), getAccumulationType(op.getAcc(), elementType)};
    int64_t dim = op.getDimAttr().getInt();
    SmallVector<int64_t> stateShape = llvm::to_vector(valueType.getShape());
    stateShape.erase(stateShape.begin() + dim);
    ResultUses uses(op);
    std::optional<VectorType> vectorType =
        getRegisterStateType(adaptor.getInputs(), values, stateShape, rule, registerStateElements);
    LoopResults loop = vectorType
                           ? buildRegisterLoop(rewriter, op, adaptor, rule, values, *vectorType, uses.perPosition)
                           : buildTensorLoop(rewriter, op, adaptor, rule, values, stateShape, uses.perPosition);

    // A result read only at its last position is the output of the states the loop ends with.
    SmallVector<OpFoldResult> sizes = getSizes(rewriter, loc, values);
    SmallVector<OpFoldResult> stateSizes = sizes;
    stateSizes.erase(stateSizes.begin() + dim);
    if (llvm::any_of(uses.finals, [](const auto &finals) { return !finals.empty(); })) {
      SmallVector<Value> outputs;
      if (vectorType) {
        for (Value output : rule.outputs(rewriter, loc, loop.states, op.getNumResults()))
          outputs.push_back(writeRow(rewriter, loc, output, createEmpty(rewriter, loc, stateSizes, elementType)));
      } else {
        SmallVector<Type> elementTypes(op.getNumResults(), elementType);
        outputs = mapElementwise(rewriter, loc, loop.states, stateSizes, elementTypes,
                                 [&](OpBuilder &b, Location body, ValueRange states) {
                                   return rule.outputs(b, body, states, op.getNumResults());
                                 });
      }
      for (auto [output, finals] : llvm::zip(outputs, uses.finals))
        for (tensor::CollapseShapeOp collapse : finals) {
          auto slice = collapse.getSrc().getDefiningOp<tensor::ExtractSliceOp>();
          rewriter.replaceOp(collapse, castToType(rewriter, loc, output, collapse.getType()));
          if (slice)
            rewriter.eraseOp(slice);
        }
    }
    // Results nobody reads per position are replaced by an empty tensor, dead once their final slices are.
    SmallVector<Value> replacements;
    for (auto [result, written] : llvm::zip(op.getResults(), loop.positions))
      replacements.push_back(castToType(
          rewriter, loc, written ? written : createEmpty(rewriter, loc, sizes, elementType), result.getType()));
    rewriter.replaceOp(op, replacements);
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

  /// Splits a loop's results into the states and one tensor per result written at every position.
  static LoopResults splitLoopResults(scf::ForOp loop, unsigned numStates, ArrayRef<bool> perPosition) {
    LoopResults results;
    results.states = SmallVector<Value>(loop.getResults().take_front(numStates));
    unsigned slot = numStates;
    for (bool written : perPosition)
      results.positions.push_back(written ? loop.getResult(slot++) : Value());
    return results;
  }

  /// The register form: each state is a vector iter_arg; a step reads one row of every input, combines,
  /// and writes one row of each result read per position in place.
  static LoopResults buildRegisterLoop(ConversionPatternRewriter &rewriter, ScanOp op, OpAdaptor adaptor,
                                       const StepRule &rule, Value values, VectorType vectorType,
                                       ArrayRef<bool> perPosition) {
    Location loc = op.getLoc();
    Type elementType = cast<RankedTensorType>(op.getResult(0).getType()).getElementType();
    int64_t dim = op.getDimAttr().getInt();
    bool exclusive = op.getKind() == ScanKind::exclusive;
    SmallVector<Value> initial;
    if (adaptor.getInit().empty()) {
      for (double identity : rule.initialStates())
        initial.push_back(createFloat(rewriter, loc, vectorType, identity));
    } else {
      SmallVector<Value> init = llvm::map_to_vector(
          adaptor.getInit(), [&](Value state) { return readRow(rewriter, loc, state, vectorType, rule.accType); });
      initial = rule.statesFromInit(rewriter, loc, init);
    }
    SmallVector<OpFoldResult> sizes = getSizes(rewriter, loc, values);
    for (bool written : perPosition)
      if (written)
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
          SmallVector<Value> outputs =
              rule.outputs(b, nested, exclusive ? states : ValueRange(next), perPosition.size());
          unsigned slot = numStates;
          for (auto [output, written] : llvm::zip(outputs, perPosition)) {
            if (!written)
              continue;
            // Written through a slice of the result itself, so bufferisation stores the row in place.
            Value dest = carried[slot++];
            Value row = writeRow(b, nested, output, slicePosition(b, nested, dest, dim, position));
            next.push_back(insertPosition(b, nested, row, dest, dim, position));
          }
          scf::YieldOp::create(b, nested, next);
        });
    return splitLoopResults(loop, numStates, perPosition);
  }

  /// The tensor form: the states are tensors, and each step is one elementwise linalg.generic over them.
  static LoopResults buildTensorLoop(ConversionPatternRewriter &rewriter, ScanOp op, OpAdaptor adaptor,
                                     const StepRule &rule, Value values, ArrayRef<int64_t> stateShape,
                                     ArrayRef<bool> perPosition) {
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
    unsigned numStates = rule.numStates();

    SmallVector<Value> initial;
    if (adaptor.getInit().empty()) {
      for (double identity : rule.initialStates())
        initial.push_back(createFilled(rewriter, loc, stateSizes, rule.accType, identity));
    } else if (numStates == 1) {
      initial.push_back(convertElementType(rewriter, loc, adaptor.getInit().front(), rule.accType));
    } else {
      SmallVector<Type> accTypes(numStates, rule.accType);
      initial = mapElementwise(
          rewriter, loc, adaptor.getInit(), stateSizes, accTypes, [&](OpBuilder &b, Location body, ValueRange init) {
            SmallVector<Value> converted =
                llvm::map_to_vector(init, [&](Value state) { return convertFloat(b, body, state, rule.accType); });
            return rule.statesFromInit(b, body, converted);
          });
    }
    for (bool written : perPosition)
      if (written)
        initial.push_back(createEmpty(rewriter, loc, sizes, elementType));

    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value length = getValueOrCreateConstantIndexOp(rewriter, loc, sizes[dim]);
    auto outSliceType = RankedTensorType::get(stateShape, elementType);

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
          // The output slices are written by the same step (the exclusive form writes the old states).
          for (bool written : perPosition)
            if (written) {
              outs.push_back(createEmpty(b, nested, stateSizes, elementType));
              outTypes.push_back(outSliceType);
            }
          maps.append(outs.size(), identity);
          SmallVector<utils::IteratorType> iterators(rank - 1, utils::IteratorType::parallel);
          auto step = linalg::GenericOp::create(
              b, nested, outTypes, slices, outs, maps, iterators, [&](OpBuilder &nb, Location body, ValueRange args) {
                SmallVector<Value> elements;
                for (Value element : args.take_front(slices.size()))
                  elements.push_back(convertFloat(nb, body, element, rule.accType));
                ValueRange states = args.slice(slices.size(), numStates);
                SmallVector<Value> next = rule.combine(nb, body, states, elements);
                SmallVector<Value> outputs =
                    rule.outputs(nb, body, exclusive ? states : ValueRange(next), perPosition.size());
                for (auto [output, written] : llvm::zip(outputs, perPosition))
                  if (written)
                    next.push_back(convertFloat(nb, body, output, elementType));
                linalg::YieldOp::create(nb, body, next);
              });
          SmallVector<Value> yielded(step.getResults().begin(), step.getResults().begin() + numStates);
          unsigned slot = numStates;
          for (bool written : perPosition)
            if (written) {
              yielded.push_back(
                  insertPosition(b, nested, step.getResult(yielded.size()), carried[slot], dim, position));
              ++slot;
            }
          scf::YieldOp::create(b, nested, yielded);
        });
    return splitLoopResults(loop, numStates, perPosition);
  }

  int64_t registerStateElements;
};

} // namespace

void populateLAScanToLinalgPatterns(RewritePatternSet &patterns, int64_t registerStateElements) {
  patterns.add<ScanToLoop>(patterns.getContext(), registerStateElements);
}

} // namespace mlir::la
