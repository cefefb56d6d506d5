//===- RecomputeCost.cpp - what recomputing one element costs -------------===//

#include "Transforms/RecomputeCost.h"

#include "LA/IR/LAMapFns.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

namespace mlir::la {

int64_t recomputeCost(Operation &op) {
  if (matchPattern(&op, m_Constant()))
    return 0;
  if (isa<math::ExpOp, math::Exp2Op, math::ExpM1Op, math::LogOp, math::Log1pOp, math::Log2Op, math::TanhOp, math::ErfOp,
          math::PowFOp, math::SinOp, math::CosOp, math::AtanOp, math::Atan2Op>(op))
    return 8;
  if (isa<arith::DivFOp, arith::RemFOp, math::SqrtOp, math::RsqrtOp>(op))
    return 4;
  return 1;
}

int64_t recomputeCost(Block &body) {
  int64_t cost = 0;
  for (Operation &op : body) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      continue;
    cost += recomputeCost(op);
  }
  return cost;
}

int64_t recomputeCost(MapOp map) {
  if (map.hasRegionBody())
    return recomputeCost(map.getBody().front());
  // Expand the named function into a scratch block, as the lowering would, and weigh that; the block's
  // destructor erases the ops.
  Block scratch;
  SmallVector<Value> args;
  for (Value input : map.getInputs())
    args.push_back(scratch.addArgument(getElementTypeOrSelf(input.getType()), map.getLoc()));
  OpBuilder builder(map.getContext()); // the scratch block has no region to take a context from
  builder.setInsertionPointToStart(&scratch);
  buildMapFn(builder, map.getLoc(), *map.getFn(), map.getParams(), args);
  return recomputeCost(scratch);
}

} // namespace mlir::la
