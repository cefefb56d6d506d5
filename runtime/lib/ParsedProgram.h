//===- ParsedProgram.h - a parsed MLIR program and its diagnostics -*- C++ -*-===//
//
// Internal to the runtime: the compiler driver (Compiler.cpp) and the GPU emulator driver (GpuEmulator.cpp)
// both parse user programs into a context that knows every dialect and report errors as
// `name:line:col: error: ...` text with the source line.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_LIB_PARSEDPROGRAM_H
#define LA_RUNTIME_LIB_PARSEDPROGRAM_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>
#include <string>

namespace la {

/// Collects diagnostics as `name:line:col: error: ...` text with the source line, for error values.
struct DiagnosticCapture {
  llvm::SourceMgr sourceMgr;
  std::string text;
  llvm::raw_string_ostream os{text};
  mlir::SourceMgrDiagnosticHandler handler;

  DiagnosticCapture(mlir::MLIRContext &context) : handler(sourceMgr, &context, os) {}

  /// The diagnostics collected so far as an error, or `fallback` when there are none.
  llvm::Error error(llvm::StringRef fallback) {
    std::string message = text.empty() ? fallback.str() : llvm::StringRef(text).rtrim().str();
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  }
};

/// A context with every upstream dialect, the la dialect and the LLVM IR translations loaded.
std::unique_ptr<mlir::MLIRContext> createContext();

/// A declared state-passing variant (`func.func private @f(...) attributes {la.resume_of = @e}`): which one
/// ("prefill", "resume", "state") and of which entry. The derivation drops the attribute when it writes the
/// body, so the parser records it first.
struct DeclaredVariant {
  std::string kind;
  std::string of;
};

/// A parsed module together with the context and diagnostics it lives in.
struct ParsedProgram {
  std::unique_ptr<mlir::MLIRContext> context = createContext();
  DiagnosticCapture diagnostics{*context};
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// The program's declared variants, by function name.
  llvm::StringMap<DeclaredVariant> declaredVariants;
};

/// Parses `source` (named `name` in diagnostics).
llvm::Expected<std::unique_ptr<ParsedProgram>> parseProgram(llvm::StringRef source, llvm::StringRef name);

} // namespace la

#endif // LA_RUNTIME_LIB_PARSEDPROGRAM_H
