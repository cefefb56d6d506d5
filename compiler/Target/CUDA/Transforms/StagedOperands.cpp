//===- StagedOperands.cpp - operand copies that only pay in shared memory ===//

#include "Target/CUDA/Transforms/StagedOperands.h"

#include "Target/CUDA/Transforms/BufferRoots.h"

namespace mlir::la {

bool isKernelArgument(Value operand) {
  auto argument = dyn_cast<BlockArgument>(rootBuffer(operand));
  return argument && isa<FunctionOpInterface>(argument.getOwner()->getParentOp());
}

Value stageInTemporary(OpBuilder &b, Location loc, Value operand) {
  auto type = cast<MemRefType>(operand.getType());
  auto alloc = memref::AllocOp::create(b, loc, MemRefType::get(type.getShape(), type.getElementType()));
  alloc->setAttr(kStagedCopyAttr, b.getUnitAttr());
  memref::CopyOp::create(b, loc, operand, alloc);
  return alloc;
}

bool dissolveStagedCopy(memref::AllocOp alloc) {
  if (!alloc->hasAttr(kStagedCopyAttr))
    return false;
  memref::CopyOp copy;
  for (Operation *user : alloc->getUsers())
    if (auto candidate = dyn_cast<memref::CopyOp>(user); candidate && candidate.getTarget() == alloc.getResult())
      copy = candidate;
  // Its readers are loads (the passes that stage read nothing else), which take any layout of the operand.
  if (!copy || !llvm::all_of(alloc->getUsers(),
                             [&](Operation *user) { return user == copy.getOperation() || isa<memref::LoadOp>(user); }))
    return false;
  Value source = copy.getSource();
  copy.erase();
  for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
    cast<memref::LoadOp>(user).getMemrefMutable().assign(source);
  alloc.erase();
  return true;
}

} // namespace mlir::la
