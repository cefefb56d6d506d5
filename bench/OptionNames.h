//===- OptionNames.h - Option names the benchmarks take from libLLVM -*- C++ -*-===//
//
// The benchmarks parse their command lines with llvm::cl, whose registry of top-level options is shared with
// every library in the process. libLLVM.so registers a `threads` option of its own there (no description;
// nothing here sets it), and llvm::cl aborts at start-up when a second option registers a taken name, so a
// benchmark with a --threads flag takes the name over before it creates its options.
//
//===----------------------------------------------------------------------===//
#ifndef LA_BENCH_OPTIONNAMES_H
#define LA_BENCH_OPTIONNAMES_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

namespace la::bench {

/// Unregisters the top-level option called `name`, if a library registered one. Call it from main, after the
/// libraries' static initialisers, before creating this program's option of that name.
inline void takeOptionName(llvm::StringRef name) {
  if (llvm::cl::Option *taken = llvm::cl::getRegisteredOptions().lookup(name))
    taken->removeArgument();
}

} // namespace la::bench

#endif // LA_BENCH_OPTIONNAMES_H
