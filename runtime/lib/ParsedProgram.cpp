//===- ParsedProgram.cpp - a parsed MLIR program and its diagnostics ------===//

#include "ParsedProgram.h"

#include "LA/IR/LADialect.h"
#include "Transforms/Passes.h"
#include "Transforms/StateVariants.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"

#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;

namespace la {

std::unique_ptr<MLIRContext> createContext() {
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registry.insert<mlir::la::LADialect>();
  auto context = std::make_unique<MLIRContext>(registry, MLIRContext::Threading::DISABLED);
  context->loadAllAvailableDialects();
  // Diagnostics name the file, line and op; a dump of the whole module would bury them.
  context->printOpOnDiagnostic(false);
  return context;
}

llvm::Expected<std::unique_ptr<ParsedProgram>> parseProgram(llvm::StringRef source, llvm::StringRef name) {
  auto parsed = std::make_unique<ParsedProgram>();
  parsed->diagnostics.sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(source, name), llvm::SMLoc());
  parsed->module = parseSourceFile<ModuleOp>(parsed->diagnostics.sourceMgr, parsed->context.get());
  if (!parsed->module)
    return parsed->diagnostics.error((name + ": cannot parse the program").str());
  for (auto func : parsed->module->getOps<func::FuncOp>())
    for (mlir::la::StateVariant variant :
         {mlir::la::StateVariant::Prefill, mlir::la::StateVariant::Resume, mlir::la::StateVariant::State})
      if (auto of = func->getAttrOfType<FlatSymbolRefAttr>(mlir::la::getStateVariantAttrName(variant)))
        parsed->declaredVariants[func.getSymName()] = {mlir::la::getStateVariantName(variant).str(),
                                                       of.getValue().str()};
  // Declared prefill/resume variants (la.prefill_of, la.resume_of) are entries like any other from here on:
  // signatures, slicing and the reference all see their bodies.
  PassManager pm(parsed->context.get());
  pm.addPass(mlir::la::createLADeriveStateVariants());
  if (failed(pm.run(*parsed->module)))
    return parsed->diagnostics.error((name + ": cannot derive a state-passing variant").str());
  return std::move(parsed);
}

} // namespace la
