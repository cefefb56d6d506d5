//===- EmulatorABI.cpp - building calls into the GPU emulator's C ABI -----===//

#include "Conversion/NVVMToEmulator/EmulatorABI.h"

#include "mlir/IR/Location.h"

#include "llvm/ADT/TypeSwitch.h"

namespace mlir::la::emu {

/// The value `extract` reads, when the aggregate is built by a chain of insertvalues; null otherwise.
static Value findInsertedValue(LLVM::ExtractValueOp extract) {
  Value aggregate = extract.getContainer();
  while (auto insert = aggregate.getDefiningOp<LLVM::InsertValueOp>()) {
    if (insert.getPosition() == extract.getPosition())
      return insert.getValue();
    aggregate = insert.getContainer();
  }
  return nullptr;
}

MemorySpace classifyPointer(Value pointer) {
  if (cast<LLVM::LLVMPointerType>(pointer.getType()).getAddressSpace() == 3)
    return MemorySpace::Shared;
  Value base = pointer;
  while (Operation *def = base.getDefiningOp()) {
    if (auto gep = dyn_cast<LLVM::GEPOp>(def)) {
      base = gep.getBase();
    } else if (auto cast = dyn_cast<LLVM::AddrSpaceCastOp>(def)) {
      base = cast.getArg();
    } else if (auto extract = dyn_cast<LLVM::ExtractValueOp>(def)) {
      // A pointer read back from a memref descriptor: the value inserted at that position.
      Value inserted = findInsertedValue(extract);
      if (!inserted)
        break;
      base = inserted;
    } else {
      break;
    }
  }
  if (base.getDefiningOp<LLVM::AllocaOp>() || base.getDefiningOp<LLVM::AddressOfOp>())
    return MemorySpace::Private;
  return MemorySpace::Global;
}

Value genericPointer(OpBuilder &builder, Location loc, Value pointer) {
  if (cast<LLVM::LLVMPointerType>(pointer.getType()).getAddressSpace() == 0)
    return pointer;
  return LLVM::AddrSpaceCastOp::create(builder, loc, LLVM::LLVMPointerType::get(builder.getContext()), pointer);
}

std::string EmulatorABI::render(Location loc) {
  std::string text = "<unknown>";
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      text = (file.getFilename().getValue() + ":" + llvm::Twine(file.getLine()) + ":" + llvm::Twine(file.getColumn()))
                 .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return text;
}

Value EmulatorABI::call(OpBuilder &builder, Location loc, StringRef name, Type result, ValueRange args) {
  MLIRContext *context = builder.getContext();
  auto function = host.lookupSymbol<LLVM::LLVMFuncOp>(name);
  if (!function) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(host.getBody());
    Type returnType = result ? result : LLVM::LLVMVoidType::get(context);
    auto type = LLVM::LLVMFunctionType::get(returnType, llvm::to_vector(args.getTypes()));
    function = LLVM::LLVMFuncOp::create(builder, host.getLoc(), name, type);
  }
  auto callOp = LLVM::CallOp::create(builder, loc, function, args);
  return result ? callOp.getResult() : Value();
}

Value EmulatorABI::locationString(OpBuilder &builder, Location loc) {
  std::string text = render(loc);
  LLVM::GlobalOp &global = strings[text];
  if (!global) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(host.getBody());
    std::string contents = text + '\0';
    auto type = LLVM::LLVMArrayType::get(IntegerType::get(builder.getContext(), 8), contents.size());
    global = LLVM::GlobalOp::create(builder, host.getLoc(), type, /*isConstant=*/true, LLVM::Linkage::Private,
                                    ("__la_emu_loc." + llvm::Twine(strings.size() - 1)).str(),
                                    builder.getStringAttr(contents));
  }
  return LLVM::AddressOfOp::create(builder, loc, global);
}

Value EmulatorABI::i32(OpBuilder &builder, Location loc, int64_t value) {
  return LLVM::ConstantOp::create(builder, loc, builder.getI32Type(), builder.getI32IntegerAttr(value));
}

Value EmulatorABI::i64(OpBuilder &builder, Location loc, int64_t value) {
  return LLVM::ConstantOp::create(builder, loc, builder.getI64Type(), builder.getI64IntegerAttr(value));
}

Value EmulatorABI::stackSlot(OpBuilder &builder, Operation *at, uint64_t bytes) {
  OpBuilder::InsertionGuard guard(builder);
  auto function = at->getParentOfType<LLVM::LLVMFuncOp>();
  builder.setInsertionPointToStart(&function.getBody().front());
  Location loc = at->getLoc();
  auto bytesType = LLVM::LLVMArrayType::get(builder.getI8Type(), std::max<uint64_t>(bytes, 1));
  return LLVM::AllocaOp::create(builder, loc, LLVM::LLVMPointerType::get(builder.getContext()), bytesType,
                                i32(builder, loc, 1), kSlotAlignment);
}

Value EmulatorABI::sharedOffset(OpBuilder &builder, Location loc, Value pointer) {
  Value address = LLVM::PtrToIntOp::create(builder, loc, builder.getI64Type(), pointer);
  return LLVM::TruncOp::create(builder, loc, builder.getI32Type(), address);
}

EmulatorABI::Address EmulatorABI::address(OpBuilder &builder, Location loc, Value pointer) {
  if (classifyPointer(pointer) == MemorySpace::Shared)
    return {true, sharedOffset(builder, loc, pointer)};
  return {false, genericPointer(builder, loc, pointer)};
}

Value EmulatorABI::packWords(OpBuilder &builder, Operation *at, ValueRange values, unsigned slotWords) {
  Location loc = at->getLoc();
  Value slot = stackSlot(builder, at, 4ull * std::max<size_t>(slotWords, values.size()));
  auto ptrType = LLVM::LLVMPointerType::get(builder.getContext());
  for (auto [i, value] : llvm::enumerate(values)) {
    Value word = LLVM::GEPOp::create(builder, loc, ptrType, builder.getI32Type(), slot,
                                     ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
    LLVM::StoreOp::create(builder, loc, value, word);
  }
  return slot;
}

Value EmulatorABI::unpackWords(OpBuilder &builder, Location loc, Value slot, Type type) {
  auto ptrType = LLVM::LLVMPointerType::get(builder.getContext());
  auto structType = dyn_cast<LLVM::LLVMStructType>(type);
  if (!structType)
    return LLVM::LoadOp::create(builder, loc, type, slot);
  Value result = LLVM::UndefOp::create(builder, loc, type);
  for (auto [i, field] : llvm::enumerate(structType.getBody())) {
    Value word = LLVM::GEPOp::create(builder, loc, ptrType, builder.getI32Type(), slot,
                                     ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
    Value value = LLVM::LoadOp::create(builder, loc, field, word);
    result = LLVM::InsertValueOp::create(builder, loc, result, value, ArrayRef<int64_t>{static_cast<int64_t>(i)});
  }
  return result;
}

} // namespace mlir::la::emu
