//===- LAGPUNarrowFragmentTemporaries.cpp - tensor-core operands stored narrow ===//
//
// A temporary that only tensor-core fragments read (a chunk's φ(Q) or φ(K), computed in f32) is rounded to
// the fragments' f16 or bf16 by every one of them. Rounding once where it is written instead gives the same
// operands, halves the temporary (so more of them fit in shared memory) and lets ldmatrix load it
// (la-gpu-lower-mma-fragments). A temporary that other ops also read, before an elementwise op rewrites it
// in place for the fragments (a causal chunk's scores, masked), gets a second, narrow temporary for that
// last write. CUDAPasses.td has the contract.
//
//===----------------------------------------------------------------------===//

#include "Target/CUDA/IR/LAGPUDialect.h"
#include "Target/CUDA/Transforms/CUDAPasses.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "la-gpu-narrow-fragment-temporaries"

namespace mlir::la {
#define GEN_PASS_DEF_LAGPUNARROWFRAGMENTTEMPORARIES
#include "Target/CUDA/Transforms/CUDAPasses.h.inc"

namespace {

/// Whether `user` writes `buffer` without reading it: a fill, or a linalg.generic that takes it as an output
/// only and whose body ignores the output's old value.
bool onlyWrites(Operation *user, Value buffer) {
  if (auto fill = dyn_cast<linalg::FillOp>(user)) // of an f32 value: rounded once, as the fragments did
    return fill.hasPureBufferSemantics() && fill.getDpsInitOperand(0)->get() == buffer &&
           fill.getDpsInputOperand(0)->get().getType().isF32();
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

/// Whether `fragment` reads a 16-bit type, the same as every fragment before it (`narrow`, null before the
/// first); records its type in `narrow`.
bool joinsFragmentType(lagpu::MmaFragmentOp fragment, Type &narrow) {
  Type type = fragment.getFragment().getType().getElementType();
  if (type.getIntOrFloatBitWidth() != 16 || (narrow && narrow != type))
    return false;
  narrow = type;
  return true;
}

/// The element type every reader of `alloc` rounds it to, when its readers are all tensor-core fragments
/// of one 16-bit type and its writers only write it; null otherwise.
Type narrowType(memref::AllocOp alloc) {
  if (!alloc.getType().getElementType().isF32())
    return {};
  Type narrow;
  for (Operation *user : alloc->getUsers()) {
    auto fragment = dyn_cast<lagpu::MmaFragmentOp>(user);
    if (fragment ? !joinsFragmentType(fragment, narrow) : !onlyWrites(user, alloc.getResult()))
      return {};
  }
  return narrow; // null when no fragment reads it
}

/// The elementwise generic that rewrites `alloc` in place (reads it as an input and writes it, both with
/// identity maps, ignoring the output's old value), when only fragments of one 16-bit type read `alloc`
/// after it and everything else that uses `alloc` comes before it, in its block: the last writer before the
/// fragments (a causal chunk's mask over its score tile). Null otherwise.
linalg::GenericOp inPlaceLastWriter(memref::AllocOp alloc) {
  if (!alloc.getType().getElementType().isF32())
    return {};
  linalg::GenericOp writer;
  for (Operation *user : alloc->getUsers()) {
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (!generic || generic == writer || !generic.hasPureBufferSemantics() || generic.getNumDpsInits() != 1 ||
        generic.getDpsInitOperand(0)->get() != alloc.getResult())
      continue; // (a user appears once per operand: the in-place writer twice)
    if (writer)
      return {}; // two in-place writers or an in-place one and another
    writer = generic;
  }
  if (!writer || writer.payloadUsesValueFromOperand(writer.getDpsInitOperand(0)))
    return {};
  bool readsInPlace = false;
  for (OpOperand *input : writer.getDpsInputOperands())
    if (input->get() == alloc.getResult()) {
      if (!writer.getMatchingIndexingMap(input).isIdentity())
        return {};
      readsInPlace = true;
    }
  if (!readsInPlace || !writer.getMatchingIndexingMap(writer.getDpsInitOperand(0)).isIdentity())
    return {};
  Block *block = writer->getBlock();
  Type narrow;
  for (Operation *user : alloc->getUsers()) {
    if (user == writer)
      continue;
    Operation *inBlock = block->findAncestorOpInBlock(*user);
    // A view would hide its own users, which may read after the writer.
    if (!inBlock || isa<ViewLikeOpInterface>(user))
      return {};
    auto fragment = dyn_cast<lagpu::MmaFragmentOp>(user);
    if (!fragment) {
      if (!inBlock->isBeforeInBlock(writer))
        return {};
      continue;
    }
    if (!writer->isBeforeInBlock(inBlock) || !joinsFragmentType(fragment, narrow))
      return {};
  }
  return narrow ? writer : linalg::GenericOp();
}

/// Gives the fragments after `writer` (inPlaceLastWriter of `alloc`) a temporary of their own, which only
/// `writer` writes: one that narrowType accepts. Where `alloc` is defined in `writer`'s block, `writer` writes
/// the new temporary instead of `alloc`, which nothing reads after it. Otherwise (`alloc` outlives a loop
/// whose body holds `writer`) the next iteration's ops before `writer` may read what it wrote into `alloc`,
/// so it keeps writing `alloc` and writes the new temporary as a second output.
memref::AllocOp separateLastWriter(memref::AllocOp alloc, linalg::GenericOp writer) {
  OpBuilder b(alloc);
  b.setInsertionPointAfter(alloc);
  auto separate = memref::AllocOp::create(b, alloc.getLoc(), alloc.getType());
  for (OpOperand &use : llvm::make_early_inc_range(alloc->getUses()))
    if (isa<lagpu::MmaFragmentOp>(use.getOwner()))
      use.set(separate);
  if (alloc->getBlock() == writer->getBlock()) {
    writer.getDpsInitOperand(0)->set(separate);
    return separate;
  }
  b.setInsertionPoint(writer);
  SmallVector<AffineMap> maps = writer.getIndexingMapsArray();
  maps.push_back(maps.back());
  auto both = linalg::GenericOp::create(b, writer.getLoc(), TypeRange{}, writer.getInputs(),
                                        ValueRange{alloc.getResult(), separate.getResult()}, maps,
                                        writer.getIteratorTypesArray());
  both.getRegion().takeBody(writer.getRegion());
  Block &body = both.getRegion().front();
  body.addArgument(alloc.getType().getElementType(), writer.getLoc());
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  yield->insertOperands(1, yield.getOperand(0));
  writer.erase();
  return separate;
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
    SmallVector<memref::AllocOp> allocs;
    getOperation().walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
    SmallVector<std::pair<memref::AllocOp, Type>> narrowable;
    for (memref::AllocOp alloc : allocs) {
      if (linalg::GenericOp writer = inPlaceLastWriter(alloc))
        alloc = separateLastWriter(alloc, writer);
      if (Type type = narrowType(alloc))
        narrowable.emplace_back(alloc, type);
    }
    for (auto [alloc, type] : narrowable) {
      LLVM_DEBUG(llvm::dbgs() << "la-gpu-narrow-fragment-temporaries: " << alloc.getType() << " at " << alloc.getLoc()
                              << " stored as " << type << "\n");
      narrow(alloc, type);
    }
  }
};

} // namespace
} // namespace mlir::la
