//===- LAGPUScanLanes.cpp - a chunk's row scans, one lane per element -----===//
//
// A scan along the sequence inside a chunk is a loop over the chunk's rows carrying the running row as a
// vector (what la-to-linalg makes of `la.scan` for the CPU's vector units). On the GPU every thread would
// run that loop whole, thread 0 alone storing; here each element of the row gets a lane of its own, running
// the same loop on scalars. The rewrite is all or nothing per loop: every op of the body must have a scalar
// form at the lane's element (CUDAPasses.td lists them), or the loop is left alone.
//
//===----------------------------------------------------------------------===//

#include "Target/CUDA/Transforms/CUDAPasses.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "la-gpu-scan-lanes"

namespace mlir::la {
#define GEN_PASS_DEF_LAGPUSCANLANES
#include "Target/CUDA/Transforms/CUDAPasses.h.inc"

namespace {

/// Whether `type` is a static memref whose dimensions are all 1 but the innermost, which is `width`.
bool isRowBuffer(Type type, int64_t width) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.hasStaticShape() || memref.getRank() == 0 || memref.getShape().back() != width)
    return false;
  return llvm::all_of(memref.getShape().drop_back(), [](int64_t size) { return size == 1; });
}

/// A whole-row transfer along a memref's innermost dimension: 1-D, in bounds, unmasked.
bool isRowTransfer(VectorTransferOpInterface transfer, int64_t width) {
  VectorType vector = transfer.getVectorType();
  return isa<MemRefType>(transfer.getShapedType()) && vector.getRank() == 1 && vector.getNumElements() == width &&
         !vector.isScalable() && !transfer.getMask() && transfer.getPermutationMap().isMinorIdentity() &&
         transfer.isDimInBounds(0);
}

/// An elementwise generic over row buffers: every loop parallel, every map the identity.
bool isRowGeneric(linalg::GenericOp generic, int64_t width) {
  if (!generic.hasPureBufferSemantics() || generic.getNumReductionLoops() != 0 ||
      !generic.getBody()->getOps<linalg::IndexOp>().empty())
    return false;
  return llvm::all_of(generic.getIndexingMapsArray(), [](AffineMap map) { return map.isIdentity(); }) &&
         llvm::all_of(generic->getOperands(), [&](Value operand) { return isRowBuffer(operand.getType(), width); });
}

bool isSplatConstant(Operation *op) {
  auto constant = dyn_cast<arith::ConstantOp>(op);
  auto dense = constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
  return dense && dense.isSplat();
}

/// Whether every op of `loop`'s body has a scalar form at one element of a row of `width`.
bool hasScalarForm(scf::ForOp loop, int64_t width) {
  auto vectorOfRow = [&](Type type) {
    auto vector = dyn_cast<VectorType>(type);
    return vector && vector.getRank() == 1 && vector.getNumElements() == width;
  };
  for (Operation &op : loop.getBody()->without_terminator()) {
    // A vector from outside the loop (a loop-invariant row, positions) has no scalar at the lane here.
    for (Value operand : op.getOperands())
      if (isa<VectorType>(operand.getType()) && operand.getParentBlock() != loop.getBody()) {
        LLVM_DEBUG(llvm::dbgs() << "a vector from outside the loop: " << op << "\n");
        return false;
      }
    if (isa<memref::SubViewOp>(op) || isSplatConstant(&op))
      continue;
    if (auto generic = dyn_cast<linalg::GenericOp>(op); generic && isRowGeneric(generic, width))
      continue;
    if (auto transfer = dyn_cast<VectorTransferOpInterface>(op); transfer && isRowTransfer(transfer, width))
      continue;
    if (auto copy = dyn_cast<memref::CopyOp>(op);
        copy && isRowBuffer(copy.getSource().getType(), width) && isRowBuffer(copy.getTarget().getType(), width))
      continue;
    bool elementwise = OpTrait::hasElementwiseMappableTraits(&op) && op.getNumRegions() == 0 &&
                       isa<arith::ArithDialect, math::MathDialect>(op.getDialect()) &&
                       llvm::all_of(op.getOperandTypes(), vectorOfRow) &&
                       llvm::all_of(op.getResultTypes(), vectorOfRow);
    if (!elementwise) {
      LLVM_DEBUG(llvm::dbgs() << "no scalar form: " << op << "\n");
      return false;
    }
  }
  return true;
}

/// `indices`, each through `scalars` where it maps, with the lane added to the last.
SmallVector<Value> atLane(OpBuilder &b, Location loc, ValueRange indices, Value lane, const IRMapping &scalars = {}) {
  SmallVector<Value> shifted = llvm::map_to_vector(indices, [&](Value v) { return scalars.lookupOrDefault(v); });
  shifted.back() = arith::AddIOp::create(b, loc, shifted.back(), lane);
  return shifted;
}

/// The scalar of a splat constant (isSplatConstant).
Value splatScalar(OpBuilder &b, Location loc, Operation *splat) {
  auto dense = cast<DenseElementsAttr>(cast<arith::ConstantOp>(splat).getValue());
  return arith::ConstantOp::create(b, loc, dense.getSplatValue<TypedAttr>());
}

/// Indices of the lane's element in a row buffer: zeros, then the lane.
SmallVector<Value> rowElement(OpBuilder &b, Location loc, Value buffer, Value lane) {
  unsigned rank = cast<MemRefType>(buffer.getType()).getRank();
  SmallVector<Value> indices(rank - 1, arith::ConstantIndexOp::create(b, loc, 0));
  indices.push_back(lane);
  return indices;
}

/// A copy from a view onto the same view (what bufferisation leaves of a row updated in place) moves nothing.
bool copiesOntoItself(memref::CopyOp copy) {
  if (copy.getSource() == copy.getTarget())
    return true;
  Operation *source = copy.getSource().getDefiningOp(), *target = copy.getTarget().getDefiningOp();
  return source && target && isa<memref::SubViewOp>(source) &&
         OperationEquivalence::isEquivalentTo(source, target, OperationEquivalence::IgnoreLocations);
}

/// Clones `op` of the body at the lane's element; vector values map to their scalars through `scalars`.
void cloneAtLane(OpBuilder &b, Operation &op, Value lane, IRMapping &scalars) {
  Location loc = op.getLoc();
  if (auto read = dyn_cast<vector::TransferReadOp>(op)) {
    scalars.map(read.getResult(), memref::LoadOp::create(b, loc, scalars.lookupOrDefault(read.getBase()),
                                                         atLane(b, loc, read.getIndices(), lane, scalars)));
    return;
  }
  if (auto write = dyn_cast<vector::TransferWriteOp>(op)) {
    memref::StoreOp::create(b, loc, scalars.lookup(write.getVector()), scalars.lookupOrDefault(write.getBase()),
                            atLane(b, loc, write.getIndices(), lane, scalars));
    return;
  }
  if (auto copy = dyn_cast<memref::CopyOp>(op)) {
    if (copiesOntoItself(copy))
      return;
    Value source = scalars.lookupOrDefault(copy.getSource()), target = scalars.lookupOrDefault(copy.getTarget());
    Value element = memref::LoadOp::create(b, loc, source, rowElement(b, loc, source, lane));
    memref::StoreOp::create(b, loc, element, target, rowElement(b, loc, target, lane));
    return;
  }
  if (auto generic = dyn_cast<linalg::GenericOp>(op)) {
    // The body may read the loop's row (causal Flow's position n_t): it maps as the rest of the loop does.
    IRMapping body = scalars;
    Block *block = generic.getBody();
    for (auto [operand, argument] : llvm::zip(generic->getOperands(), block->getArguments())) {
      Value buffer = scalars.lookupOrDefault(operand);
      if (!argument.use_empty())
        body.map(argument, memref::LoadOp::create(b, loc, buffer, rowElement(b, loc, buffer, lane)));
    }
    for (Operation &inner : block->without_terminator())
      b.clone(inner, body);
    for (auto [yielded, output] : llvm::zip(block->getTerminator()->getOperands(), generic.getDpsInits())) {
      Value buffer = scalars.lookupOrDefault(output);
      memref::StoreOp::create(b, loc, body.lookupOrDefault(yielded), buffer, rowElement(b, loc, buffer, lane));
    }
    return;
  }
  if (isSplatConstant(&op)) {
    scalars.map(op.getResult(0), splatScalar(b, loc, &op));
    return;
  }
  if (isa<memref::SubViewOp>(op)) {
    b.clone(op, scalars);
    return;
  }
  // An elementwise arith or math op: the same op on the elements.
  Operation *scalar = b.clone(op, scalars);
  for (OpResult result : scalar->getResults())
    result.setType(cast<VectorType>(result.getType()).getElementType());
}

/// The loop's carried row at the lane: a load of the read it starts from, or the splat's value.
Value initialAtLane(OpBuilder &b, Location loc, Value init, Value lane) {
  if (auto read = init.getDefiningOp<vector::TransferReadOp>())
    return memref::LoadOp::create(b, loc, read.getBase(), atLane(b, loc, read.getIndices(), lane));
  return splatScalar(b, loc, init.getDefiningOp());
}

/// Whether `read` is in `loop`'s block and no op between them may write memory: each lane then reads its
/// element of the start at the loop instead.
bool nothingWritesBetween(vector::TransferReadOp read, scf::ForOp loop) {
  if (read->getBlock() != loop->getBlock())
    return false;
  for (Operation *op = read->getNextNode(); op && op != loop.getOperation(); op = op->getNextNode()) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects || effects.hasEffect<MemoryEffects::Write>())
      return false;
  }
  return true;
}

/// The width of the row `loop` scans, or 0 where it is not such a loop.
int64_t scannedWidth(scf::ForOp loop) {
  if (loop.getNumRegionIterArgs() != 1 || !loop->use_empty())
    return 0;
  auto row = dyn_cast<VectorType>(loop.getRegionIterArgs()[0].getType());
  if (!row || row.getRank() != 1 || row.isScalable())
    return 0;
  int64_t width = row.getNumElements();
  Value init = loop.getInitArgs()[0];
  auto read = init.getDefiningOp<vector::TransferReadOp>();
  bool startsFromRow = read && isRowTransfer(read, width) && nothingWritesBetween(read, loop);
  bool startsFromSplat = init.getDefiningOp() && isSplatConstant(init.getDefiningOp());
  if (!startsFromRow && !startsFromSplat)
    return 0;
  return hasScalarForm(loop, width) ? width : 0;
}

void runOnLanes(scf::ForOp loop, int64_t width) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value lanes = arith::ConstantIndexOp::create(b, loc, width);
  scf::ParallelOp::create(
      b, loc, ValueRange{zero}, ValueRange{lanes}, ValueRange{one}, [&](OpBuilder &pb, Location, ValueRange ivs) {
        Value lane = ivs[0];
        Value start = initialAtLane(pb, loc, loop.getInitArgs()[0], lane);
        scf::ForOp::create(pb, loc, loop.getLowerBound(), loop.getUpperBound(), loop.getStep(), ValueRange{start},
                           [&](OpBuilder &fb, Location, Value row, ValueRange carried) {
                             IRMapping scalars;
                             scalars.map(loop.getInductionVar(), row);
                             scalars.map(loop.getRegionIterArgs()[0], carried[0]);
                             for (Operation &op : loop.getBody()->without_terminator())
                               cloneAtLane(fb, op, lane, scalars);
                             Value next = scalars.lookup(loop.getBody()->getTerminator()->getOperand(0));
                             scf::YieldOp::create(fb, loc, next);
                           });
        scf::ReduceOp::create(pb, loc);
      });
  Operation *start = loop.getInitArgs()[0].getDefiningOp();
  loop.erase();
  if (start && start->use_empty())
    start->erase();
}

struct LAGPUScanLanesPass : impl::LAGPUScanLanesBase<LAGPUScanLanesPass> {
  void runOnOperation() override {
    SmallVector<std::pair<scf::ForOp, int64_t>> scans;
    getOperation().walk([&](scf::ForOp loop) {
      if (int64_t width = scannedWidth(loop))
        scans.push_back({loop, width});
    });
    for (auto [loop, width] : scans) {
      LLVM_DEBUG(llvm::dbgs() << "row scan of " << width << " on lanes: " << loop.getLoc() << "\n");
      runOnLanes(loop, width);
    }
  }
};

} // namespace
} // namespace mlir::la
