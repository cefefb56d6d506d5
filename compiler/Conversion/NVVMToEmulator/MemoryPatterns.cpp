//===- MemoryPatterns.cpp - shared and global memory through the emulator -===//
//
// Every access the emulator must see (to check bounds and races and to count bytes) goes through a call:
// the value travels through a stack slot of the accessing thread. Accesses to the thread's own stack and to
// module globals stay native.
//
//===----------------------------------------------------------------------===//

#include "Conversion/NVVMToEmulator/Patterns.h"

#include "la/emulator/ABI.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"

namespace mlir::la::emu {

namespace {

/// The bytes a load or store of `type` touches. For a vector that is its elements' bytes (LLVM's store size),
/// not the data layout's type size, which rounds vector<48xf32> up to 256 bytes.
uint64_t sizeInBytes(Operation *op, Type type) {
  DataLayout layout = DataLayout::closest(op);
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.getNumElements() * layout.getTypeSize(vector.getElementType()).getFixedValue();
  return layout.getTypeSize(type).getFixedValue();
}

/// llvm.load from shared or global memory => __la_emu_ld_{shared,global} into a stack slot, then a native load.
struct LoadPattern : EmulatorPattern<LLVM::LoadOp> {
  using EmulatorPattern::EmulatorPattern;
  LogicalResult matchAndRewrite(LLVM::LoadOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    uint64_t bytes = sizeInBytes(op, op.getType());
    Value slot = abi.stackSlot(rewriter, op, bytes);
    EmulatorABI::Address address = abi.address(rewriter, loc, adaptor.getAddr());
    abi.call(rewriter, loc, address.function("__la_emu_ld"), {},
             {slot, address.value, abi.i32(rewriter, loc, bytes), abi.locationString(rewriter, loc)});
    // The slot's alignment, not the type's: an LLVM vector type's ABI alignment is its size.
    rewriter.replaceOpWithNewOp<LLVM::LoadOp>(op, op.getType(), slot, EmulatorABI::kSlotAlignment);
    return success();
  }
};

/// llvm.store to shared or global memory => a native store into a stack slot, then __la_emu_st_*.
struct StorePattern : EmulatorPattern<LLVM::StoreOp> {
  using EmulatorPattern::EmulatorPattern;
  LogicalResult matchAndRewrite(LLVM::StoreOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    uint64_t bytes = sizeInBytes(op, adaptor.getValue().getType());
    Value slot = abi.stackSlot(rewriter, op, bytes);
    LLVM::StoreOp::create(rewriter, loc, adaptor.getValue(), slot, EmulatorABI::kSlotAlignment);
    EmulatorABI::Address address = abi.address(rewriter, loc, adaptor.getAddr());
    abi.call(rewriter, loc, address.function("__la_emu_st"), {},
             {address.value, slot, abi.i32(rewriter, loc, bytes), abi.locationString(rewriter, loc)});
    rewriter.eraseOp(op);
    return success();
  }
};

/// The emulator's type code of an atomic's value, if it has one.
std::optional<uint32_t> atomicType(Type type, bool isSigned) {
  if (type.isInteger(32))
    return isSigned ? LA_EMU_TYPE_S32 : LA_EMU_TYPE_U32;
  if (type.isInteger(64))
    return isSigned ? LA_EMU_TYPE_S64 : LA_EMU_TYPE_U64;
  if (type.isF32())
    return LA_EMU_TYPE_F32;
  if (type.isF64())
    return LA_EMU_TYPE_F64;
  return std::nullopt;
}

/// A value of an atomic's type as the i64 the ABI takes (its bits, zero-extended), and back.
Value toBits64(OpBuilder &builder, Location loc, Value value) {
  Type type = value.getType();
  unsigned width = type.getIntOrFloatBitWidth();
  if (isa<FloatType>(type))
    value = LLVM::BitcastOp::create(builder, loc, builder.getIntegerType(width), value);
  if (width < 64)
    value = LLVM::ZExtOp::create(builder, loc, builder.getI64Type(), value);
  return value;
}

Value fromBits64(OpBuilder &builder, Location loc, Value bits, Type type) {
  unsigned width = type.getIntOrFloatBitWidth();
  if (width < 64)
    bits = LLVM::TruncOp::create(builder, loc, builder.getIntegerType(width), bits);
  if (isa<FloatType>(type))
    bits = LLVM::BitcastOp::create(builder, loc, type, bits);
  return bits;
}

/// Calls __la_emu_atom_{shared,global}; returns the old value as `type`.
Value callAtomic(EmulatorABI &abi, OpBuilder &builder, Location loc, uint32_t op, uint32_t typeCode, Value pointer,
                 Value value, Value compare) {
  Type type = value.getType();
  Value zero = abi.i64(builder, loc, 0);
  Value where = abi.locationString(builder, loc);
  Value opCode = abi.i32(builder, loc, op), typeValue = abi.i32(builder, loc, typeCode);
  Value bits = toBits64(builder, loc, value);
  Value compareBits = compare ? toBits64(builder, loc, compare) : zero;
  EmulatorABI::Address address = abi.address(builder, loc, pointer);
  Value old = abi.call(builder, loc, address.function("__la_emu_atom"), builder.getI64Type(),
                       {opCode, typeValue, address.value, bits, compareBits, where});
  return fromBits64(builder, loc, old, type);
}

/// llvm.atomicrmw on shared or global memory => __la_emu_atom_*.
struct AtomicRMWPattern : EmulatorPattern<LLVM::AtomicRMWOp> {
  using EmulatorPattern::EmulatorPattern;
  LogicalResult matchAndRewrite(LLVM::AtomicRMWOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    std::optional<uint32_t> code;
    bool isSigned = false;
    switch (op.getBinOp()) {
    case LLVM::AtomicBinOp::add:
    case LLVM::AtomicBinOp::fadd:
      code = LA_EMU_ATOM_ADD;
      break;
    case LLVM::AtomicBinOp::xchg:
      code = LA_EMU_ATOM_EXCH;
      break;
    case LLVM::AtomicBinOp::_and:
      code = LA_EMU_ATOM_AND;
      break;
    case LLVM::AtomicBinOp::_or:
      code = LA_EMU_ATOM_OR;
      break;
    case LLVM::AtomicBinOp::_xor:
      code = LA_EMU_ATOM_XOR;
      break;
    case LLVM::AtomicBinOp::min:
      code = LA_EMU_ATOM_MIN, isSigned = true;
      break;
    case LLVM::AtomicBinOp::max:
      code = LA_EMU_ATOM_MAX, isSigned = true;
      break;
    case LLVM::AtomicBinOp::umin:
      code = LA_EMU_ATOM_MIN;
      break;
    case LLVM::AtomicBinOp::umax:
      code = LA_EMU_ATOM_MAX;
      break;
    default:
      break;
    }
    std::optional<uint32_t> type = atomicType(op.getVal().getType(), isSigned);
    if (!code || !type)
      return op.emitError("la-nvvm-to-emulator: atomicrmw ")
             << LLVM::stringifyAtomicBinOp(op.getBinOp()) << " on " << op.getVal().getType() << " is not emulated";
    rewriter.replaceOp(
        op, callAtomic(abi, rewriter, op.getLoc(), *code, *type, adaptor.getPtr(), adaptor.getVal(), Value()));
    return success();
  }
};

/// llvm.cmpxchg on shared or global memory => __la_emu_atom_* CAS; success is old == expected.
struct CmpXchgPattern : EmulatorPattern<LLVM::AtomicCmpXchgOp> {
  using EmulatorPattern::EmulatorPattern;
  LogicalResult matchAndRewrite(LLVM::AtomicCmpXchgOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type valueType = adaptor.getVal().getType();
    std::optional<uint32_t> type = atomicType(valueType, /*isSigned=*/false);
    if (!type || !valueType.isInteger())
      return op.emitError("la-nvvm-to-emulator: cmpxchg on ") << valueType << " is not emulated";
    Value old =
        callAtomic(abi, rewriter, loc, LA_EMU_ATOM_CAS, *type, adaptor.getPtr(), adaptor.getVal(), adaptor.getCmp());
    Value succeeded = LLVM::ICmpOp::create(rewriter, loc, LLVM::ICmpPredicate::eq, old, adaptor.getCmp());
    Value result = LLVM::UndefOp::create(rewriter, loc, op.getType());
    result = LLVM::InsertValueOp::create(rewriter, loc, result, old, ArrayRef<int64_t>{0});
    result = LLVM::InsertValueOp::create(rewriter, loc, result, succeeded, ArrayRef<int64_t>{1});
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// llvm.fence => __la_emu_fence.
struct FencePattern : EmulatorPattern<LLVM::FenceOp> {
  using EmulatorPattern::EmulatorPattern;
  LogicalResult matchAndRewrite(LLVM::FenceOp op, OpAdaptor, ConversionPatternRewriter &rewriter) const override {
    abi.call(rewriter, op.getLoc(), "__la_emu_fence", {}, {abi.locationString(rewriter, op.getLoc())});
    rewriter.eraseOp(op);
    return success();
  }
};

/// llvm.mlir.addressof of a shared global => its offset in the block's arena, still typed ptr<3> so that the
/// accesses through it are recognised as shared.
struct SharedAddressPattern : EmulatorPattern<LLVM::AddressOfOp> {
  SharedAddressPattern(MLIRContext *context, EmulatorABI &abi, const SharedLayout &layout)
      : EmulatorPattern(context, abi), layout(layout) {}
  LogicalResult matchAndRewrite(LLVM::AddressOfOp op, OpAdaptor, ConversionPatternRewriter &rewriter) const override {
    auto offset = layout.find(op.getGlobalNameAttr().getAttr());
    if (offset == layout.end())
      return failure();
    Value address = abi.i64(rewriter, op.getLoc(), offset->second);
    rewriter.replaceOpWithNewOp<LLVM::IntToPtrOp>(op, op.getType(), address);
    return success();
  }
  const SharedLayout &layout;
};

/// nvvm.cp.async.shared.global => __la_emu_cp_async (the optional source size is the bytes really copied).
struct CpAsyncPattern : EmulatorPattern<NVVM::CpAsyncOp> {
  using EmulatorPattern::EmulatorPattern;
  LogicalResult matchAndRewrite(NVVM::CpAsyncOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value bytes = abi.i32(rewriter, loc, op.getSize());
    Value sourceBytes = adaptor.getCpSize() ? adaptor.getCpSize() : bytes;
    abi.call(rewriter, loc, "__la_emu_cp_async", {},
             {abi.sharedOffset(rewriter, loc, adaptor.getDst()), genericPointer(rewriter, loc, adaptor.getSrc()), bytes,
              sourceBytes, abi.locationString(rewriter, loc)});
    rewriter.eraseOp(op);
    return success();
  }
};

/// nvvm.cp.async.commit.group => __la_emu_cp_async_commit_group.
struct CpAsyncCommitPattern : EmulatorPattern<NVVM::CpAsyncCommitGroupOp> {
  using EmulatorPattern::EmulatorPattern;
  LogicalResult matchAndRewrite(NVVM::CpAsyncCommitGroupOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    abi.call(rewriter, op.getLoc(), "__la_emu_cp_async_commit_group", {}, {});
    rewriter.eraseOp(op);
    return success();
  }
};

/// nvvm.cp.async.wait.group n => __la_emu_cp_async_wait_group.
struct CpAsyncWaitPattern : EmulatorPattern<NVVM::CpAsyncWaitGroupOp> {
  using EmulatorPattern::EmulatorPattern;
  LogicalResult matchAndRewrite(NVVM::CpAsyncWaitGroupOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    abi.call(rewriter, loc, "__la_emu_cp_async_wait_group", {},
             {abi.i32(rewriter, loc, op.getN()), abi.locationString(rewriter, loc)});
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void populateMemoryPatterns(RewritePatternSet &patterns, EmulatorABI &abi, const SharedLayout &layout) {
  MLIRContext *context = patterns.getContext();
  patterns.add<LoadPattern, StorePattern, AtomicRMWPattern, CmpXchgPattern, FencePattern, CpAsyncPattern,
               CpAsyncCommitPattern, CpAsyncWaitPattern>(context, abi);
  patterns.add<SharedAddressPattern>(context, abi, layout);
}

} // namespace mlir::la::emu
