//===- LAGPUOutlineSliceKernel.cpp - a bufferised entry as a per-slice kernel ===//

#include "Target/CUDA/Transforms/CUDAPasses.h"
#include "Target/CUDA/Transforms/StagedOperands.h"

#include "Target/CUDA/KernelNames.h"

#include "Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::la {
#define GEN_PASS_DEF_LAGPUOUTLINESLICEKERNEL
#include "Target/CUDA/Transforms/CUDAPasses.h.inc"

namespace {

constexpr int64_t kScratchAlignment = 64;

/// Bytes of a static-shape memref of int or float elements, or nullopt.
std::optional<int64_t> staticByteSize(MemRefType type) {
  if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  return type.getNumElements() * llvm::divideCeil(type.getElementTypeBitWidth(), 8);
}

/// Whether every use of `value`, and of every view of it, is a load, a store, a copy (which
/// la-gpu-distribute-to-threads turns into loads and stores) or a view: the uses that stay valid when its
/// memory space changes and the views' result types follow (retypeToSpace).
bool onlyLoadedStoredOrViewed(Value value) {
  for (Operation *user : value.getUsers()) {
    if (isa<memref::LoadOp, memref::StoreOp, memref::CopyOp, vector::LoadOp, vector::StoreOp, vector::TransferReadOp,
            vector::TransferWriteOp>(user))
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

/// The trip count of a loop dimension with constant bounds.
std::optional<int64_t> tripCount(Value lower, Value upper, Value step) {
  std::optional<int64_t> l = getConstantIntValue(lower), u = getConstantIntValue(upper), s = getConstantIntValue(step);
  if (!l || !u || !s || *s <= 0)
    return std::nullopt;
  return std::max<int64_t>(0, llvm::divideCeil(*u - *l, *s));
}

/// How many times `op` runs per kernel call: the product of the static trip counts of the loops around it
/// (a loop with dynamic bounds counts once).
int64_t executions(Operation *op) {
  int64_t count = 1;
  for (Operation *parent = op->getParentOp(); parent; parent = parent->getParentOp()) {
    if (auto loop = dyn_cast<scf::ForOp>(parent)) {
      if (std::optional<int64_t> trips = tripCount(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
        count *= *trips;
    } else if (auto parallel = dyn_cast<scf::ParallelOp>(parent)) {
      for (auto [lower, upper, step] :
           llvm::zip(parallel.getLowerBound(), parallel.getUpperBound(), parallel.getStep()))
        if (std::optional<int64_t> trips = tripCount(lower, upper, step))
          count *= *trips;
    }
  }
  return count;
}

/// The bytes a kernel moves to and from `buffer` (through its views) per call, from its loads, stores and
/// copies and the loops around them: what leaving it in global memory costs.
int64_t accessedBytes(Value buffer) {
  int64_t bytes = 0;
  SmallVector<Value> worklist = {buffer};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      int64_t elements = 0;
      if (isa<memref::LoadOp, memref::StoreOp>(user))
        elements = 1;
      else if (auto load = dyn_cast<vector::LoadOp>(user))
        elements = load.getVectorType().getNumElements();
      else if (auto store = dyn_cast<vector::StoreOp>(user))
        elements = store.getVectorType().getNumElements();
      else if (auto read = dyn_cast<vector::TransferReadOp>(user))
        elements = read.getVectorType().getNumElements();
      else if (auto write = dyn_cast<vector::TransferWriteOp>(user))
        elements = write.getVectorType().getNumElements();
      else if (isa<memref::CopyOp>(user))
        elements = cast<MemRefType>(value.getType()).getNumElements();
      else if (auto view = dyn_cast<ViewLikeOpInterface>(user); view && view.getViewSource() == value)
        worklist.append(user->result_begin(), user->result_end());
      int64_t elementBytes = llvm::divideCeil(cast<MemRefType>(value.getType()).getElementTypeBitWidth(), 8);
      bytes += elements * elementBytes * executions(user);
    }
  }
  return bytes;
}

/// The top-level ops of a kernel body, by position, between which a buffer holds data: from the first op
/// that uses it (or a view of it) to the last. Within one top-level op (a chunk loop) every buffer it uses
/// is live throughout.
struct LiveRange {
  unsigned first = ~0u, last = 0;
  bool overlaps(const LiveRange &other) const { return first <= other.last && other.first <= last; }
};

LiveRange liveRangeIn(Block &body, Value buffer) {
  LiveRange range;
  SmallVector<Value> worklist = {buffer};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      Operation *top = body.findAncestorOpInBlock(*user);
      unsigned position = std::distance(body.begin(), top->getIterator());
      range.first = std::min(range.first, position);
      range.last = std::max(range.last, position);
      if (auto view = dyn_cast<ViewLikeOpInterface>(user); view && view.getViewSource() == value)
        worklist.append(user->result_begin(), user->result_end());
    }
  }
  return range;
}

/// A buffer to place: its bytes, lifetime and, once placed, offset.
struct Slot {
  int64_t bytes;
  LiveRange lifetime;
  unsigned alloc;
  int64_t offset = 0;
};

/// Places `slots` (largest first, each at the lowest aligned offset that no placed slot with an
/// overlapping lifetime covers) and returns the bytes they span.
int64_t packSlots(MutableArrayRef<Slot> slots) {
  SmallVector<Slot *> order = llvm::map_to_vector(slots, [](Slot &slot) { return &slot; });
  llvm::stable_sort(order, [](Slot *a, Slot *b) { return a->bytes > b->bytes; });
  int64_t end = 0;
  SmallVector<Slot *> placed;
  for (Slot *slot : order) {
    SmallVector<Slot *> conflicts =
        llvm::filter_to_vector(placed, [&](Slot *other) { return other->lifetime.overlaps(slot->lifetime); });
    llvm::sort(conflicts, [](Slot *a, Slot *b) { return a->offset < b->offset; });
    int64_t offset = 0;
    for (Slot *other : conflicts) {
      if (offset + slot->bytes <= other->offset)
        break;
      offset = std::max<int64_t>(offset, llvm::alignTo(other->offset + other->bytes, kScratchAlignment));
    }
    slot->offset = offset;
    placed.push_back(slot);
    end = std::max(end, offset + slot->bytes);
  }
  return end;
}

/// The slice coordinate along sliced dimension `dim` of `dims`: block (x, y) = (last, first).
Value sliceCoordinate(OpBuilder &b, Location loc, int64_t dim, int64_t dims) {
  gpu::Dimension axis = dim == dims - 1 ? gpu::Dimension::x : gpu::Dimension::y;
  return gpu::BlockIdOp::create(b, loc, axis);
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

    // Which temporaries get shared memory is a knapsack: each costs its bytes (less where lifetimes do not
    // overlap, since such buffers share bytes) and saves the global traffic its loads, stores and copies
    // would make (accessedBytes). Two greedy orders fill the budget, each taking every allocation that still
    // fits: the smallest first (a chunk's state and tiles before a whole-sequence temporary) and the most
    // accessed per byte first; the one that leaves less traffic in global memory wins (causal Flow's f16
    // state kernel: 12.2x -> 10.0x the minimum, where neither order is best for every kernel).
    SmallVector<LiveRange> lifetimes = llvm::map_to_vector(
        allocs, [&](memref::AllocOp alloc) { return liveRangeIn(func.getBody().front(), alloc.getResult()); });
    SmallVector<int64_t> accessed =
        llvm::map_to_vector(allocs, [](memref::AllocOp alloc) { return accessedBytes(alloc.getResult()); });
    auto slotsOf = [&](ArrayRef<bool> chosen) {
      SmallVector<Slot> slots;
      for (auto [i, bytes] : llvm::enumerate(allocBytes))
        if (chosen[i])
          slots.push_back(Slot{bytes, lifetimes[i], i});
      return slots;
    };
    auto fillInOrder = [&](ArrayRef<unsigned> order) {
      SmallVector<bool> chosen(allocs.size(), false);
      for (unsigned i : order) {
        if (!onlyLoadedStoredOrViewed(allocs[i].getResult()))
          continue;
        chosen[i] = true;
        SmallVector<Slot> slots = slotsOf(chosen);
        if (packSlots(slots) > sharedMemoryBytes)
          chosen[i] = false;
      }
      return chosen;
    };
    auto globalTraffic = [&](ArrayRef<bool> chosen) {
      int64_t total = 0;
      for (auto [i, inShared] : llvm::enumerate(chosen))
        total += inShared ? 0 : accessed[i];
      return total;
    };
    SmallVector<unsigned> bySize = llvm::to_vector(llvm::seq<unsigned>(0, allocs.size()));
    SmallVector<unsigned> byDensity = bySize;
    llvm::stable_sort(bySize, [&](unsigned a, unsigned b) { return allocBytes[a] < allocBytes[b]; });
    llvm::stable_sort(byDensity, [&](unsigned a, unsigned b) {
      return accessed[a] * std::max<int64_t>(allocBytes[b], 1) > accessed[b] * std::max<int64_t>(allocBytes[a], 1);
    });
    SmallVector<bool> smallestFirst = fillInOrder(bySize), densestFirst = fillInOrder(byDensity);
    SmallVector<bool> shared =
        globalTraffic(densestFirst) < globalTraffic(smallestFirst) ? densestFirst : smallestFirst;
    // A staged operand copy pays only in shared memory; one left global is dissolved (its readers read the
    // operand in place) and takes no slot.
    for (auto [i, alloc] : llvm::enumerate(allocs))
      if (!shared[i] && dissolveStagedCopy(alloc))
        allocBytes[i] = 0, alloc = nullptr;
    SmallVector<bool> global = llvm::map_to_vector(llvm::zip(shared, allocs),
                                                   [](auto pair) { return !std::get<0>(pair) && std::get<1>(pair); });
    SmallVector<Slot> sharedSlots = slotsOf(shared), globalSlots = slotsOf(global);
    int64_t sharedBytes = packSlots(sharedSlots), scratchBytes = packSlots(globalSlots);
    SmallVector<int64_t> offsets(allocs.size());
    for (const Slot &slot : llvm::concat<const Slot>(sharedSlots, globalSlots))
      offsets[slot.alloc] = slot.offset;

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
