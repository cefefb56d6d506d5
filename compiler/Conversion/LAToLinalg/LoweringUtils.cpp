//===- LoweringUtils.cpp - shared helpers of the la-to-linalg patterns ----===//

#include "Conversion/LAToLinalg/LoweringUtils.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <limits>

namespace mlir::la {

static constexpr double kInf = std::numeric_limits<double>::infinity();

SmallVector<OpFoldResult> getSizes(OpBuilder &b, Location loc, Value value) {
  return tensor::getMixedSizes(b, loc, value);
}

Value createEmpty(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes, Type elementType) {
  return tensor::EmptyOp::create(b, loc, sizes, elementType);
}

Value createFilled(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes, Type elementType, double value) {
  Value empty = createEmpty(b, loc, sizes, elementType);
  Value scalar = createFloat(b, loc, elementType, value);
  return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
}

Value castToType(OpBuilder &b, Location loc, Value value, Type type) {
  if (value.getType() == type)
    return value;
  return tensor::CastOp::create(b, loc, type, value);
}

Value createFloat(OpBuilder &b, Location loc, Type type, double value) {
  if (auto vector = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(vector, b.getFloatAttr(vector.getElementType(), value)));
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
}

Value convertFloat(OpBuilder &b, Location loc, Value value, Type type) {
  auto from = cast<FloatType>(getElementTypeOrSelf(value.getType()));
  auto to = cast<FloatType>(getElementTypeOrSelf(type));
  if (from == to)
    return value;
  Type result = to;
  if (auto vector = dyn_cast<VectorType>(value.getType()))
    result = vector.clone(to);
  if (from.getWidth() < to.getWidth())
    return arith::ExtFOp::create(b, loc, result, value);
  return arith::TruncFOp::create(b, loc, result, value);
}

Value convertElementType(OpBuilder &b, Location loc, Value value, Type elementType) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == elementType)
    return value;
  int64_t rank = type.getRank();
  Value init = createEmpty(b, loc, getSizes(b, loc, value), elementType);
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(b, loc, init.getType(), value, init, maps, iterators,
                                   [&](OpBuilder &nb, Location nested, ValueRange args) {
                                     linalg::YieldOp::create(nb, nested,
                                                             convertFloat(nb, nested, args[0], elementType));
                                   })
      .getResult(0);
}

Type getAccumulationType(std::optional<Type> acc, Type elementType) {
  if (acc)
    return *acc;
  if (elementType.isF64())
    return elementType;
  return Float32Type::get(elementType.getContext());
}

arith::FastMathFlagsAttr getReassocFlags(MLIRContext *context) {
  return arith::FastMathFlagsAttr::get(context, arith::FastMathFlags::reassoc | arith::FastMathFlags::contract);
}

std::string chooseLoopOrder(ArrayRef<StringRef> operandTerms, StringRef resultTerm, StringRef batchLetters,
                            const llvm::StringMap<int64_t> &letterSizes) {
  std::string all;
  auto addLetters = [&](StringRef term) {
    for (char c : term)
      if (all.find(c) == std::string::npos)
        all.push_back(c);
  };
  addLetters(resultTerm);
  for (StringRef term : operandTerms)
    addLetters(term);

  // The innermost loop: the result's last dimension when some input is also contiguous along it (the
  // vectoriser then streams both), else the last dimension of the largest input (a vectorised reduction).
  char innermost = 0;
  if (!resultTerm.empty() &&
      llvm::any_of(operandTerms, [&](StringRef t) { return !t.empty() && t.back() == resultTerm.back(); }))
    innermost = resultTerm.back();
  if (!innermost) {
    auto termSize = [&](StringRef t) {
      double size = 1;
      for (char c : t) {
        int64_t s = letterSizes.lookup(StringRef(&c, 1));
        size *= s <= 0 ? 1e6 : static_cast<double>(s);
      }
      return size;
    };
    std::optional<StringRef> largest;
    for (StringRef t : operandTerms)
      if (!t.empty() && (!largest || termSize(t) > termSize(*largest)))
        largest = t;
    if (largest)
      innermost = largest->back();
  }

  std::string batch, rest;
  for (char c : all) {
    if (c == innermost)
      continue;
    (batchLetters.contains(c) ? batch : rest).push_back(c);
  }
  auto sizeOf = [&](char c) {
    int64_t s = letterSizes.lookup(StringRef(&c, 1));
    return s == ShapedType::kDynamic || s < 0 ? std::numeric_limits<int64_t>::max() : s;
  };
  std::stable_sort(rest.begin(), rest.end(), [&](char a, char b) { return sizeOf(a) > sizeOf(b); });
  std::string order = batch + rest;
  if (innermost)
    order.push_back(innermost);
  return order;
}

/// The identity of a named combiner (the value an empty reduction returns).
std::optional<double> getCombinerIdentity(Combiner combiner) {
  switch (combiner) {
  case Combiner::add:
    return 0.0;
  case Combiner::max:
  case Combiner::logaddexp:
    return -kInf;
  case Combiner::min:
    return kInf;
  default:
    return std::nullopt;
  }
}

/// Emits `acc ⊕ x` for a named single-state combiner.
Value buildCombine(OpBuilder &b, Location loc, Combiner combiner, Value acc, Value x) {
  auto flags = getReassocFlags(b.getContext());
  switch (combiner) {
  case Combiner::add:
    return arith::AddFOp::create(b, loc, acc, x, flags);
  case Combiner::max:
    return arith::MaximumFOp::create(b, loc, acc, x);
  case Combiner::min:
    return arith::MinimumFOp::create(b, loc, acc, x);
  case Combiner::logaddexp: {
    // max + log1p(exp(-|a - b|)); when both are -inf the difference is NaN, so keep the max (-inf) then.
    Value hi = arith::MaximumFOp::create(b, loc, acc, x);
    Value lo = arith::MinimumFOp::create(b, loc, acc, x);
    Value diff = arith::SubFOp::create(b, loc, lo, hi);
    Value tail = math::Log1pOp::create(b, loc, math::ExpOp::create(b, loc, diff));
    Value sum = arith::AddFOp::create(b, loc, hi, tail);
    Value negInf = createFloat(b, loc, hi.getType(), -kInf);
    Value hiIsNegInf = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, hi, negInf);
    return arith::SelectOp::create(b, loc, hiIsNegInf, hi, sum);
  }
  default:
    llvm_unreachable("not a single-state combiner");
  }
}

tensor::CollapseShapeOp matchFinalState(Operation *user, Value scanResult, int64_t dim) {
  auto scanType = cast<RankedTensorType>(scanResult.getType());
  if (!scanType.hasStaticShape())
    return nullptr;
  Operation *reader = user;
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user)) {
    if (!slice.hasUnitStride() || slice.getType().getRank() != scanType.getRank() || !slice->hasOneUse())
      return nullptr;
    for (int64_t i = 0; i < scanType.getRank(); ++i) {
      std::optional<int64_t> offset = getConstantIntValue(slice.getMixedOffsets()[i]);
      std::optional<int64_t> size = getConstantIntValue(slice.getMixedSizes()[i]);
      int64_t expectedOffset = i == dim ? scanType.getDimSize(i) - 1 : 0;
      int64_t expectedSize = i == dim ? 1 : scanType.getDimSize(i);
      if (offset != expectedOffset || size != expectedSize)
        return nullptr;
    }
    reader = *slice->user_begin();
  } else if (scanType.getDimSize(dim) != 1) {
    return nullptr;
  }
  auto collapse = dyn_cast<tensor::CollapseShapeOp>(reader);
  if (!collapse || collapse.getResultType().getRank() != scanType.getRank() - 1)
    return nullptr;
  // Every group is one dimension except the one that merges the sequence's unit dimension with a neighbour.
  for (ReassociationIndices group : collapse.getReassociationIndices())
    if (group.size() > 1 && !llvm::is_contained(group, dim))
      return nullptr;
  return collapse;
}

} // namespace mlir::la
