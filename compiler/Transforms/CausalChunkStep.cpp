//===- CausalChunkStep.cpp - one chunk of a tril-masked contraction -------===//

#include "Transforms/CausalChunkStep.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::la {

std::optional<CausalLayout> matchCausalContract(ContractOp op) {
  MaskAttr mask = op.getMaskAttr();
  if (!mask || mask.getOffset() != 0 || op.getGate())
    return std::nullopt;
  if (mask.getKind() != MaskKind::tril && !(mask.getKind() == MaskKind::prior_block && op.getInputs().size() == 3))
    return std::nullopt;
  SubscriptsAttr s = op.getSubscripts();
  CausalLayout layout;
  layout.n = mask.getRow();
  layout.m = mask.getCol();
  size_t pos = s.getResult().find(layout.n);
  if (pos == StringRef::npos)
    return std::nullopt;
  layout.batch = s.getResult().substr(0, pos).str();
  const std::string &b = layout.batch;
  auto is = [](StringRef term, const std::string &expected) { return term == expected; };
  if (s.getNumInputs() == 3 && s.getResult().size() == b.size() + 2) {
    layout.e = s.getResult().back();
    layout.d = s.getInput(0).back();
    if (is(s.getInput(0), b + layout.n + layout.d) && is(s.getInput(1), b + layout.m + layout.d) &&
        is(s.getInput(2), b + layout.m + layout.e))
      return layout;
  }
  if (s.getNumInputs() == 2 && s.getResult().size() == b.size() + 1) {
    layout.d = s.getInput(0).back();
    if (is(s.getInput(0), b + layout.n + layout.d) && is(s.getInput(1), b + layout.m + layout.d))
      return layout;
  }
  return std::nullopt;
}

/// The state type: batch dims then [D, Dv], or [D] without values.
static RankedTensorType causalStateType(ContractOp op, const CausalLayout &layout) {
  auto qType = cast<RankedTensorType>(op.getInputs()[0].getType());
  int64_t nb = layout.batch.size();
  SmallVector<int64_t> shape = llvm::to_vector(qType.getShape().take_front(nb));
  shape.push_back(qType.getDimSize(nb + 1));
  if (layout.e)
    shape.push_back(cast<RankedTensorType>(op.getInputs()[2].getType()).getDimSize(nb + 1));
  return RankedTensorType::get(shape, op.getResult().getType().getElementType());
}

Value buildZeroCausalState(OpBuilder &b, Location loc, ContractOp op, const CausalLayout &layout) {
  RankedTensorType type = causalStateType(op, layout);
  return arith::ConstantOp::create(b, loc, type,
                                   DenseElementsAttr::get(type, b.getZeroAttr(type.getElementType())));
}

static Value addMap(OpBuilder &b, Location loc, Type type, Value x, Value y) {
  return MapOp::create(b, loc, type, MapFn::add, ValueRange{x, y}).getResult();
}

Value buildCausalChunk(OpBuilder &b, Location loc, ContractOp op, const CausalLayout &l, Value qc, Value kc, Value vc,
                       Value state, int64_t size) {
  MLIRContext *context = op.getContext();
  bool withValues = l.e != 0;
  bool prior = op.getMaskAttr().getKind() == MaskKind::prior_block;
  int64_t nb = l.batch.size();
  RankedTensorType stateType = causalStateType(op, l);
  Type elementType = stateType.getElementType();
  auto shaped = [&](std::initializer_list<int64_t> tail) {
    SmallVector<int64_t> shape = llvm::to_vector(stateType.getShape().take_front(nb));
    shape.append(tail.begin(), tail.end());
    return RankedTensorType::get(shape, elementType);
  };
  const std::string &bt = l.batch;
  std::string bn = bt + l.n, bm = bt + l.m;
  int64_t eSize = withValues ? stateType.getShape().back() : 0;
  RankedTensorType outType = withValues ? shaped({size, eSize}) : shaped({size});
  std::string outTerm = withValues ? bn + l.e : bn;
  TypeAttr acc = op.getAccAttr();
  auto terms = [&](ArrayRef<std::string> inputs, StringRef result) {
    return SubscriptsAttr::getFromTerms(op.getContext(), inputs, result);
  };

  Value sum;
  if (prior) {
    // Only the earlier chunks: q_c · S.
    sum = ContractOp::create(b, loc, outType, terms({bn + l.d, bt + l.d + l.e}, outTerm), ValueRange{qc, state}, acc);
  } else if (withValues) {
    // Inter-chunk q_c · S plus intra-chunk tril(q_c k_cᵀ) v_c, as C×C scores then one more contraction.
    Value inter =
        ContractOp::create(b, loc, outType, terms({bn + l.d, bt + l.d + l.e}, outTerm), ValueRange{qc, state}, acc);
    MaskAttr tril = MaskAttr::get(context, MaskKind::tril, l.n, l.m, 0);
    Value scores = ContractOp::create(b, loc, shaped({size, size}), terms({bn + l.d, bm + l.d}, bn + l.m),
                                      ValueRange{qc, kc}, tril, acc);
    Value intra =
        ContractOp::create(b, loc, outType, terms({bn + l.m, bm + l.e}, outTerm), ValueRange{scores, vc}, acc);
    sum = addMap(b, loc, outType, inter, intra);
  } else {
    Value prefix = ScanOp::create(b, loc, kc.getType(), Combiner::add, kc, nb, state, acc).getResult(0);
    sum = ContractOp::create(b, loc, outType, terms({bn + l.d, bn + l.d}, outTerm), ValueRange{qc, prefix}, acc);
  }

  return sum;
}

Value buildCausalStateUpdate(OpBuilder &b, Location loc, ContractOp op, const CausalLayout &l, Value kc, Value vc,
                             Value state) {
  RankedTensorType stateType = causalStateType(op, l);
  std::string bm = l.batch + l.m;
  std::string stateTerm = l.e ? l.batch + l.d + l.e : l.batch + l.d;
  TypeAttr acc = op.getAccAttr();
  auto terms = [&](ArrayRef<std::string> inputs, StringRef result) {
    return SubscriptsAttr::getFromTerms(op.getContext(), inputs, result);
  };
  Value delta =
      l.e ? ContractOp::create(b, loc, stateType, terms({bm + l.d, bm + l.e}, stateTerm), ValueRange{kc, vc}, acc)
                .getResult()
          : ReduceOp::create(b, loc, stateType, Combiner::add, kc, ArrayRef<int64_t>{int64_t(l.batch.size())}, acc)
                .getResult(0);
  return addMap(b, loc, stateType, state, delta);
}

} // namespace mlir::la
