//===- LADeriveStateVariants.cpp - prefill and resume from a causal entry -===//
//
// A causal entry y = F(x) carries state from one position to the next (SPEC §8): each prefix scan along the
// sequence is a running value whose last position is everything later positions need (an online softmax
// returns its running max and normaliser beside its value for that: the triple y, m, z), and each map that
// reads the position along it (Flow's n_t = t + 1) needs to know how many positions came before. The
// variants thread those values through the signature:
//
//   prefill(x)        = (y, s)     every scan starts from the compiler's initial state (zero), every position
//                                  from 0; s holds each scan at the last position and each count of positions;
//   resume(x, s_in)   = (y, s)     every scan starts from its state in s_in, every position is offset by its
//                                  count in s_in;
//   state(x, s_in)    = s          resume without y: what is dead once y goes (the read-out, the
//                                  normaliser) is not computed, and an add scan read only for its last
//                                  position is a sum (Kᵀ V), so a piece's state costs a fraction of the piece
//                                  (the runtime's sequence-parallel calls run ahead with it).
//
// A variant is declared in the kernel file as a body-less function naming its source,
//
//   func.func private @gla_with_state(%q: !x, %k: !x, %v: !x, %g: !x, %h0: !h) -> (!x, !h)
//       attributes {la.resume_of = @gla}
//
// (private only because MLIR allows no public declaration), and this pass writes its body and makes it public.
// The declaration keeps the argument names and domains the user wrote; its signature must be the derived one,
// or the error prints the derived one. deriveStateVariant (StateVariants.h) builds a variant nobody declared.
//
// The chunkings of la-chunk-scans (decay scans, q·scan(k⊗v), running sums read by a dot) start their chunk
// loops from the scan's init and replace the final-state slice with the state the loop ends with, so a variant
// keeps its source's chunked form.
//
// Causality is checked op by op along the sequence dimension (the dimension the scans run along, at the
// same position in every operand, as in the library's [B, H, T, ...] layouts): an op that reads later
// positions, or all earlier ones without a fixed-size state, is an error naming it.
//
// Contractions masked by blocks along the sequence (FLASH's causal_block and prior_block) carry state only
// across stretches that start on block boundaries: a declaration that promises so (`la.aligned_to = 256`,
// what a GPU call in pieces of whole blocks asks for) gets a prior_block contraction's sum over the earlier
// blocks as a state; without it they are errors, since a decode step starts anywhere.
//
//===----------------------------------------------------------------------===//

#include "Transforms/Passes.h"
#include "Transforms/StateVariants.h"

#include "Conversion/LAToLinalg/LoweringUtils.h"

#include "LA/IR/LAOps.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/Inliner.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/ScopeExit.h"

#include <numeric>

namespace mlir::la {
#define GEN_PASS_DEF_LADERIVESTATEVARIANTS
#include "Transforms/Passes.h.inc"

namespace {

using Variant = StateVariant;

/// Inlines every call in `func` (the scans may sit in helpers), innermost callees included.
LogicalResult inlineCalls(func::FuncOp func, SymbolTable &symbols) {
  InlinerInterface interface(func.getContext());
  InlinerConfig config;
  // Each round inlines one level of calls; a recursive helper would never run out of them.
  constexpr int kMaxDepth = 64;
  for (int depth = 0; !func.getOps<func::CallOp>().empty(); ++depth) {
    if (depth == kMaxDepth)
      return func.emitOpError() << "calls nest more than " << kMaxDepth
                                << " deep (a recursive helper?); a state-passing variant needs them inlined";
    SmallVector<func::CallOp> calls(func.getOps<func::CallOp>());
    for (func::CallOp call : calls) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (!callee || callee.isExternal())
        return call.emitOpError() << "calls @" << call.getCallee()
                                  << ", which has no body to derive a state-passing variant through";
      if (failed(inlineCall(interface, config.getCloneCallback(), call,
                            cast<CallableOpInterface>(callee.getOperation()), &callee.getBody())))
        return call.emitOpError() << "cannot be inlined into the derived variant";
      call.erase();
    }
  }
  return success();
}

/// Whether `mask` pairs positions by blocks: within one (block, causal_block) or with the blocks before
/// (prior_block). A stretch of the sequence that starts on a block boundary holds the first whole and
/// carries the second as a sum (DerivedStateVariant::alignment).
bool isBlockMask(MaskAttr mask) {
  return llvm::is_contained({MaskKind::block, MaskKind::causal_block, MaskKind::prior_block}, mask.getKind());
}

/// Whether a contraction masked by blocks along the sequence (its mask's row the result's dimension `seq`)
/// can run in stretches that start at multiples of `alignedTo` (kAnyBlockAlignment: of any block size).
/// Errors name the op; `alignment` becomes the least common multiple of it and the block size.
LogicalResult checkBlockMask(ContractOp contract, MaskAttr mask, int64_t seq, int64_t alignedTo, int64_t &alignment) {
  SubscriptsAttr subscripts = contract.getSubscripts();
  StringRef kind = stringifyMaskKind(mask.getKind());
  if (!isBlockMask(mask) || subscripts.getResultDim(mask.getRow()) != seq)
    return contract.emitOpError() << "pairs every position with the earlier ones (mask " << kind
                                  << "): its state would grow with the sequence";
  if (alignedTo == 1)
    return contract.emitOpError()
           << "pairs positions by blocks of " << mask.getSize() << " (mask " << kind
           << "): a stretch that starts inside a block would need the block's earlier positions as state "
              "(stretches that start on block boundaries carry it: la.aligned_to)";
  if (alignedTo != kAnyBlockAlignment && alignedTo % mask.getSize() != 0)
    return contract.emitOpError() << "pairs positions by blocks of " << mask.getSize() << " (mask " << kind
                                  << "), which stretches aligned to " << alignedTo << " positions cut";
  if (mask.getKind() == MaskKind::prior_block)
    for (auto [i, term] : llvm::enumerate(subscripts.getInputs()))
      if (term.contains(mask.getRow()) && term.contains(mask.getCol()))
        return contract.emitOpError() << "pairs each position with every earlier block through input #" << i
                                      << ", which holds both positions: its state would grow with the sequence";
  alignment = std::lcm(alignment, mask.getSize());
  return success();
}

/// Whether `op`, reading tensors whose sequence dimension is `seq`, computes each position from that
/// position and earlier ones only, with state of fixed size, in stretches that start at multiples of
/// `alignedTo` (deriveStateVariant); `alignment` collects what the block-masked contractions need. Errors
/// name the op and what it reads.
LogicalResult checkCausal(Operation *op, int64_t seq, int64_t alignedTo, int64_t &alignment) {
  auto hasSeq = [&](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor && tensor.getRank() > seq;
  };
  if (auto scan = dyn_cast<ScanOp>(op)) {
    if (scan.getDimAttr().getInt() != seq)
      return success(); // a scan across features is pointwise along the sequence
    std::optional<Combiner> combiner = scan.getCombiner();
    if (scan.getKind() != ScanKind::inclusive || scan.getReverse() || scan.getWindow() || !combiner ||
        !llvm::is_contained({Combiner::add, Combiner::decay, Combiner::online_softmax}, *combiner))
      return op->emitOpError() << "is a scan along the sequence whose state is not its running value (only "
                                  "inclusive, forward add, decay and online_softmax scans without a window carry "
                                  "state so far)";
    if (!scan.getInit().empty())
      return op->emitOpError() << "already starts from a given state; derive the variant from the entry "
                                  "without one";
    return success();
  }
  if (auto reduce = dyn_cast<ReduceOp>(op)) {
    if (hasSeq(reduce.getInputs()[0].getType()) && llvm::is_contained(reduce.getDims(), seq))
      return op->emitOpError() << "reduces along the sequence (dimension " << seq
                               << "): each position would read later ones";
    return success();
  }
  if (auto normalize = dyn_cast<NormalizeOp>(op)) {
    if (hasSeq(normalize.getInput().getType()) && static_cast<int64_t>(normalize.getDim()) == seq)
      return op->emitOpError() << "normalises along the sequence (dimension " << seq
                               << "): each position would read later ones";
    return success();
  }
  if (auto size = dyn_cast<SizeOp>(op)) {
    if (static_cast<int64_t>(size.getDim()) == seq)
      return op->emitOpError() << "reads the sequence length, which a piece of the sequence does not know";
    return success();
  }
  if (auto contract = dyn_cast<ContractOp>(op)) {
    SubscriptsAttr subscripts = contract.getSubscripts();
    MaskAttr mask = contract.getMaskAttr();
    if (mask && failed(checkBlockMask(contract, mask, seq, alignedTo, alignment)))
      return failure();
    for (auto [i, input] : llvm::enumerate(contract.getInputs())) {
      StringRef term = subscripts.getInput(i);
      if (!hasSeq(input.getType()) || static_cast<int64_t>(term.size()) <= seq)
        continue;
      // A block mask's column runs over the block, or the blocks before: what checkBlockMask allowed.
      if (subscripts.getResultDim(term[seq]) < 0 && !(mask && term[seq] == mask.getCol()))
        return op->emitOpError() << "sums input #" << i << " over the sequence (letter '" << term[seq]
                                 << "'): each position would read later ones";
    }
    return success();
  }
  return success();
}

/// Whether `map` reads the absolute position along `seq`: such a map needs the positions before the piece.
bool readsPosition(MapOp map, int64_t seq) {
  return map.getBody()
      .walk([&](IndexOp index) {
        return static_cast<int64_t>(index.getDim()) == seq ? WalkResult::interrupt() : WalkResult::advance();
      })
      .wasInterrupted();
}

/// "abc..." for `rank` dimensions.
std::string lettersFor(int64_t rank) {
  std::string letters;
  for (int64_t d = 0; d < rank; ++d)
    letters.push_back(static_cast<char>('a' + d));
  return letters;
}

/// The state a value carries along the sequence (a scan's running value, a position counter): its type
/// without the sequence dimension.
RankedTensorType withoutSequence(Value value, int64_t seq) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape.erase(shape.begin() + seq);
  return RankedTensorType::get(shape, type.getElementType());
}

/// `map` with `offset` (the positions before this piece, shaped like withoutSequence) added to every
/// `la.index seq` it reads; returns the new map, which replaces `map`.
MapOp offsetPositions(OpBuilder &builder, MapOp map, int64_t seq, Value offset) {
  MLIRContext *context = map.getContext();
  auto resultType = cast<RankedTensorType>(map.getType());
  SmallVector<std::string> terms;
  std::string resultTerm;
  if (SubscriptsAttr subscripts = map.getSubscriptsAttr()) {
    for (unsigned i = 0; i < subscripts.getNumInputs(); ++i)
      terms.push_back(subscripts.getInput(i).str());
    resultTerm = subscripts.getResult().str();
  } else {
    resultTerm = lettersFor(resultType.getRank());
    terms.assign(map.getInputs().size(), resultTerm);
  }
  std::string offsetTerm = resultTerm;
  offsetTerm.erase(seq, 1);
  terms.push_back(offsetTerm);
  SmallVector<Value> inputs(map.getInputs());
  inputs.push_back(offset);
  builder.setInsertionPoint(map);
  auto shifted = MapOp::create(builder, map.getLoc(), resultType, inputs,
                               SubscriptsAttr::getFromTerms(context, terms, resultTerm));
  shifted.getBody().takeBody(map.getBody());
  Block &block = shifted.getBody().front();
  BlockArgument before = block.addArgument(resultType.getElementType(), map.getLoc());
  shifted.getBody().walk([&](IndexOp index) {
    if (static_cast<int64_t>(index.getDim()) != seq)
      return;
    builder.setInsertionPointAfter(index);
    Location loc = index.getLoc();
    Type type = index.getType();
    Value start = before, absolute;
    if (isa<FloatType>(type)) {
      if (start.getType() != type)
        start = arith::ExtFOp::create(builder, loc, type, start);
      absolute = arith::AddFOp::create(builder, loc, index, start);
    } else {
      // An integer position (FLASH's block of t, t / 256): the count is a whole number, exact in the f32
      // state below 2^24 positions, as a float position is.
      Type integer = isa<IndexType>(type) ? builder.getI64Type() : type;
      start = arith::FPToUIOp::create(builder, loc, integer, start);
      if (integer != type)
        start = arith::IndexCastOp::create(builder, loc, type, start);
      absolute = arith::AddIOp::create(builder, loc, index, start);
    }
    index.getResult().replaceAllUsesExcept(absolute, absolute.getDefiningOp());
  });
  map.getResult().replaceAllUsesWith(shifted.getResult());
  map.erase();
  return shifted;
}

/// How many positions `value` spans along `seq`, per slice of the other dimensions: Σ 1 along `seq`.
Value countPositions(OpBuilder &builder, Location loc, Value value, int64_t seq, RankedTensorType type) {
  auto valueType = cast<RankedTensorType>(value.getType());
  auto ones = MapOp::create(builder, loc, valueType, ValueRange{value});
  builder.createBlock(&ones.getBody(), {}, {valueType.getElementType()}, {loc});
  Value one = arith::ConstantOp::create(builder, loc, builder.getFloatAttr(valueType.getElementType(), 1.0));
  YieldOp::create(builder, loc, ValueRange{one});
  builder.setInsertionPointAfter(ones);
  return ReduceOp::create(builder, loc, type, Combiner::add, ones.getResult(), ArrayRef<int64_t>{seq}).getResult(0);
}

/// `value[.., last position along seq, ..]` with `seq` dropped: the state a scan ends with.
Value sliceLastPosition(OpBuilder &builder, Location loc, Value value, int64_t seq) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, builder.getIndexAttr(0)), sizes, strides(rank, builder.getIndexAttr(1));
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(tensor::getMixedSize(builder, loc, value, d));
  Value length = tensor::DimOp::create(builder, loc, value, seq);
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  offsets[seq] = arith::SubIOp::create(builder, loc, length, one).getResult();
  sizes[seq] = builder.getIndexAttr(1);
  // Not a rank-reducing slice: which unit dimension it drops would be ambiguous once B or H is 1.
  Value slice = tensor::ExtractSliceOp::create(builder, loc, value, offsets, sizes, strides);
  return tensor::CollapseShapeOp::create(builder, loc, slice, getUnitDimReassociation(rank, seq));
}

/// Σ_t weight_t ⊙ element_t along `seq`, shaped `type` (the element without the sequence): the state
/// variant's form of a scan read only for its last position. `weight` (may be null) spans a prefix of the
/// element's dimensions, like a decay gate. A running outer product (contract "bhnd,bhne->bhnde", the
/// position's letter in every input) becomes the contraction that sums the letter ("bhnd,bhne->bhde": Kᵀ V,
/// register-tiled like any other; the weight scales K first); anything else a `la.reduce add`.
Value sumAlongSequence(OpBuilder &builder, Location loc, Value element, Value weight, int64_t seq, TypeAttr acc,
                       RankedTensorType type) {
  MLIRContext *context = builder.getContext();
  // `x` times the weight, their dimensions named `term` and `weightTerm`.
  auto weighted = [&](Value x, StringRef term, StringRef weightTerm) -> Value {
    return MapOp::create(builder, loc, x.getType(), MapFn::mul, ValueRange{weight, x},
                         SubscriptsAttr::getFromTerms(context, {weightTerm.str(), term.str()}, term))
        .getResult();
  };
  auto contract = element.getDefiningOp<ContractOp>();
  if (contract && !contract.getMaskAttr() && !contract.getGate() && contract.getAccAttr() == acc) {
    SubscriptsAttr subscripts = contract.getSubscripts();
    char letter = subscripts.getResult()[seq];
    if (llvm::all_of(subscripts.getInputs(), [&](StringRef term) { return term.contains(letter); })) {
      SmallVector<Value> inputs(contract.getInputs());
      SmallVector<std::string> terms;
      for (StringRef term : subscripts.getInputs())
        terms.push_back(term.str());
      if (weight) {
        // The weight scales the first input that has all its letters (k in k ⊗ v): a two-factor contraction
        // is what the register blocks take.
        std::string weightTerm =
            subscripts.getResult().take_front(cast<RankedTensorType>(weight.getType()).getRank()).str();
        auto scaled = llvm::find_if(terms, [&](StringRef term) {
          return llvm::all_of(weightTerm, [&](char letter) { return term.contains(letter); });
        });
        if (scaled == terms.end()) {
          inputs.push_back(weight);
          terms.push_back(weightTerm);
        } else {
          Value &input = inputs[scaled - terms.begin()];
          input = weighted(input, *scaled, weightTerm);
        }
      }
      std::string result = subscripts.getResult().str();
      result.erase(seq, 1);
      return ContractOp::create(builder, loc, type, SubscriptsAttr::getFromTerms(context, terms, result), inputs, acc)
          .getResult();
    }
  }
  if (weight) {
    std::string letters = lettersFor(cast<RankedTensorType>(element.getType()).getRank());
    element =
        weighted(element, letters, StringRef(letters).take_front(cast<RankedTensorType>(weight.getType()).getRank()));
  }
  return ReduceOp::create(builder, loc, type, Combiner::add, element, ArrayRef<int64_t>{seq}, acc).getResult(0);
}

/// The state an add or decay scan along `seq` ends with from `init`, without running it:
///   add     init + Σ_t x_t
///   decay   e^{G} ⊙ init + Σ_t e^{G − L_t} ⊙ x_t     (L_t the sum of the log-gates up to t, G their total)
/// With log-gates ≤ 0 (their domain) every exponent is ≤ 0: nothing overflows however long the piece.
/// For a decay, `gateTotal` is set to G.
Value finalState(OpBuilder &builder, ScanOp scan, int64_t seq, Value init, Value *gateTotal) {
  Location loc = scan.getLoc();
  MLIRContext *context = builder.getContext();
  Value element = scan.getInputs()[0];
  RankedTensorType type = withoutSequence(scan.getResult(0), seq);
  TypeAttr acc = scan.getAccAttr();
  if (scan.getCombiner() == Combiner::add) {
    Value sum = sumAlongSequence(builder, loc, element, Value(), seq, acc, type);
    return MapOp::create(builder, loc, type, MapFn::add, ValueRange{init, sum}).getResult();
  }
  Value gate = scan.getInputs()[1];
  auto gateType = cast<RankedTensorType>(gate.getType());
  std::string letters = lettersFor(type.getRank() + 1);
  std::string gateLetters = letters.substr(0, gateType.getRank());
  std::string totalLetters = gateLetters, stateLetters = letters;
  totalLetters.erase(seq, 1);
  stateLetters.erase(seq, 1);
  RankedTensorType totalType = withoutSequence(gate, seq);
  // G − L_t as the sum of the gates after t, summed from the end: the difference of two f32 sums of the whole
  // piece loses |G|·N·ε (0.13 at N = 8192 for retention's first head: e^0.13 is 14% off).
  Value later =
      ScanOp::create(builder, loc, TypeRange{gateType}, CombinerAttr::get(context, Combiner::add), ValueRange{gate},
                     ValueRange{}, seq, ScanKind::exclusive, /*reverse=*/true, IntegerAttr(), acc)
          .getResult(0);
  Value weight = MapOp::create(builder, loc, gateType, MapFn::exp, ValueRange{later}).getResult();
  Value total =
      ReduceOp::create(builder, loc, totalType, Combiner::add, gate, ArrayRef<int64_t>{seq}, acc).getResult(0);
  *gateTotal = total;
  Value sum = sumAlongSequence(builder, loc, element, weight, seq, acc, type);
  Value factor = MapOp::create(builder, loc, totalType, MapFn::exp, ValueRange{total}).getResult();
  Value decayed = MapOp::create(builder, loc, type, MapFn::mul, ValueRange{factor, init},
                                SubscriptsAttr::getFromTerms(context, {totalLetters, stateLetters}, stateLetters))
                      .getResult();
  return MapOp::create(builder, loc, type, MapFn::add, ValueRange{decayed, sum}).getResult();
}

/// A contraction masked by `prior_block(n, m, C)`, its inputs split into those along n (the queries) and
/// those along m (the keys, whose product each later block sums over the blocks before it): FLASH's
/// "bns,bms,bme->bne" into q and k ⊗ v. Its state is that sum over the blocks before a stretch, Σ k ⊗ v
/// ("bms,bme->bse"): a stretch that starts on a block boundary adds q · state to the contraction over its
/// own blocks, and hands on the state plus its own blocks' sum.
struct PriorBlockSplit {
  SmallVector<Value> queries, keys;
  SmallVector<std::string> queryTerms, keyTerms;
  /// The letters of the keys' product that the queries or the result read ("bse").
  std::string stateTerm;
  RankedTensorType stateType;
};

PriorBlockSplit splitPriorBlock(ContractOp contract) {
  SubscriptsAttr subscripts = contract.getSubscripts();
  char column = contract.getMaskAttr().getCol();
  PriorBlockSplit split;
  std::string read = subscripts.getResult().str();
  llvm::DenseMap<char, int64_t> sizes;
  for (auto [input, term] : llvm::zip(contract.getInputs(), subscripts.getInputs())) {
    for (auto [letter, size] : llvm::zip(term, cast<RankedTensorType>(input.getType()).getShape()))
      sizes.try_emplace(letter, size);
    bool key = term.contains(column);
    (key ? split.keys : split.queries).push_back(input);
    (key ? split.keyTerms : split.queryTerms).push_back(term.str());
    if (!key)
      read += term;
  }
  SmallVector<int64_t> shape;
  for (StringRef term : split.keyTerms)
    for (char letter : term)
      if (letter != column && StringRef(read).contains(letter) && !StringRef(split.stateTerm).contains(letter)) {
        split.stateTerm.push_back(letter);
        shape.push_back(sizes.lookup(letter));
      }
  split.stateType = RankedTensorType::get(shape, cast<RankedTensorType>(contract.getType()).getElementType());
  return split;
}

/// Whether `op` is a contraction masked by prior_block: a state of its own (splitPriorBlock).
bool isPriorBlock(Operation *op) {
  auto contract = dyn_cast<ContractOp>(op);
  return contract && contract.getMaskAttr() && contract.getMaskAttr().getKind() == MaskKind::prior_block;
}

/// `scan` with one result per state it carries: an online-softmax scan returns its running max and normaliser
/// besides its value (SPEC §8's triple, the weighted sum kept normalised); other scans already do.
ScanOp withEveryState(OpBuilder &builder, ScanOp scan) {
  if (scan.getCombiner() != Combiner::online_softmax || scan.getNumResults() == 3)
    return scan;
  builder.setInsertionPoint(scan);
  Type type = scan.getResult(0).getType();
  auto full = ScanOp::create(builder, scan.getLoc(), TypeRange{type, type, type}, scan.getCombinerAttr(),
                             scan.getInputs(), scan.getInit(), scan.getDimAttr().getInt(), scan.getKind(),
                             scan.getReverse(), scan.getWindowAttr(), scan.getAccAttr());
  scan.getResult(0).replaceAllUsesWith(full.getResult(0));
  scan.erase();
  return full;
}

/// What each state of `scan` is, appended to a state's name where a scan carries several ("" for its value).
SmallVector<StringRef> stateRoles(ScanOp scan) {
  if (scan.getCombiner() == Combiner::online_softmax)
    return {"", "max", "norm"};
  return {""};
}

/// Erases the ops of `body` whose results nothing reads, last first (the state variant's read-out).
void eraseDeadOps(Block &body) {
  SmallVector<Operation *> ops = llvm::map_to_vector(body.without_terminator(), [](Operation &op) { return &op; });
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op))
      op->erase();
}

std::string signatureText(FunctionType type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// Writes `declaration`'s body as `variant` of `source`, which must give the declared signature.
LogicalResult derive(func::FuncOp declaration, func::FuncOp source, Variant variant, SymbolTable &symbols) {
  std::string name = (declaration.getSymName() + ".derived").str();
  std::optional<int> level;
  if (auto levelAttr = declaration->getAttrOfType<IntegerAttr>(LADialect::kStateLevelAttrName)) {
    if (variant != Variant::State)
      return declaration.emitOpError() << "declares '" << LADialect::kStateLevelAttrName
                                       << "', which only a state variant takes";
    level = static_cast<int>(levelAttr.getInt());
  }
  // The dialect's verifier keeps it a positive integer.
  int64_t alignedTo = 1;
  if (auto alignedAttr = declaration->getAttrOfType<IntegerAttr>(LADialect::kAlignedToAttrName))
    alignedTo = alignedAttr.getInt();
  FailureOr<DerivedStateVariant> derived = deriveStateVariant(source, variant, name, symbols, level, alignedTo);
  if (failed(derived))
    return declaration.emitOpError() << "cannot be derived as the " << getStateVariantName(variant) << " variant of @"
                                     << source.getSymName() << " (see the error above)";
  func::FuncOp function = derived->function;
  llvm::scope_exit eraseDerived([&] { function.erase(); });
  if (function.getFunctionType() != declaration.getFunctionType())
    return declaration.emitOpError() << "is declared " << signatureText(declaration.getFunctionType()) << " but the "
                                     << getStateVariantName(variant) << " variant of @" << source.getSymName() << " is "
                                     << signatureText(function.getFunctionType())
                                     << " (its results, then the states of each scan along the sequence, in program "
                                        "order)";
  declaration.getBody().takeBody(function.getBody());
  for (unsigned i = 0; i < function.getNumResults(); ++i)
    if (Attribute state = function.getResultAttr(i, LADialect::kStateResultAttrName))
      declaration.setResultAttr(i, LADialect::kStateResultAttrName, state);
  // MLIR only lets a declaration be private; with its body it becomes the public entry it stands for. The
  // reference to the source goes: as a symbol use it would keep the source alive in every compiled module.
  declaration.setPublic();
  declaration->removeAttr(getStateVariantAttrName(variant));
  declaration->removeAttr(LADialect::kStateLevelAttrName);
  declaration->removeAttr(LADialect::kAlignedToAttrName);
  return success();
}

/// The level of each of the state `sources` (scans along the sequence, prior-block contractions and position
/// counters, in program order) of one function body (StateOrigin::level): 1 for a counter and for a scan whose operands
/// (a decay's gates, a softmax's logits included) are computed from no source, else one more than the highest level
/// among the sources they are computed from. None where a scan is not an add, decay or online-softmax scan
/// (DerivedStateVariant::combinable). `additive` says every scan adds and every level is 1.
std::optional<SmallVector<int>> stateLevels(ArrayRef<Operation *> sources, bool &additive) {
  additive = true;
  llvm::DenseMap<Operation *, int> levels;
  SmallVector<int> result;
  for (Operation *op : sources) {
    auto scan = dyn_cast<ScanOp>(op);
    // A counter's state is how many positions came before, whatever its operands' values; a prior-block
    // contraction's is a sum, like an add scan's.
    int level = 1;
    if (scan || isPriorBlock(op)) {
      if (scan && (scan.getCombiner() == Combiner::decay || scan.getCombiner() == Combiner::online_softmax))
        additive = false;
      else if (scan && scan.getCombiner() != Combiner::add)
        return std::nullopt;
      SetVector<Operation *> computedFrom;
      BackwardSliceOptions options;
      options.inclusive = true;
      for (Value operand : op->getOperands())
        if (Operation *producer = operand.getDefiningOp())
          (void)getBackwardSlice(producer, &computedFrom, options);
      for (Operation *producer : computedFrom)
        if (auto known = levels.find(producer); known != levels.end())
          level = std::max(level, known->second + 1);
    }
    additive &= level == 1;
    levels[op] = level;
    result.push_back(level);
  }
  return result;
}

constexpr Variant kVariants[] = {Variant::Prefill, Variant::Resume, Variant::State};

} // namespace

StringRef getStateVariantName(StateVariant variant) {
  switch (variant) {
  case StateVariant::Prefill:
    return "prefill";
  case StateVariant::Resume:
    return "resume";
  case StateVariant::State:
    return "state";
  }
  llvm_unreachable("unknown state variant");
}

std::optional<StateVariant> parseStateVariant(StringRef name) {
  for (Variant variant : kVariants)
    if (getStateVariantName(variant) == name)
      return variant;
  return std::nullopt;
}

StringRef getStateVariantAttrName(StateVariant variant) {
  switch (variant) {
  case StateVariant::Prefill:
    return LADialect::kPrefillOfAttrName;
  case StateVariant::Resume:
    return LADialect::kResumeOfAttrName;
  case StateVariant::State:
    return LADialect::kStateOfAttrName;
  }
  llvm_unreachable("unknown state variant");
}

FailureOr<DerivedStateVariant> deriveStateVariant(func::FuncOp source, StateVariant variant, StringRef name,
                                                  SymbolTable &symbols, std::optional<int> onlyLevel,
                                                  int64_t alignedTo) {
  OpBuilder builder(source.getContext());
  builder.setInsertionPoint(source);
  auto work = cast<func::FuncOp>(builder.clone(*source));
  work.setSymName(name);
  work.setPublic();
  auto fail = [&]() -> FailureOr<DerivedStateVariant> {
    work.erase();
    return failure();
  };
  if (failed(inlineCalls(work, symbols)))
    return fail();
  if (!llvm::hasSingleElement(work.getBody()) || !isa<func::ReturnOp>(work.getBody().front().getTerminator())) {
    source.emitOpError() << "has control flow between blocks; a state-passing variant needs one block of la ops";
    return fail();
  }

  std::optional<int64_t> seq;
  work.walk([&](ScanOp scan) {
    // The sequence is what the first scan runs along; a scan along another dimension is pointwise along it.
    if (!seq)
      seq = scan.getDimAttr().getInt();
  });
  // Without a scan, the first masked contraction tells it: its mask's row is the result's position (a block
  // mask carries state; any other is the error checkCausal names).
  ContractOp masked;
  work.walk([&](ContractOp contract) {
    if (!masked && contract.getMaskAttr())
      masked = contract;
  });
  if (!seq && masked)
    seq = std::max<int64_t>(masked.getSubscripts().getResultDim(masked.getMaskAttr().getRow()), 0);
  if (!seq) {
    source.emitOpError() << "has no scan along a sequence: it carries no state to pass on";
    return fail();
  }
  DerivedStateVariant derived;
  for (Operation &op : work.getBody().front())
    if (failed(checkCausal(&op, *seq, alignedTo, derived.alignment)))
      return fail();

  // States, in program order: each scan along the sequence (its running value) and each map that reads the
  // position along it (a counter of the positions before the piece). Resume takes them after the source's
  // arguments; both variants return them after the source's results.
  Block &body = work.getBody().front();
  derived.sequenceDim = *seq;
  SmallVector<Operation *> sources;
  for (Operation &op : body) {
    auto scan = dyn_cast<ScanOp>(op);
    auto map = dyn_cast<MapOp>(op);
    if ((scan && scan.getDimAttr().getInt() == *seq) || (map && readsPosition(map, *seq)) || isPriorBlock(&op))
      sources.push_back(&op);
  }
  std::optional<SmallVector<int>> levels = stateLevels(sources, derived.additive);
  derived.combinable = levels.has_value();
  derived.additive &= derived.combinable;
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  bool takesStates = variant != Variant::Prefill;
  SmallVector<Value> states, gateTotals;
  // The level of each of `states` and `gateTotals`, for a state variant of one level.
  SmallVector<int> stateLevelOf, totalLevelOf;
  for (auto [index, op] : llvm::enumerate(sources)) {
    Location loc = op->getLoc();
    int level = levels ? (*levels)[index] : 1;
    if (auto scan = dyn_cast<ScanOp>(op)) {
      scan = withEveryState(builder, scan);
      SmallVector<Value> init;
      if (takesStates) {
        for (Value result : scan.getResults())
          init.push_back(body.addArgument(withoutSequence(result, *seq), loc));
        scan.getInitMutable().append(init);
      }
      if (scan.getCombiner() == Combiner::online_softmax) {
        constexpr StateCombine kTriple[] = {StateCombine::SoftmaxAverage, StateCombine::SoftmaxMax,
                                            StateCombine::SoftmaxNorm};
        for (auto [role, combine] : llvm::zip(stateRoles(scan), kTriple))
          derived.states.push_back({loc, role, combine, level});
      } else {
        derived.states.push_back(
            {loc, "", scan.getCombiner() == Combiner::decay ? StateCombine::Decay : StateCombine::Sum, level});
      }
      builder.setInsertionPoint(ret);
      // The state variant does not run an add or decay scan for its last position: a sum gives it. An
      // online-softmax scan runs, read only at its last position: its lowering then writes no position.
      if (variant == Variant::State && scan.getCombiner() != Combiner::online_softmax) {
        Value gateTotal;
        states.push_back(finalState(builder, scan, *seq, init.front(), &gateTotal));
        stateLevelOf.push_back(level);
        if (gateTotal) {
          gateTotals.push_back(gateTotal);
          totalLevelOf.push_back(level);
        }
        continue;
      }
      for (Value result : scan.getResults()) {
        states.push_back(sliceLastPosition(builder, loc, result, *seq));
        stateLevelOf.push_back(level);
      }
      continue;
    }
    if (auto contract = dyn_cast<ContractOp>(op)) {
      derived.states.push_back({loc, "", StateCombine::Sum, level});
      PriorBlockSplit split = splitPriorBlock(contract);
      TypeAttr acc = contract.getAccAttr();
      Value before;
      if (takesStates) {
        // y = (the contraction over the stretch's own blocks) + queries · (the state before the stretch).
        before = body.addArgument(split.stateType, loc);
        builder.setInsertionPointAfter(contract);
        SmallVector<Value> inputs(split.queries);
        inputs.push_back(before);
        SmallVector<std::string> terms(split.queryTerms);
        terms.push_back(split.stateTerm);
        auto carried = ContractOp::create(
            builder, loc, contract.getType(),
            SubscriptsAttr::getFromTerms(builder.getContext(), terms, contract.getSubscripts().getResult().str()),
            inputs, acc);
        auto sum = MapOp::create(builder, loc, contract.getType(), MapFn::add,
                                 ValueRange{contract.getResult(), carried.getResult()});
        contract.getResult().replaceAllUsesExcept(sum.getResult(), sum);
      }
      builder.setInsertionPoint(ret);
      Value own =
          ContractOp::create(builder, loc, split.stateType,
                             SubscriptsAttr::getFromTerms(builder.getContext(), split.keyTerms, split.stateTerm),
                             split.keys, acc)
              .getResult();
      states.push_back(
          before ? MapOp::create(builder, loc, split.stateType, MapFn::add, ValueRange{before, own}).getResult() : own);
      stateLevelOf.push_back(level);
      continue;
    }
    derived.states.push_back({loc, ""});
    auto map = cast<MapOp>(op);
    RankedTensorType type = withoutSequence(map.getResult(), *seq);
    Value before;
    if (takesStates) {
      before = body.addArgument(type, loc);
      map = offsetPositions(builder, map, *seq, before);
    }
    builder.setInsertionPoint(ret);
    Value counted = countPositions(builder, loc, map.getResult(), *seq, type);
    states.push_back(before ? MapOp::create(builder, loc, type, MapFn::add, ValueRange{before, counted}).getResult()
                            : counted);
    stateLevelOf.push_back(level);
  }
  if (variant == Variant::State && onlyLevel) {
    auto keepLevel = [&](SmallVector<Value> &values, ArrayRef<int> levelOf) {
      SmallVector<Value> kept;
      for (auto [value, level] : llvm::zip(values, levelOf))
        if (level == *onlyLevel)
          kept.push_back(value);
      values = std::move(kept);
    };
    keepLevel(states, stateLevelOf);
    keepLevel(gateTotals, totalLevelOf);
  }
  // The state variant's decays hand on their gates' totals too, after every state.
  states.append(gateTotals);
  // Read only now: a position-reading map the function returns has been replaced by its shifted form.
  SmallVector<Value> results;
  if (variant != Variant::State)
    results.append(ret.getOperands().begin(), ret.getOperands().end());
  results.append(states);
  builder.setInsertionPoint(ret);
  func::ReturnOp::create(builder, ret.getLoc(), results);
  ret.erase();
  if (variant == Variant::State)
    eraseDeadOps(body);
  SmallVector<DictionaryAttr> argAttrs;
  work.getAllArgAttrs(argAttrs);
  argAttrs.resize(body.getNumArguments(), DictionaryAttr::get(work.getContext()));
  work.setType(FunctionType::get(work.getContext(), body.getArgumentTypes(), ValueRange(results).getTypes()));
  work.setAllArgAttrs(argAttrs);
  // One dictionary per result (the list must match the new result count): the states are marked.
  MLIRContext *context = work.getContext();
  SmallVector<DictionaryAttr> resultAttrs(results.size() - states.size(), DictionaryAttr::get(context));
  resultAttrs.append(states.size(), DictionaryAttr::get(context, NamedAttribute(LADialect::kStateResultAttrName,
                                                                                UnitAttr::get(context))));
  work.setAllResultAttrs(resultAttrs);
  derived.function = work;
  return derived;
}

namespace {

struct LADeriveStateVariantsPass : impl::LADeriveStateVariantsBase<LADeriveStateVariantsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<std::tuple<func::FuncOp, StringRef, Variant>> declarations;
    for (auto func : module.getOps<func::FuncOp>())
      for (Variant variant : kVariants)
        if (auto of = func->getAttrOfType<FlatSymbolRefAttr>(getStateVariantAttrName(variant)))
          declarations.emplace_back(func, of.getValue(), variant);
    for (auto [declaration, sourceName, variant] : declarations) {
      if (!declaration.isExternal()) {
        declaration.emitOpError() << "declares itself a state-passing variant of @" << sourceName
                                  << " but has a body; the compiler writes it";
        return signalPassFailure();
      }
      auto source = symbols.lookup<func::FuncOp>(sourceName);
      if (!source || source.isExternal()) {
        declaration.emitOpError() << "is a state-passing variant of @" << sourceName
                                  << ", but the module has no function of that name with a body";
        return signalPassFailure();
      }
      if (failed(derive(declaration, source, variant, symbols)))
        return signalPassFailure();
    }
  }
};

} // namespace
} // namespace mlir::la
