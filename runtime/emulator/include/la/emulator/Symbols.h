//===- Symbols.h - Every function an emulated kernel may call, by name ----===//
//
// A kernel compiled for the emulator calls the C ABI of ABI.h and the libdevice functions of Libdevice.def.
// A JIT has to bind those names itself: they live in the static library LAGpuEmulator, whose symbols a
// process-symbol search (ORC's DynamicLibrarySearchGenerator) does not see unless the executable exports
// them. abiSymbols() gives each name with its address, e.g. for an ORC absoluteSymbols() definition.
//
//===----------------------------------------------------------------------===//
#ifndef LA_EMULATOR_SYMBOLS_H
#define LA_EMULATOR_SYMBOLS_H

#include "llvm/ADT/ArrayRef.h"

namespace la::emu {

struct Symbol {
  const char *name; // the C name, unmangled: "__la_emu_barrier0", "__nv_expf"
  void *address;
};

/// Every function of ABI.h, then every libdevice function of Libdevice.def (in its order). Names are unique;
/// the array lives as long as the program.
llvm::ArrayRef<Symbol> abiSymbols();

} // namespace la::emu

#endif // LA_EMULATOR_SYMBOLS_H
