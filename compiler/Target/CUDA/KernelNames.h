//===- KernelNames.h - the name of an entry's CUDA kernel -------*- C++ -*-===//
//
// la-gpu-outline-slice-kernel names each kernel after its entry; the runtime and the emulator look it up by
// the same rule.
//
//===----------------------------------------------------------------------===//
#ifndef LA_TARGET_CUDA_KERNELNAMES_H
#define LA_TARGET_CUDA_KERNELNAMES_H

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::la {

/// The kernel of the function `entry`: a PTX identifier (letters, digits and `_`), which a derived variant's
/// `entry.prefill` is not, and a C one for the ahead-of-time launcher `la_<name>`: `entry_prefill`.
inline std::string getKernelName(llvm::StringRef entry) {
  std::string kernel = entry.str();
  for (char &c : kernel)
    if (!llvm::isAlnum(c) && c != '_')
      c = '_';
  return kernel;
}

} // namespace mlir::la

#endif // LA_TARGET_CUDA_KERNELNAMES_H
