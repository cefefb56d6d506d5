//===- LAEmitCallWrappers.cpp - one packed entry point per kernel ---------===//

#include "Target/CPU/Transforms/CPUPasses.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::la {
#define GEN_PASS_DEF_LAEMITCALLWRAPPERS
#include "Target/CPU/Transforms/CPUPasses.h.inc"

namespace {

constexpr llvm::StringLiteral kCInterfacePrefix = "_mlir_ciface_";

struct LAEmitCallWrappersPass : impl::LAEmitCallWrappersBase<LAEmitCallWrappersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    auto ptrType = LLVM::LLVMPointerType::get(context);
    auto wrapperType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context), {ptrType});
    for (auto target : llvm::to_vector(module.getOps<LLVM::LLVMFuncOp>())) {
      llvm::StringRef name = target.getSymName();
      if (target.isExternal() || !name.starts_with(kCInterfacePrefix))
        continue;
      // The C interface passes every memref as a pointer to its descriptor; anything else is not a kernel
      // the runtime can call.
      if (!llvm::all_of(target.getFunctionType().getParams(), llvm::IsaPred<LLVM::LLVMPointerType>) ||
          !isa<LLVM::LLVMVoidType>(target.getFunctionType().getReturnType())) {
        target.emitError() << "'" << name << "' takes or returns a non-pointer value; la-emit-call-wrappers "
                           << "expects kernels whose results became out-parameters";
        return signalPassFailure();
      }
      std::string wrapperName = ("la_call_" + name.drop_front(kCInterfacePrefix.size())).str();
      if (module.lookupSymbol(wrapperName))
        continue;
      OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
      Location loc = target.getLoc();
      auto wrapper = LLVM::LLVMFuncOp::create(builder, loc, wrapperName, wrapperType);
      Block *body = wrapper.addEntryBlock(builder);
      builder.setInsertionPointToStart(body);
      SmallVector<Value> args;
      for (unsigned i = 0, e = target.getNumArguments(); i < e; ++i) {
        Value slot = LLVM::GEPOp::create(builder, loc, ptrType, ptrType, body->getArgument(0),
                                         ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
        args.push_back(LLVM::LoadOp::create(builder, loc, ptrType, slot));
      }
      LLVM::CallOp::create(builder, loc, target, args);
      LLVM::ReturnOp::create(builder, loc, ValueRange{});
    }
  }
};

} // namespace
} // namespace mlir::la
