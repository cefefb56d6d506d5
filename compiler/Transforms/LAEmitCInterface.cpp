//===- LAEmitCInterface.cpp - C entry points for the runtime --------------===//

#include "Transforms/Passes.h"

namespace mlir::la {
#define GEN_PASS_DEF_LAEMITCINTERFACE
#include "Transforms/Passes.h.inc"

namespace {

struct LAEmitCInterfacePass : impl::LAEmitCInterfaceBase<LAEmitCInterfacePass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func.isPublic() || func.isExternal())
        continue;
      func->setAttr("llvm.emit_c_interface", UnitAttr::get(&getContext()));
      // The runtime never passes an output that overlaps another tensor (it checks), so buffers are
      // distinct: without this, LLVM cannot hoist loads of inputs above stores to outputs.
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (isa<MemRefType>(func.getArgumentTypes()[i]))
          func.setArgAttr(i, "llvm.noalias", UnitAttr::get(&getContext()));
    }
  }
};

} // namespace
} // namespace mlir::la
