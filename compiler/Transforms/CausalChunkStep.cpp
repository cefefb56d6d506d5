//===- CausalChunkStep.cpp - one chunk of a tril-masked contraction -------===//

#include "Transforms/CausalChunkStep.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::la {

std::optional<CausalLayout> matchCausalContract(ContractOp op) {
  MaskAttr mask = op.getMaskAttr();
  if (!mask || mask.getOffset() != 0 || op.getGate())
    return std::nullopt;
  if ((mask.getKind() != MaskKind::tril && mask.getKind() != MaskKind::prior_block) || op.getInputs().size() != 3)
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
  if (s.getNumInputs() != 3 || s.getResult().size() != b.size() + 2)
    return std::nullopt;
  layout.e = s.getResult().back();
  layout.d = s.getInput(0).back();
  if (is(s.getInput(0), b + layout.n + layout.d) && is(s.getInput(1), b + layout.m + layout.d) &&
      is(s.getInput(2), b + layout.m + layout.e))
    return layout;
  return std::nullopt;
}

RankedTensorType getCausalStateType(ContractOp op, const CausalLayout &layout) {
  auto qType = cast<RankedTensorType>(op.getInputs()[0].getType());
  int64_t nb = layout.batch.size();
  SmallVector<int64_t> shape = llvm::to_vector(qType.getShape().take_front(nb));
  shape.push_back(qType.getDimSize(nb + 1));
  shape.push_back(cast<RankedTensorType>(op.getInputs()[2].getType()).getDimSize(nb + 1));
  return RankedTensorType::get(shape, op.getResult().getType().getElementType());
}

Value buildZeroCausalState(OpBuilder &b, Location loc, ContractOp op, const CausalLayout &layout) {
  RankedTensorType type = getCausalStateType(op, layout);
  return arith::ConstantOp::create(b, loc, type, DenseElementsAttr::get(type, b.getZeroAttr(type.getElementType())));
}

static Value addMap(OpBuilder &b, Location loc, Type type, Value x, Value y) {
  return MapOp::create(b, loc, type, MapFn::add, ValueRange{x, y}).getResult();
}

Value buildCausalChunk(OpBuilder &b, Location loc, ContractOp op, const CausalLayout &l, Value qc, Value kc, Value vc,
                       Value state, int64_t size) {
  int64_t nb = l.batch.size();
  RankedTensorType stateType = getCausalStateType(op, l);
  Type elementType = stateType.getElementType();
  auto shaped = [&](std::initializer_list<int64_t> tail) {
    SmallVector<int64_t> shape = llvm::to_vector(stateType.getShape().take_front(nb));
    shape.append(tail.begin(), tail.end());
    return RankedTensorType::get(shape, elementType);
  };
  const std::string &bt = l.batch;
  std::string bn = bt + l.n, bm = bt + l.m;
  RankedTensorType outType = shaped({size, stateType.getShape().back()});
  std::string outTerm = bn + l.e;
  TypeAttr acc = op.getAccAttr();
  auto terms = [&](ArrayRef<std::string> inputs, StringRef result) {
    return SubscriptsAttr::getFromTerms(op.getContext(), inputs, result);
  };

  // Inter-chunk q_c · S: all there is for prior_block, which reads only the earlier chunks.
  Value inter =
      ContractOp::create(b, loc, outType, terms({bn + l.d, bt + l.d + l.e}, outTerm), ValueRange{qc, state}, acc);
  if (op.getMaskAttr().getKind() == MaskKind::prior_block)
    return inter;
  // Plus intra-chunk tril(q_c k_cᵀ) v_c, as C×C scores then one more contraction.
  MaskAttr tril = MaskAttr::get(op.getContext(), MaskKind::tril, l.n, l.m, 0);
  Value scores = ContractOp::create(b, loc, shaped({size, size}), terms({bn + l.d, bm + l.d}, bn + l.m),
                                    ValueRange{qc, kc}, tril, acc);
  Value intra = ContractOp::create(b, loc, outType, terms({bn + l.m, bm + l.e}, outTerm), ValueRange{scores, vc}, acc);
  return addMap(b, loc, outType, inter, intra);
}

Value buildCausalStateUpdate(OpBuilder &b, Location loc, ContractOp op, const CausalLayout &l, Value kc, Value vc,
                             Value state) {
  RankedTensorType stateType = getCausalStateType(op, l);
  std::string bm = l.batch + l.m;
  auto terms = [&](ArrayRef<std::string> inputs, StringRef result) {
    return SubscriptsAttr::getFromTerms(op.getContext(), inputs, result);
  };
  Value delta = ContractOp::create(b, loc, stateType, terms({bm + l.d, bm + l.e}, l.batch + l.d + l.e),
                                   ValueRange{kc, vc}, op.getAccAttr());
  return addMap(b, loc, stateType, state, delta);
}

} // namespace mlir::la
