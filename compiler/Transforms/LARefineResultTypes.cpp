//===- LARefineResultTypes.cpp - static result types for public functions -===//

#include "Transforms/Passes.h"

#include "mlir/IR/SymbolTable.h"

namespace mlir::la {
#define GEN_PASS_DEF_LAREFINERESULTTYPES
#include "Transforms/Passes.h.inc"

namespace {

struct LARefineResultTypesPass : impl::LARefineResultTypesBase<LARefineResultTypesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || !SymbolTable::symbolKnownUseEmpty(func, module))
        continue;
      SmallVector<Type> resultTypes = llvm::to_vector(func.getResultTypes());
      func.walk([&](func::ReturnOp ret) {
        for (OpOperand &operand : ret->getOpOperands()) {
          auto cast = operand.get().getDefiningOp<tensor::CastOp>();
          if (!cast || !tensor::canFoldIntoConsumerOp(cast))
            continue;
          operand.set(cast.getSource());
          resultTypes[operand.getOperandNumber()] = cast.getSource().getType();
        }
      });
      func.setType(FunctionType::get(&getContext(), func.getArgumentTypes(), resultTypes));
    }
  }
};

} // namespace
} // namespace mlir::la
