//===- ChunkScanReaders.cpp - prefix scans fused with the dot that reads them -===//
//
// Flow-Attention's causal normalisers are dots of a feature map with a shifted prefix sum of another,
// `(q_t + eps) · (Σ_{s≤t} k_s + eps)`. Lowered op by op, each prefix sum is an [N, D] tensor written by one
// sequential sweep and read back by the next; per (batch, head) slice that is 1 MiB at N = 4096, D = 64,
// more than a core's L2. Evaluated chunk by chunk, the prefix sum of a chunk is seeded with the running sum
// carried from the previous one, read by the chunk's dot while it is in L1, and only its last row survives
// the chunk. The scan's operand and the dot's other operand are recomputed on the chunk when they are
// single-use or cheap elementwise maps (ProducerSlicer), so `k_s · b_s` is never materialised either.
//
// A state-passing variant (la-derive-state-variants) gives the scan an `init` and reads its last position:
// the carried sum then starts from the init, and the sum carried out of the last chunk is that final state.
//
// `(q + eps)·(C + eps)` is not rewritten algebraically: the reads keep their order of evaluation per
// element, and only the prefix sum's association changes (seeded sums instead of one sweep).
//
//===----------------------------------------------------------------------===//

#include "Transforms/ChunkScanReaders.h"
#include "Transforms/ChunkLoops.h"
#include "Transforms/ProducerSlicer.h"

#include "Conversion/LAToLinalg/LoweringUtils.h"

#include "LA/IR/LAOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::la {
namespace {

/// A plain inclusive running sum of one tensor along `dim`, possibly from an `init`, that `reader` reads
/// once and every other user takes the final state of (a derived prefill or resume variant).
bool isFusablePrefixSum(ScanOp scan, int64_t dim, Operation *reader) {
  if (!scan || !scan.isInclusivePrefixSum() || scan.getDimAttr().getInt() != dim ||
      !cast<RankedTensorType>(scan.getInputs()[0].getType()).hasStaticShape())
    return false;
  int64_t reads = 0;
  for (OpOperand &use : scan.getResult(0).getUses()) {
    if (use.getOwner() == reader)
      ++reads;
    else if (!matchFinalState(use.getOwner(), scan.getResult(0), dim))
      return false;
  }
  return reads == 1;
}

/// How the dot reads the prefix sum: `map(.., scan, ..)` or the scan itself.
struct ScanRead {
  ScanOp scan;
  MapOp map; // null when the dot reads the scan directly
};

/// The prefix sum behind `operand`, directly or through a single-use elementwise map that reads it with
/// the same dimensions and does not read absolute positions.
std::optional<ScanRead> matchScanRead(Value operand, int64_t dim, Operation *dot) {
  if (auto scan = operand.getDefiningOp<ScanOp>(); isFusablePrefixSum(scan, dim, dot))
    return ScanRead{scan, MapOp()};
  auto map = operand.getDefiningOp<MapOp>();
  if (!map || !map->hasOneUse() || mapUsesIndex(map))
    return std::nullopt;
  std::optional<ScanRead> found;
  for (auto [input, toResult] : llvm::zip(map.getInputs(), map.getInputToResultDims())) {
    auto scan = input.getDefiningOp<ScanOp>();
    if (!isFusablePrefixSum(scan, dim, map))
      continue;
    // The scan must be read element for element (not broadcast) and only once by the map.
    if (found || static_cast<int64_t>(toResult.size()) != cast<RankedTensorType>(map.getType()).getRank() ||
        !llvm::equal(toResult, llvm::seq<int64_t>(0, toResult.size())) || llvm::count(map.getInputs(), input) != 1)
      return std::nullopt;
    found = ScanRead{scan, map};
  }
  return found;
}

/// contract "Bnd,Bnd->Bn" (x, f(scan add y along n)) ⇒ scf.for over chunks carrying Σ y.
struct ChunkScanReader : OpRewritePattern<ContractOp> {
  ChunkScanReader(MLIRContext *context, int64_t chunk) : OpRewritePattern(context), chunk(chunk) {}

  LogicalResult matchAndRewrite(ContractOp op, PatternRewriter &rewriter) const override {
    if (op.getMaskAttr() || op.getGate() || op.getInputs().size() != 2)
      return failure();
    SubscriptsAttr s = op.getSubscripts();
    StringRef term = s.getInput(0);
    if (term.size() < 2 || s.getInput(1) != term || s.getResult() != term.drop_back())
      return rewriter.notifyMatchFailure(op, "not a row-wise dot product \"Bnd,Bnd->Bn\"");
    auto resultType = op.getResult().getType();
    if (!resultType.hasStaticShape() || !cast<RankedTensorType>(op.getInputs()[0].getType()).hasStaticShape())
      return failure();
    int64_t dim = term.size() - 2;
    int64_t length = resultType.getDimSize(dim);
    if (length <= chunk)
      return rewriter.notifyMatchFailure(op, "a single chunk: nothing to carry");

    // The scan may be read by either operand.
    unsigned readIndex = 1;
    std::optional<ScanRead> read = matchScanRead(op.getInputs()[1], dim, op);
    if (!read) {
      readIndex = 0;
      read = matchScanRead(op.getInputs()[0], dim, op);
    }
    if (!read)
      return rewriter.notifyMatchFailure(op, "no operand is a prefix sum along the dot's position");
    ScanOp scan = read->scan;
    Value scanned = scan.getInputs()[0];
    auto scannedType = cast<RankedTensorType>(scanned.getType());

    Location loc = op.getLoc();
    // The running sum: the scanned tensor without its position dimension.
    SmallVector<int64_t> stateShape = llvm::to_vector(scannedType.getShape());
    stateShape.erase(stateShape.begin() + dim);
    auto stateType = RankedTensorType::get(stateShape, scannedType.getElementType());
    // The running sum starts from the scan's init (a resume variant's state) or from zero.
    Value state = scan.getInit().empty()
                      ? arith::ConstantOp::create(
                            rewriter, loc, stateType,
                            DenseElementsAttr::get(stateType, rewriter.getZeroAttr(stateType.getElementType())))
                      : scan.getInit().front();
    if (state.getType() != stateType)
      return rewriter.notifyMatchFailure(op, "the scan's init is not the running sum's type");
    SmallVector<tensor::CollapseShapeOp> finalStates;
    for (Operation *user : scan.getResult(0).getUsers())
      if (tensor::CollapseShapeOp collapse = matchFinalState(user, scan.getResult(0), dim))
        finalStates.push_back(collapse);
    Value result = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(), resultType.getElementType());

    auto emitChunk = [&](OpBuilder &b, Value start, int64_t size, ValueRange carried) -> SmallVector<Value> {
      ProducerSlicer slicer(b, loc);
      slicer.recomputeCheapMaps();
      SmallVector<DimWindow> window = {{dim, {start, size}}};
      Value chunkInput = slicer.slice(scanned, window);
      Value prefix =
          ScanOp::create(b, loc, chunkInput.getType(), Combiner::add, chunkInput, dim, carried[0], scan.getAccAttr())
              .getResult(0);
      Value chunkRead = read->map ? slicer.sliceMap(read->map, window, scan.getResult(0), prefix) : prefix;
      SmallVector<Value> inputs(2);
      inputs[readIndex] = chunkRead;
      inputs[1 - readIndex] = slicer.slice(op.getInputs()[1 - readIndex], window);
      Value dot = ContractOp::create(b, loc, ProducerSlicer::slicedType(op.getResult(), window), op.getSubscripts(),
                                     inputs, op.getAccAttr());
      // The last row is copied into the carried buffer rather than yielded as a view of the prefix tile:
      // a yielded view keeps the tile alive into the next iteration, so bufferization would allocate a
      // fresh tile per chunk instead of one for the whole loop.
      Value lastRow = extractWindows(b, loc, prefix, {{dim, {b.getIndexAttr(size - 1), 1}}}, stateType);
      Value next = linalg::CopyOp::create(b, loc, lastRow, carried[0]).getResult(0);
      return {next, insertChunk(b, loc, dot, carried[1], dim, start)};
    };
    SmallVector<Value> loop = buildChunkLoop(rewriter, loc, length, chunk, {state, result}, emitChunk);
    // The running sum after the last chunk is the scan's final state.
    for (tensor::CollapseShapeOp collapse : finalStates)
      rewriter.replaceOp(collapse, castToType(rewriter, loc, loop[0], collapse.getType()));
    rewriter.replaceOp(op, loop[1]);
    return success();
  }

  int64_t chunk;
};

} // namespace

void populateChunkScanReaderPatterns(RewritePatternSet &patterns, int64_t chunk) {
  patterns.add<ChunkScanReader>(patterns.getContext(), chunk);
}

} // namespace mlir::la
