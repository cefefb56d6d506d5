//===- ThreadPatterns.cpp - special registers, barriers, warp collectives -===//

#include "Conversion/NVVMToEmulator/Patterns.h"

#include "la/emulator/ABI.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::la::emu {
namespace {

/// The special registers the emulator provides, and the ABI function that reads each.
constexpr std::pair<llvm::StringLiteral, llvm::StringLiteral> kSpecialRegisters[] = {
    {"nvvm.read.ptx.sreg.tid.x", "__la_emu_tid_x"},       {"nvvm.read.ptx.sreg.tid.y", "__la_emu_tid_y"},
    {"nvvm.read.ptx.sreg.tid.z", "__la_emu_tid_z"},       {"nvvm.read.ptx.sreg.ntid.x", "__la_emu_ntid_x"},
    {"nvvm.read.ptx.sreg.ntid.y", "__la_emu_ntid_y"},     {"nvvm.read.ptx.sreg.ntid.z", "__la_emu_ntid_z"},
    {"nvvm.read.ptx.sreg.ctaid.x", "__la_emu_ctaid_x"},   {"nvvm.read.ptx.sreg.ctaid.y", "__la_emu_ctaid_y"},
    {"nvvm.read.ptx.sreg.ctaid.z", "__la_emu_ctaid_z"},   {"nvvm.read.ptx.sreg.nctaid.x", "__la_emu_nctaid_x"},
    {"nvvm.read.ptx.sreg.nctaid.y", "__la_emu_nctaid_y"}, {"nvvm.read.ptx.sreg.nctaid.z", "__la_emu_nctaid_z"},
    {"nvvm.read.ptx.sreg.laneid", "__la_emu_laneid"},     {"nvvm.read.ptx.sreg.warpid", "__la_emu_warpid"},
    {"nvvm.read.ptx.sreg.nwarpid", "__la_emu_nwarpid"},
};

/// nvvm.read.ptx.sreg.* => a call that returns the register of the calling thread.
struct SpecialRegisterPattern : ConversionPattern {
  SpecialRegisterPattern(MLIRContext *context, EmulatorABI &abi, StringRef opName, StringRef function)
      : ConversionPattern(opName, /*benefit=*/1, context), abi(abi), function(function) {}

  LogicalResult matchAndRewrite(Operation *op, ArrayRef<Value>, ConversionPatternRewriter &rewriter) const override {
    Value value = abi.call(rewriter, op->getLoc(), function, rewriter.getI32Type(), {});
    rewriter.replaceOp(op, value);
    return success();
  }

  EmulatorABI &abi;
  StringRef function;
};

/// nvvm.read.ptx.sreg.warpsize => 32: the warp size of every NVIDIA GPU and of the emulator.
struct WarpSizePattern : EmulatorPattern<NVVM::WarpSizeOp> {
  using EmulatorPattern::EmulatorPattern;
  LogicalResult matchAndRewrite(NVVM::WarpSizeOp op, OpAdaptor, ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, abi.i32(rewriter, op.getLoc(), 32));
    return success();
  }
};

/// nvvm.barrier0 (gpu.barrier) => __la_emu_barrier0.
struct Barrier0Pattern : EmulatorPattern<NVVM::Barrier0Op> {
  using EmulatorPattern::EmulatorPattern;
  LogicalResult matchAndRewrite(NVVM::Barrier0Op op, OpAdaptor, ConversionPatternRewriter &rewriter) const override {
    abi.call(rewriter, op.getLoc(), "__la_emu_barrier0", {}, {abi.locationString(rewriter, op.getLoc())});
    rewriter.eraseOp(op);
    return success();
  }
};

/// nvvm.barrier id, number_of_threads => __la_emu_bar_sync (bar.sync with id and count; absent means 0).
struct BarrierPattern : EmulatorPattern<NVVM::BarrierOp> {
  using EmulatorPattern::EmulatorPattern;
  LogicalResult matchAndRewrite(NVVM::BarrierOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (op.getReductionOp())
      return op.emitError("la-nvvm-to-emulator: barrier reductions (bar.red) are not emulated");
    Location loc = op.getLoc();
    Value id = adaptor.getBarrierId() ? adaptor.getBarrierId() : abi.i32(rewriter, loc, 0);
    Value count = adaptor.getNumberOfThreads() ? adaptor.getNumberOfThreads() : abi.i32(rewriter, loc, 0);
    abi.call(rewriter, loc, "__la_emu_bar_sync", {}, {id, count, abi.locationString(rewriter, loc)});
    rewriter.eraseOp(op);
    return success();
  }
};

/// nvvm.bar.warp.sync => __la_emu_bar_warp_sync.
struct SyncWarpPattern : EmulatorPattern<NVVM::SyncWarpOp> {
  using EmulatorPattern::EmulatorPattern;
  LogicalResult matchAndRewrite(NVVM::SyncWarpOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    abi.call(rewriter, op.getLoc(), "__la_emu_bar_warp_sync", {},
             {adaptor.getMask(), abi.locationString(rewriter, op.getLoc())});
    rewriter.eraseOp(op);
    return success();
  }
};

/// nvvm.memory.barrier (membar) => __la_emu_fence.
struct MembarPattern : EmulatorPattern<NVVM::MembarOp> {
  using EmulatorPattern::EmulatorPattern;
  LogicalResult matchAndRewrite(NVVM::MembarOp op, OpAdaptor, ConversionPatternRewriter &rewriter) const override {
    abi.call(rewriter, op.getLoc(), "__la_emu_fence", {}, {abi.locationString(rewriter, op.getLoc())});
    rewriter.eraseOp(op);
    return success();
  }
};

/// nvvm.shfl.sync (i32 or f32, optionally with the validity predicate) => __la_emu_shfl_sync on the bits.
struct ShflPattern : EmulatorPattern<NVVM::ShflOp> {
  using EmulatorPattern::EmulatorPattern;
  LogicalResult matchAndRewrite(NVVM::ShflOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type valueType = adaptor.getVal().getType();
    Type i32 = rewriter.getI32Type();
    uint32_t mode = 0;
    switch (op.getKind()) {
    case NVVM::ShflKind::up:
      mode = LA_EMU_SHFL_UP;
      break;
    case NVVM::ShflKind::down:
      mode = LA_EMU_SHFL_DOWN;
      break;
    case NVVM::ShflKind::bfly:
      mode = LA_EMU_SHFL_BFLY;
      break;
    case NVVM::ShflKind::idx:
      mode = LA_EMU_SHFL_IDX;
      break;
    }
    Value bits = valueType == i32 ? adaptor.getVal() : LLVM::BitcastOp::create(rewriter, loc, i32, adaptor.getVal());
    bool withPredicate = op.getReturnValueAndIsValid().has_value();
    Value predicateSlot = withPredicate ? abi.stackSlot(rewriter, op, 4)
                                        : LLVM::ZeroOp::create(rewriter, loc, LLVM::LLVMPointerType::get(getContext()));
    Value shuffled = abi.call(rewriter, loc, "__la_emu_shfl_sync", i32,
                              {abi.i32(rewriter, loc, mode), adaptor.getThreadMask(), bits, adaptor.getOffset(),
                               adaptor.getMaskAndClamp(), predicateSlot, abi.locationString(rewriter, loc)});
    Value value = valueType == i32 ? shuffled : LLVM::BitcastOp::create(rewriter, loc, valueType, shuffled);
    if (!withPredicate) {
      rewriter.replaceOp(op, value);
      return success();
    }
    Value predicate = LLVM::LoadOp::create(rewriter, loc, i32, predicateSlot);
    Value valid = LLVM::ICmpOp::create(rewriter, loc, LLVM::ICmpPredicate::ne, predicate, abi.i32(rewriter, loc, 0));
    Value result = LLVM::UndefOp::create(rewriter, loc, op.getType());
    result = LLVM::InsertValueOp::create(rewriter, loc, result, value, ArrayRef<int64_t>{0});
    result = LLVM::InsertValueOp::create(rewriter, loc, result, valid, ArrayRef<int64_t>{1});
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// nvvm.vote.sync {any, all, uni, ballot} => __la_emu_vote_sync.
struct VotePattern : EmulatorPattern<NVVM::VoteSyncOp> {
  using EmulatorPattern::EmulatorPattern;
  LogicalResult matchAndRewrite(NVVM::VoteSyncOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    uint32_t mode = 0;
    switch (op.getKind()) {
    case NVVM::VoteSyncKind::any:
      mode = LA_EMU_VOTE_ANY;
      break;
    case NVVM::VoteSyncKind::all:
      mode = LA_EMU_VOTE_ALL;
      break;
    case NVVM::VoteSyncKind::uni:
      mode = LA_EMU_VOTE_UNI;
      break;
    case NVVM::VoteSyncKind::ballot:
      mode = LA_EMU_VOTE_BALLOT;
      break;
    }
    Type i32 = rewriter.getI32Type();
    Value predicate = LLVM::ZExtOp::create(rewriter, loc, i32, adaptor.getPred());
    Value vote =
        abi.call(rewriter, loc, "__la_emu_vote_sync", i32,
                 {abi.i32(rewriter, loc, mode), adaptor.getMask(), predicate, abi.locationString(rewriter, loc)});
    if (op.getType() != i32)
      vote = LLVM::ICmpOp::create(rewriter, loc, LLVM::ICmpPredicate::ne, vote, abi.i32(rewriter, loc, 0));
    rewriter.replaceOp(op, vote);
    return success();
  }
};

/// nvvm.redux.sync on i32 => __la_emu_redux_sync (the emulator has no floating-point redux).
struct ReduxPattern : EmulatorPattern<NVVM::ReduxOp> {
  using EmulatorPattern::EmulatorPattern;
  LogicalResult matchAndRewrite(NVVM::ReduxOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    std::optional<uint32_t> kind;
    switch (op.getKind()) {
    case NVVM::ReduxKind::ADD:
      kind = LA_EMU_REDUX_ADD;
      break;
    case NVVM::ReduxKind::UMIN:
      kind = LA_EMU_REDUX_UMIN;
      break;
    case NVVM::ReduxKind::UMAX:
      kind = LA_EMU_REDUX_UMAX;
      break;
    case NVVM::ReduxKind::MIN:
      kind = LA_EMU_REDUX_MIN;
      break;
    case NVVM::ReduxKind::MAX:
      kind = LA_EMU_REDUX_MAX;
      break;
    case NVVM::ReduxKind::AND:
      kind = LA_EMU_REDUX_AND;
      break;
    case NVVM::ReduxKind::OR:
      kind = LA_EMU_REDUX_OR;
      break;
    case NVVM::ReduxKind::XOR:
      kind = LA_EMU_REDUX_XOR;
      break;
    default:
      break;
    }
    if (!kind || !op.getType().isInteger(32))
      return op.emitError("la-nvvm-to-emulator: redux.sync.")
             << NVVM::stringifyReduxKind(op.getKind()) << " on " << op.getType() << " is not emulated";
    Location loc = op.getLoc();
    Value result = abi.call(rewriter, loc, "__la_emu_redux_sync", rewriter.getI32Type(),
                            {abi.i32(rewriter, loc, *kind), adaptor.getMaskAndClamp(), adaptor.getVal(),
                             abi.locationString(rewriter, loc)});
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateThreadPatterns(RewritePatternSet &patterns, EmulatorABI &abi) {
  MLIRContext *context = patterns.getContext();
  for (auto [opName, function] : kSpecialRegisters)
    patterns.add<SpecialRegisterPattern>(context, abi, opName, function);
  patterns.add<WarpSizePattern, Barrier0Pattern, BarrierPattern, SyncWarpPattern, MembarPattern, ShflPattern,
               VotePattern, ReduxPattern>(context, abi);
}

} // namespace mlir::la::emu
