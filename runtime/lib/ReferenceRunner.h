//===- ReferenceRunner.h - run the fp64 reference of an entry ----*- C++ -*-===//
//
// Internal to the runtime: the numerics guard's other half (la/runtime/NumericsCheck.h). It owns a second
// `Runtime` whose compile options turn off everything that trades accuracy or adds code-generation risk
// (fusion, sweep grouping, register tiles), keeps the kernel runtime's cache directory, thread count and
// chunk size, and runs each program's `la-promote-to-f64` form on inputs converted exactly to f64.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_LIB_REFERENCERUNNER_H
#define LA_RUNTIME_LIB_REFERENCERUNNER_H

#include "la/runtime/Runtime.h"

#include "llvm/ADT/StringMap.h"

#include <mutex>

namespace la {

class ReferenceRunner {
public:
  /// `kernelOptions` are those of the runtime being checked.
  explicit ReferenceRunner(const RuntimeOptions &kernelOptions);

  /// The f64 results of `entry`'s reference on `inputs` (any dtype; converted to f64).
  llvm::Expected<llvm::SmallVector<HostTensor>> run(const Program &program, llvm::StringRef entry,
                                                    llvm::ArrayRef<TensorRef> inputs);

private:
  /// The promoted form of `entry` of `program`, built once per program content and entry.
  llvm::Expected<std::shared_ptr<Program>> promoted(const Program &program, llvm::StringRef entry);

  RuntimeOptions options;
  std::mutex mutex;
  /// Created on first use: most runtimes never check.
  std::unique_ptr<Runtime> runtime;
  llvm::StringMap<std::shared_ptr<Program>> programs;
};

} // namespace la

#endif // LA_RUNTIME_LIB_REFERENCERUNNER_H
