//===- LANVVMToEmulator.cpp - NVVM kernels as host functions on the emulator -===//
//
// The pass is four steps, in this order because each needs the previous one's result:
//  1. reject what the emulator cannot run (every instance, before anything changes);
//  2. dissolve each gpu.module into the host module: lay out its shared globals in one arena, prefix its
//     symbols with the module's name, record each kernel's launch facts as attributes;
//  3. rewrite NVVM ops and shared/global accesses into ABI calls (a dialect conversion: NVVM is illegal,
//     memory ops are legal only on private memory);
//  4. count FMAs, drop address spaces, and add a packed entry point per kernel.
//
//===----------------------------------------------------------------------===//

#include "Conversion/NVVMToEmulator/Patterns.h"
#include "Conversion/Passes.h"

#include "la/emulator/Libdevice.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"

#include "llvm/ADT/DenseSet.h"

namespace mlir::la {
#define GEN_PASS_DEF_LANVVMTOEMULATOR
#include "Conversion/Passes.h.inc"

namespace {

constexpr unsigned kSharedAddressSpace = 3;
/// Shared globals start on this boundary in the arena: the widest access PTX has (v4.b32, ldmatrix rows,
/// cp.async 16 bytes).
constexpr uint64_t kSharedAlignment = 16;

bool isSharedGlobal(LLVM::GlobalOp global) { return global.getAddrSpace() == kSharedAddressSpace; }

/// Step 1: every operation the rewrite has no pattern for, every inline PTX and every call that would not
/// link is an error at its location.
LogicalResult checkSupported(gpu::GPUModuleOp gpuModule, const llvm::DenseSet<OperationName> &rewritten) {
  bool ok = true;
  gpuModule.walk([&](Operation *op) {
    auto reject = [&](const Twine &what) {
      op->emitError("la-nvvm-to-emulator: ") << what;
      ok = false;
    };
    if (isa<NVVM::NVVMDialect>(op->getDialect()) && !rewritten.contains(op->getName())) {
      reject("'" + op->getName().getStringRef() + "' is not emulated (docs/gpu-emulator.md lists what is)");
    } else if (auto asmOp = dyn_cast<LLVM::InlineAsmOp>(op)) {
      reject("inline PTX is not emulated: \"" + asmOp.getAsmString() + "\"");
    } else if (auto call = dyn_cast<LLVM::CallOp>(op)) {
      std::optional<StringRef> callee = call.getCallee();
      if (!callee) {
        reject("indirect calls are not emulated");
        return;
      }
      auto target = gpuModule.lookupSymbol<LLVM::LLVMFuncOp>(*callee);
      if (target && !target.isExternal())
        return;
      if (!::la::emu::findLibdeviceFunction(*callee))
        reject("call to '" + *callee + "', which is neither defined in the gpu.module nor a libdevice function " +
               "the emulator provides");
    } else if (auto spaceCast = dyn_cast<LLVM::AddrSpaceCastOp>(op)) {
      if (spaceCast.getArg().getType() != spaceCast.getType() &&
          cast<LLVM::LLVMPointerType>(spaceCast.getArg().getType()).getAddressSpace() == kSharedAddressSpace)
        reject("a generic pointer to shared memory (addrspacecast from address space 3) is not emulated");
    } else if (isa<LLVM::MemcpyOp, LLVM::MemmoveOp, LLVM::MemsetOp>(op)) {
      for (Value operand : op->getOperands())
        if (isa<LLVM::LLVMPointerType>(operand.getType()) &&
            emu::classifyPointer(operand) != emu::MemorySpace::Private) {
          reject("'" + op->getName().getStringRef() + "' on shared or global memory is not emulated");
          break;
        }
    }
  });
  return success(ok);
}

/// Whether `op` declares a function defined elsewhere (the ABI, libdevice): such symbols keep their names.
bool isFunctionDeclaration(Operation &op) {
  auto function = dyn_cast<LLVM::LLVMFuncOp>(&op);
  return function && function.isExternal();
}

/// Step 2 for one gpu.module: returns its functions (now in `host`) and kernels; fills `layout`.
LogicalResult dissolve(gpu::GPUModuleOp gpuModule, ModuleOp host, emu::SharedLayout &layout,
                       SmallVectorImpl<LLVM::LLVMFuncOp> &functions) {
  MLIRContext *context = host.getContext();
  std::string prefix = (gpuModule.getName() + ".").str();
  DataLayout dataLayout = DataLayout::closest(gpuModule);

  // Rename every definition; declarations keep their names (they are the ABI and libdevice).
  for (Operation &op : llvm::make_early_inc_range(gpuModule.getBody()->getOperations())) {
    auto symbol = dyn_cast<SymbolOpInterface>(&op);
    if (!symbol || isFunctionDeclaration(op))
      continue;
    auto newName = StringAttr::get(context, prefix + symbol.getName());
    if (failed(SymbolTable::replaceAllSymbolUses(&op, newName, gpuModule)))
      return op.emitError("la-nvvm-to-emulator: cannot rename '") << symbol.getName() << "'";
    SymbolTable::setSymbolName(&op, newName);
  }

  // One arena per gpu.module (a block runs kernels of one module); zero-size globals (dynamic shared
  // memory) go last.
  uint64_t end = 0;
  SmallVector<LLVM::GlobalOp> shared;
  for (auto global : gpuModule.getOps<LLVM::GlobalOp>())
    if (isSharedGlobal(global))
      shared.push_back(global);
  std::stable_partition(shared.begin(), shared.end(),
                        [&](LLVM::GlobalOp g) { return dataLayout.getTypeSize(g.getType()) != 0; });
  for (LLVM::GlobalOp global : shared) {
    uint64_t alignment = std::max<uint64_t>(global.getAlignment().value_or(1), kSharedAlignment);
    end = llvm::alignTo(end, alignment);
    layout[global.getSymNameAttr()] = end;
    end += dataLayout.getTypeSize(global.getType()).getFixedValue();
  }

  for (auto function : gpuModule.getOps<LLVM::LLVMFuncOp>()) {
    if (function.isExternal())
      continue;
    functions.push_back(function);
    bool isKernel = function->hasAttr(gpu::GPUDialect::getKernelFuncAttrName()) || function->hasAttr("nvvm.kernel");
    if (isKernel) {
      StringRef name = function.getSymName().drop_front(prefix.size());
      function->setAttr("la_emu.kernel", StringAttr::get(context, gpuModule.getName() + "::" + name));
      function->setAttr("la_emu.shared_bytes", IntegerAttr::get(IntegerType::get(context, 64), end));
      if (auto blockSize = function->getAttrOfType<DenseI32ArrayAttr>("gpu.known_block_size"))
        function->setAttr("la_emu.block_size", blockSize);
    }
    // NVVM and GPU attributes mean nothing on the host (and would be translated into NVPTX metadata).
    for (NamedAttribute attr : llvm::to_vector(function->getDiscardableAttrs()))
      if (attr.getName().strref().starts_with("nvvm.") || attr.getName().strref().starts_with("gpu."))
        function->removeAttr(attr.getName());
  }

  // Move everything into the host module; a declaration already there is shared.
  for (Operation &op : llvm::make_early_inc_range(gpuModule.getBody()->getOperations())) {
    auto symbol = dyn_cast<SymbolOpInterface>(&op);
    if (symbol && isFunctionDeclaration(op) && host.lookupSymbol(symbol.getNameAttr())) {
      op.erase();
      continue;
    }
    op.moveBefore(host.getBody(), host.getBody()->end());
  }
  gpuModule.erase();
  return success();
}

/// `@k.call(%args: !llvm.ptr)`: loads argument i from the pointer in args[i] and calls `@k`.
void addPackedEntryPoint(LLVM::LLVMFuncOp kernel) {
  OpBuilder builder(kernel->getContext());
  builder.setInsertionPointAfter(kernel);
  Location loc = kernel.getLoc();
  auto ptrType = LLVM::LLVMPointerType::get(kernel->getContext());
  auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(kernel->getContext()), {ptrType});
  auto wrapper = LLVM::LLVMFuncOp::create(builder, loc, (kernel.getSymName() + ".call").str(), type);
  Block *body = wrapper.addEntryBlock(builder);
  builder.setInsertionPointToStart(body);
  SmallVector<Value> args;
  for (auto [i, argType] : llvm::enumerate(kernel.getFunctionType().getParams())) {
    Value slot = LLVM::GEPOp::create(builder, loc, ptrType, ptrType, body->getArgument(0),
                                     ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
    Value valuePointer = LLVM::LoadOp::create(builder, loc, ptrType, slot);
    args.push_back(LLVM::LoadOp::create(builder, loc, argType, valuePointer));
  }
  LLVM::CallOp::create(builder, loc, kernel, args);
  LLVM::ReturnOp::create(builder, loc, ValueRange{});
}

/// A multiply whose one use is an add or subtract: the NVPTX backend contracts the pair into one
/// fma.rn (its default FMA level fuses without fast-math flags; the PTX of every f32 kernel shows it), so the
/// counter counts it as one FMA, as the hardware executes it.
bool isFusedByNVPTX(Operation *op) {
  auto multiply = dyn_cast<LLVM::FMulOp>(op);
  if (!multiply || !multiply->hasOneUse())
    return false;
  return isa<LLVM::FAddOp, LLVM::FSubOp>(*multiply->user_begin());
}

/// The number of lanes an FMA of `type` computes.
int64_t lanes(Type type) {
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.getNumElements();
  return 1;
}

struct LANVVMToEmulatorPass : impl::LANVVMToEmulatorBase<LANVVMToEmulatorPass> {
  void runOnOperation() override {
    ModuleOp host = getOperation();
    MLIRContext *context = &getContext();
    emu::EmulatorABI abi(host);
    emu::SharedLayout layout;

    RewritePatternSet patterns(context);
    emu::populateThreadPatterns(patterns, abi);
    emu::populateMemoryPatterns(patterns, abi, layout);
    emu::populateTensorCorePatterns(patterns, abi);
    llvm::DenseSet<OperationName> rewritten;
    for (const std::unique_ptr<RewritePattern> &pattern : patterns.getNativePatterns())
      if (std::optional<OperationName> root = pattern->getRootKind())
        rewritten.insert(*root);

    SmallVector<gpu::GPUModuleOp> gpuModules(host.getOps<gpu::GPUModuleOp>());
    bool supported = true;
    for (gpu::GPUModuleOp gpuModule : gpuModules)
      supported &= succeeded(checkSupported(gpuModule, rewritten));
    if (!supported)
      return signalPassFailure();

    SmallVector<LLVM::LLVMFuncOp> functions;
    for (gpu::GPUModuleOp gpuModule : gpuModules)
      if (failed(dissolve(gpuModule, host, layout, functions)))
        return signalPassFailure();
    host->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());

    ConversionTarget target(*context);
    target.addLegalDialect<LLVM::LLVMDialect>();
    target.addIllegalDialect<NVVM::NVVMDialect>();
    auto isPrivate = [](Value pointer) { return emu::classifyPointer(pointer) == emu::MemorySpace::Private; };
    target.addDynamicallyLegalOp<LLVM::LoadOp>([&](LLVM::LoadOp op) { return isPrivate(op.getAddr()); });
    target.addDynamicallyLegalOp<LLVM::StoreOp>([&](LLVM::StoreOp op) { return isPrivate(op.getAddr()); });
    target.addDynamicallyLegalOp<LLVM::AtomicRMWOp>([&](LLVM::AtomicRMWOp op) { return isPrivate(op.getPtr()); });
    target.addDynamicallyLegalOp<LLVM::AtomicCmpXchgOp>(
        [&](LLVM::AtomicCmpXchgOp op) { return isPrivate(op.getPtr()); });
    target.addDynamicallyLegalOp<LLVM::AddressOfOp>(
        [&](LLVM::AddressOfOp op) { return !layout.contains(op.getGlobalNameAttr().getAttr()); });
    target.addIllegalOp<LLVM::FenceOp>();
    SmallVector<Operation *> roots(functions.begin(), functions.end());
    if (failed(applyPartialConversion(roots, target, std::move(patterns))))
      return signalPassFailure();

    for (LLVM::LLVMFuncOp function : functions)
      function.walk([&](Operation *op) {
        if (!isa<LLVM::FMAOp, LLVM::FMulAddOp>(op) && !isFusedByNVPTX(op))
          return;
        OpBuilder builder(op);
        abi.call(builder, op->getLoc(), "__la_emu_count_fma", {},
                 {abi.i64(builder, op->getLoc(), lanes(op->getResult(0).getType()))});
      });

    // Shared globals are offsets now; every other address space is host memory.
    for (auto global : llvm::to_vector(host.getOps<LLVM::GlobalOp>())) {
      if (layout.contains(global.getSymNameAttr()))
        global.erase();
      else if (global.getAddrSpace() != 0)
        global.setAddrSpace(0);
    }
    AttrTypeReplacer dropAddressSpaces;
    dropAddressSpaces.addReplacement([&](LLVM::LLVMPointerType type) -> std::optional<Type> {
      if (type.getAddressSpace() == 0)
        return std::nullopt;
      return LLVM::LLVMPointerType::get(context);
    });
    dropAddressSpaces.recursivelyReplaceElementsIn(host, /*replaceAttrs=*/true, /*replaceLocs=*/false,
                                                   /*replaceTypes=*/true);
    host.walk([](LLVM::AddrSpaceCastOp cast) {
      cast.replaceAllUsesWith(cast.getArg());
      cast.erase();
    });

    for (LLVM::LLVMFuncOp function : functions)
      if (function->hasAttr("la_emu.kernel"))
        addPackedEntryPoint(function);
  }
};

} // namespace
} // namespace mlir::la
