//===- TensorCorePatterns.cpp - ldmatrix, mma.sync, wmma on the emulator --===//
//
// Fragments are a lane's registers: each NVVM operand or struct field is one 32-bit register (an i32, an
// f32 or a vector<2xf16> pair), passed to the ABI as consecutive words of a stack slot.
//
//===----------------------------------------------------------------------===//

#include "Conversion/NVVMToEmulator/Patterns.h"

#include "la/emulator/ABI.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::la::emu {
namespace {

/// nvvm.ldmatrix (m8n8, b16, x1/x2/x4, .trans for a column layout) => __la_emu_ldmatrix.
struct LdMatrixPattern : EmulatorPattern<NVVM::LdMatrixOp> {
  using EmulatorPattern::EmulatorPattern;
  LogicalResult matchAndRewrite(NVVM::LdMatrixOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    NVVM::LdStMatrixShapeAttr shape = op.getShape();
    if (shape.getM() != 8 || shape.getN() != 8 || op.getEltType() != NVVM::LdStMatrixEltType::B16)
      return op.emitError("la-nvvm-to-emulator: only ldmatrix.m8n8.b16 is emulated");
    Location loc = op.getLoc();
    unsigned num = op.getNum();
    Value slot = abi.stackSlot(rewriter, op, 4 * num);
    bool transpose = op.getLayout() == NVVM::MMALayout::col;
    abi.call(rewriter, loc, "__la_emu_ldmatrix", {},
             {slot, abi.i32(rewriter, loc, num), abi.i32(rewriter, loc, transpose),
              abi.sharedOffset(rewriter, loc, adaptor.getPtr()), abi.locationString(rewriter, loc)});
    rewriter.replaceOp(op, abi.unpackWords(rewriter, loc, slot, op.getType()));
    return success();
  }
};

/// nvvm.mma.sync m16n8k16 (f16, bf16) and m16n8k8 (f16, tf32), row.col, f32 accumulators =>
/// __la_emu_mma_*: the emulator computes the warp's product from every lane's fragments.
struct MmaPattern : EmulatorPattern<NVVM::MmaOp> {
  using EmulatorPattern::EmulatorPattern;
  LogicalResult matchAndRewrite(NVVM::MmaOp op, OpAdaptor adaptor, ConversionPatternRewriter &rewriter) const override {
    NVVM::MMAShapeAttr shape = op.getShape();
    std::optional<NVVM::MMATypes> typeA = op.getMultiplicandAPtxType();
    if (!typeA && !op.getOperandA().empty())
      typeA = NVVM::MmaOp::inferOperandMMAType(op.getOperandA().front().getType(), /*isAccumulator=*/false);
    auto result = cast<LLVM::LLVMStructType>(op.getType());
    bool f32Accumulator =
        result.getBody().size() == 4 && llvm::all_of(result.getBody(), [](Type t) { return t.isF32(); });
    bool rowCol = op.getLayoutA() == NVVM::MMALayout::row && op.getLayoutB() == NVVM::MMALayout::col;
    StringRef function;
    if (shape.getM() == 16 && shape.getN() == 8 && shape.getK() == 16 && typeA == NVVM::MMATypes::f16)
      function = "__la_emu_mma_m16n8k16_f32_f16";
    else if (shape.getM() == 16 && shape.getN() == 8 && shape.getK() == 16 && typeA == NVVM::MMATypes::bf16)
      function = "__la_emu_mma_m16n8k16_f32_bf16";
    else if (shape.getM() == 16 && shape.getN() == 8 && shape.getK() == 8 && typeA == NVVM::MMATypes::f16)
      function = "__la_emu_mma_m16n8k8_f32_f16";
    else if (shape.getM() == 16 && shape.getN() == 8 && shape.getK() == 8 && typeA == NVVM::MMATypes::tf32)
      function = "__la_emu_mma_m16n8k8_f32_tf32";
    if (function.empty() || !f32Accumulator || !rowCol) {
      InFlightDiagnostic diag = op.emitError("la-nvvm-to-emulator: mma.sync.m")
                                << shape.getM() << "n" << shape.getN() << "k" << shape.getK() << " with ";
      if (typeA)
        diag << NVVM::stringifyMMATypes(*typeA);
      else
        diag << "untyped";
      return diag << " inputs and " << result << " results is not emulated (docs/gpu-emulator.md lists the "
                  << "shapes that are: row.col, f32 accumulators)";
    }
    Location loc = op.getLoc();
    Value a = abi.packWords(rewriter, op, adaptor.getOperandA(), 4);
    Value b = abi.packWords(rewriter, op, adaptor.getOperandB(), 2);
    Value c = abi.packWords(rewriter, op, adaptor.getOperandC(), 4);
    Value d = abi.stackSlot(rewriter, op, 16);
    abi.call(rewriter, loc, function, {}, {d, a, b, c, abi.locationString(rewriter, loc)});
    rewriter.replaceOp(op, abi.unpackWords(rewriter, loc, d, result));
    return success();
  }
};

/// The ABI's memory-space code and address for a wmma pointer: a shared offset or a host address.
std::pair<Value, Value> wmmaAddress(EmulatorABI &abi, OpBuilder &builder, Location loc, Value pointer) {
  EmulatorABI::Address address = abi.address(builder, loc, pointer);
  if (address.shared)
    return {abi.i32(builder, loc, LA_EMU_SPACE_SHARED),
            LLVM::ZExtOp::create(builder, loc, builder.getI64Type(), address.value)};
  return {abi.i32(builder, loc, LA_EMU_SPACE_GLOBAL),
          LLVM::PtrToIntOp::create(builder, loc, builder.getI64Type(), address.value)};
}

LogicalResult checkWmmaShape(Operation *op, uint32_t m, uint32_t n, uint32_t k, NVVM::MMATypes type) {
  if (m == 16 && n == 16 && k == 16 && (type == NVVM::MMATypes::f16 || type == NVVM::MMATypes::f32))
    return success();
  return op->emitError("la-nvvm-to-emulator: wmma.m")
         << m << "n" << n << "k" << k << " on " << NVVM::stringifyMMATypes(type)
         << " is not emulated (only m16n16k16 with f16 inputs and f16 or f32 accumulators)";
}

/// nvvm.wmma.load => __la_emu_wmma_load.
struct WmmaLoadPattern : EmulatorPattern<NVVM::WMMALoadOp> {
  using EmulatorPattern::EmulatorPattern;
  LogicalResult matchAndRewrite(NVVM::WMMALoadOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (failed(checkWmmaShape(op, op.getM(), op.getN(), op.getK(), op.getEltype())))
      return failure();
    Location loc = op.getLoc();
    uint32_t which = op.getFrag() == NVVM::MMAFrag::a   ? LA_EMU_WMMA_A
                     : op.getFrag() == NVVM::MMAFrag::b ? LA_EMU_WMMA_B
                                                        : LA_EMU_WMMA_C;
    Value slot = abi.stackSlot(rewriter, op, 32);
    auto [space, address] = wmmaAddress(abi, rewriter, loc, adaptor.getPtr());
    abi.call(rewriter, loc, "__la_emu_wmma_load", {},
             {slot, abi.i32(rewriter, loc, which), abi.i32(rewriter, loc, op.getLayout() == NVVM::MMALayout::col),
              abi.i32(rewriter, loc, op.getEltype() == NVVM::MMATypes::f32), space, address, adaptor.getStride(),
              abi.locationString(rewriter, loc)});
    rewriter.replaceOp(op, abi.unpackWords(rewriter, loc, slot, op.getType()));
    return success();
  }
};

/// nvvm.wmma.mma => __la_emu_wmma_mma; the operands are A's 8 registers, B's 8, then C's (8 f32 or 4 f16x2).
struct WmmaMmaPattern : EmulatorPattern<NVVM::WMMAMmaOp> {
  using EmulatorPattern::EmulatorPattern;
  LogicalResult matchAndRewrite(NVVM::WMMAMmaOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (failed(checkWmmaShape(op, op.getM(), op.getN(), op.getK(), op.getEltypeA())))
      return failure();
    ValueRange args = adaptor.getArgs();
    bool f32 = cast<LLVM::LLVMStructType>(op.getType()).getBody().size() == 8;
    if (op.getEltypeA() != NVVM::MMATypes::f16 || args.size() != (f32 ? 24u : 20u))
      return op.emitError("la-nvvm-to-emulator: wmma.mma with ")
             << args.size() << " operands is not the f16 m16n16k16 form the emulator runs";
    Location loc = op.getLoc();
    Value a = abi.packWords(rewriter, op, args.slice(0, 8), 8);
    Value b = abi.packWords(rewriter, op, args.slice(8, 8), 8);
    Value c = abi.packWords(rewriter, op, args.drop_front(16), 8);
    Value d = abi.stackSlot(rewriter, op, 32);
    abi.call(rewriter, loc, "__la_emu_wmma_mma", {},
             {d, a, b, c, abi.i32(rewriter, loc, f32), abi.locationString(rewriter, loc)});
    rewriter.replaceOp(op, abi.unpackWords(rewriter, loc, d, op.getType()));
    return success();
  }
};

/// nvvm.wmma.store => __la_emu_wmma_store.
struct WmmaStorePattern : EmulatorPattern<NVVM::WMMAStoreOp> {
  using EmulatorPattern::EmulatorPattern;
  LogicalResult matchAndRewrite(NVVM::WMMAStoreOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (failed(checkWmmaShape(op, op.getM(), op.getN(), op.getK(), op.getEltype())))
      return failure();
    Location loc = op.getLoc();
    Value fragment = abi.packWords(rewriter, op, adaptor.getArgs(), 8);
    auto [space, address] = wmmaAddress(abi, rewriter, loc, adaptor.getPtr());
    abi.call(rewriter, loc, "__la_emu_wmma_store", {},
             {fragment, abi.i32(rewriter, loc, op.getLayout() == NVVM::MMALayout::col),
              abi.i32(rewriter, loc, op.getEltype() == NVVM::MMATypes::f32), space, address, adaptor.getStride(),
              abi.locationString(rewriter, loc)});
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void populateTensorCorePatterns(RewritePatternSet &patterns, EmulatorABI &abi) {
  patterns.add<LdMatrixPattern, MmaPattern, WmmaLoadPattern, WmmaMmaPattern, WmmaStorePattern>(patterns.getContext(),
                                                                                               abi);
}

} // namespace mlir::la::emu
