//===- LAGPUNarrowFragmentTemporaries.cpp - tensor-core operands stored narrow ===//
//
// A temporary that only tensor-core fragments read (a chunk's φ(Q) or φ(K), computed in f32) is rounded to
// the fragments' f16 or bf16 by every one of them. Rounding once where it is written instead gives the same
// operands, halves the temporary (so more of them fit in shared memory) and lets ldmatrix load it
// (la-gpu-lower-mma-fragments). CUDAPasses.td has the contract.
//
//===----------------------------------------------------------------------===//

#include "Target/CUDA/IR/LAGPUDialect.h"
#include "Target/CUDA/Transforms/CUDAPasses.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "la-gpu-narrow-fragment-temporaries"

namespace mlir::la {
#define GEN_PASS_DEF_LAGPUNARROWFRAGMENTTEMPORARIES
#include "Target/CUDA/Transforms/CUDAPasses.h.inc"

namespace {

/// Whether `user` writes `buffer` without reading it: a fill, or a linalg.generic that takes it as an output
/// only and whose body ignores the output's old value.
bool onlyWrites(Operation *user, Value buffer) {
  if (auto fill = dyn_cast<linalg::FillOp>(user))
    return fill.hasPureBufferSemantics() && fill.getDpsInitOperand(0)->get() == buffer;
  auto generic = dyn_cast<linalg::GenericOp>(user);
  if (!generic || !generic.hasPureBufferSemantics())
    return false;
  int64_t asOutput = 0;
  for (OpOperand &operand : generic->getOpOperands()) {
    if (operand.get() != buffer)
      continue;
    if (!generic.isDpsInit(&operand) || generic.payloadUsesValueFromOperand(&operand))
      return false;
    ++asOutput;
  }
  return asOutput == 1;
}

/// The element type every reader of `alloc` rounds it to, when its readers are all tensor-core fragments
/// of one 16-bit type and its writers only write it; null otherwise.
Type narrowType(memref::AllocOp alloc) {
  if (!alloc.getType().getElementType().isF32())
    return {};
  Type narrow;
  bool read = false;
  for (Operation *user : alloc->getUsers()) {
    if (auto fragment = dyn_cast<lagpu::MmaFragmentOp>(user)) {
      Type type = fragment.getFragment().getType().getElementType();
      if (type.getIntOrFloatBitWidth() != 16 || (narrow && narrow != type))
        return {};
      narrow = type;
      read = true;
    } else if (!onlyWrites(user, alloc.getResult())) {
      return {};
    }
  }
  return read ? narrow : Type();
}

/// Stores `alloc` in `type`: each writer rounds what it writes.
void narrow(memref::AllocOp alloc, Type type) {
  MemRefType wide = alloc.getType();
  alloc.getResult().setType(MemRefType::get(wide.getShape(), type, wide.getLayout(), wide.getMemorySpace()));
  for (Operation *user : llvm::to_vector(alloc->getUsers())) {
    if (auto fill = dyn_cast<linalg::FillOp>(user)) {
      // A new fill: the old one's body still takes f32.
      OpBuilder b(fill);
      Value value = arith::TruncFOp::create(b, fill.getLoc(), type, fill.getDpsInputOperand(0)->get());
      linalg::FillOp::create(b, fill.getLoc(), value, alloc.getResult());
      fill.erase();
      continue;
    }
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (!generic)
      continue; // a fragment: it reads the operand type as it is
    for (OpOperand &init : generic.getDpsInitsMutable()) {
      if (init.get() != alloc.getResult())
        continue;
      generic.getMatchingBlockArgument(&init).setType(type);
      auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
      OpOperand &yielded = yield->getOpOperand(init.getOperandNumber() - generic.getNumDpsInputs());
      OpBuilder b(yield);
      yielded.set(arith::TruncFOp::create(b, yield.getLoc(), type, yielded.get()));
    }
  }
}

struct LAGPUNarrowFragmentTemporariesPass
    : impl::LAGPUNarrowFragmentTemporariesBase<LAGPUNarrowFragmentTemporariesPass> {
  void runOnOperation() override {
    // Collected first: narrowing replaces fills, which a walk may be about to visit.
    SmallVector<std::pair<memref::AllocOp, Type>> narrowable;
    getOperation().walk([&](memref::AllocOp alloc) {
      if (Type type = narrowType(alloc))
        narrowable.emplace_back(alloc, type);
    });
    for (auto [alloc, type] : narrowable) {
      LLVM_DEBUG(llvm::dbgs() << "la-gpu-narrow-fragment-temporaries: " << alloc.getType() << " at " << alloc.getLoc()
                              << " stored as " << type << "\n");
      narrow(alloc, type);
    }
  }
};

} // namespace
} // namespace mlir::la
