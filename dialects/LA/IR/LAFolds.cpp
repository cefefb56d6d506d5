//===- LAFolds.cpp - folds and canonicalisations of `la` ops --------------===//
//
// Only rewrites that are exact in floating point live here: removing identity maps, scans over one element
// and empty reductions, constant sizes, and fusing a chain of maps into one (which evaluates the same scalar
// expressions in the same order, just without the intermediate tensor).
//
//===----------------------------------------------------------------------===//

#include "LA/IR/LAMapFns.h"
#include "LA/IR/LAOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::la;

//===----------------------------------------------------------------------===//
// Folds
//===----------------------------------------------------------------------===//

OpFoldResult MapOp::fold(FoldAdaptor) {
  // identity with no broadcasting is the input itself.
  if (getFn() == MapFn::identity && getInputs()[0].getType() == getResult().getType()) {
    auto dims = getInputToResultDims();
    if (llvm::equal(dims[0], llvm::seq<int64_t>(0, getResult().getType().getRank())))
      return getInputs()[0];
  }
  return {};
}

LogicalResult ReduceOp::fold(FoldAdaptor, SmallVectorImpl<OpFoldResult> &results) {
  // Reducing over no dimension combines nothing.
  if (!getDims().empty())
    return failure();
  for (auto [input, result] : llvm::zip(getInputs(), getResults())) {
    if (input.getType() != result.getType())
      return failure();
  }
  llvm::append_range(results, getInputs());
  return success();
}

LogicalResult ScanOp::fold(FoldAdaptor, SmallVectorImpl<OpFoldResult> &results) {
  // An inclusive scan over a single element without an initial state is that element.
  auto inputType = cast<RankedTensorType>(getInputs()[0].getType());
  if (getKind() != ScanKind::inclusive || !getInit().empty() || inputType.getDimSize(getDim()) != 1)
    return failure();
  std::optional<Combiner> combiner = getCombiner();
  if (!combiner) {
    llvm::append_range(results, getInputs());
    return success();
  }
  switch (*combiner) {
  case Combiner::online_softmax:
    // e^k v / e^k = v for the one element; its max and normaliser (k, 1) are not operands to fold to.
    if (getNumResults() != 1)
      return failure();
    results.push_back(getInputs()[1]);
    return success();
  default:
    // add/max/min/logaddexp of one element, and decay without a previous state: x_0.
    results.push_back(getInputs()[0]);
    return success();
  }
}

OpFoldResult SizeOp::fold(FoldAdaptor) {
  int64_t size = getInput().getType().getDimSize(getDim());
  if (ShapedType::isDynamic(size))
    return {};
  auto type = cast<RankedTensorType>(getResult().getType());
  return DenseElementsAttr::get(type, FloatAttr::get(type.getElementType(), static_cast<double>(size)));
}

//===----------------------------------------------------------------------===//
// Canonicalisation: map of map
//===----------------------------------------------------------------------===//

namespace {

/// Emits the scalar computation of `map` on `args` at the builder's insertion point. `resultDims` maps the
/// map's own result dimensions to those of the op being built (for `la.index`).
static Value emitMapBody(OpBuilder &builder, MapOp map, ValueRange args, ArrayRef<int64_t> resultDims) {
  if (!map.hasRegionBody())
    return buildMapFn(builder, map.getLoc(), *map.getFn(), map.getParams(), args);
  Block &body = map.getBody().front();
  IRMapping mapping;
  mapping.map(body.getArguments(), args);
  for (Operation &op : body.without_terminator()) {
    if (auto index = dyn_cast<IndexOp>(op)) {
      auto moved = IndexOp::create(builder, index.getLoc(), index.getType(), resultDims[index.getDim()]);
      mapping.map(index.getResult(), moved.getResult());
      continue;
    }
    builder.clone(op, mapping);
  }
  // A body may yield a value captured from above; it is then its own image.
  return mapping.lookupOrDefault(cast<YieldOp>(body.getTerminator()).getValues()[0]);
}

/// Names the result dimensions of a fused map: the consumer's letters when it has subscripts, else the
/// producer's when it spans the result one to one, else a, b, c, ... so the fused op stays readable.
static std::string resultLettersFor(MapOp consumer, MapOp producer, ArrayRef<int64_t> producerToConsumer,
                                    int64_t rank) {
  auto lettersOf = [](MapOp op) -> std::string {
    SubscriptsAttr subscripts = op.getSubscriptsAttr();
    return subscripts ? subscripts.getResult().str() : "";
  };
  if (std::string letters = lettersOf(consumer); !letters.empty())
    return letters;
  std::string letters = lettersOf(producer);
  if (static_cast<int64_t>(letters.size()) == rank && llvm::equal(producerToConsumer, llvm::seq<int64_t>(0, rank)))
    return letters;
  letters.clear();
  for (int64_t i = 0; i < rank; ++i)
    letters.push_back(static_cast<char>('a' + i));
  return letters;
}

/// The subscripts of a map whose inputs span `dims` of a result named by `resultLetters`, or a null
/// attribute when every input has the result's own dimensions.
static SubscriptsAttr subscriptsFor(MLIRContext *context, ArrayRef<SmallVector<int64_t>> dims,
                                    StringRef resultLetters) {
  int64_t rank = resultLetters.size();
  if (llvm::all_of(dims, [&](ArrayRef<int64_t> d) { return llvm::equal(d, llvm::seq<int64_t>(0, rank)); }))
    return {};
  SmallVector<std::string> terms;
  for (ArrayRef<int64_t> d : dims) {
    std::string &term = terms.emplace_back();
    for (int64_t i : d)
      term.push_back(resultLetters[i]);
  }
  return SubscriptsAttr::getFromTerms(context, terms, resultLetters);
}

/// map(f, ..., map(g, xs), ...) => map(f ∘ g, ..., xs, ...) when the inner map has no other use: the fused
/// body evaluates the same scalar expressions without materialising the intermediate tensor.
struct FuseMapIntoMap : OpRewritePattern<MapOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MapOp consumer, PatternRewriter &rewriter) const override {
    int64_t rank = consumer.getResult().getType().getRank();
    if (rank > 26)
      return rewriter.notifyMatchFailure(consumer, "more dimensions than subscript letters");
    auto producerIt = llvm::find_if(consumer.getInputs(), [](Value input) {
      auto producer = input.getDefiningOp<MapOp>();
      return producer && producer->hasOneUse();
    });
    if (producerIt == consumer.getInputs().end())
      return rewriter.notifyMatchFailure(consumer, "no single-use map feeds this map");
    unsigned fusedIndex = producerIt - consumer.getInputs().begin();
    auto producer = (*producerIt).getDefiningOp<MapOp>();

    // Producer dimensions expressed in the consumer's result dimensions.
    SmallVector<SmallVector<int64_t>> consumerDims = consumer.getInputToResultDims();
    ArrayRef<int64_t> producerToConsumer = consumerDims[fusedIndex];
    SmallVector<Value> inputs;
    SmallVector<SmallVector<int64_t>> inputDims;
    for (auto [index, input] : llvm::enumerate(consumer.getInputs())) {
      if (index != fusedIndex) {
        inputs.push_back(input);
        inputDims.push_back(consumerDims[index]);
        continue;
      }
      for (auto [pInput, pDims] : llvm::zip(producer.getInputs(), producer.getInputToResultDims())) {
        inputs.push_back(pInput);
        inputDims.push_back(llvm::map_to_vector(pDims, [&](int64_t d) { return producerToConsumer[d]; }));
      }
    }

    Type element = consumer.getResult().getType().getElementType();
    std::string letters = resultLettersFor(consumer, producer, producerToConsumer, rank);
    auto fused = MapOp::create(rewriter, consumer.getLoc(), consumer.getResult().getType(), inputs,
                               subscriptsFor(getContext(), inputDims, letters));
    Block *block = rewriter.createBlock(&fused.getBody(), {}, SmallVector<Type>(inputs.size(), element),
                                        SmallVector<Location>(inputs.size(), consumer.getLoc()));
    rewriter.setInsertionPointToStart(block);
    unsigned numProducerInputs = producer.getInputs().size();
    auto args = block->getArguments();
    Value produced = emitMapBody(rewriter, producer, args.slice(fusedIndex, numProducerInputs), producerToConsumer);
    SmallVector<Value> consumerArgs(args.take_front(fusedIndex));
    consumerArgs.push_back(produced);
    llvm::append_range(consumerArgs, args.drop_front(fusedIndex + numProducerInputs));
    SmallVector<int64_t> identity = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    Value result = emitMapBody(rewriter, consumer, consumerArgs, identity);
    YieldOp::create(rewriter, consumer.getLoc(), result);

    rewriter.replaceOp(consumer, fused.getResult());
    rewriter.eraseOp(producer);
    return success();
  }
};

/// An inclusive scan over one element from an initial state is one combine step, a map over the state's shape:
///   scan add|max|min %x init(%s) along n => expand(map add|max|min (%s, collapse %x))
///   scan decay %x, %g init(%s) along n   => expand(map add (map mul "G,S->S" (map exp (collapse %g), %s), collapse
///   %x))
/// A decode step (a derived resume variant run on one position) is this scan on every state. As a map it is
/// fused with its producers and consumers instead of being chunked (a chunk loop of one position evaluates
/// intra-chunk terms and reads the state twice), and computed in the state's own shape, so that the state it
/// returns (collapse of the scan) is the map itself and is written straight into the caller's output. The
/// step evaluates the combiner's expression in its order, in the element type (a scan that accumulates in
/// another type, `acc`, is left alone).
struct OneStepScanFromInit : OpRewritePattern<ScanOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ScanOp scan, PatternRewriter &rewriter) const override {
    std::optional<Combiner> combiner = scan.getCombiner();
    auto type = cast<RankedTensorType>(scan.getResult(0).getType());
    int64_t dim = scan.getDim(), rank = type.getRank();
    if (!combiner || scan.getInit().size() != 1 || scan.getKind() != ScanKind::inclusive || scan.getWindow() ||
        !type.hasStaticShape() || type.getDimSize(dim) != 1 || rank > 26)
      return rewriter.notifyMatchFailure(scan, "not an inclusive scan of one element from an initial state");
    if (std::optional<Type> acc = scan.getAcc(); acc && *acc != type.getElementType())
      return rewriter.notifyMatchFailure(scan, "accumulates in another type than its elements");
    // The state has the element's shape without the position (a mismatch is left for the verifier to name).
    SmallVector<int64_t> stateShape = llvm::to_vector(type.getShape());
    stateShape.erase(stateShape.begin() + dim);
    auto initType = dyn_cast<RankedTensorType>(scan.getInit().front().getType());
    if (!initType || initType.getShape() != ArrayRef<int64_t>(stateShape) ||
        initType.getElementType() != type.getElementType() || llvm::any_of(scan.getInputs(), [&](Value input) {
          auto inputType = dyn_cast<RankedTensorType>(input.getType());
          return !inputType || !inputType.hasStaticShape() || inputType.getRank() <= dim ||
                 inputType.getShape() != type.getShape().take_front(inputType.getRank());
        }))
      return rewriter.notifyMatchFailure(scan, "the state or an input does not fit the element's shape");
    std::optional<MapFn> step;
    switch (*combiner) {
    case Combiner::add:
    case Combiner::decay:
      step = MapFn::add;
      break;
    case Combiner::max:
      step = MapFn::max;
      break;
    case Combiner::min:
      step = MapFn::min;
      break;
    default:
      return rewriter.notifyMatchFailure(scan, "no single map for this combiner");
    }
    Location loc = scan.getLoc();
    auto dropUnitDim = [&](Value value, int64_t unitDim) -> Value {
      auto valueType = cast<RankedTensorType>(value.getType());
      return tensor::CollapseShapeOp::create(rewriter, loc, value,
                                             getUnitDimReassociation(valueType.getRank(), unitDim));
    };
    // The element without its position. An outer product of the position's k and v (contract
    // "bhtk,bhtv->bhtkv", the letter in every input) is rebuilt on its collapsed inputs, so that elementwise
    // fusion still merges it into the step instead of stopping at the reshape.
    auto dropPosition = [&](Value value) -> Value {
      auto contract = value.getDefiningOp<ContractOp>();
      if (!contract || !contract->hasOneUse() || contract.getMaskAttr() || contract.getGate())
        return dropUnitDim(value, dim);
      SubscriptsAttr subscripts = contract.getSubscripts();
      char letter = subscripts.getResult()[dim];
      SmallVector<std::string> terms;
      SmallVector<Value> inputs;
      for (auto [input, term] : llvm::zip(contract.getInputs(), subscripts.getInputs())) {
        size_t at = term.find(letter);
        if (at == StringRef::npos)
          return dropUnitDim(value, dim);
        terms.push_back((term.substr(0, at) + term.substr(at + 1)).str());
        inputs.push_back(dropUnitDim(input, at));
      }
      std::string result = subscripts.getResult().str();
      result.erase(dim, 1);
      auto collapsedType = cast<RankedTensorType>(dropUnitDim(value, dim).getType());
      return ContractOp::create(rewriter, loc, collapsedType, SubscriptsAttr::getFromTerms(getContext(), terms, result),
                                inputs, contract.getAccAttr())
          .getResult();
    };
    Value state = scan.getInit().front(), element = dropPosition(scan.getInputs()[0]);
    auto stateType = cast<RankedTensorType>(state.getType());
    if (*combiner == Combiner::decay) {
      // The gate is a prefix of the element's dimensions ([B.., 1] or [B.., 1, K]); its letters a, b, c, ...
      Value gate = dropPosition(scan.getInputs()[1]);
      int64_t gateRank = cast<RankedTensorType>(gate.getType()).getRank();
      std::string letters;
      for (int64_t i = 0; i < stateType.getRank(); ++i)
        letters.push_back(static_cast<char>('a' + i));
      Value factor = MapOp::create(rewriter, loc, gate.getType(), MapFn::exp, ValueRange{gate}).getResult();
      auto subscripts = SubscriptsAttr::getFromTerms(getContext(), {letters.substr(0, gateRank), letters}, letters);
      state = MapOp::create(rewriter, loc, stateType, MapFn::mul, ValueRange{factor, state}, subscripts).getResult();
    }
    Value next = MapOp::create(rewriter, loc, stateType, *step, ValueRange{state, element}).getResult();
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(scan, type, next, getUnitDimReassociation(rank, dim));
    return success();
  }
};

} // namespace

void MapOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<FuseMapIntoMap>(context);
}

void ScanOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<OneStepScanFromInit>(context);
}
