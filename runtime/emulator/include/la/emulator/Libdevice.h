//===- Libdevice.h - The libdevice functions the emulator provides, typed -*- C++ -*-===//
//
// The rows of Libdevice.def as a constant table, for code that only needs to know which `__nv_*` calls the
// emulator can run and with which signature (the NVVM → emulator rewrite, to reject any other call with a
// clear error). Header-only and free of the emulator's implementation: including it needs LLVM's ADT headers,
// no library. The host definitions of the functions are lib/Libdevice.cpp's; a JIT binds them through
// la/emulator/Symbols.h.
//
//===----------------------------------------------------------------------===//
#ifndef LA_EMULATOR_LIBDEVICE_H
#define LA_EMULATOR_LIBDEVICE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <initializer_list>

namespace la::emu {

/// A parameter or result type of a libdevice function: Void (results only), f32, f64, i32, or an opaque
/// pointer (`!llvm.ptr`; sincos's outputs).
enum class LibdeviceType : uint8_t { Void, F32, F64, I32, Ptr };

struct LibdeviceFunction {
  static constexpr unsigned kMaxParams = 3;
  const char *name;
  LibdeviceType result;
  uint8_t numParams;
  LibdeviceType params[kMaxParams];

  llvm::ArrayRef<LibdeviceType> paramTypes() const { return llvm::ArrayRef<LibdeviceType>(params, numParams); }
};

namespace libdevice_detail {
// The type words of Libdevice.def's rows, as constants, so that a row's parameter list can be spelled as
// written there.
inline constexpr LibdeviceType VOID = LibdeviceType::Void, F32 = LibdeviceType::F32, F64 = LibdeviceType::F64,
                               I32 = LibdeviceType::I32, PTR = LibdeviceType::Ptr;

constexpr LibdeviceFunction makeFunction(const char *name, LibdeviceType result,
                                         std::initializer_list<LibdeviceType> params) {
  LibdeviceFunction f{name, result, uint8_t(params.size()), {}};
  unsigned i = 0;
  for (LibdeviceType p : params)
    f.params[i++] = p;
  return f;
}

inline constexpr LibdeviceFunction kFunctions[] = {
#define LA_EMU_LIBDEVICE(NAME, HOST, RESULT, ...) makeFunction(#NAME, RESULT, {__VA_ARGS__}),
#include "la/emulator/Libdevice.def"
};
} // namespace libdevice_detail

/// Every libdevice function the emulator provides, in Libdevice.def's order.
inline llvm::ArrayRef<LibdeviceFunction> libdeviceFunctions() { return libdevice_detail::kFunctions; }

/// The function called `name`, or null when the emulator does not provide it.
inline const LibdeviceFunction *findLibdeviceFunction(llvm::StringRef name) {
  for (const LibdeviceFunction &f : libdeviceFunctions())
    if (name == f.name)
      return &f;
  return nullptr;
}

/// "f32", "f64", "i32", "ptr" or "void", as MLIR's LLVM dialect spells the type (for diagnostics).
inline llvm::StringRef libdeviceTypeName(LibdeviceType type) {
  switch (type) {
  case LibdeviceType::Void:
    return "void";
  case LibdeviceType::F32:
    return "f32";
  case LibdeviceType::F64:
    return "f64";
  case LibdeviceType::I32:
    return "i32";
  case LibdeviceType::Ptr:
    return "ptr";
  }
  return "?";
}

} // namespace la::emu

#endif // LA_EMULATOR_LIBDEVICE_H
