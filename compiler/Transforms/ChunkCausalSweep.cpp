//===- ChunkCausalSweep.cpp - a causal kernel as one loop over chunks -----===//
//
// A causal kernel reads position t of the sequence only through values at positions ≤ t. Chunking its
// contractions and scans one at a time (the other `la-chunk-scans` rewrites) gives one loop per op, and
// every intermediate [N, D] tensor between them (Flow-Attention's sigmoids, normalisers, `v·comp`) is
// written by one loop and read back by the next: per (batch, head) slice about 18 MiB of traffic for Flow
// causal at N = 4096, against 4 MiB of inputs and output. When *every* op that reads the sequence is causal,
// the whole kernel can instead run as one loop over chunks: each chunk computes every op on its own C
// positions, and only the scans' running sums and the contractions' [D, Dv] states cross chunk boundaries.
// Intermediates then live for one chunk, in L1, and each input is read once.
//
// The ops a chunk evaluates, and what crosses to the next chunk:
//   - pointwise along the sequence (`la.map`, `la.gate`, `la.normalize` and `la.reduce` over other
//     dimensions, contractions that keep the position): the op on the chunk; `la.index` along the sequence
//     is offset by the chunk's start;
//   - an inclusive `add` scan along the sequence: the chunk's prefix sum seeded with the running sum, whose
//     last row is carried;
//   - a `tril`-masked contraction (what rewrite 1 makes of `q · scan(k ⊗ v)`): SPEC §1's chunk step
//     (CausalChunkStep.h) with its state carried.
// Anything else that reads the sequence (a reduction or contraction over it, a windowed or decayed scan,
// another mask) leaves the kernel to the per-op rewrites. Ops that do not read the sequence stay before the
// loop.
//
//===----------------------------------------------------------------------===//

#include "Transforms/ChunkCausalSweep.h"
#include "Transforms/CausalChunkStep.h"
#include "Transforms/ChunkLoops.h"
#include "Transforms/ProducerSlicer.h"

#include "LA/IR/LAOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::la {
namespace {

/// Whether `scan` is a plain inclusive running sum of one tensor.
bool isPlainPrefixSum(ScanOp scan) {
  return scan.getCombiner() == Combiner::add && scan.getKind() == ScanKind::inclusive && !scan.getReverse() &&
         !scan.getWindow() && scan.getInit().empty() && scan.getInputs().size() == 1;
}

/// Whether `op` is a tril-masked causal contraction the chunk step handles.
std::optional<CausalLayout> matchTrilContract(ContractOp op) {
  std::optional<CausalLayout> layout = matchCausalContract(op);
  if (!layout || op.getMaskAttr().getKind() != MaskKind::tril)
    return std::nullopt;
  return layout;
}

class CausalSweep {
public:
  explicit CausalSweep(func::FuncOp func) : func(func) {}

  /// Finds the sequence dimension of every value that has one and checks every op reading one is causal.
  bool analyse(int64_t chunk);

  /// Builds the loop before the return and rewires the returned values to it.
  void build(int64_t chunk);

private:
  /// Records that `value` has the sequence at `dim`, then its producers' operands (backwards through
  /// pointwise ops), so the arguments get theirs. False on a conflict.
  bool seed(Value value, int64_t dim);
  /// The sequence dimension of `op`'s result, or none when `op` is not causal.
  std::optional<int64_t> resultDim(Operation *op);
  /// The sequence dimension of an operand that pointwise maps it onto the result's `dim`; seeds a function
  /// argument that does. False when a value computed before the sweep would be read per position.
  bool acceptOperand(Value operand, std::optional<int64_t> operandDim);

  /// `value` restricted to the chunk.
  Value chunkOf(OpBuilder &b, IRMapping &mapping, Value value, Value start, int64_t size);
  /// `op` on the chunk (pointwise ops).
  Value clonePointwise(OpBuilder &b, IRMapping &mapping, Operation *op, Value start, int64_t size);

  func::FuncOp func;
  DenseMap<Value, int64_t> seqDim;
  SmallVector<Operation *> swept; // in program order
  SmallVector<Operation *> carriers; // scans along the sequence and tril contractions, in program order
  int64_t length = -1;
};

bool CausalSweep::seed(Value value, int64_t dim) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() || dim >= type.getRank())
    return false;
  if (length < 0)
    length = type.getDimSize(dim);
  if (type.getDimSize(dim) != length)
    return false;
  auto [it, inserted] = seqDim.try_emplace(value, dim);
  if (!inserted)
    return it->second == dim;
  Operation *producer = value.getDefiningOp();
  if (auto map = dyn_cast_or_null<MapOp>(producer)) {
    for (auto [input, toResult] : llvm::zip(map.getInputs(), map.getInputToResultDims()))
      for (auto [inputDim, outDim] : llvm::enumerate(toResult))
        if (outDim == dim && !seed(input, inputDim))
          return false;
  } else if (auto scan = dyn_cast_or_null<ScanOp>(producer); scan && scan.getInputs().size() == 1) {
    return seed(scan.getInputs()[0], dim);
  } else if (auto contract = dyn_cast_or_null<ContractOp>(producer); contract && !contract.getMaskAttr()) {
    SubscriptsAttr s = contract.getSubscripts();
    char letter = s.getResult()[dim];
    for (auto [input, term] : llvm::zip(contract.getInputs(), s.getInputs()))
      if (size_t pos = term.find(letter); pos != std::string::npos && !seed(input, pos))
        return false;
  }
  return true;
}

bool CausalSweep::acceptOperand(Value operand, std::optional<int64_t> operandDim) {
  if (!operandDim)
    return true; // broadcast along the sequence: a value computed before the loop
  auto it = seqDim.find(operand);
  if (it != seqDim.end())
    return it->second == *operandDim;
  // Only a function argument can be restricted to the chunk without being computed in it.
  return isa<BlockArgument>(operand) && seed(operand, *operandDim);
}

std::optional<int64_t> CausalSweep::resultDim(Operation *op) {
  // The result dimension the sequence maps to, from the operands that already carry it.
  std::optional<int64_t> r;
  auto agree = [&](int64_t d) {
    if (r && *r != d)
      return false;
    r = d;
    return true;
  };

  if (auto map = dyn_cast<MapOp>(op)) {
    SmallVector<SmallVector<int64_t>> dims = map.getInputToResultDims();
    for (auto [input, toResult] : llvm::zip(map.getInputs(), dims))
      if (auto it = seqDim.find(input); it != seqDim.end() && !agree(toResult[it->second]))
        return std::nullopt;
    if (!r)
      return std::nullopt;
    for (auto [input, toResult] : llvm::zip(map.getInputs(), dims)) {
      auto at = llvm::find(toResult, *r);
      if (!acceptOperand(input, at == toResult.end() ? std::nullopt : std::optional<int64_t>(at - toResult.begin())))
        return std::nullopt;
    }
    return r;
  }
  if (isa<GateOp>(op)) {
    // Branches have the result's shape; the gate prefix-broadcasts into it.
    for (Value operand : op->getOperands())
      if (auto it = seqDim.find(operand); it != seqDim.end() && !agree(it->second))
        return std::nullopt;
    if (!r)
      return std::nullopt;
    for (Value operand : op->getOperands()) {
      int64_t rank = cast<RankedTensorType>(operand.getType()).getRank();
      if (!acceptOperand(operand, *r < rank ? std::optional<int64_t>(*r) : std::nullopt))
        return std::nullopt;
    }
    return r;
  }
  if (auto normalize = dyn_cast<NormalizeOp>(op)) {
    int64_t dim = normalize.getDim();
    if (auto it = seqDim.find(normalize.getInput()); it != seqDim.end())
      r = it->second;
    if (Value den = normalize.getDenominator())
      if (auto it = seqDim.find(den); it != seqDim.end() && !agree(it->second < dim ? it->second : it->second + 1))
        return std::nullopt;
    if (!r || *r == dim || !acceptOperand(normalize.getInput(), *r))
      return std::nullopt;
    if (Value den = normalize.getDenominator(); den && !acceptOperand(den, *r < dim ? *r : *r - 1))
      return std::nullopt;
    return r;
  }
  if (auto reduce = dyn_cast<ReduceOp>(op)) {
    if (!reduce.getCombiner() || reduce.getInputs().size() != 1 || reduce->getNumResults() != 1)
      return std::nullopt;
    int64_t in = seqDim.lookup(reduce.getInputs()[0]);
    ArrayRef<int64_t> dims = reduce.getDims();
    if (llvm::is_contained(dims, in))
      return std::nullopt; // a reduction over the sequence: not causal
    return in - llvm::count_if(dims, [&](int64_t d) { return d < in; });
  }
  if (auto scan = dyn_cast<ScanOp>(op)) {
    if (!isPlainPrefixSum(scan))
      return std::nullopt;
    int64_t in = seqDim.lookup(scan.getInputs()[0]);
    if (static_cast<int64_t>(scan.getDim()) == in)
      carriers.push_back(op);
    return in;
  }
  if (auto contract = dyn_cast<ContractOp>(op)) {
    if (contract.getGate())
      return std::nullopt;
    SubscriptsAttr s = contract.getSubscripts();
    if (contract.getMaskAttr()) {
      std::optional<CausalLayout> layout = matchTrilContract(contract);
      if (!layout)
        return std::nullopt;
      int64_t pos = layout->batch.size();
      for (Value input : contract.getInputs())
        if (!acceptOperand(input, pos))
          return std::nullopt;
      carriers.push_back(op);
      return pos;
    }
    // The position letter, from the inputs that carry the sequence; it must survive into the result.
    char letter = 0;
    for (auto [input, term] : llvm::zip(contract.getInputs(), s.getInputs()))
      if (auto it = seqDim.find(input); it != seqDim.end()) {
        if (letter && letter != term[it->second])
          return std::nullopt;
        letter = term[it->second];
      }
    size_t pos = s.getResult().find(letter);
    if (!letter || pos == std::string::npos)
      return std::nullopt; // contracted over the sequence: not causal
    for (auto [input, term] : llvm::zip(contract.getInputs(), s.getInputs())) {
      size_t at = term.find(letter);
      if (!acceptOperand(input, at == std::string::npos ? std::nullopt : std::optional<int64_t>(at)))
        return std::nullopt;
    }
    return pos;
  }
  return std::nullopt;
}

bool CausalSweep::analyse(int64_t chunk) {
  Block &body = func.getBody().front();
  // Seeds: the operands of the causal ops, whose sequence dimension their attributes state.
  for (Operation &op : body) {
    if (auto scan = dyn_cast<ScanOp>(op); scan && isPlainPrefixSum(scan)) {
      if (!seed(scan.getInputs()[0], scan.getDim()))
        return false;
    } else if (auto contract = dyn_cast<ContractOp>(op)) {
      if (std::optional<CausalLayout> layout = matchTrilContract(contract))
        for (Value input : contract.getInputs())
          if (!seed(input, layout->batch.size()))
            return false;
    }
  }
  if (length <= chunk)
    return false;
  for (Operation &op : body.without_terminator()) {
    bool readsSequence = llvm::any_of(op.getOperands(), [&](Value v) { return seqDim.count(v); });
    bool yieldsSequence = llvm::any_of(op.getResults(), [&](Value v) { return seqDim.count(v); });
    if (!readsSequence && !yieldsSequence)
      continue; // computed once, before the loop
    if (isa<SizeOp>(op) && !yieldsSequence)
      continue; // reads only the static shape
    if (op.getNumResults() != 1)
      return false;
    std::optional<int64_t> dim = resultDim(&op);
    if (!dim || !seed(op.getResult(0), *dim))
      return false;
    swept.push_back(&op);
  }
  return !carriers.empty();
}

Value CausalSweep::chunkOf(OpBuilder &b, IRMapping &mapping, Value value, Value start, int64_t size) {
  auto it = seqDim.find(value);
  if (it == seqDim.end())
    return value;
  if (Value chunked = mapping.lookupOrNull(value))
    return chunked;
  // Produced before the loop by no swept op: a function argument.
  Value chunked = extractChunk(b, func.getLoc(), value, {it->second}, start, size);
  mapping.map(value, chunked);
  return chunked;
}

Value CausalSweep::clonePointwise(OpBuilder &b, IRMapping &mapping, Operation *op, Value start, int64_t size) {
  SmallVector<Value> operands =
      llvm::map_to_vector(op->getOperands(), [&](Value v) { return chunkOf(b, mapping, v, start, size); });
  Operation *clone = b.clone(*op);
  clone->setOperands(operands);
  Value result = clone->getResult(0);
  int64_t dim = seqDim.lookup(op->getResult(0));
  result.setType(ProducerSlicer::slicedType(op->getResult(0), {{dim, {start, size}}}));
  // Absolute positions along the sequence: the chunk's own plus its start.
  if (auto map = dyn_cast<MapOp>(clone)) {
    SmallVector<IndexOp> indices;
    map.getBody().walk([&](IndexOp index) {
      if (static_cast<int64_t>(index.getDim()) == dim)
        indices.push_back(index);
    });
    for (IndexOp index : indices) {
      OpBuilder inner(index);
      Location loc = index.getLoc();
      Value position = IndexOp::create(inner, loc, inner.getIndexType(), index.getDimAttr());
      position = arith::AddIOp::create(inner, loc, position, start);
      if (!index.getType().isIndex()) {
        Value asInt = arith::IndexCastUIOp::create(inner, loc, inner.getI64Type(), position);
        position = arith::UIToFPOp::create(inner, loc, index.getType(), asInt);
      }
      index.replaceAllUsesWith(position);
      index.erase();
    }
  }
  return result;
}

void CausalSweep::build(int64_t chunk) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  Location loc = func.getLoc();
  OpBuilder b(ret);

  // Carried: one state per carrier, then one result tensor per returned sequence value.
  SmallVector<Value> init;
  for (Operation *op : carriers) {
    if (auto contract = dyn_cast<ContractOp>(op)) {
      init.push_back(buildZeroCausalState(b, loc, contract, *matchTrilContract(contract)));
      continue;
    }
    auto scan = cast<ScanOp>(op);
    auto type = cast<RankedTensorType>(scan.getInputs()[0].getType());
    SmallVector<int64_t> shape = llvm::to_vector(type.getShape());
    shape.erase(shape.begin() + scan.getDim());
    auto stateType = RankedTensorType::get(shape, type.getElementType());
    init.push_back(arith::ConstantOp::create(
        b, loc, stateType, DenseElementsAttr::get(stateType, b.getZeroAttr(type.getElementType()))));
  }
  SmallVector<unsigned> returned; // operand numbers of the returned sequence values
  for (OpOperand &operand : ret->getOpOperands())
    if (seqDim.count(operand.get())) {
      returned.push_back(operand.getOperandNumber());
      auto type = cast<RankedTensorType>(operand.get().getType());
      init.push_back(tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType()));
    }

  auto emitChunk = [&](OpBuilder &bld, Value start, int64_t size, ValueRange carried) -> SmallVector<Value> {
    IRMapping mapping;
    SmallVector<Value> next(carried);
    auto chunk = [&](Value v) { return chunkOf(bld, mapping, v, start, size); };
    for (Operation *op : swept) {
      auto carrier = llvm::find(carriers, op);
      if (carrier == carriers.end()) {
        mapping.map(op->getResult(0), clonePointwise(bld, mapping, op, start, size));
        continue;
      }
      unsigned slot = carrier - carriers.begin();
      if (auto contract = dyn_cast<ContractOp>(op)) {
        CausalLayout layout = *matchTrilContract(contract);
        Value qc = chunk(contract.getInputs()[0]), kc = chunk(contract.getInputs()[1]);
        Value vc = layout.e ? chunk(contract.getInputs()[2]) : Value();
        mapping.map(op->getResult(0), buildCausalChunk(bld, loc, contract, layout, qc, kc, vc, carried[slot], size));
        next[slot] = buildCausalStateUpdate(bld, loc, contract, layout, kc, vc, carried[slot]);
        continue;
      }
      // A running sum: the chunk's prefix seeded with the sum so far; its last row is the next seed.
      auto scan = cast<ScanOp>(op);
      int64_t dim = scan.getDim();
      Value input = chunk(scan.getInputs()[0]);
      Value prefix = ScanOp::create(bld, loc, TypeRange{input.getType()}, scan.getCombinerAttr(), ValueRange{input},
                                    ValueRange{carried[slot]}, dim, ScanKind::inclusive, /*reverse=*/false,
                                    IntegerAttr(), scan.getAccAttr())
                         .getResult(0);
      mapping.map(op->getResult(0), prefix);
      // Copied into the carried buffer rather than yielded as a view of the prefix tile, which would keep
      // the tile alive into the next iteration and cost an allocation per chunk.
      auto stateType = cast<RankedTensorType>(carried[slot].getType());
      Value lastRow = extractWindows(bld, loc, prefix, {{dim, {bld.getIndexAttr(size - 1), 1}}}, stateType);
      next[slot] = linalg::CopyOp::create(bld, loc, lastRow, carried[slot]).getResult(0);
    }
    for (auto [i, operandNumber] : llvm::enumerate(returned)) {
      Value value = ret->getOperand(operandNumber);
      unsigned slot = carriers.size() + i;
      next[slot] = insertChunk(bld, loc, chunk(value), carried[slot], seqDim.lookup(value), start);
    }
    return next;
  };
  SmallVector<Value> final = buildChunkLoop(b, loc, length, chunk, init, emitChunk);
  for (auto [i, operandNumber] : llvm::enumerate(returned))
    ret->setOperand(operandNumber, final[carriers.size() + i]);
  // The whole-sequence ops are dead now, unless something outside the sweep reads them (la.size).
  for (Operation *op : llvm::reverse(swept))
    if (op->use_empty())
      op->erase();
}

} // namespace

bool sweepCausalKernel(func::FuncOp func, int64_t chunk) {
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return false;
  CausalSweep sweep(func);
  if (!sweep.analyse(chunk))
    return false;
  sweep.build(chunk);
  return true;
}

} // namespace mlir::la
