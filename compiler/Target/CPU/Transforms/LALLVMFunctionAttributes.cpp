//===- LALLVMFunctionAttributes.cpp - attributes LLVM's code generation relies on ===//

#include "Target/CPU/Transforms/CPUPasses.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::la {
#define GEN_PASS_DEF_LALLVMFUNCTIONATTRIBUTES
#include "Target/CPU/Transforms/CPUPasses.h.inc"

namespace {

/// A public kernel body: not an allocator, not one of the wrappers through which the runtime calls it.
bool isKernel(LLVM::LLVMFuncOp func) {
  llvm::StringRef name = func.getSymName();
  return !func.isExternal() && func.getLinkage() == LLVM::Linkage::External && !name.starts_with("_mlir_ciface_") &&
         !name.starts_with("la_call_");
}

struct LALLVMFunctionAttributesPass : impl::LALLVMFunctionAttributesBase<LALLVMFunctionAttributesPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    auto noalias = StringAttr::get(context, LLVM::LLVMDialect::getNoAliasAttrName());
    auto unit = UnitAttr::get(context);
    for (auto func : getOperation().getOps<LLVM::LLVMFuncOp>()) {
      llvm::StringRef name = func.getSymName();
      if (name == "_mlir_memref_to_llvm_aligned_alloc" || name == "_mlir_memref_to_llvm_alloc") {
        func.setResultAttr(0, noalias, unit);
        continue;
      }
      if (func.isExternal())
        continue;
      if (!targetCPU.empty())
        func.setTargetCpuAttr(StringAttr::get(context, targetCPU));
      if (!targetFeatures.empty())
        func.setTargetFeaturesAttr(LLVM::TargetFeaturesAttr::get(context, llvm::StringRef(targetFeatures)));
      if (isKernel(func))
        for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
          if (isa<LLVM::LLVMPointerType>(type))
            func.setArgAttr(i, noalias, unit);
    }
  }
};

} // namespace
} // namespace mlir::la
