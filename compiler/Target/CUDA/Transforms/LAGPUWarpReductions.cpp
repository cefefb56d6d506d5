//===- LAGPUWarpReductions.cpp - a short reduction's long loop over a warp's lanes ===//
//
// la-gpu-distribute-to-threads gives each thread whole output elements of a generic, so a reduction to a few
// elements runs on as many threads: Flow's softmax over 4096 sources, per batch×head one maximum and one
// sum, ran 4096 steps on one thread while the block's other 127 waited at the barrier; a sum over the rows
// of 64 columns ran on half the block. Here such a reduction runs on the block's warps: each output
// element's F lanes (F ≤ 32, within one warp) take every F-th step (consecutive lanes, consecutive steps:
// coalesced along a contiguous dimension) into a partial from the combine's identity, and a butterfly of
// warp shuffles (shfl.sync.bfly) combines the partials, log2(F) steps; the first lane of each element then
// combines it into the output's old value and stores it.
//
//===----------------------------------------------------------------------===//

#include "Target/CUDA/Transforms/CUDAPasses.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/bit.h"

#include <algorithm>
#include <limits>

namespace mlir::la {
#define GEN_PASS_DEF_LAGPUWARPREDUCTIONS
#include "Target/CUDA/Transforms/CUDAPasses.h.inc"

namespace {

constexpr int64_t kWarpSize = 32;

/// A generic that reduces over its loop `reductionLoop` to `elements` output elements, `steps` steps each, by
/// `combine(out, value)`: the one op of its body that reads the output's old value.
struct WarpReduction {
  linalg::GenericOp generic;
  Operation *combine = nullptr;
  BlockArgument out;
  int64_t elements = 1, steps = 0;
  unsigned reductionLoop = 0;
  SmallVector<int64_t> parallelExtents;

  /// The generic's loop indices: `parallel` with `step` in the reduction loop's place.
  SmallVector<Value> loops(ArrayRef<Value> parallel, Value step) const {
    SmallVector<Value> indices(parallel);
    indices.insert(indices.begin() + reductionLoop, step);
    return indices;
  }
};

/// The identity of `combine` on `type`: the value a partial starts from.
std::optional<TypedAttr> identityOf(Operation *combine, FloatType type) {
  const llvm::fltSemantics &semantics = type.getFloatSemantics();
  if (isa<arith::AddFOp>(combine))
    return FloatAttr::get(type, llvm::APFloat::getZero(semantics));
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(combine))
    return FloatAttr::get(type, llvm::APFloat::getInf(semantics, /*Negative=*/true));
  if (isa<arith::MinimumFOp, arith::MinNumFOp>(combine))
    return FloatAttr::get(type, llvm::APFloat::getInf(semantics, /*Negative=*/false));
  return std::nullopt;
}

/// The reduction `generic` is, where lanes pay for it: one loop reduces, every loop is static, every operand
/// is indexed by a projected permutation, its f32 output has at most half as many elements as the block has
/// threads (so each gets two lanes or more) and its steps are at least `minSteps`.
std::optional<WarpReduction> matchWarpReduction(linalg::GenericOp generic, int64_t minSteps, int64_t threads) {
  if (!generic.hasPureBufferSemantics() || generic.getNumDpsInits() != 1 || generic.getNumReductionLoops() != 1)
    return std::nullopt;
  // Inside another parallel loop (a warp's lanes already) the lane loop would run on each thread in turn, and
  // its shuffles would exchange values between threads at different iterations.
  if (generic->getParentOfType<scf::ParallelOp>())
    return std::nullopt;
  if (!llvm::all_of(generic.getIndexingMapsArray(), [](AffineMap map) { return map.isProjectedPermutation(); }))
    return std::nullopt;
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  WarpReduction reduction;
  reduction.generic = generic;
  for (auto [loop, type] : llvm::enumerate(generic.getIteratorTypesArray())) {
    if (type == utils::IteratorType::reduction) {
      reduction.reductionLoop = loop;
      reduction.steps = ranges[loop];
    } else {
      reduction.parallelExtents.push_back(ranges[loop]);
    }
  }
  for (int64_t extent : reduction.parallelExtents)
    reduction.elements *= extent;
  if (reduction.elements > threads / 2 || reduction.steps < minSteps)
    return std::nullopt;
  Block &body = generic.getRegion().front();
  reduction.out = generic.getMatchingBlockArgument(generic.getDpsInitOperand(0));
  auto type = dyn_cast<FloatType>(reduction.out.getType());
  if (!type || !type.isF32() || !reduction.out.hasOneUse())
    return std::nullopt;
  reduction.combine = *reduction.out.getUsers().begin();
  if (reduction.combine->getNumOperands() != 2 || !identityOf(reduction.combine, type) ||
      body.getTerminator()->getOperand(0) != reduction.combine->getResult(0))
    return std::nullopt;
  return reduction;
}

/// `index` in `extents` (row-major, the last fastest) as one coordinate per extent.
SmallVector<Value> delinearise(OpBuilder &b, Location loc, Value index, ArrayRef<int64_t> extents) {
  SmallVector<Value> coordinates(extents.size());
  for (int64_t d = static_cast<int64_t>(extents.size()) - 1; d >= 0; --d) {
    Value extent = arith::ConstantIndexOp::create(b, loc, extents[d]);
    coordinates[d] = d == 0 ? index : arith::RemUIOp::create(b, loc, index, extent).getResult();
    if (d > 0)
      index = arith::DivUIOp::create(b, loc, index, extent);
  }
  return coordinates;
}

/// The operand's indices at the generic's loop indices `loops` (its map is a projected permutation).
SmallVector<Value> operandIndices(AffineMap map, ArrayRef<Value> loops) {
  SmallVector<Value> indices;
  for (unsigned result = 0; result < map.getNumResults(); ++result)
    indices.push_back(loops[map.getDimPosition(result)]);
  return indices;
}

/// The combine's operand that is not the output's old value: the step's value.
Value stepValueOf(const WarpReduction &reduction) {
  return reduction.combine->getOperand(reduction.combine->getOperand(0) == reduction.out ? 1 : 0);
}

/// `combine` (of the reduction's body) on `accumulated` (in the output's place) and `value`.
Value applyCombine(OpBuilder &b, const WarpReduction &reduction, Value accumulated, Value value) {
  IRMapping mapping;
  mapping.map(reduction.out, accumulated);
  mapping.map(stepValueOf(reduction), value);
  return b.clone(*reduction.combine, mapping)->getResult(0);
}

/// The body's value at the generic's loop indices `loops`: its inputs loaded there, everything but the
/// combine cloned, a linalg.index the loop's index.
Value valueAt(OpBuilder &b, Location loc, const WarpReduction &reduction, ArrayRef<Value> loops) {
  linalg::GenericOp generic = reduction.generic;
  IRMapping mapping;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    SmallVector<Value> at = operandIndices(generic.getMatchingIndexingMap(input), loops);
    mapping.map(generic.getMatchingBlockArgument(input), memref::LoadOp::create(b, loc, input->get(), at).getResult());
  }
  for (Operation &op : generic.getRegion().front().without_terminator()) {
    if (&op == reduction.combine)
      continue;
    if (auto position = dyn_cast<linalg::IndexOp>(op))
      mapping.map(position.getResult(), loops[position.getDim()]);
    else
      b.clone(op, mapping);
  }
  return mapping.lookupOrDefault(stepValueOf(reduction));
}

/// Replaces the reduction by scf.parallel (element q, lane j) over (E, F), F = min(32, threads / E): lane j
/// of element q combines steps j, j + F, ... from the identity, the butterfly combines the F partials, and
/// lane 0 stores. la-gpu-distribute-to-threads gives iteration (q, j) to thread q·F + j, so an element's lanes
/// are consecutive threads of one warp, and E·F, a multiple of 32, covers whole warps. Elements past the
/// output's (E rounds it up to a power of two) read the last element's inputs and store nothing: every lane of
/// a warp must take part in the shuffles.
void rewriteOnLanes(const WarpReduction &reduction, int64_t threads) {
  linalg::GenericOp generic = reduction.generic;
  OpBuilder b(generic);
  Location loc = generic.getLoc();
  int64_t roundedElements = static_cast<int64_t>(llvm::bit_ceil(static_cast<uint64_t>(reduction.elements)));
  int64_t lanes = std::min(kWarpSize, threads / roundedElements);
  auto index = [&](int64_t value) -> Value { return arith::ConstantIndexOp::create(b, loc, value); };
  Value zero = index(0), one = index(1);
  auto parallel = scf::ParallelOp::create(b, loc, ValueRange{zero, zero},
                                          ValueRange{index(roundedElements), index(lanes)}, ValueRange{one, one});
  b.setInsertionPointToStart(parallel.getBody());
  Value element = parallel.getInductionVars()[0], lane = parallel.getInductionVars()[1];
  Value clamped = arith::MinUIOp::create(b, loc, element, index(reduction.elements - 1));
  SmallVector<Value> parallelIndices = delinearise(b, loc, clamped, reduction.parallelExtents);
  auto type = cast<FloatType>(reduction.out.getType());
  Value identity = arith::ConstantOp::create(b, loc, *identityOf(reduction.combine, type));

  auto strided =
      scf::ForOp::create(b, loc, lane, index(reduction.steps), index(lanes), ValueRange{identity},
                         [&](OpBuilder &nested, Location loc, Value step, ValueRange carried) {
                           Value value = valueAt(nested, loc, reduction, reduction.loops(parallelIndices, step));
                           scf::YieldOp::create(nested, loc, applyCombine(nested, reduction, carried[0], value));
                         });

  // The butterfly: after the step at distance d every lane holds the combination of its 2d neighbours.
  Value partial = strided.getResult(0);
  Value width = arith::ConstantIntOp::create(b, loc, b.getI32Type(), kWarpSize);
  for (int64_t distance = lanes / 2; distance >= 1; distance /= 2) {
    Value offset = arith::ConstantIntOp::create(b, loc, b.getI32Type(), distance);
    auto shuffle = gpu::ShuffleOp::create(b, loc, partial, offset, width, gpu::ShuffleMode::XOR);
    partial = applyCombine(b, reduction, partial, shuffle.getShuffleResult());
  }

  Value firstLane = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, zero);
  Value realElement = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, element, index(reduction.elements));
  auto store = scf::IfOp::create(b, loc, arith::AndIOp::create(b, loc, firstLane, realElement), false);
  b.setInsertionPoint(store.thenBlock()->getTerminator());
  OpOperand *init = generic.getDpsInitOperand(0);
  SmallVector<Value> at = operandIndices(generic.getMatchingIndexingMap(init), reduction.loops(parallelIndices, zero));
  Value old = memref::LoadOp::create(b, loc, init->get(), at);
  memref::StoreOp::create(b, loc, applyCombine(b, reduction, old, partial), init->get(), at);
  generic.erase();
}

struct LAGPUWarpReductionsPass : impl::LAGPUWarpReductionsBase<LAGPUWarpReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (warpsPerBlock < 1) {
      getOperation().emitError("la-gpu-warp-reductions: warps-per-block must be positive");
      return signalPassFailure();
    }
    int64_t threads = kWarpSize * warpsPerBlock;
    SmallVector<WarpReduction> reductions;
    getOperation().walk([&](linalg::GenericOp generic) {
      if (std::optional<WarpReduction> reduction = matchWarpReduction(generic, minSteps, threads))
        reductions.push_back(*reduction);
    });
    for (const WarpReduction &reduction : reductions)
      rewriteOnLanes(reduction, threads);
  }
};

} // namespace
} // namespace mlir::la
