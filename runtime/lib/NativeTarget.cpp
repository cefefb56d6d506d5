//===- NativeTarget.cpp - register the host's LLVM target once ------------===//

#include "NativeTarget.h"

#include "llvm/Support/TargetSelect.h"

#include <mutex>

namespace la {

void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

} // namespace la
