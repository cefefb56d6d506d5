//===- LAGPUDynamicSharedMemory.cpp - shared buffers beyond 48 KiB made dynamic ===//
//
// A workgroup global larger than the 48 KiB a kernel may declare statically becomes an external zero-length
// array in address space 3, which the NVPTX backend prints as `.extern .shared`: the block's dynamic shared
// memory, sized by the launch. Its users (llvm.mlir.addressof, then byte offsets) are unchanged: the address
// is the same base either way. CUDAPasses.td has the contract.
//
//===----------------------------------------------------------------------===//

#include "Target/CUDA/Transforms/CUDAPasses.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "la-gpu-dynamic-shared-memory"

namespace mlir::la {
#define GEN_PASS_DEF_LAGPUDYNAMICSHAREDMEMORY
#include "Target/CUDA/Transforms/CUDAPasses.h.inc"

namespace {

/// Bytes of a global of `type` when it is an array of bytes.
std::optional<int64_t> byteArraySize(Type type) {
  auto array = dyn_cast<LLVM::LLVMArrayType>(type);
  if (!array || !array.getElementType().isInteger(8))
    return std::nullopt;
  return static_cast<int64_t>(array.getNumElements());
}

struct LAGPUDynamicSharedMemory : impl::LAGPUDynamicSharedMemoryBase<LAGPUDynamicSharedMemory> {
  void runOnOperation() override {
    constexpr unsigned kSharedAddressSpace = 3;
    for (auto global : llvm::make_early_inc_range(getOperation().getOps<LLVM::GlobalOp>())) {
      std::optional<int64_t> bytes = byteArraySize(global.getGlobalType());
      if (global.getAddrSpace() != kSharedAddressSpace || !bytes || *bytes <= kMaxStaticSharedBytes)
        continue;
      LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE ": " << global.getSymName() << " (" << *bytes
                              << " bytes) becomes dynamic shared memory\n");
      global.setGlobalTypeAttr(TypeAttr::get(LLVM::LLVMArrayType::get(IntegerType::get(&getContext(), 8), 0)));
      global.setLinkage(LLVM::Linkage::External);
      global.removeValueAttr();
      global.setDsoLocal(false);
    }
  }
};

} // namespace
} // namespace mlir::la
