//===- LAGPUReductionsInnermost.cpp - a generic's reductions inside its parallel loops ===//

#include "Target/CUDA/Transforms/CUDAPasses.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::la {
#define GEN_PASS_DEF_LAGPUREDUCTIONSINNERMOST
#include "Target/CUDA/Transforms/CUDAPasses.h.inc"

namespace {

/// The loop order with every parallel loop before every reduction loop, each kind in its original order;
/// empty when the order is that already.
SmallVector<unsigned> parallelFirst(linalg::GenericOp generic) {
  SmallVector<unsigned> parallel, reduction;
  for (auto [i, type] : llvm::enumerate(generic.getIteratorTypesArray()))
    (linalg::isParallelIterator(type) ? parallel : reduction).push_back(i);
  SmallVector<unsigned> order(parallel);
  order.append(reduction);
  for (auto [i, loop] : llvm::enumerate(order))
    if (i != loop)
      return order;
  return {};
}

struct LAGPUReductionsInnermostPass : impl::LAGPUReductionsInnermostBase<LAGPUReductionsInnermostPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp generic) { generics.push_back(generic); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp generic : generics) {
      SmallVector<unsigned> order = parallelFirst(generic);
      if (order.empty())
        continue;
      rewriter.setInsertionPoint(generic);
      if (failed(linalg::interchangeGenericOp(rewriter, generic, order))) {
        generic.emitError() << "la-gpu-reductions-innermost: cannot interchange the loops of this generic";
        return signalPassFailure();
      }
    }
  }
};

} // namespace
} // namespace mlir::la
