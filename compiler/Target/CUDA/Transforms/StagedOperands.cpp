//===- StagedOperands.cpp - operand copies that only pay in shared memory ===//

#include "Target/CUDA/Transforms/StagedOperands.h"
#include "Target/CUDA/IR/LAGPUDialect.h"
#include "Target/CUDA/Transforms/BufferRoots.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::la {

OpOperand *layoutFreeRead(Operation *user) {
  if (auto load = dyn_cast<memref::LoadOp>(user))
    return &load.getMemrefMutable();
  if (auto fragment = dyn_cast<lagpu::MmaFragmentOp>(user))
    return &fragment.getSourceMutable();
  return nullptr;
}

namespace {

/// Whether anything in `loop` may write the buffer `root`: a write effect on a view of it, or an op whose
/// effects are unknown.
bool mayWriteInLoop(scf::ForOp loop, Value root) {
  WalkResult result = loop.getBody()->walk([&](Operation *op) {
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &effect : instances) {
      if (!isa<MemoryEffects::Write>(effect.getEffect()))
        continue;
      Value written = effect.getValue();
      if (!written || !isa<MemRefType>(written.getType()) || !isDistinctRoot(rootBuffer(written)) ||
          rootBuffer(written) == root)
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// Moves the pure ops of `loop`'s body that compute `value` from values defined outside it (a slice's
/// subview) to before the loop; returns whether `value` is then defined outside the loop.
bool hoistOutOf(scf::ForOp loop, Value value) {
  if (loop.isDefinedOutsideOfLoop(value))
    return true;
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != loop.getBody() || def->getNumRegions() != 0 || !isPure(def) ||
      !llvm::all_of(def->getOperands(), [&](Value operand) { return hoistOutOf(loop, operand); }))
    return false;
  def->moveBefore(loop);
  return true;
}

} // namespace

Value stageInTemporary(OpBuilder &b, Location loc, Value operand) {
  auto type = cast<MemRefType>(operand.getType());
  // A slice that a loop reads unchanged in every iteration (GAU's query rows, inside the loop over column
  // tiles) is copied once, before the loop: each iteration's copy would read the same bytes again.
  OpBuilder::InsertionGuard guard(b);
  Value root = rootBuffer(operand);
  if (isDistinctRoot(root))
    for (auto loop = dyn_cast<scf::ForOp>(b.getInsertionBlock()->getParentOp());
         loop && !mayWriteInLoop(loop, root) && hoistOutOf(loop, operand);
         loop = dyn_cast<scf::ForOp>(loop->getParentOp()))
      b.setInsertionPoint(loop);
  auto alloc = memref::AllocOp::create(b, loc, MemRefType::get(type.getShape(), type.getElementType()));
  alloc->setAttr(kStagedCopyAttr, b.getUnitAttr());
  memref::CopyOp::create(b, loc, operand, alloc);
  return alloc;
}

memref::CopyOp stagingCopy(Value buffer) {
  memref::CopyOp copy;
  for (Operation *user : buffer.getUsers())
    if (auto candidate = dyn_cast<memref::CopyOp>(user); candidate && candidate.getTarget() == buffer) {
      if (copy)
        return {};
      copy = candidate;
    }
  return copy;
}

/// Whether `user` of a staged copy reads it in place: a load or a fragment, which take any layout, or a
/// subview (a tile of a long reduction, la-gpu-contract-to-mma) that only such reads use.
static bool readsInPlace(Operation *user) {
  if (layoutFreeRead(user))
    return true;
  auto subview = dyn_cast<memref::SubViewOp>(user);
  return subview && llvm::all_of(subview->getUsers(), [](Operation *reader) { return layoutFreeRead(reader); });
}

bool dissolveStagedCopy(memref::AllocOp alloc) {
  if (!alloc->hasAttr(kStagedCopyAttr))
    return false;
  memref::CopyOp copy = stagingCopy(alloc.getResult());
  // Its readers are loads and fragments (the passes that stage read nothing else), maybe through subviews.
  if (!copy || !llvm::all_of(alloc->getUsers(),
                             [&](Operation *user) { return user == copy.getOperation() || readsInPlace(user); }))
    return false;
  Value source = copy.getSource();
  copy.erase();
  for (Operation *user : llvm::make_early_inc_range(alloc->getUsers())) {
    if (OpOperand *read = layoutFreeRead(user)) {
      read->assign(source);
      continue;
    }
    // The same tile of the source: its layout may differ, which the reads take.
    auto subview = cast<memref::SubViewOp>(user);
    OpBuilder b(subview);
    auto tile = memref::SubViewOp::create(b, subview.getLoc(), source, subview.getMixedOffsets(),
                                          subview.getMixedSizes(), subview.getMixedStrides());
    for (Operation *reader : llvm::make_early_inc_range(subview->getUsers()))
      layoutFreeRead(reader)->assign(tile);
    subview.erase();
  }
  alloc.erase();
  return true;
}

namespace {

/// The ops of `loop`'s body that compute `value`, in program order, or failure when one of them is not
/// pure or reads a value of the body other than the induction variable and their own results.
FailureOr<SmallVector<Operation *>> computationInBody(Value value, scf::ForOp loop) {
  Block *body = loop.getBody();
  SetVector<Operation *> ops;
  SmallVector<Value> worklist = {value};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (v == loop.getInductionVar() || loop.isDefinedOutsideOfLoop(v))
      continue;
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != body || def->getNumRegions() != 0 || !isMemoryEffectFree(def))
      return failure();
    if (ops.insert(def))
      worklist.append(def->operand_begin(), def->operand_end());
  }
  SmallVector<Operation *> ordered = ops.takeVector();
  llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}

} // namespace

bool computedPerIteration(Value value, scf::ForOp loop) { return succeeded(computationInBody(value, loop)); }

scf::ForOp prefetchLoop(memref::CopyOp copy) {
  auto loop = dyn_cast_or_null<scf::ForOp>(copy->getParentOp());
  if (!loop || !computedPerIteration(copy.getSource(), loop))
    return {};
  // Every reader comes after the copy in the same iteration: none would see another iteration's operand in
  // the slot once the copy runs ahead.
  bool readsAfter = llvm::all_of(copy.getTarget().getUsers(), [&](Operation *user) {
    Operation *inBody = loop.getBody()->findAncestorOpInBlock(*user);
    return user == copy.getOperation() || (inBody && copy->isBeforeInBlock(inBody));
  });
  return readsAfter ? loop : scf::ForOp();
}

Value sourceInIteration(OpBuilder &b, memref::CopyOp copy, scf::ForOp loop, Value iv) {
  IRMapping mapping;
  mapping.map(loop.getInductionVar(), iv);
  SmallVector<Operation *> computation = *computationInBody(copy.getSource(), loop);
  for (Operation *op : computation)
    b.clone(*op, mapping);
  return mapping.lookupOrDefault(copy.getSource());
}

} // namespace mlir::la
