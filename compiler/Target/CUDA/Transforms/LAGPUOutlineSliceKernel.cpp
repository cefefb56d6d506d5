//===- LAGPUOutlineSliceKernel.cpp - a bufferised entry as a per-slice kernel ===//

#include "Target/CUDA/Transforms/CUDAPasses.h"
#include "Target/CUDA/Transforms/StagedOperands.h"
#include "Target/CUDA/Transforms/TemporaryPlacement.h"

#include "Target/CUDA/KernelNames.h"

#include "Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::la {
#define GEN_PASS_DEF_LAGPUOUTLINESLICEKERNEL
#include "Target/CUDA/Transforms/CUDAPasses.h.inc"

namespace {

/// Bytes of a static-shape memref of int or float elements, or nullopt.
std::optional<int64_t> staticByteSize(MemRefType type) {
  if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  return type.getNumElements() * llvm::divideCeil(type.getElementTypeBitWidth(), 8);
}

/// Whether every use of `value`, and of every view of it, is a load, a store, a tensor-core fragment, a copy (which
/// la-gpu-distribute-to-threads turns into loads and stores) or a view: the uses that stay valid when its
/// memory space changes and the views' result types follow (retypeToSpace).
bool onlyLoadedStoredOrViewed(Value value) {
  for (Operation *user : value.getUsers()) {
    if (isa<memref::LoadOp, memref::StoreOp, memref::CopyOp, vector::LoadOp, vector::StoreOp, vector::TransferReadOp,
            vector::TransferWriteOp, lagpu::MmaFragmentOp>(user))
      continue;
    auto view = dyn_cast<ViewLikeOpInterface>(user);
    if (!view || user->getNumResults() != 1 || view.getViewSource() != value ||
        !onlyLoadedStoredOrViewed(user->getResult(0)))
      return false;
  }
  return true;
}

/// Moves `value` and every view of it to memory space `space`, in place.
void retypeToSpace(Value value, Attribute space) {
  auto type = cast<MemRefType>(value.getType());
  value.setType(MemRefType::get(type.getShape(), type.getElementType(), type.getLayout(), space));
  for (Operation *user : value.getUsers())
    if (auto view = dyn_cast<ViewLikeOpInterface>(user); view && view.getViewSource() == value)
      retypeToSpace(user->getResult(0), space);
}

/// The slice coordinate along sliced dimension `dim` of `dims`: block (x, y) = (last, first).
Value sliceCoordinate(OpBuilder &b, Location loc, int64_t dim, int64_t dims) {
  gpu::Dimension axis = dim == dims - 1 ? gpu::Dimension::x : gpu::Dimension::y;
  return gpu::BlockIdOp::create(b, loc, axis);
}

/// Whether the temporaries `shared` chooses, of `bytes` each, pack into a shared buffer of at most `budget`.
bool fitsInShared(const KernelTemporaries &temporaries, ArrayRef<int64_t> bytes, ArrayRef<bool> shared,
                  int64_t budget) {
  SmallVector<int64_t> offsets(bytes.size());
  return temporaries.pack(bytes, shared, offsets) <= budget;
}

/// Gives shared memory to the staged copies that only hide latency (kStagedForLatencyAttr), in program
/// order, each while the buffer still fits `budget` with it: what the temporaries that save global traffic
/// left.
void grantLeftoverShared(const KernelTemporaries &temporaries, ArrayRef<memref::AllocOp> allocs,
                         ArrayRef<int64_t> bytes, MutableArrayRef<bool> shared, int64_t budget) {
  for (unsigned i = 0; i < allocs.size(); ++i) {
    if (!allocs[i]->hasAttr(kStagedForLatencyAttr))
      continue;
    shared[i] = true;
    shared[i] = fitsInShared(temporaries, bytes, shared, budget);
  }
}

/// Gives each staged operand copy in shared memory that a loop can issue an iteration ahead
/// (prefetchLoop) a second slot right after its own, while the shared buffer stays within `budget`, in
/// program order: la-gpu-prefetch-staged-copies fills one slot while the loop reads the other. The
/// allocation's bytes grow by the stride to the second slot, which `kPrefetchSlotStrideAttr` records.
void reservePrefetchSlots(const KernelTemporaries &temporaries, ArrayRef<memref::AllocOp> allocs,
                          MutableArrayRef<int64_t> bytes, ArrayRef<bool> shared, int64_t budget) {
  for (unsigned i = 0; i < allocs.size(); ++i) {
    memref::AllocOp alloc = allocs[i]; // an op handle: ArrayRef gives it const
    if (!alloc || !shared[i] || !alloc->hasAttr(kStagedCopyAttr))
      continue;
    memref::CopyOp copy = stagingCopy(alloc.getResult());
    if (!copy || !prefetchLoop(copy))
      continue;
    int64_t single = bytes[i], stride = llvm::alignTo(single, kScratchAlignment);
    bytes[i] = stride + single;
    if (!fitsInShared(temporaries, bytes, shared, budget)) {
      bytes[i] = single;
      continue;
    }
    alloc->setAttr(kPrefetchSlotStrideAttr, IntegerAttr::get(IndexType::get(alloc.getContext()), stride));
  }
}

struct LAGPUOutlineSliceKernelPass : impl::LAGPUOutlineSliceKernelBase<LAGPUOutlineSliceKernelPass> {
  using LAGPUOutlineSliceKernelBase::LAGPUOutlineSliceKernelBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> entries;
    for (auto func : module.getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal())
        entries.push_back(func);
    if (entries.empty())
      return;

    OpBuilder b(module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    auto kernels = gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModuleName);
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), b.getUnitAttr());
    SymbolTable kernelSymbols(kernels);
    for (func::FuncOp func : entries)
      if (failed(outline(func, kernels, kernelSymbols)))
        return signalPassFailure();
    for (func::FuncOp func : entries)
      func.erase();
    // The constants moved into the gpu.module; the host keeps none it no longer reads.
    for (auto global : llvm::make_early_inc_range(module.getOps<memref::GlobalOp>()))
      if (SymbolTable::symbolKnownUseEmpty(global, module))
        global.erase();
  }

  LogicalResult outline(func::FuncOp func, gpu::GPUModuleOp kernels, SymbolTable &kernelSymbols) {
    MLIRContext *context = func.getContext();
    if (func.getNumResults() != 0)
      return func.emitError() << "la-gpu-outline-slice-kernel: '" << func.getSymName()
                              << "' still returns values; bufferise with results as out-parameters first";

    // Which arguments the kernel takes (all but the slice coordinates), and the bytes of one slice of each.
    int64_t slicedDims = 0;
    SmallVector<unsigned> kept;
    SmallVector<int64_t> sliceBytes;
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
      auto memref = dyn_cast<MemRefType>(type);
      std::optional<int64_t> bytes = memref ? staticByteSize(memref) : std::nullopt;
      if (!bytes || !memref.getLayout().isIdentity())
        return func.emitError() << "la-gpu-outline-slice-kernel: argument #" << i << " of '" << func.getSymName()
                                << "' is " << type << "; a kernel takes static-shape, identity-layout memrefs";
      if (func.getArgAttr(i, kSlicePositionAttr)) {
        ++slicedDims;
        continue;
      }
      kept.push_back(i);
      // An argument every slice reads whole is not stepped per block.
      sliceBytes.push_back(func.getArgAttr(i, kSharedArgumentAttr) ? 0 : *bytes);
    }

    // The allocations, in program order, and their sizes.
    SmallVector<memref::AllocOp> allocs;
    SmallVector<int64_t> allocBytes;
    WalkResult walk = func.walk([&](Operation *op) {
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        MemRefType type = alloc.getType();
        std::optional<int64_t> bytes = staticByteSize(type);
        if (!bytes || !type.getLayout().isIdentity() || type.getMemorySpace()) {
          alloc.emitError() << "la-gpu-outline-slice-kernel: cannot place " << type
                            << " in the scratch buffer (a static-shape, identity-layout buffer is needed)";
          return WalkResult::interrupt();
        }
        allocs.push_back(alloc);
        allocBytes.push_back(*bytes);
      } else if (isa<memref::DeallocOp, memref::AllocaScopeOp, func::CallOp>(op)) {
        op->emitError() << "la-gpu-outline-slice-kernel: '" << op->getName() << "' in a kernel body";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();

    // Shared memory for the temporaries that save the most global traffic (TemporaryPlacement.h); a staged
    // operand copy left global is dissolved (its readers read the operand in place) and takes no slot.
    KernelTemporaries temporaries(func.getBody().front(), allocs);
    SmallVector<bool> shared = temporaries.chooseShared(allocBytes, sharedMemoryBytes, [](memref::AllocOp alloc) {
      return !alloc->hasAttr(kStagedForLatencyAttr) && onlyLoadedStoredOrViewed(alloc.getResult());
    });
    grantLeftoverShared(temporaries, allocs, allocBytes, shared, sharedMemoryBytes);
    for (auto [i, alloc] : llvm::enumerate(allocs))
      if (!shared[i] && dissolveStagedCopy(alloc))
        allocBytes[i] = 0, alloc = nullptr;
    SmallVector<bool> global = llvm::map_to_vector(llvm::zip(shared, allocs),
                                                   [](auto pair) { return !std::get<0>(pair) && std::get<1>(pair); });
    reservePrefetchSlots(temporaries, allocs, allocBytes, shared, sharedMemoryBytes);
    SmallVector<int64_t> offsets(allocs.size());
    int64_t sharedBytes = temporaries.pack(allocBytes, shared, offsets);
    int64_t scratchBytes = temporaries.pack(allocBytes, global, offsets);

    SmallVector<Type> argumentTypes;
    for (unsigned i : kept)
      argumentTypes.push_back(func.getArgumentTypes()[i]);
    Type scratchType;
    if (scratchBytes > 0) {
      scratchBytes = llvm::alignTo(scratchBytes, kScratchAlignment);
      scratchType = MemRefType::get({scratchBytes}, IntegerType::get(context, 8));
      argumentTypes.push_back(scratchType);
      sliceBytes.push_back(scratchBytes);
    }

    OpBuilder b(context);
    b.setInsertionPointToEnd(kernels.getBody());
    auto kernel = gpu::GPUFuncOp::create(b, func.getLoc(), getKernelName(func.getSymName()),
                                         FunctionType::get(context, argumentTypes, {}));
    kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
    int32_t threads = static_cast<int32_t>(warpsPerBlock * 32);
    kernel.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({threads, 1, 1}));
    kernel->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                    b.getI32IntegerAttr(static_cast<int32_t>(minBlocksPerSM)));
    kernel->setAttr(kSliceBytesAttr, b.getDenseI64ArrayAttr(sliceBytes));
    kernelSymbols.insert(kernel);

    // Move the body in: the kernel's entry block takes the kept arguments (and the scratch buffer).
    Block &entry = kernel.getBody().front();
    Block &body = func.getBody().front();
    b.setInsertionPointToStart(&entry);
    SmallVector<Value> replacements(func.getNumArguments());
    for (auto [k, i] : llvm::enumerate(kept))
      replacements[i] = entry.getArgument(k);
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto dim = func.getArgAttrOfType<IntegerAttr>(i, kSlicePositionAttr);
      if (!dim)
        continue;
      // The coordinate as the f32 [1, ..., 1] tensor la-slice-positions reads: a private copy per thread.
      Location loc = func.getArgument(i).getLoc();
      auto type = cast<MemRefType>(func.getArgumentTypes()[i]);
      Value cell = memref::AllocaOp::create(b, loc, type);
      Value index = sliceCoordinate(b, loc, dim.getInt(), slicedDims);
      Value asInt = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), index);
      Value coordinate = arith::UIToFPOp::create(b, loc, type.getElementType(), asInt);
      SmallVector<Value> zeros(type.getRank(), arith::ConstantIndexOp::create(b, loc, 0));
      memref::StoreOp::create(b, loc, coordinate, cell, zeros);
      replacements[i] = cell;
    }
    for (auto [i, value] : llvm::enumerate(replacements))
      func.getArgument(i).replaceAllUsesWith(value);
    entry.getOperations().splice(entry.end(), body.getOperations());
    auto ret = cast<func::ReturnOp>(entry.getTerminator());
    b.setInsertionPoint(ret);
    gpu::ReturnOp::create(b, ret.getLoc());
    ret.erase();

    // Allocations become views of the shared or the scratch buffer (the last argument: workgroup
    // attributions follow the arguments among the entry block's arguments).
    Value scratch = scratchBytes > 0 ? entry.getArgument(argumentTypes.size() - 1) : Value();
    Value sharedBuffer;
    auto workgroup = gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup);
    if (sharedBytes > 0) {
      int64_t bytes = llvm::alignTo(sharedBytes, kScratchAlignment);
      auto type = MemRefType::get({bytes}, IntegerType::get(context, 8), MemRefLayoutAttrInterface(), workgroup);
      sharedBuffer = kernel.addWorkgroupAttribution(type, func.getLoc());
      // Aligned as the global scratch: vector loads of its slots need their natural alignment.
      kernel.setWorkgroupAttributionAttr(0, LLVM::LLVMDialect::getAlignAttrName(),
                                         b.getI64IntegerAttr(kScratchAlignment));
    }
    for (auto [alloc, offset, inShared] : llvm::zip(allocs, offsets, shared)) {
      if (!alloc) // a dissolved staged copy
        continue;
      b.setInsertionPoint(alloc);
      Value shift = arith::ConstantIndexOp::create(b, alloc.getLoc(), offset);
      Value buffer = inShared ? sharedBuffer : scratch;
      if (inShared)
        retypeToSpace(alloc.getResult(), workgroup);
      auto view = memref::ViewOp::create(b, alloc.getLoc(), alloc.getType(), buffer, shift, ValueRange{});
      for (llvm::StringRef name : {kStagedCopyAttr, kPrefetchSlotStrideAttr})
        if (Attribute mark = alloc->getAttr(name))
          view->setAttr(name, mark);
      alloc.replaceAllUsesWith(view.getResult());
      alloc.erase();
    }

    // The module constants the body reads (initial states, zero tensors) move along.
    SymbolTable hostSymbols(func->getParentOfType<ModuleOp>());
    kernel.walk([&](memref::GetGlobalOp get) {
      if (kernelSymbols.lookup(get.getName()))
        return;
      if (auto global = hostSymbols.lookup<memref::GlobalOp>(get.getName())) {
        OpBuilder atEnd(kernels.getBody(), kernels.getBody()->end());
        kernelSymbols.insert(atEnd.clone(*global));
      }
    });
    return success();
  }
};

} // namespace
} // namespace mlir::la
