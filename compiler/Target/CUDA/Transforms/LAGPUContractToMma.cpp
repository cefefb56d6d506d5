//===- LAGPUContractToMma.cpp - contractions on tensor cores (mma.sync) ---===//
//
// One warp per row of 16×8 output tiles (tilesPerWarp of them side by side), k stepped by the mma shape;
// CUDAPasses.td has the contract. The A and B fragments are la_gpu.mma_fragment ops (LAGPUOps.td has their
// layouts), lowered once placement is known. The accumulator's coordinates are the PTX ISA's for
// mma.m16n8k16 and mma.m16n8k8: with g = lane / 4 and t = lane % 4,
//   C register r, element e:  row g + 8·r,  column 2·t + e  (2 registers of 2 f32)
//
//===----------------------------------------------------------------------===//

#include "Target/CUDA/IR/LAGPUDialect.h"
#include "Target/CUDA/Transforms/BufferRoots.h"
#include "Target/CUDA/Transforms/CUDAPasses.h"
#include "Target/CUDA/Transforms/StagedOperands.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "la-gpu-contract-to-mma"

namespace mlir::la {
#define GEN_PASS_DEF_LAGPUCONTRACTTOMMA
#include "Target/CUDA/Transforms/CUDAPasses.h.inc"

namespace {

constexpr int64_t kWarpSize = 32, kTileM = 16, kTileN = 8;

/// The mma.sync form the contractions of one entry run on.
struct MmaForm {
  /// f16, bf16, or f32 read as tf32.
  Type operandType;
  /// The k of the instruction: 16 for f16/bf16, 8 for tf32.
  int64_t k;
  /// Operand elements per 32-bit register.
  int64_t perRegister;
  bool tf32;
};

/// The form `mode` asks for, given the element types of the entry's arguments; none keeps FMA.
std::optional<MmaForm> chooseForm(func::FuncOp func, llvm::StringRef mode) {
  if (mode == "off")
    return std::nullopt;
  bool hasF16 = false, hasBF16 = false;
  for (Type type : func.getArgumentTypes())
    if (auto shaped = dyn_cast<ShapedType>(type)) {
      hasF16 |= shaped.getElementType().isF16();
      hasBF16 |= shaped.getElementType().isBF16();
    }
  Builder b(func.getContext());
  if (hasF16)
    return MmaForm{b.getF16Type(), 16, 2, false};
  if (hasBF16)
    return MmaForm{b.getBF16Type(), 16, 2, false};
  if (mode == "tf32")
    return MmaForm{b.getF32Type(), 8, 1, true};
  return std::nullopt;
}

/// A contraction C(m, n) += A(m, k) · B(k, n) with static sizes, every other loop of size 1.
struct Contraction {
  /// An op handle (a pointer): mutable so that a const Contraction can still query it.
  mutable linalg::LinalgOp op;
  unsigned mLoop, nLoop, kLoop;
  int64_t m, n, k;
  /// 16×8 tiles side by side along n that one warp computes: it gathers its A fragment once per k step
  /// for all of them (a warp per tile would gather it once per tile).
  int64_t tilesPerWarp = 1;

  int64_t tilesM() const { return llvm::divideCeil(m, kTileM); }
  int64_t tilesN() const { return llvm::divideCeil(n, kTileN); }
  /// Warps the contraction runs on: each owns one row of tiles' group of tilesPerWarp columns.
  int64_t warps() const { return tilesM() * (tilesN() / tilesPerWarp); }
};

/// The most tiles per warp (a divisor of the tile columns, at most 8: 8 accumulators of 4 registers) that
/// still leaves a warp for each of the block's `warpsPerBlock`.
int64_t chooseTilesPerWarp(const Contraction &c, int64_t warpsPerBlock) {
  int64_t best = 1;
  for (int64_t w = 2; w <= std::min<int64_t>(c.tilesN(), 8); ++w)
    if (c.tilesN() % w == 0 && c.tilesM() * (c.tilesN() / w) >= warpsPerBlock)
      best = w;
  return best;
}

/// `op` as a contraction the tensor cores can run, or why not (for LLVM_DEBUG).
FailureOr<Contraction> matchContraction(linalg::LinalgOp op, const MmaForm &form) {
  auto reject = [&](const char *why) {
    LLVM_DEBUG(llvm::dbgs() << "la-gpu-contract-to-mma: FMA for " << op->getName() << " at " << op.getLoc() << ": "
                            << why << "\n");
    return failure();
  };
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return reject("not two buffer inputs and one output");
  if (!linalg::isaContractionOpInterface(op))
    return reject("not a multiply-add contraction");
  FailureOr<linalg::ContractionDimensions> dims = linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 || dims->k.size() != 1)
    return reject("not exactly one m, one n and one k dimension");
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return reject("dynamic loop ranges");
  if (llvm::any_of(dims->batch, [&](unsigned loop) { return ranges[loop] != 1; }))
    return reject("a batch dimension larger than 1");
  if (!llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) { return map.isProjectedPermutation(); }))
    return reject("an indexing map that is not a projected permutation");
  if (!getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType()).isF32())
    return reject("the output is not f32");
  for (OpOperand *input : op.getDpsInputOperands())
    if (!isa<FloatType>(getElementTypeOrSelf(input->get().getType())))
      return reject("an input is not floating-point");
  Contraction c{op, dims->m.front(), dims->n.front(), dims->k.front(), 0, 0, 0};
  c.m = ranges[c.mLoop];
  c.n = ranges[c.nLoop];
  c.k = ranges[c.kLoop];
  // Smaller ones would be mostly padding: a 16×8 tile costs the same mma whatever part of it is real.
  if (c.m < kTileM || c.n < kTileN || c.k < form.k)
    return reject("smaller than one mma tile");
  return c;
}

/// Contractions that accumulate, one after the other, into one output with the same tiles: one lane loop
/// runs them all, keeping the accumulators in registers from the first k loop to the last, where a loop per
/// contraction would store the output and load it back between them. When the output was just filled with
/// zeros, the accumulators start at zero and the fill goes: the chain writes every element of it. Likewise
/// when the output was just copied from another buffer (a state variant's S0 + φ(K)ᵀV: bufferisation copies
/// the read-only S0 into the result first): the accumulators start from the copy's source and the copy goes,
/// which saves the output's round trip through memory.
struct ContractionChain {
  SmallVector<Contraction> links;
  linalg::FillOp zeroFill;
  memref::CopyOp initialCopy;
  /// The initial copy's source.
  Value initialSource;
  /// Operands read from another buffer than their own, by the operand they replace: a staged copy of an
  /// argument (stageReusedArguments), or the staged copy of the narrow input that their own buffer widened
  /// or mapped (MappedSources).
  DenseMap<OpOperand *, Value> readFrom;
  /// The generic whose body maps each element an operand reads from `readFrom` (MappedSources).
  DenseMap<OpOperand *, linalg::GenericOp> mappedBy;
  /// The elementwise generic that is the only reader of the chain's output, applied to each accumulator
  /// element as it is stored (findEpilogue); null when the accumulators are stored as they are.
  linalg::GenericOp epilogue;
};

/// Which of the output's dimensions is m, n or neither, in order: two contractions with the same pattern
/// put C(m, n) at the same place.
SmallVector<int> outputPattern(const Contraction &c) {
  AffineMap map = c.op.getMatchingIndexingMap(c.op.getDpsInitOperand(0));
  SmallVector<int> pattern;
  for (unsigned result = 0; result < map.getNumResults(); ++result) {
    unsigned loop = map.getDimPosition(result);
    pattern.push_back(loop == c.mLoop ? 0 : loop == c.nLoop ? 1 : 2);
  }
  return pattern;
}

/// Whether `op` (or an op nested in it) may write a buffer of `root`, or reads one when `readsCount`.
bool touches(Operation *op, Value root, bool readsCount) {
  WalkResult walk = op->walk([&](Operation *nested) {
    for (Value operand : nested->getOperands()) {
      if (!isa<MemRefType>(operand.getType()) || rootBuffer(operand) != root)
        continue;
      if (isa<ViewLikeOpInterface>(nested))
        continue;
      auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
      if (!effects || hasEffect<MemoryEffects::Write>(nested, operand) ||
          (readsCount && hasEffect<MemoryEffects::Read>(nested, operand)))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return walk.wasInterrupted();
}

/// Whether `first` can run right before `second`, later in its block: no op between them touches
/// `first`'s output or writes its inputs (every buffer involved a distinct root, so roots decide aliasing).
bool canSinkTo(const Contraction &first, Operation *second) {
  Value output = rootBuffer(first.op.getDpsInitOperand(0)->get());
  SmallVector<Value> inputs;
  for (OpOperand *input : first.op.getDpsInputOperands())
    inputs.push_back(rootBuffer(input->get()));
  if (!isDistinctRoot(output) || !llvm::all_of(inputs, isDistinctRoot))
    return false;
  for (Operation *op = first.op->getNextNode(); op != second; op = op->getNextNode())
    if (touches(op, output, /*readsCount=*/true) ||
        llvm::any_of(inputs, [&](Value input) { return touches(op, input, /*readsCount=*/false); }))
      return false;
  return true;
}

/// Whether `next` can join `chain`: same block, later, same output buffer, tiles and layout of C, and
/// nothing in between that running every link at `next` would reorder against.
bool extendsChain(const ContractionChain &chain, const Contraction &next) {
  const Contraction &last = chain.links.back();
  return last.op->getBlock() == next.op->getBlock() && last.op->isBeforeInBlock(next.op) &&
         last.op.getDpsInitOperand(0)->get() == next.op.getDpsInitOperand(0)->get() && last.m == next.m &&
         last.n == next.n && last.tilesPerWarp == next.tilesPerWarp && outputPattern(last) == outputPattern(next) &&
         llvm::all_of(chain.links, [&](const Contraction &link) { return canSinkTo(link, next.op); });
}

/// The fill of zeros right before `c` into exactly its output, if there is one.
linalg::FillOp zeroFillBefore(const Contraction &c) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(c.op->getPrevNode());
  if (!fill || !fill.hasPureBufferSemantics() || fill.getDpsInitOperand(0)->get() != c.op.getDpsInitOperand(0)->get())
    return {};
  return matchPattern(fill.getInputs().front(), m_AnyZeroFloat()) ? fill : linalg::FillOp();
}

/// The copy right before `c` into exactly its output from another buffer of the same type, if there is one.
memref::CopyOp copyBefore(const Contraction &c) {
  auto copy = dyn_cast_or_null<memref::CopyOp>(c.op->getPrevNode());
  Value output = c.op.getDpsInitOperand(0)->get();
  if (!copy || copy.getTarget() != output || copy.getSource().getType() != output.getType())
    return {};
  Value source = rootBuffer(copy.getSource());
  if (!isDistinctRoot(source) || source == rootBuffer(output))
    return {};
  return copy;
}

/// Whether `chain` may start its accumulators from its initial copy's source where it runs, at its last link:
/// nothing from the copy to there writes the source.
bool sourceSurvivesToChain(const ContractionChain &chain) {
  Value source = rootBuffer(chain.initialSource);
  Operation *end = chain.links.back().op.getOperation();
  for (Operation *op = chain.initialCopy->getNextNode(); op && op != end; op = op->getNextNode())
    if (touches(op, source, /*readsCount=*/false))
      return false;
  return true;
}

/// `contractions` (in program order, their tiles chosen) grouped into chains.
SmallVector<ContractionChain> formChains(ArrayRef<Contraction> contractions) {
  SmallVector<ContractionChain> chains;
  for (const Contraction &c : contractions) {
    auto joined = llvm::find_if(chains, [&](const ContractionChain &chain) { return extendsChain(chain, c); });
    if (joined != chains.end()) {
      joined->links.push_back(c);
      continue;
    }
    ContractionChain chain;
    chain.links.push_back(c);
    chain.zeroFill = zeroFillBefore(c);
    if (!chain.zeroFill)
      chain.initialCopy = copyBefore(c);
    if (chain.initialCopy)
      chain.initialSource = chain.initialCopy.getSource();
    chains.push_back(std::move(chain));
  }
  for (ContractionChain &chain : chains)
    if (chain.initialCopy && !sourceSurvivesToChain(chain))
      chain.initialCopy = nullptr, chain.initialSource = nullptr;
  return chains;
}

/// Whether `op` writes all of `alloc` without reading it: a fill, or a generic whose only operand on
/// `alloc` is its output, written whole (identity map, no reduction) without its old value.
bool overwrites(linalg::LinalgOp op, memref::AllocOp alloc) {
  if (op.getNumDpsInits() != 1 || op.getDpsInitOperand(0)->get() != alloc.getResult() ||
      llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *input) { return input->get() == alloc.getResult(); }))
    return false;
  if (isa<linalg::FillOp>(op))
    return true;
  return isa<linalg::GenericOp>(op) && op.getNumReductionLoops() == 0 &&
         op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity() &&
         !op.payloadUsesValueFromOperand(op.getDpsInitOperand(0));
}

/// Whether `op` or an op nested in it uses `alloc`.
bool usesBuffer(Operation *op, memref::AllocOp alloc) {
  return llvm::any_of(alloc->getUsers(), [&](Operation *user) { return op->isAncestor(user); });
}

/// Whether `generic`'s body computes each result element from its inputs' elements alone: pure ops without
/// regions, never the output's old value.
bool isElementwiseBody(linalg::GenericOp generic) {
  Block &body = generic.getRegion().front();
  for (OpOperand &init : generic.getDpsInitsMutable())
    if (generic.payloadUsesValueFromOperand(&init))
      return false;
  return llvm::all_of(body.without_terminator(), [](Operation &op) { return isPure(&op) && op.getNumRegions() == 0; });
}

/// The elementwise generic that reads the chain's output, when it is the output's only reader and the chain
/// can run where it is: its accumulators then go through the generic's body on their way to its output,
/// and the output itself (an f32 temporary) is never stored. Linear attention's numerator φ(Q)·S,
/// normalised by its denominator and rounded to f16: a [N, Dv] f32 tensor in global scratch, written and
/// read back, at N ≥ 1024 (at N=256 it fits shared memory).
linalg::GenericOp findEpilogue(const ContractionChain &chain) {
  const Contraction &c = chain.links.front();
  Value output = c.op.getDpsInitOperand(0)->get();
  auto alloc = output.getDefiningOp<memref::AllocOp>();
  linalg::FillOp zeroFill = chain.zeroFill;
  if (!alloc || !zeroFill)
    return {};
  // The output's value from the zero fill on (bufferisation may give its buffer to other values before
  // and after): the links, then one generic that reads it, then nothing until it is overwritten.
  Block *block = zeroFill->getBlock();
  if (llvm::any_of(alloc->getUsers(), [&](Operation *user) { return !block->findAncestorOpInBlock(*user); }))
    return {};
  linalg::GenericOp epilogue;
  for (Operation *op = zeroFill->getNextNode(); op; op = op->getNextNode()) {
    if (!usesBuffer(op, alloc) ||
        llvm::any_of(chain.links, [&](const Contraction &link) { return link.op.getOperation() == op; }))
      continue;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (epilogue && linalgOp && overwrites(linalgOp, alloc))
      break;
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (epilogue || !generic)
      return {};
    epilogue = generic;
  }
  Operation *last = chain.links.back().op;
  if (!epilogue || !last->isBeforeInBlock(epilogue) || epilogue.getNumDpsInits() != 1 ||
      !epilogue.hasPureBufferSemantics() || epilogue.getNumReductionLoops() != 0 || !isElementwiseBody(epilogue) ||
      epilogue.getNumLoops() != static_cast<unsigned>(alloc.getType().getRank()) ||
      epilogue.getDpsInitOperand(0)->get() == output ||
      !epilogue.getMatchingIndexingMap(epilogue.getDpsInitOperand(0)).isIdentity() ||
      cast<MemRefType>(epilogue.getDpsInitOperand(0)->get().getType()).getShape() != alloc.getType().getShape() ||
      !llvm::all_of(epilogue.getIndexingMapsArray(), [](AffineMap map) { return map.isProjectedPermutation(); }))
    return {};
  for (OpOperand *input : epilogue.getDpsInputOperands())
    if (input->get() == output && !epilogue.getMatchingIndexingMap(input).isIdentity())
      return {};
  // Lanes store the epilogue's result while others still read the chain's operands and the epilogue's
  // inputs: it must not be one of them (but an input it reads at the same element, which only that lane
  // touches).
  Value result = rootBuffer(epilogue.getDpsInitOperand(0)->get());
  if (!isDistinctRoot(result))
    return {};
  for (const Contraction &link : chain.links)
    for (OpOperand *input : link.op.getDpsInputOperands())
      if (rootBuffer(input->get()) == result)
        return {};
  for (OpOperand *input : epilogue.getDpsInputOperands())
    if (rootBuffer(input->get()) == result && !epilogue.getMatchingIndexingMap(input).isIdentity())
      return {};
  if (!llvm::all_of(chain.links, [&](const Contraction &link) { return canSinkTo(link, epilogue); }))
    return {};
  return epilogue;
}

/// Emits one lane's part of a chain's tiles: its accumulators, a k loop per contraction of operand fragments
/// (la_gpu.mma_fragment) and mma.sync, and the stores.
class TileEmitter {
public:
  TileEmitter(OpBuilder &b, Location loc, const ContractionChain &chain, const MmaForm &form)
      : b(b), loc(loc), chain(chain), c(chain.links.front()), form(form) {}

  void emit(Value iteration) {
    Value lane = rem(iteration, kWarpSize);
    Value warp = div(iteration, kWarpSize);
    int64_t groupsN = c.tilesN() / c.tilesPerWarp;
    Value rowBase = mul(div(warp, groupsN), kTileM), groupBase = mul(rem(warp, groupsN), kTileN * c.tilesPerWarp);
    Value group = div(lane, 4), inGroup = rem(lane, 4);
    Value row = add(rowBase, group);
    // Tile j of the warp covers columns groupBase + 8j ..: its B fragment's and the lane's C columns.
    auto colBase = [&](int64_t j) { return add(groupBase, kTileN * j); };

    // C: rows g and g+8, columns 2t and 2t+1 of each tile.
    auto cType = VectorType::get({2, 2}, b.getF32Type());
    SmallVector<Value> accumulators;
    for (int64_t j = 0; j < c.tilesPerWarp; ++j) {
      Value cCol = add(colBase(j), mul(inGroup, 2));
      Value acc = zeroOf(cType);
      if (!chain.zeroFill)
        forEachC(
            [&](int64_t r, int64_t e) { acc = insert(loadAccumulator(add(row, 8 * r), add(cCol, e)), acc, r, e); });
      accumulators.push_back(acc);
    }
    for (const Contraction &link : chain.links)
      accumulators = emitKLoop(link, accumulators, lane, rowBase, colBase);
    for (int64_t j = 0; j < c.tilesPerWarp; ++j) {
      Value acc = accumulators[j], cCol = add(colBase(j), mul(inGroup, 2));
      forEachC([&](int64_t r, int64_t e) {
        storeElement(vector::ExtractOp::create(b, loc, acc, ArrayRef<int64_t>{r, e}), add(row, 8 * r), add(cCol, e));
      });
    }
  }

private:
  /// The k loop of one contraction of the chain, from `accumulators` (one per tile of the warp).
  template <typename ColBase>
  SmallVector<Value> emitKLoop(const Contraction &link, ValueRange accumulators, Value lane, Value rowBase,
                               ColBase colBase) {
    int64_t steps = llvm::divideCeil(link.k, form.k);
    auto loop = scf::ForOp::create(b, loc, zero(), index(steps), index(1), accumulators);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kBase = mul(loop.getInductionVar(), form.k);
    auto aType = VectorType::get({4, form.perRegister}, form.operandType);
    auto bType = VectorType::get({2, form.perRegister}, form.operandType);
    Value a = fragment(link, *link.op.getDpsInputOperand(0), link.mLoop, rowBase, kBase, lane, aType);
    SmallVector<Value> products;
    for (int64_t j = 0; j < link.tilesPerWarp; ++j) {
      Value bFrag = fragment(link, *link.op.getDpsInputOperand(1), link.nLoop, colBase(j), kBase, lane, bType);
      products.push_back(nvgpu::MmaSyncOp::create(b, loc, a, bFrag, loop.getRegionIterArgs()[j],
                                                  ArrayRef<int64_t>{kTileM, kTileN, form.k}, form.tf32));
    }
    scf::YieldOp::create(b, loc, products);
    return SmallVector<Value>(loop.getResults());
  }

  /// The lane's fragment of `operand` for the tile at (rowOrigin, kOrigin), `rowLoop` being m for A and n
  /// for B. la-gpu-lower-mma-fragments chooses ldmatrix or per-element loads once placement is known.
  Value fragment(const Contraction &link, OpOperand &operand, unsigned rowLoop, Value rowOrigin, Value kOrigin,
                 Value lane, VectorType type) {
    AffineMap map = link.op.getMatchingIndexingMap(&operand);
    SmallVector<Value> origin;
    int64_t rowDim = -1, kDim = -1;
    for (unsigned result = 0; result < map.getNumResults(); ++result) {
      unsigned loop = map.getDimPosition(result);
      if (loop == rowLoop) {
        rowDim = result;
        origin.push_back(rowOrigin);
      } else if (loop == link.kLoop) {
        kDim = result;
        origin.push_back(kOrigin);
      } else { // a batch loop of size 1
        origin.push_back(zero());
      }
    }
    auto fragment = lagpu::MmaFragmentOp::create(b, loc, type, chain.readFrom.lookup_or(&operand, operand.get()),
                                                 origin, lane, rowDim, kDim);
    if (linalg::GenericOp map = chain.mappedBy.lookup(&operand))
      buildMap(fragment, map);
    return fragment;
  }

  /// `fragment`'s map region: a clone of `generic`'s body on one element of its input, with a clone of each
  /// constant the body reads from outside it (the region then holds all it needs wherever the fragment is
  /// moved, into a kernel's body by la-gpu-outline-slice-kernel).
  void buildMap(lagpu::MmaFragmentOp fragment, linalg::GenericOp generic) {
    OpBuilder::InsertionGuard guard(b);
    Block &body = generic.getRegion().front();
    Block *map = b.createBlock(&fragment.getMap(), {}, body.getArgument(0).getType(), loc);
    IRMapping mapping;
    mapping.map(body.getArgument(0), map->getArgument(0));
    for (Operation &op : body.without_terminator()) {
      for (Value operand : op.getOperands())
        if (Operation *def = operand.getDefiningOp(); def && def->getBlock() != &body && !mapping.contains(operand))
          b.clone(*def, mapping);
      b.clone(op, mapping);
    }
    lagpu::YieldOp::create(b, loc, mapping.lookupOrDefault(cast<linalg::YieldOp>(body.getTerminator()).getOperand(0)));
  }

  OpBuilder &b;
  Location loc;
  const ContractionChain &chain;
  /// The chain's first link: every link has its m, n, tiles and output.
  const Contraction &c;
  const MmaForm &form;

  Value zeroOf(Type type) { return arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(type))); }
  Value index(int64_t value) { return arith::ConstantIndexOp::create(b, loc, value); }
  Value zero() { return index(0); }
  Value add(Value x, int64_t y) { return y == 0 ? x : add(x, index(y)); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, int64_t y) { return arith::MulIOp::create(b, loc, x, index(y)); }
  Value div(Value x, int64_t y) { return arith::DivUIOp::create(b, loc, x, index(y)); }
  Value rem(Value x, int64_t y) { return arith::RemUIOp::create(b, loc, x, index(y)); }
  Value insert(Value element, Value vector, int64_t r, int64_t e) {
    return vector::InsertOp::create(b, loc, element, vector, ArrayRef<int64_t>{r, e});
  }
  template <typename F> void forEachC(F f) {
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t e = 0; e < 2; ++e)
        f(r, e);
  }

  /// The indices of output[m, n], each clamped into range where its loop is ragged, and whether both were in
  /// range (null when neither loop is ragged).
  std::pair<SmallVector<Value>, Value> outputIndices(Value m, Value n) {
    AffineMap map = c.op.getMatchingIndexingMap(c.op.getDpsInitOperand(0));
    SmallVector<Value> indices;
    Value inBounds;
    for (unsigned result = 0; result < map.getNumResults(); ++result) {
      unsigned loop = map.getDimPosition(result);
      if (loop != c.mLoop && loop != c.nLoop) { // a batch loop of size 1
        indices.push_back(zero());
        continue;
      }
      Value position = loop == c.mLoop ? m : n;
      int64_t extent = loop == c.mLoop ? c.m : c.n, tile = loop == c.mLoop ? kTileM : kTileN;
      if (extent % tile != 0) {
        Value last = index(extent - 1);
        Value fits = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, position, last);
        inBounds = inBounds ? arith::AndIOp::create(b, loc, inBounds, fits).getResult() : fits;
        position = arith::MinUIOp::create(b, loc, position, last);
      }
      indices.push_back(position);
    }
    return {indices, inBounds};
  }

  /// output[m, n] as the accumulator starts, or zero past a ragged edge. Unlike an operand, it is not read
  /// from a clamped address: that address is another lane's output, which it stores after the mma, a race
  /// (the emulator's race check finds it once the output is in shared memory).
  Value loadAccumulator(Value m, Value n) {
    Value from = chain.initialSource ? chain.initialSource : c.op.getDpsInitOperand(0)->get();
    auto [indices, inBounds] = outputIndices(m, n);
    if (!inBounds)
      return memref::LoadOp::create(b, loc, from, indices);
    Value none = zeroOf(b.getF32Type());
    auto guard = scf::IfOp::create(
        b, loc, inBounds,
        [&](OpBuilder &then, Location loc) {
          scf::YieldOp::create(then, loc, memref::LoadOp::create(then, loc, from, indices).getResult());
        },
        [&](OpBuilder &otherwise, Location loc) { scf::YieldOp::create(otherwise, loc, none); });
    return guard.getResult(0);
  }

  /// Stores the accumulator element `value` of output[m, n], through the epilogue if the chain has one.
  void storeElement(Value value, Value m, Value n) {
    auto [indices, inBounds] = outputIndices(m, n);
    scf::IfOp guard;
    OpBuilder::InsertionGuard insertion(b);
    if (inBounds) {
      guard = scf::IfOp::create(b, loc, inBounds, /*withElseRegion=*/false);
      b.setInsertionPoint(guard.thenBlock()->getTerminator());
    }
    if (!chain.epilogue) {
      memref::StoreOp::create(b, loc, value, c.op.getDpsInitOperand(0)->get(), indices);
      return;
    }
    Value output = linalg::GenericOp(chain.epilogue).getDpsInitOperand(0)->get();
    memref::StoreOp::create(b, loc, applyEpilogue(value, indices), output, indices);
  }

  /// The epilogue's body on the accumulator element `value` at `indices` of the output (the epilogue's loops:
  /// its output map is the identity), its other inputs loaded there and its loop indices `indices`.
  Value applyEpilogue(Value value, ArrayRef<Value> indices) {
    linalg::GenericOp epilogue = chain.epilogue;
    Value output = c.op.getDpsInitOperand(0)->get();
    Block &body = epilogue.getRegion().front();
    IRMapping mapping;
    for (OpOperand *input : epilogue.getDpsInputOperands()) {
      Value element = value;
      if (input->get() != output) {
        AffineMap map = epilogue.getMatchingIndexingMap(input);
        SmallVector<Value> at;
        for (unsigned result = 0; result < map.getNumResults(); ++result)
          at.push_back(indices[map.getDimPosition(result)]);
        element = memref::LoadOp::create(b, loc, input->get(), at);
      }
      mapping.map(epilogue.getMatchingBlockArgument(input), element);
    }
    for (Operation &op : body.without_terminator()) {
      // A position the body reads (FLASH's t / 256) is the element's index along that loop.
      if (auto position = dyn_cast<linalg::IndexOp>(op))
        mapping.map(position.getResult(), indices[position.getDim()]);
      else
        b.clone(op, mapping);
    }
    return mapping.lookupOrDefault(cast<linalg::YieldOp>(body.getTerminator()).getOperand(0));
  }
};

/// Temporaries that only map an input for the tensor cores: an f32 allocation written by an elementwise
/// generic of one whole buffer of the mma operand type, and read by nothing but contractions that run on
/// tensor cores before it is next overwritten (tensorCoreReaders). The generic is a widening `extf`, or a feature map
/// of the input such as φ(k) = elu(k) + 1 (la-fuse-elementwise recomputes such a map in its other consumers on the GPU,
/// and leaves it materialised for the contractions it does not fuse into). The gathers convert each element back to the
/// operand type. So the temporary becomes a staged copy of the input (StagedOperands.h) in its place, and the gathers
/// apply the map, if any, to the fragment in registers (la_gpu.mma_fragment's map): half the bytes, no pass over the
/// temporary, and where the copy gets no shared memory, the gathers read the input itself. (The chunk's v of causal
/// linear attention: 4 KiB of f32 shared memory and a pass over it per chunk, now 2 KiB of f16 filled by cp.async. φ(K)
/// and φ(Q) of linear attention: an f32 copy of each in global scratch, written once and read back, now gone.) The
/// input must be read-only (an argument's view).
class MappedSources {
public:
  MappedSources() = default;
  MappedSources(ArrayRef<Contraction> contractions, const MmaForm &form) {
    DenseSet<Operation *> onTensorCores;
    for (const Contraction &c : contractions)
      onTensorCores.insert(c.op);
    llvm::SetVector<memref::AllocOp> allocs;
    for (const Contraction &c : contractions)
      for (OpOperand *operand : c.op.getDpsInputOperands())
        if (auto alloc = operand->get().getDefiningOp<memref::AllocOp>())
          allocs.insert(alloc);
    for (memref::AllocOp alloc : allocs)
      for (Operation *user : llvm::to_vector(alloc->getUsers())) {
        auto writer = dyn_cast<linalg::GenericOp>(user);
        if (!writer || !isMappedInput(writer, alloc, form))
          continue;
        SmallVector<OpOperand *> readers = tensorCoreReaders(writer, alloc, onTensorCores);
        if (readers.empty())
          continue;
        OpBuilder b(writer);
        Value staged = stageInTemporary(b, writer.getLoc(), writer.getDpsInputOperand(0)->get());
        for (OpOperand *reader : readers)
          sources[reader] = {staged, isWidening(writer) ? linalg::GenericOp() : writer};
        writers.push_back(writer);
        temporaries.insert(alloc);
      }
  }

  /// The staged copy `operand` reads instead of its own buffer, and the generic whose body maps each of its
  /// elements (null for a widening); a null source for an operand that reads its own buffer.
  std::pair<Value, linalg::GenericOp> lookup(OpOperand &operand) const { return sources.lookup(&operand); }

  /// Erases the generics that wrote the temporaries, and then the temporaries nothing else uses.
  void eraseTemporaries() {
    for (linalg::GenericOp writer : writers)
      writer.erase();
    for (memref::AllocOp alloc : temporaries)
      if (alloc->use_empty())
        alloc->erase();
  }

private:
  /// The operands of the tensor-core contractions that read what `writer` wrote to `alloc`, when nothing else
  /// does: every use of `alloc` after `writer`, up to an op that overwrites it (bufferisation may give the
  /// buffer to another value before or after: linear attention's φ(K) and numerator share one), is a
  /// contraction in `onTensorCores` that reads it as an input. None when something else reads it, or might:
  /// a use outside `writer`'s block, or, in a loop body that is not the buffer's block, a use before
  /// `writer` (which may read what the iteration before wrote).
  static SmallVector<OpOperand *> tensorCoreReaders(linalg::GenericOp writer, memref::AllocOp alloc,
                                                    const DenseSet<Operation *> &onTensorCores) {
    Block *block = writer->getBlock();
    for (Operation *user : alloc->getUsers()) {
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (!ancestor || (block != alloc->getBlock() && ancestor->isBeforeInBlock(writer)))
        return {};
    }
    SmallVector<OpOperand *> readers;
    for (Operation *op = writer->getNextNode(); op; op = op->getNextNode()) {
      if (!usesBuffer(op, alloc))
        continue;
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      if (linalgOp && overwrites(linalgOp, alloc))
        break; // the buffer's next value
      if (!linalgOp || !onTensorCores.contains(op) || linalgOp.getDpsInitsMutable().size() != 1 ||
          linalgOp.getDpsInitsMutable()[0].get() == alloc.getResult())
        return {}; // another read
      for (OpOperand *input : linalgOp.getDpsInputOperands())
        if (input->get() == alloc.getResult())
          readers.push_back(input);
    }
    return readers;
  }

  /// Whether `generic`'s body is one `arith.extf` of its input.
  static bool isWidening(linalg::GenericOp generic) {
    Block &body = generic.getRegion().front();
    auto extend = dyn_cast<arith::ExtFOp>(body.front());
    return body.getOperations().size() == 2 && extend && extend.getIn() == body.getArgument(0) &&
           cast<linalg::YieldOp>(body.getTerminator()).getOperand(0) == extend.getResult();
  }

  /// Whether `generic`'s body computes its result from its input element alone: pure ops without regions
  /// reading the input's element, each other's results or constants, never the output's old value.
  static bool mapsEachElement(linalg::GenericOp generic) {
    Block &body = generic.getRegion().front();
    return isElementwiseBody(generic) && llvm::all_of(body.without_terminator(), [&](Operation &op) {
             return llvm::all_of(op.getOperands(), [&](Value operand) {
               Operation *def = operand.getDefiningOp();
               return operand == body.getArgument(0) || (def && def->getBlock() == &body) ||
                      (def && matchPattern(def, m_Constant()));
             });
           });
  }

  /// Whether `writer` computes `alloc` elementwise from one whole read-only buffer of the operand type, by a
  /// widening or a map of each element.
  static bool isMappedInput(linalg::GenericOp writer, memref::AllocOp alloc, const MmaForm &form) {
    if (writer.getNumDpsInputs() != 1 || writer.getNumDpsInits() != 1 ||
        writer.getDpsInitOperand(0)->get() != alloc.getResult() || !writer.hasPureBufferSemantics() ||
        writer.getNumReductionLoops() != 0 ||
        !llvm::all_of(writer.getIndexingMapsArray(), [](AffineMap map) { return map.isIdentity(); }))
      return false;
    Value source = writer.getDpsInputOperand(0)->get();
    auto sourceType = cast<MemRefType>(source.getType());
    return sourceType.getShape() == alloc.getType().getShape() && sourceType.getElementType() == form.operandType &&
           isFunctionArgument(rootBuffer(source)) && (isWidening(writer) || mapsEachElement(writer));
  }

  DenseMap<OpOperand *, std::pair<Value, linalg::GenericOp>> sources;
  SmallVector<linalg::GenericOp> writers;
  llvm::SetVector<memref::AllocOp> temporaries;
};

/// Copies each operand that is an argument of the kernel (global memory) and that several warps gather
/// into a temporary first (StagedOperands.h): every warp of a row of tiles gathers the same B fragments,
/// every warp of a column of tile groups the same A fragments, each a global load per element; the copy
/// reads the operand once, with consecutive threads on consecutive elements. (A chunk-parallel state kernel's
/// φ(K)^T·V over a 128-position piece: V gathered by 4 rows of tiles, 1.80x -> 1.20x the minimum global
/// traffic.)
void stageReusedArguments(ContractionChain &chain, OpBuilder &b) {
  for (const Contraction &link : chain.links) {
    int64_t gathers[2] = {link.tilesN() / link.tilesPerWarp, link.tilesM()};
    for (auto [which, operand] : llvm::enumerate(link.op.getDpsInputOperands())) {
      Value read = chain.readFrom.lookup_or(operand, operand->get());
      auto type = dyn_cast<MemRefType>(read.getType());
      if (gathers[which] < 2 || !type || !type.hasStaticShape() || !isFunctionArgument(rootBuffer(read)))
        continue;
      chain.readFrom[operand] = stageInTemporary(b, link.op.getLoc(), read);
    }
  }
}

/// Positions of k a tiled long reduction stages at a time (rewriteInKTiles): V's rows of φ(K)ᵀV, 16 KiB of
/// f16 at Dv = 64, two slots of which leave most of the shared memory to the kernel's other temporaries.
constexpr int64_t kReductionTile = 128;

/// Whether `chain` (one contraction) reduces over a k so long that an operand several warps gather, an
/// argument of the kernel, would not be staged whole: more than half of `sharedBytes`, the share
/// la-gpu-outline-slice-kernel would hardly give it. Each warp then reads it from global memory (linear
/// attention's V in φ(K)ᵀV, read by the 4 warps of its row of tiles at N ≥ 1024).
bool needsReductionTiles(const ContractionChain &chain, int64_t sharedBytes) {
  if (chain.links.size() != 1 || chain.epilogue || sharedBytes <= 0)
    return false;
  const Contraction &c = chain.links.front();
  if (c.k <= kReductionTile || c.k % kReductionTile != 0)
    return false;
  int64_t gathers[2] = {c.tilesN() / c.tilesPerWarp, c.tilesM()};
  for (auto [which, operand] : llvm::enumerate(c.op.getDpsInputOperands())) {
    Value read = chain.readFrom.lookup_or(operand, operand->get());
    auto type = cast<MemRefType>(read.getType());
    if (gathers[which] >= 2 && type.hasStaticShape() && isFunctionArgument(rootBuffer(read)) &&
        type.getNumElements() * type.getElementTypeBitWidth() / 8 > sharedBytes / 2)
      return true;
  }
  return false;
}

/// `buffer`'s slice [iv, iv + kReductionTile) along `dim`, whole along the others.
Value reductionSlice(OpBuilder &b, Location loc, Value buffer, int64_t dim, Value iv) {
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)), sizes,
      strides(type.getRank(), b.getIndexAttr(1));
  for (int64_t size : type.getShape())
    sizes.push_back(b.getIndexAttr(size));
  offsets[dim] = iv;
  sizes[dim] = b.getIndexAttr(kReductionTile);
  return memref::SubViewOp::create(b, loc, buffer, offsets, sizes, strides);
}

void rewriteOnTensorCores(ContractionChain &chain, const MmaForm &form, const MappedSources &mapped,
                          int64_t sharedBytes);

/// `chain` (needsReductionTiles) as a loop over k tiles of kReductionTile positions: each iteration the
/// contraction on the tiles of its operands, accumulating into the output (the zero fill stays before the
/// loop), so that an operand several warps gather is staged a tile at a time, in shared memory and a tile
/// ahead (la-gpu-prefetch-staged-copies), and read from global memory once. The output passes through
/// memory between tiles: a [D, Dv] state, small enough for shared memory.
void rewriteInReductionTiles(ContractionChain &chain, const MmaForm &form, int64_t sharedBytes) {
  const Contraction &c = chain.links.front();
  OpBuilder b(c.op);
  Location loc = c.op.getLoc();
  auto loop =
      scf::ForOp::create(b, loc, arith::ConstantIndexOp::create(b, loc, 0), arith::ConstantIndexOp::create(b, loc, c.k),
                         arith::ConstantIndexOp::create(b, loc, kReductionTile));
  b.setInsertionPoint(loop.getBody()->getTerminator());
  // The operands' tiles first, then the contraction on them.
  SmallVector<Value> slices, sources;
  for (OpOperand *operand : c.op.getDpsInputOperands()) {
    AffineMap map = c.op.getMatchingIndexingMap(operand);
    int64_t kDim = *map.getResultPosition(b.getAffineDimExpr(c.kLoop));
    slices.push_back(reductionSlice(b, loc, operand->get(), kDim, loop.getInductionVar()));
    Value source = chain.readFrom.lookup(operand);
    sources.push_back(source ? reductionSlice(b, loc, source, kDim, loop.getInductionVar()) : Value());
  }
  auto tiled = cast<linalg::LinalgOp>(b.clone(*c.op));
  ContractionChain tiles;
  for (auto [i, pair] : llvm::enumerate(llvm::zip(c.op.getDpsInputOperands(), tiled.getDpsInputOperands()))) {
    auto [operand, tiledOperand] = pair;
    tiledOperand->set(slices[i]);
    if (sources[i])
      tiles.readFrom[tiledOperand] = sources[i];
    if (linalg::GenericOp map = chain.mappedBy.lookup(operand))
      tiles.mappedBy[tiledOperand] = map;
  }
  Contraction tile = c;
  tile.op = tiled;
  tile.k = kReductionTile;
  tiles.links.push_back(tile);
  c.op->erase();
  rewriteOnTensorCores(tiles, form, MappedSources(), sharedBytes);
  // A tile the fragments read from another buffer (`readFrom`) is left unread.
  for (Value slice : slices)
    if (slice.use_empty())
      slice.getDefiningOp()->erase();
}

/// Replaces the chain's contractions (and its zero fill, and its epilogue) by a parallel loop over (warp,
/// lane) pairs, 32 lanes per warp, where its last contraction was, or its epilogue.
void rewriteOnTensorCores(ContractionChain &chain, const MmaForm &form, const MappedSources &mapped,
                          int64_t sharedBytes) {
  const Contraction &c = chain.links.front();
  for (const Contraction &link : chain.links)
    for (OpOperand *operand : link.op.getDpsInputOperands())
      if (auto [source, map] = mapped.lookup(*operand); source) {
        chain.readFrom[operand] = source;
        if (map)
          chain.mappedBy[operand] = map;
      }
  if (needsReductionTiles(chain, sharedBytes))
    return rewriteInReductionTiles(chain, form, sharedBytes);
  Operation *last = chain.epilogue ? chain.epilogue.getOperation() : chain.links.back().op.getOperation();
  Value output = c.op.getDpsInitOperand(0)->get();
  OpBuilder b(last);
  Location loc = last->getLoc();
  stageReusedArguments(chain, b);
  int64_t lanes = c.warps() * kWarpSize;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0), one = arith::ConstantIndexOp::create(b, loc, 1);
  Value upper = arith::ConstantIndexOp::create(b, loc, lanes);
  auto parallel = scf::ParallelOp::create(b, loc, ValueRange{zero}, ValueRange{upper}, ValueRange{one},
                                          [&](OpBuilder &nested, Location loc, ValueRange ivs) {
                                            TileEmitter(nested, loc, chain, form).emit(ivs.front());
                                          });
  parallel->setAttr(kWarpLanesAttr, b.getUnitAttr());
  for (const Contraction &link : chain.links)
    link.op->erase();
  if (chain.zeroFill)
    chain.zeroFill->erase();
  if (chain.initialCopy)
    chain.initialCopy->erase();
  if (chain.epilogue) {
    chain.epilogue->erase();
    if (output.use_empty())
      output.getDefiningOp()->erase();
  }
}

struct LAGPUContractToMmaPass : impl::LAGPUContractToMmaBase<LAGPUContractToMmaPass> {
  using Base::Base;

  void runOnOperation() override {
    if (mode != "auto" && mode != "tf32" && mode != "off") {
      getOperation().emitError() << "la-gpu-contract-to-mma: mode '" << mode << "' is not auto, tf32 or off";
      return signalPassFailure();
    }
    std::optional<MmaForm> form = chooseForm(getOperation(), mode);
    if (!form)
      return;
    SmallVector<Contraction> contractions;
    getOperation().walk([&](linalg::LinalgOp op) {
      // A warp's lanes must all reach its mma: inside another parallel loop this one would run on one thread.
      if (op->getParentOfType<scf::ParallelOp>() || op->getParentOfType<scf::ForallOp>())
        return;
      if (FailureOr<Contraction> c = matchContraction(op, *form); succeeded(c))
        contractions.push_back(*c);
    });
    for (Contraction &c : contractions)
      c.tilesPerWarp = chooseTilesPerWarp(c, warpsPerBlock);
    MappedSources mapped(contractions, *form);
    for (ContractionChain &chain : formChains(contractions)) {
      chain.epilogue = findEpilogue(chain);
      LLVM_DEBUG(llvm::dbgs() << "la-gpu-contract-to-mma: " << chain.links.size() << " contraction(s) at "
                              << chain.links.back().op.getLoc()
                              << (chain.zeroFill      ? ", from zero"
                                  : chain.initialCopy ? ", from the copy's source"
                                                      : "")
                              << "\n");
      rewriteOnTensorCores(chain, *form, mapped, sharedMemoryBytes);
    }
    mapped.eraseTemporaries();
  }
};

} // namespace
} // namespace mlir::la
