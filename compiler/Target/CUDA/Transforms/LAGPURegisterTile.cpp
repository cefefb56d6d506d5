//===- LAGPURegisterTile.cpp - FMA reductions on register tiles of outputs ===//
//
// A reduction left on FMA (f32 entries, and the products la-gpu-contract-to-mma does not take) becomes one
// iteration of a parallel loop per tile of up to 4×4 outputs, whose values stay in registers across the
// reduction loops: each step loads an operand element once for every output of the tile that uses it.
// CUDAPasses.td has the contract.
//
//===----------------------------------------------------------------------===//

#include "Target/CUDA/Transforms/BufferRoots.h"
#include "Target/CUDA/Transforms/CUDAPasses.h"
#include "Target/CUDA/Transforms/StagedOperands.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/Support/Debug.h"

#include <map>

#define DEBUG_TYPE "la-gpu-register-tile"

namespace mlir::la {
#define GEN_PASS_DEF_LAGPUREGISTERTILE
#include "Target/CUDA/Transforms/CUDAPasses.h.inc"

namespace {

constexpr int64_t kWarpSize = 32;

/// A bufferised generic with one output, static ranges, projected-permutation maps, at least one reduction
/// loop, and a body without linalg.index; with the (up to two) parallel loops it blocks and their tile sizes.
struct TiledReduction {
  mutable linalg::GenericOp op; // accessors of an op handle are not const

  SmallVector<int64_t> ranges;
  SmallVector<unsigned> parallel, reduction;
  /// The blocked parallel loops and their tile sizes (a loop not blocked has tile 1).
  SmallVector<int64_t> tile;
  /// Operands read from a copy in a block temporary (StagedOperands.h), by operand number.
  DenseMap<unsigned, Value> staged;

  int64_t outputsPerTile() const {
    int64_t product = 1;
    for (unsigned loop : parallel)
      product *= tile[loop];
    return product;
  }
  int64_t tiles() const {
    int64_t product = 1;
    for (unsigned loop : parallel)
      product *= ranges[loop] / tile[loop];
    return product;
  }
};

std::optional<TiledReduction> match(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 || op->getParentOfType<scf::ParallelOp>())
    return std::nullopt;
  if (!llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) { return map.isProjectedPermutation(); }))
    return std::nullopt;
  if (!op.getBody()->getOps<linalg::IndexOp>().empty())
    return std::nullopt;
  // An input that is the output buffer would read elements the tile has not stored yet.
  Value output = op.getDpsInits().front();
  if (llvm::is_contained(op.getDpsInputs(), output))
    return std::nullopt;
  TiledReduction t;
  t.op = op;
  t.ranges = op.getStaticLoopRanges();
  if (llvm::any_of(t.ranges, ShapedType::isDynamic))
    return std::nullopt;
  for (auto [i, type] : llvm::enumerate(op.getIteratorTypesArray()))
    (linalg::isParallelIterator(type) ? t.parallel : t.reduction).push_back(i);
  if (t.reduction.empty() || t.parallel.empty())
    return std::nullopt;
  t.tile.assign(t.ranges.size(), 1);
  return t;
}

/// Tiles the two largest parallel loops by the largest sizes (4×4 down to 2×1) that divide them and still
/// leave a tile for each thread of the block, or for a quarter of the outputs when there are fewer than
/// four per thread; false when no tile of more than one output qualifies.
bool chooseTiles(TiledReduction &t, int64_t threadsPerBlock) {
  SmallVector<unsigned> byRange(t.parallel);
  llvm::stable_sort(byRange, [&](unsigned a, unsigned b) { return t.ranges[a] > t.ranges[b]; });
  unsigned first = byRange[0];
  std::optional<unsigned> second;
  if (byRange.size() > 1)
    second = byRange[1];
  int64_t outputs = 1;
  for (unsigned loop : t.parallel)
    outputs *= t.ranges[loop];
  int64_t wanted = std::min(threadsPerBlock, std::max<int64_t>(outputs / 4, 1));
  static const std::pair<int64_t, int64_t> sizes[] = {{4, 4}, {4, 2}, {2, 4}, {2, 2}, {4, 1}, {2, 1}};
  for (auto [a, b] : sizes) {
    if (b > 1 && !second)
      continue;
    if (t.ranges[first] % a != 0 || (second && t.ranges[*second] % b != 0))
      continue;
    t.tile[first] = a;
    if (second)
      t.tile[*second] = b;
    if (t.tiles() >= wanted)
      return true;
    t.tile[first] = 1;
    if (second)
      t.tile[*second] = 1;
  }
  return false;
}

/// Emits the loops of one tile: the outputs' registers, the reduction loops, the stores.
class TileEmitter {
public:
  TileEmitter(OpBuilder &b, Location loc, const TiledReduction &t) : b(b), loc(loc), t(t) {}

  void emit(ValueRange tileIvs) {
    // Each output of the tile: its offset within the tile along each parallel loop.
    SmallVector<SmallVector<int64_t>> offsets(1, SmallVector<int64_t>(t.ranges.size(), 0));
    for (unsigned loop : t.parallel) {
      SmallVector<SmallVector<int64_t>> expanded;
      for (const SmallVector<int64_t> &offset : offsets)
        for (int64_t i = 0; i < t.tile[loop]; ++i) {
          expanded.push_back(offset);
          expanded.back()[loop] = i;
        }
      offsets = std::move(expanded);
    }
    SmallVector<Value> base(t.ranges.size());
    for (auto [loop, iv] : llvm::zip(t.parallel, tileIvs))
      base[loop] = arith::MulIOp::create(b, loc, iv, index(t.tile[loop]));

    OpOperand &output = t.op.getDpsInitsMutable()[0];
    SmallVector<Value> accumulators;
    for (const SmallVector<int64_t> &offset : offsets)
      accumulators.push_back(load(output, positions(base, offset, {})));

    SmallVector<Value> reductionIvs;
    SmallVector<Value> results =
        reductionNest(0, accumulators, reductionIvs, [&](ArrayRef<Value> ivs, ValueRange carried) {
          // One load per operand element the tile uses (outputs that share it share the load).
          std::map<std::pair<unsigned, SmallVector<int64_t>>, Value> loaded;
          SmallVector<Value> next;
          for (auto [k, offset] : llvm::enumerate(offsets)) {
            SmallVector<Value> positionsHere = positions(base, offset, ivs);
            IRMapping mapping;
            for (OpOperand *input : t.op.getDpsInputOperands()) {
              unsigned number = input->getOperandNumber();
              std::pair<unsigned, SmallVector<int64_t>> key{number, usedOffsets(*input, offset)};
              auto [it, fresh] = loaded.try_emplace(key, Value());
              if (fresh)
                it->second = load(*input, positionsHere);
              mapping.map(t.op.getMatchingBlockArgument(input), it->second);
            }
            mapping.map(t.op.getMatchingBlockArgument(&output), carried[k]);
            for (Operation &op : t.op.getBody()->without_terminator())
              b.clone(op, mapping);
            auto yield = cast<linalg::YieldOp>(t.op.getBody()->getTerminator());
            next.push_back(mapping.lookupOrDefault(yield.getValues().front()));
          }
          return next;
        });
    for (auto [offset, value] : llvm::zip(offsets, results)) {
      SmallVector<Value> at = indices(output, positions(base, offset, {}));
      memref::StoreOp::create(b, loc, value, output.get(), at);
    }
  }

private:
  OpBuilder &b;
  Location loc;
  const TiledReduction &t;

  Value index(int64_t value) { return arith::ConstantIndexOp::create(b, loc, value); }

  /// The value of every loop at `offset` within the tile (reduction loops from `reductionIvs`, when given).
  SmallVector<Value> positions(ArrayRef<Value> base, ArrayRef<int64_t> offset, ArrayRef<Value> reductionIvs) {
    SmallVector<Value> at(t.ranges.size());
    for (unsigned loop : t.parallel)
      at[loop] = offset[loop] == 0 ? base[loop] : arith::AddIOp::create(b, loc, base[loop], index(offset[loop]));
    for (auto [loop, iv] : llvm::zip(t.reduction, reductionIvs))
      at[loop] = iv;
    return at;
  }

  /// The offsets of the loops `operand` is indexed by (the others do not change which element it reads).
  SmallVector<int64_t> usedOffsets(OpOperand &operand, ArrayRef<int64_t> offset) {
    SmallVector<int64_t> used;
    for (AffineExpr result : t.op.getMatchingIndexingMap(&operand).getResults())
      used.push_back(offset[cast<AffineDimExpr>(result).getPosition()]);
    return used;
  }

  SmallVector<Value> indices(OpOperand &operand, ArrayRef<Value> positionsOfLoops) {
    SmallVector<Value> at;
    for (AffineExpr result : t.op.getMatchingIndexingMap(&operand).getResults())
      at.push_back(positionsOfLoops[cast<AffineDimExpr>(result).getPosition()]);
    return at;
  }

  Value load(OpOperand &operand, ArrayRef<Value> positionsOfLoops) {
    Value source = t.staged.lookup_or(operand.getOperandNumber(), operand.get());
    return memref::LoadOp::create(b, loc, source, indices(operand, positionsOfLoops));
  }

  /// for r_depth ... { body } over the reduction loops, carrying `carried`; returns the final values.
  SmallVector<Value> reductionNest(size_t depth, ValueRange carried, SmallVector<Value> &ivs,
                                   llvm::function_ref<SmallVector<Value>(ArrayRef<Value>, ValueRange)> body) {
    if (depth == t.reduction.size())
      return body(ivs, carried);
    auto loop = scf::ForOp::create(b, loc, index(0), index(t.ranges[t.reduction[depth]]), index(1), carried);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    ivs.push_back(loop.getInductionVar());
    SmallVector<Value> next = reductionNest(depth + 1, loop.getRegionIterArgs(), ivs, body);
    ivs.pop_back();
    scf::YieldOp::create(b, loc, next);
    return SmallVector<Value>(loop.getResults());
  }
};

/// Copies each input that is an argument of the kernel (global memory) and that several tiles read into a
/// temporary first (StagedOperands.h): a tile reads an element once for its outputs, but every tile along a
/// parallel loop the input is not indexed by reads it again. (A chunk-parallel state kernel of f32 causal
/// linear attention, φ(K)^T·V over a 128-position piece in 4×4 tiles: V read by 16 tiles.)
void stageReusedArguments(TiledReduction &t, OpBuilder &b) {
  for (OpOperand *input : t.op.getDpsInputOperands()) {
    auto type = dyn_cast<MemRefType>(input->get().getType());
    if (!type || !type.hasStaticShape() || !isFunctionArgument(rootBuffer(input->get())))
      continue;
    llvm::SmallDenseSet<unsigned> indexedBy;
    for (AffineExpr result : t.op.getMatchingIndexingMap(input).getResults())
      indexedBy.insert(cast<AffineDimExpr>(result).getPosition());
    int64_t readers = 1;
    for (unsigned loop : t.parallel)
      if (!indexedBy.contains(loop))
        readers *= t.ranges[loop] / t.tile[loop];
    if (readers >= 2)
      t.staged[input->getOperandNumber()] = stageInTemporary(b, t.op.getLoc(), input->get());
  }
}

void rewrite(TiledReduction t) {
  OpBuilder b(t.op);
  Location loc = t.op.getLoc();
  stageReusedArguments(t, b);
  SmallVector<Value> lower, upper, steps;
  for (unsigned loop : t.parallel) {
    lower.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    upper.push_back(arith::ConstantIndexOp::create(b, loc, t.ranges[loop] / t.tile[loop]));
    steps.push_back(arith::ConstantIndexOp::create(b, loc, 1));
  }
  scf::ParallelOp::create(b, loc, lower, upper, steps, [&](OpBuilder &nested, Location loc, ValueRange ivs) {
    TileEmitter(nested, loc, t).emit(ivs);
  });
  t.op->erase();
}

struct LAGPURegisterTilePass : impl::LAGPURegisterTileBase<LAGPURegisterTilePass> {
  using Base::Base;

  void runOnOperation() override {
    std::vector<TiledReduction> tiled;
    getOperation().walk([&](linalg::GenericOp op) {
      std::optional<TiledReduction> t = match(op);
      if (t && chooseTiles(*t, warpsPerBlock * kWarpSize))
        tiled.push_back(*t);
    });
    for (const TiledReduction &t : tiled) {
      LLVM_DEBUG(llvm::dbgs() << "la-gpu-register-tile: " << t.outputsPerTile() << " outputs per tile at "
                              << t.op.getLoc() << "\n");
      rewrite(t);
    }
  }
};

} // namespace
} // namespace mlir::la
