//===- LAFactorJointSoftmax.cpp - a softmax over a broadcast sum as two matrix products ---===//
//
// Implements la-factor-joint-softmax. AFT-full weighs values by a softmax over s of the sum of two tensors
// that each lack dimensions of the other, L[b,t,s,d] = A[t,s] + B[b,s,d]:
//
//   y[b,t,d] = Σ_s e^{L} V[b,s,d] / Σ_s e^{L}.
//
// As written that is one exp per (b, t, s, d). Shifting each summand by its own maximum over s,
// e^{L - mA - mB} = e^{A - mA} · e^{B - mB}, numerator and denominator become two contractions of
// e^{A - mA} with e^{B - mB} ⊙ V and with e^{B - mB}: matrix products that are register-tiled like every
// other, and O(T·S + B·S·d) exps.
//
// The separate shifts are exact in real arithmetic, not in floating point: where the maximum of A + B over s
// lies far below mA + mB every term of a row is tiny and the row's denominator loses its precision.
// Each term is a product of two factors in (0, 1]; a factor that underflows (subnormal, or flushed to zero)
// is off by at most 2^-126, so with S terms the denominator is off by at most S·2^-126 absolutely and the
// numerator by S·2^-126·max|V|. A row whose denominator is at least 2^-64 (kExactDenominator) is then
// within S·2^-61·max|V| / |y| of exact, far below f32 rounding for any S this machine can hold (2^-41 at
// S = 2^20). Rows below it, which need a joint logit about 44 below mA + mB and so arise only for logits
// of very different scales, are recomputed in the joint form: a pass over s for the maximum of A + B, a
// second for the shifted sums. That is a detected fallback, not a tolerance.
//
//===----------------------------------------------------------------------===//

#include "LA/IR/LAOps.h"
#include "Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::la {
#define GEN_PASS_DEF_LAFACTORJOINTSOFTMAX
#include "Transforms/Passes.h.inc"
} // namespace mlir::la

using namespace mlir;
using namespace mlir::la;

namespace {

/// Denominators at or above this are exact to f32 rounding in the factored form (see the file comment).
constexpr double kExactDenominator = 0x1p-64;

/// `term` with each letter replaced by its image under `rename`.
std::string renamed(StringRef term, const llvm::DenseMap<char, char> &rename) {
  std::string letters;
  for (char c : term)
    letters.push_back(rename.lookup(c));
  return letters;
}

std::string without(StringRef letters, char letter) {
  std::string rest = letters.str();
  rest.erase(rest.find(letter), 1);
  return rest;
}

RankedTensorType dropDim(RankedTensorType type, int64_t dim) {
  SmallVector<int64_t> shape(type.getShape());
  shape.erase(shape.begin() + dim);
  return RankedTensorType::get(shape, type.getElementType());
}

/// Whether `value` is a map that sets every position outside `tril(row, col)` to -inf and keeps the others:
/// `select(col <= row, x, -inf)` over its own input, with `letters` naming its dimensions. Weights there are
/// exactly zero, so masking them changes no sum.
bool isNegInfinityOutsideTril(Value value, StringRef letters, MaskAttr mask) {
  auto map = value.getDefiningOp<MapOp>();
  if (!map || !map.hasRegionBody() || map.getInputs().size() != 1)
    return false;
  // `la.index D` names dimension D of the result, which must also be the input's: no transposing subscripts.
  if (std::optional<SubscriptsAttr> subscripts = map.getSubscripts())
    if (subscripts->getInput(0) != subscripts->getResult())
      return false;
  Block &body = map.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  auto select = yield.getValues()[0].getDefiningOp<arith::SelectOp>();
  if (!select || select.getTrueValue() != body.getArgument(0))
    return false;
  auto negInfinity = select.getFalseValue().getDefiningOp<arith::ConstantFloatOp>();
  if (!negInfinity || !negInfinity.value().isInfinity() || !negInfinity.value().isNegative())
    return false;
  auto compare = select.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!compare)
    return false;
  auto letterOf = [&](Value v) -> char {
    auto index = v.getDefiningOp<IndexOp>();
    return index ? letters[index.getDim()] : 0;
  };
  char lhs = letterOf(compare.getLhs()), rhs = letterOf(compare.getRhs());
  char row = mask.getRow(), col = mask.getCol();
  switch (compare.getPredicate()) {
  case arith::CmpIPredicate::ule:
  case arith::CmpIPredicate::sle:
    return lhs == col && rhs == row;
  case arith::CmpIPredicate::uge:
  case arith::CmpIPredicate::sge:
    return lhs == row && rhs == col;
  default:
    return false;
  }
}

/// One summand of the sum map: input `input`, transformed by `body` (a value of the map's region computed
/// from that input and positions along its dimensions, by the region's ops `slice`, in block order) or taken
/// as it is (`body` null).
struct Summand {
  unsigned input;
  Value body;
  SmallVector<Operation *> slice;
};

/// The operands of a factorable `contract(softmax_s(A + B), V)`, in the contraction's letters.
struct JointSoftmax {
  MapOp sum;
  Summand a, b;
  Value values;
  std::string aLetters, bLetters; // bLetters also index `values`
  char position;                  // s, the softmax and contracted letter
  MaskAttr mask;                  // none, or tril(row, s)
};

/// The ops of `map`'s region that `value` depends on, in block order, when it reads no block argument but
/// `input` and no position outside `letters` (the input's letters in the map's result). Nullopt otherwise.
std::optional<SmallVector<Operation *>> summandSlice(MapOp map, Value value, unsigned input, StringRef letters) {
  Block &body = map.getBody().front();
  llvm::SmallPtrSet<Operation *, 8> slice;
  SmallVector<Value> worklist{value};
  StringRef resultLetters = map.getSubscripts()->getResult();
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() == &body && arg.getArgNumber() != input)
        return std::nullopt;
      continue;
    }
    Operation *op = v.getDefiningOp();
    if (op->getBlock() != &body || !slice.insert(op).second)
      continue; // defined above the map, or seen
    if (op->getNumRegions() != 0)
      return std::nullopt;
    if (auto index = dyn_cast<IndexOp>(op))
      if (!letters.contains(resultLetters[index.getDim()]))
        return std::nullopt;
    llvm::append_range(worklist, op->getOperands());
  }
  SmallVector<Operation *> ordered;
  for (Operation &op : body)
    if (slice.contains(&op))
      ordered.push_back(&op);
  return ordered;
}

/// The two summands of `sum`: its inputs for a named `add`; for a region, the operands of the `arith.addf` it
/// yields, each computed from one input alone.
std::optional<std::pair<Summand, Summand>> matchSummands(MapOp sum) {
  if (!sum.getSubscripts() || sum.getInputs().size() != 2)
    return std::nullopt;
  if (!sum.hasRegionBody())
    return sum.getFn() && *sum.getFn() == MapFn::add ? std::optional(std::pair(Summand{0, {}, {}}, Summand{1, {}, {}}))
                                                     : std::nullopt;
  auto yield = cast<YieldOp>(sum.getBody().front().getTerminator());
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  if (!add)
    return std::nullopt;
  SubscriptsAttr letters = *sum.getSubscripts();
  for (auto [x, y] : {std::pair(add.getLhs(), add.getRhs()), std::pair(add.getRhs(), add.getLhs())}) {
    std::optional<SmallVector<Operation *>> first = summandSlice(sum, x, 0, letters.getInput(0));
    std::optional<SmallVector<Operation *>> second = summandSlice(sum, y, 1, letters.getInput(1));
    if (first && second)
      return std::pair(Summand{0, x, std::move(*first)}, Summand{1, y, std::move(*second)});
  }
  return std::nullopt;
}

/// The summand as a tensor over its input's dimensions: the input itself, or a map applying its part of the
/// sum's region.
Value materializeSummand(PatternRewriter &rewriter, MapOp sum, const Summand &summand) {
  Value input = sum.getInputs()[summand.input];
  if (!summand.body || summand.body == sum.getBody().front().getArgument(summand.input))
    return input;
  SubscriptsAttr letters = *sum.getSubscripts();
  StringRef own = letters.getInput(summand.input);
  auto type = cast<RankedTensorType>(input.getType());
  Location loc = sum.getLoc();
  auto map = MapOp::create(rewriter, loc, type, ValueRange{input});
  OpBuilder::InsertionGuard guard(rewriter);
  Block *body = rewriter.createBlock(&map.getBody(), {}, {type.getElementType()}, {loc});
  IRMapping mapping;
  mapping.map(sum.getBody().front().getArgument(summand.input), body->getArgument(0));
  for (Operation *op : summand.slice) {
    if (auto index = dyn_cast<IndexOp>(op)) {
      int64_t dim = own.find(letters.getResult()[index.getDim()]);
      mapping.map(index.getResult(), IndexOp::create(rewriter, loc, index.getType(), dim).getResult());
      continue;
    }
    rewriter.clone(*op, mapping);
  }
  YieldOp::create(rewriter, loc, ValueRange{mapping.lookupOrDefault(summand.body)});
  return map.getResult();
}

FailureOr<JointSoftmax> matchJointSoftmax(ContractOp contract) {
  SubscriptsAttr subscripts = contract.getSubscripts();
  if (contract.getInputs().size() != 2 || contract.getGate())
    return failure();
  auto softmax = contract.getInputs()[0].getDefiningOp<NormalizeOp>();
  if (!softmax || softmax.getKind() != NormalizeKind::softmax || softmax.getDenominator() || !softmax->hasOneUse())
    return failure();
  auto sum = softmax.getInput().getDefiningOp<MapOp>();
  if (!sum || !sum->hasOneUse())
    return failure();
  std::optional<std::pair<Summand, Summand>> summands = matchSummands(sum);
  if (!summands)
    return failure();
  auto elementType = dyn_cast<FloatType>(cast<RankedTensorType>(softmax.getType()).getElementType());
  if (!elementType || elementType.getWidth() < 32)
    return failure(); // 2^-64 is not representable in a half type

  // The sum's letters name the same dimensions as the contraction's first term, position by position.
  SubscriptsAttr sumLetters = *sum.getSubscripts();
  StringRef weights = subscripts.getInput(0);
  llvm::DenseMap<char, char> rename;
  for (auto [own, theirs] : llvm::zip(sumLetters.getResult(), weights))
    rename[own] = theirs;

  JointSoftmax match;
  match.sum = sum;
  match.position = weights[softmax.getDim()];
  if (subscripts.getContractedLetters() != std::string(1, match.position))
    return failure();
  std::tie(match.a, match.b) = *summands;
  match.aLetters = renamed(sumLetters.getInput(0), rename);
  match.bLetters = renamed(sumLetters.getInput(1), rename);
  match.values = contract.getInputs()[1];
  // The values share B's dimensions (e^{B - mB} ⊙ V is then elementwise); A's when the sum is written the
  // other way round.
  if (subscripts.getInput(1) != match.bLetters) {
    std::swap(match.a, match.b);
    std::swap(match.aLetters, match.bLetters);
  }
  if (subscripts.getInput(1) != match.bLetters || sum.getInputs()[match.b.input].getType() != match.values.getType() ||
      !StringRef(match.aLetters).contains(match.position) || !StringRef(match.bLetters).contains(match.position))
    return failure();
  if (MaskAttr mask = contract.getMaskAttr()) {
    if (mask.getKind() != MaskKind::tril || mask.getCol() != match.position || mask.getOffset() != 0)
      return failure();
    match.mask = mask;
  }
  return match;
}

/// `e^{x - max_s m}` along the position letter of `letters`, `m` being `x` or a tensor no smaller anywhere.
Value shiftedExp(PatternRewriter &rewriter, Location loc, Value x, StringRef letters, char position, Value m) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t dim = StringRef(letters).find(position);
  Value max =
      ReduceOp::create(rewriter, loc, dropDim(type, dim), Combiner::max, m, ArrayRef<int64_t>{dim}).getResult(0);
  std::string maxLetters = without(letters, position);
  auto map = MapOp::create(rewriter, loc, type, ValueRange{x, max},
                           SubscriptsAttr::getFromTerms(rewriter.getContext(), {letters.str(), maxLetters}, letters));
  Type element = type.getElementType();
  OpBuilder::InsertionGuard guard(rewriter);
  Block *body = rewriter.createBlock(&map.getBody(), {}, {element, element}, {loc, loc});
  Value shifted = arith::SubFOp::create(rewriter, loc, body->getArgument(0), body->getArgument(1));
  YieldOp::create(rewriter, loc, ValueRange{math::ExpOp::create(rewriter, loc, shifted)});
  return map.getResult();
}

/// Builds the joint-form value of one output element inside the final map's region: two passes over s.
/// `outIndex` gives the output position of each output letter. With `visibleOnly` (A given without its -inf
/// above the diagonal) both passes stop at the row's own position, which is the mask.
Value jointForm(OpBuilder &b, Location loc, const JointSoftmax &match, Value aTensor, Value bTensor,
                StringRef outLetters, ArrayRef<Value> outIndex, Value length, bool visibleOnly) {
  Type element = cast<RankedTensorType>(bTensor.getType()).getElementType();
  auto indices = [&](StringRef letters, Value position) {
    SmallVector<Value> list;
    for (char c : letters)
      list.push_back(c == match.position ? position : outIndex[StringRef(outLetters).find(c)]);
    return list;
  };
  auto logit = [&](OpBuilder &nested, Value s) {
    Value a = tensor::ExtractOp::create(nested, loc, aTensor, indices(match.aLetters, s));
    Value bv = tensor::ExtractOp::create(nested, loc, bTensor, indices(match.bLetters, s));
    return arith::AddFOp::create(nested, loc, a, bv).getResult();
  };
  Value zeroIndex = arith::ConstantIndexOp::create(b, loc, 0);
  Value oneIndex = arith::ConstantIndexOp::create(b, loc, 1);
  Value negInfinity =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(element, -std::numeric_limits<double>::infinity()));
  Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(element, 0.0));
  if (visibleOnly)
    length = arith::AddIOp::create(b, loc, outIndex[StringRef(outLetters).find(match.mask.getRow())], oneIndex);
  auto maxLoop = scf::ForOp::create(b, loc, zeroIndex, length, oneIndex, ValueRange{negInfinity},
                                    [&](OpBuilder &nested, Location, Value s, ValueRange acc) {
                                      Value max = arith::MaximumFOp::create(nested, loc, acc[0], logit(nested, s));
                                      scf::YieldOp::create(nested, loc, max);
                                    });
  Value max = maxLoop.getResult(0);
  auto sumLoop = scf::ForOp::create(
      b, loc, zeroIndex, length, oneIndex, ValueRange{zero, zero},
      [&](OpBuilder &nested, Location, Value s, ValueRange acc) {
        Value weight = math::ExpOp::create(nested, loc, arith::SubFOp::create(nested, loc, logit(nested, s), max));
        Value value = tensor::ExtractOp::create(nested, loc, match.values, indices(match.bLetters, s));
        Value weighted = arith::MulFOp::create(nested, loc, weight, value);
        if (match.mask && !visibleOnly) {
          Value row = outIndex[StringRef(outLetters).find(match.mask.getRow())];
          Value visible = arith::CmpIOp::create(nested, loc, arith::CmpIPredicate::ule, s, row);
          weighted = arith::SelectOp::create(nested, loc, visible, weighted, zero);
        }
        Value numerator = arith::AddFOp::create(nested, loc, acc[0], weighted);
        Value denominator = arith::AddFOp::create(nested, loc, acc[1], weight);
        scf::YieldOp::create(nested, loc, ValueRange{numerator, denominator});
      });
  return arith::DivFOp::create(b, loc, sumLoop.getResult(0), sumLoop.getResult(1));
}

struct FactorJointSoftmax : OpRewritePattern<ContractOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ContractOp contract, PatternRewriter &rewriter) const override {
    FailureOr<JointSoftmax> match = matchJointSoftmax(contract);
    if (failed(match))
      return rewriter.notifyMatchFailure(contract, "not a contraction of a softmax over a broadcast sum");
    Location loc = contract.getLoc();
    MLIRContext *context = contract.getContext();
    auto resultType = cast<RankedTensorType>(contract.getType());
    std::string outLetters = contract.getSubscripts().getResult().str();
    char position = match->position;

    Value aTensor = materializeSummand(rewriter, match->sum, match->a);
    Value bTensor = materializeSummand(rewriter, match->sum, match->b);
    // Where A is x with -inf above the diagonal (causal AFT-full), A is shifted by x's row maxima: read once and
    // vectorised, without building A (a masked maximum is not vectorised), and no smaller than A's, so every
    // factor stays ≤ 1. A row whose visible terms lie far below that shift has a small denominator, which the
    // joint form below recomputes; it reads x and stops at the diagonal.
    bool aMaskedByTril = match->mask && isNegInfinityOutsideTril(aTensor, match->aLetters, match->mask);
    Value aUnmasked = aMaskedByTril ? aTensor.getDefiningOp<MapOp>().getInputs()[0] : aTensor;
    Value expA = shiftedExp(rewriter, loc, aTensor, match->aLetters, position, aUnmasked);
    Value expB = shiftedExp(rewriter, loc, bTensor, match->bLetters, position, bTensor);
    Value weightedValues =
        MapOp::create(rewriter, loc, match->values.getType(), MapFn::mul, ValueRange{expB, match->values}).getResult();
    auto products = SubscriptsAttr::getFromTerms(context, {match->aLetters, match->bLetters}, outLetters);
    // Softmax weights outside the mask count in the denominator but not in the numerator. Where A is -inf
    // outside the mask (causal AFT-full), e^{A - mA} is exactly 0 there, so the denominator may keep the mask
    // too: both products then cover the triangle only (la-chunk-scans runs them in row blocks,
    // ChunkTrilContractions.h).
    MaskAttr numeratorMask = match->mask, denominatorMask;
    if (aMaskedByTril)
      denominatorMask = numeratorMask;
    Value numerator =
        ContractOp::create(rewriter, loc, resultType, products, ValueRange{expA, weightedValues}, numeratorMask);
    Value denominator =
        ContractOp::create(rewriter, loc, resultType, products, ValueRange{expA, expB}, denominatorMask);

    // numerator / denominator where the denominator is exact (kExactDenominator), the joint form elsewhere.
    Value length = tensor::DimOp::create(rewriter, loc, bTensor, StringRef(match->bLetters).find(position));
    auto ratio = MapOp::create(rewriter, loc, resultType, ValueRange{numerator, denominator});
    Type element = resultType.getElementType();
    {
      OpBuilder::InsertionGuard guard(rewriter);
      Block *body = rewriter.createBlock(&ratio.getBody(), {}, {element, element}, {loc, loc});
      SmallVector<Value> outIndex;
      for (int64_t d = 0; d < resultType.getRank(); ++d)
        outIndex.push_back(IndexOp::create(rewriter, loc, rewriter.getIndexType(), d));
      Value threshold = arith::ConstantOp::create(rewriter, loc, rewriter.getFloatAttr(element, kExactDenominator));
      Value exact = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGE, body->getArgument(1), threshold);
      auto choice = scf::IfOp::create(
          rewriter, loc, exact,
          [&](OpBuilder &b, Location) {
            scf::YieldOp::create(b, loc,
                                 ValueRange{arith::DivFOp::create(b, loc, body->getArgument(0), body->getArgument(1))});
          },
          [&](OpBuilder &b, Location) {
            scf::YieldOp::create(b, loc,
                                 jointForm(b, loc, *match, aUnmasked, bTensor, outLetters, outIndex, length,
                                           /*visibleOnly=*/aMaskedByTril));
          });
      YieldOp::create(rewriter, loc, choice.getResults());
    }
    rewriter.replaceOp(contract, ratio.getResult());
    return success();
  }
};

struct LAFactorJointSoftmaxPass : la::impl::LAFactorJointSoftmaxBase<LAFactorJointSoftmaxPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FactorJointSoftmax>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
