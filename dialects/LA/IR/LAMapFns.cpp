//===- LAMapFns.cpp - scalar semantics of named la.map functions ----------===//

#include "LA/IR/LAMapFns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::la;

unsigned mlir::la::getMapFnArity(MapFn fn) {
  switch (fn) {
  case MapFn::add:
  case MapFn::sub:
  case MapFn::mul:
  case MapFn::div:
  case MapFn::max:
  case MapFn::min:
    return 2;
  case MapFn::affine:
    return 3;
  default:
    return 1;
  }
}

unsigned mlir::la::getMapFnNumParams(MapFn fn) {
  switch (fn) {
  case MapFn::clamp:
    return 2;
  case MapFn::add_const:
  case MapFn::mul_const:
    return 1;
  default:
    return 0;
  }
}

static Value constantLike(OpBuilder &b, Location loc, Value like, double value) {
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(like.getType(), value));
}

static Value sigmoid(OpBuilder &b, Location loc, Value x) {
  // 1 / (1 + exp(-x)): exp overflows to +inf for very negative x and the quotient is then exactly 0.
  Value one = constantLike(b, loc, x, 1.0);
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
  return arith::DivFOp::create(b, loc, one, arith::AddFOp::create(b, loc, one, e));
}

Value mlir::la::buildMapFn(OpBuilder &b, Location loc, MapFn fn, ArrayRef<double> params, ValueRange args) {
  assert(args.size() == getMapFnArity(fn) && params.size() == getMapFnNumParams(fn) &&
         "verifier guarantees arity and parameter count");
  Value x = args[0];
  switch (fn) {
  case MapFn::identity:
    return x;
  case MapFn::sigmoid:
    return sigmoid(b, loc, x);
  case MapFn::elu1: {
    // elu(x) + 1 = x + 1 for x > 0, exp(x) otherwise; exp is taken of min(x, 0) so the unused branch
    // cannot overflow.
    Value zero = constantLike(b, loc, x, 0.0);
    Value one = constantLike(b, loc, x, 1.0);
    Value positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
    Value expBranch = math::ExpOp::create(b, loc, arith::MinimumFOp::create(b, loc, x, zero));
    Value linearBranch = arith::AddFOp::create(b, loc, x, one);
    return arith::SelectOp::create(b, loc, positive, linearBranch, expBranch);
  }
  case MapFn::relu:
    return arith::MaximumFOp::create(b, loc, x, constantLike(b, loc, x, 0.0));
  case MapFn::relu2: {
    Value r = arith::MaximumFOp::create(b, loc, x, constantLike(b, loc, x, 0.0));
    return arith::MulFOp::create(b, loc, r, r);
  }
  case MapFn::exp:
    return math::ExpOp::create(b, loc, x);
  case MapFn::log:
    return math::LogOp::create(b, loc, x);
  case MapFn::silu:
    return arith::MulFOp::create(b, loc, x, sigmoid(b, loc, x));
  case MapFn::neg:
    return arith::NegFOp::create(b, loc, x);
  case MapFn::reciprocal:
    return arith::DivFOp::create(b, loc, constantLike(b, loc, x, 1.0), x);
  case MapFn::square:
    return arith::MulFOp::create(b, loc, x, x);
  case MapFn::clamp: {
    Value lo = constantLike(b, loc, x, params[0]);
    Value hi = constantLike(b, loc, x, params[1]);
    return arith::MinimumFOp::create(b, loc, arith::MaximumFOp::create(b, loc, x, lo), hi);
  }
  case MapFn::add_const:
    return arith::AddFOp::create(b, loc, x, constantLike(b, loc, x, params[0]));
  case MapFn::mul_const:
    return arith::MulFOp::create(b, loc, x, constantLike(b, loc, x, params[0]));
  case MapFn::add:
    return arith::AddFOp::create(b, loc, x, args[1]);
  case MapFn::sub:
    return arith::SubFOp::create(b, loc, x, args[1]);
  case MapFn::mul:
    return arith::MulFOp::create(b, loc, x, args[1]);
  case MapFn::div:
    return arith::DivFOp::create(b, loc, x, args[1]);
  case MapFn::max:
    return arith::MaximumFOp::create(b, loc, x, args[1]);
  case MapFn::min:
    return arith::MinimumFOp::create(b, loc, x, args[1]);
  case MapFn::affine:
    return arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, args[1], x), args[2]);
  }
  llvm_unreachable("unhandled MapFn");
}

Value mlir::la::buildGateFn(OpBuilder &b, Location loc, GateFn fn, Value gate) {
  switch (fn) {
  case GateFn::identity:
    return gate;
  case GateFn::sigmoid:
    return sigmoid(b, loc, gate);
  case GateFn::silu:
    return arith::MulFOp::create(b, loc, gate, sigmoid(b, loc, gate));
  }
  llvm_unreachable("unhandled GateFn");
}
