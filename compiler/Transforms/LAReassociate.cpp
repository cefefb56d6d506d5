//===- LAReassociate.cpp - cheapest order of contraction chains -------------===//
//
// Implements la-reassociate: a product of three tensors has three pairwise evaluation orders whose costs
// differ by orders of magnitude ((QKᵀ)V is O(N·M·D), Q(KᵀV) is O(N·D²)). Costs are counted from static
// shapes, so this runs on kernels specialised to concrete shapes.
//
//===----------------------------------------------------------------------===//

#include "Analysis/ContractionDims.h"
#include "LA/IR/LAOps.h"
#include "Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::la {
#define GEN_PASS_DEF_LAREASSOCIATE
#include "Transforms/Passes.h.inc"
} // namespace mlir::la

using namespace mlir;
using namespace mlir::la;

namespace {

/// One factor of a three-way product: its value and the letters naming its dimensions.
struct Factor {
  Value value;
  std::string letters;
};

/// A pairwise evaluation order: contract factors `first` and `second`, then the result with `last`.
struct Order {
  unsigned first, second, last;
  std::string intermediate; // letters of the first product
  double multiplyAdds;      // of both steps
};

using LetterSizes = llvm::DenseMap<char, int64_t>;

static std::string unionOf(StringRef a, StringRef b) {
  std::string letters = a.str();
  for (char c : b)
    if (!StringRef(letters).contains(c))
      letters.push_back(c);
  return letters;
}

static double volume(StringRef letters, const LetterSizes &sizes) {
  double product = 1.0;
  for (char c : letters)
    product *= static_cast<double>(sizes.lookup(c));
  return product;
}

/// The cost of evaluating `factors` -> `result` in the order (first, second) then last. The intermediate
/// keeps exactly the letters still needed by the last factor or by the result.
static Order costOrder(ArrayRef<Factor> factors, StringRef result, const LetterSizes &sizes, unsigned first,
                       unsigned second, unsigned last) {
  std::string pair = unionOf(factors[first].letters, factors[second].letters);
  std::string needed = unionOf(factors[last].letters, result);
  std::string intermediate;
  for (char c : pair)
    if (StringRef(needed).contains(c))
      intermediate.push_back(c);
  double cost = volume(pair, sizes) + volume(unionOf(intermediate, factors[last].letters), sizes);
  return {first, second, last, intermediate, cost};
}

static Order cheapestOrder(ArrayRef<Factor> factors, StringRef result, const LetterSizes &sizes) {
  Order best = costOrder(factors, result, sizes, 0, 1, 2);
  for (Order candidate : {costOrder(factors, result, sizes, 0, 2, 1), costOrder(factors, result, sizes, 1, 2, 0)})
    if (candidate.multiplyAdds < best.multiplyAdds)
      best = candidate;
  return best;
}

/// Records the static size of every letter of `factor`; fails on a dynamic dimension (unknown cost).
static LogicalResult recordSizes(const Factor &factor, LetterSizes &sizes) {
  auto type = cast<RankedTensorType>(factor.value.getType());
  for (auto [letter, size] : llvm::zip(factor.letters, type.getShape())) {
    if (ShapedType::isDynamic(size))
      return failure();
    sizes[letter] = size;
  }
  return success();
}

/// Replaces `op` by two contractions in the given order.
static void emitOrder(PatternRewriter &rewriter, ContractOp op, ArrayRef<Factor> factors, StringRef result,
                      const LetterSizes &sizes, const Order &order) {
  Type element = op.getResult().getType().getElementType();
  SmallVector<int64_t> shape = llvm::map_to_vector(order.intermediate, [&](char c) { return sizes.lookup(c); });
  auto intermediateType = RankedTensorType::get(shape, element);
  const Factor &first = factors[order.first], &second = factors[order.second], &last = factors[order.last];
  MLIRContext *context = op.getContext();
  auto inner =
      ContractOp::create(rewriter, op.getLoc(), intermediateType,
                         SubscriptsAttr::getFromTerms(context, {first.letters, second.letters}, order.intermediate),
                         ValueRange{first.value, second.value}, op.getAccAttr());
  rewriter.replaceOpWithNewOp<ContractOp>(
      op, op.getResult().getType(), SubscriptsAttr::getFromTerms(context, {order.intermediate, last.letters}, result),
      ValueRange{inner.getResult(), last.value}, op.getAccAttr());
}

/// contract(A, B, C) => contract(contract(X, Y), Z) in the cheapest order: an unmasked three-way product
/// never needs to be evaluated as one loop nest over every letter.
struct SplitTernaryContract : OpRewritePattern<ContractOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ContractOp op, PatternRewriter &rewriter) const override {
    if (op.getInputs().size() != 3 || op.getMaskAttr())
      return rewriter.notifyMatchFailure(op, "not an unmasked three-input contraction");
    SubscriptsAttr subscripts = op.getSubscripts();
    SmallVector<Factor> factors;
    LetterSizes sizes;
    for (auto [value, letters] : llvm::zip(op.getInputs(), subscripts.getInputs())) {
      factors.push_back({value, letters.str()});
      if (failed(recordSizes(factors.back(), sizes)))
        return rewriter.notifyMatchFailure(op, "dynamic dimension: cost unknown");
    }
    emitOrder(rewriter, op, factors, subscripts.getResult(), sizes,
              cheapestOrder(factors, subscripts.getResult(), sizes));
    return success();
  }
};

/// contract(contract(A, B), C) => contract(A, contract(B, C)) (or the other order) when cheaper. The inner
/// product must have no other use, or both orders would be computed.
struct ReassociateContractChain : OpRewritePattern<ContractOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ContractOp op, PatternRewriter &rewriter) const override {
    if (op.getInputs().size() != 2 || op.getMaskAttr())
      return rewriter.notifyMatchFailure(op, "not an unmasked two-input contraction");
    for (unsigned innerIndex = 0; innerIndex < 2; ++innerIndex) {
      auto inner = op.getInputs()[innerIndex].getDefiningOp<ContractOp>();
      if (!inner || inner.getInputs().size() != 2 || inner.getMaskAttr() || !inner->hasOneUse() ||
          inner.getAccAttr() != op.getAccAttr())
        continue;
      if (succeeded(reassociate(op, inner, innerIndex, rewriter)))
        return success();
    }
    return rewriter.notifyMatchFailure(op, "no cheaper order of a contraction chain");
  }

private:
  static LogicalResult reassociate(ContractOp op, ContractOp inner, unsigned innerIndex, PatternRewriter &rewriter) {
    SubscriptsAttr outerTerms = op.getSubscripts();
    SubscriptsAttr innerTerms = inner.getSubscripts();
    // Name the inner product's letters in the outer contraction's terms: its result letters become the
    // outer term's letters position by position; its summed letters keep their names unless the outer
    // contraction uses them, and then get unused ones.
    llvm::DenseMap<char, char> rename;
    for (auto [innerLetter, outerLetter] : llvm::zip(innerTerms.getResult(), outerTerms.getInput(innerIndex)))
      rename[innerLetter] = outerLetter;
    std::string used = outerTerms.str();
    char fresh = 'a';
    for (char c : inferContractionDims(innerTerms).k) { // the inner product's summed (k) letters
      if (!StringRef(used).contains(c)) {               // keep the author's letter where it is free
        rename[c] = c;
        used.push_back(c);
        continue;
      }
      while (StringRef(used).contains(fresh))
        ++fresh;
      if (fresh > 'z')
        return failure();
      rename[c] = fresh;
      used.push_back(fresh);
    }
    SmallVector<Factor> factors;
    for (auto [value, letters] : llvm::zip(inner.getInputs(), innerTerms.getInputs())) {
      std::string renamed;
      for (char c : letters)
        renamed.push_back(rename.lookup(c));
      factors.push_back({value, renamed});
    }
    factors.push_back({op.getInputs()[1 - innerIndex], outerTerms.getInput(1 - innerIndex).str()});
    LetterSizes sizes;
    for (const Factor &factor : factors)
      if (failed(recordSizes(factor, sizes)))
        return failure();
    StringRef result = outerTerms.getResult();
    Order current = costOrder(factors, result, sizes, 0, 1, 2);
    Order best = cheapestOrder(factors, result, sizes);
    if (!(best.multiplyAdds < current.multiplyAdds))
      return failure();
    emitOrder(rewriter, op, factors, result, sizes, best);
    rewriter.eraseOp(inner);
    return success();
  }
};

struct LAReassociatePass : la::impl::LAReassociateBase<LAReassociatePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitTernaryContract, ReassociateContractChain>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
