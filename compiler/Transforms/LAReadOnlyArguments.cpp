//===- LAReadOnlyArguments.cpp - a kernel never writes its inputs ---------===//

#include "Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"

namespace mlir::la {
#define GEN_PASS_DEF_LAREADONLYARGUMENTS
#include "Transforms/Passes.h.inc"

namespace {

struct LAReadOnlyArgumentsPass : impl::LAReadOnlyArgumentsBase<LAReadOnlyArgumentsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    auto readOnly = BoolAttr::get(func.getContext(), false);
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (isa<TensorType>(func.getArgument(i).getType()))
        func.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName, readOnly);
  }
};

} // namespace
} // namespace mlir::la
