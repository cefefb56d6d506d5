//===- LAEmitCInterface.cpp - C entry points for the runtime --------------===//

#include "Target/CPU/Transforms/CPUPasses.h"

namespace mlir::la {
#define GEN_PASS_DEF_LAEMITCINTERFACE
#include "Target/CPU/Transforms/CPUPasses.h.inc"

namespace {

struct LAEmitCInterfacePass : impl::LAEmitCInterfaceBase<LAEmitCInterfacePass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal())
        func->setAttr("llvm.emit_c_interface", UnitAttr::get(&getContext()));
  }
};

} // namespace
} // namespace mlir::la
