//===- EmulatorABI.h - building calls into the GPU emulator's C ABI -*- C++ -*-===//
//
// The rewrite of la-nvvm-to-emulator turns every NVVM operation, and every access to shared or global memory,
// into a call to a function of runtime/emulator/include/la/emulator/ABI.h. This class is what its patterns
// share: it declares the ABI functions in the host module, materialises each operation's source location
// as a "file:line:col" string constant (what the emulator's findings print), and gives fragments and
// accessed values a home on the thread's stack so they can be passed by pointer.
//
//===----------------------------------------------------------------------===//
#ifndef LA_CONVERSION_NVVMTOEMULATOR_EMULATORABI_H
#define LA_CONVERSION_NVVMTOEMULATOR_EMULATORABI_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::la::emu {

/// Where a pointer points, as far as the emulator is concerned.
enum class MemorySpace {
  /// Address space 3: a byte offset into the block's shared arena.
  Shared,
  /// Kernel arguments and what is derived from them: checked against the launch's buffers.
  Global,
  /// The thread's own stack (llvm.alloca) or a module global: plain host memory, not checked.
  Private,
};

/// Follows GEPs and address-space casts back to the base of `pointer`.
MemorySpace classifyPointer(Value pointer);

/// A pointer the ABI can take (address space 0): casts `pointer` if it is in another space.
Value genericPointer(OpBuilder &builder, Location loc, Value pointer);

class EmulatorABI {
public:
  explicit EmulatorABI(ModuleOp host) : host(host) {}

  /// Calls ABI function `name` (declaring it on first use) with `args`; `result` is null for void.
  Value call(OpBuilder &builder, Location loc, StringRef name, Type result, ValueRange args);

  /// A pointer to the NUL-terminated "file:line:col" of `loc` (one constant per distinct location).
  Value locationString(OpBuilder &builder, Location loc);

  Value i32(OpBuilder &builder, Location loc, int64_t value);
  Value i64(OpBuilder &builder, Location loc, int64_t value);

  /// The alignment of every stack slot; loads and stores of a slot must say so (a vector type's own ABI
  /// alignment is its size, which a 16-byte slot does not have).
  static constexpr unsigned kSlotAlignment = 16;

  /// A stack slot of `bytes` bytes (kSlotAlignment-aligned) in the entry block of the function around `at`,
  /// so loops do not grow the stack.
  Value stackSlot(OpBuilder &builder, Operation *at, uint64_t bytes);

  /// The shared-arena byte offset that a pointer in address space 3 holds, as i32.
  Value sharedOffset(OpBuilder &builder, Location loc, Value pointer);

  /// How the ABI's `_shared` and `_global` variants of an access take `pointer`: an i32 arena offset for
  /// shared memory, an address-space-0 pointer for global memory.
  struct Address {
    bool shared;
    Value value;
    /// `stem` + "_shared" or "_global": the ABI function for this kind of memory.
    std::string function(StringRef stem) const { return (stem + (shared ? "_shared" : "_global")).str(); }
  };
  Address address(OpBuilder &builder, Location loc, Value pointer);

  /// Stores `values` (each 32 bits wide: i32, f32, vector<2xf16>, ...) one after another into a fresh stack
  /// slot of `slotWords` words and returns it: how fragments are passed to the ABI.
  Value packWords(OpBuilder &builder, Operation *at, ValueRange values, unsigned slotWords);

  /// Loads the fields of the struct type `type` (32 bits each) from consecutive words of `slot`.
  Value unpackWords(OpBuilder &builder, Location loc, Value slot, Type type);

  /// The rendering of `loc` in findings: the first file:line:col inside it, or "<unknown>".
  static std::string render(Location loc);

private:
  ModuleOp host;
  llvm::StringMap<LLVM::GlobalOp> strings;
};

} // namespace mlir::la::emu

#endif // LA_CONVERSION_NVVMTOEMULATOR_EMULATORABI_H
