//===- LAChunkScans.cpp - chunked form of causal scans --------------------===//
//
// The causal kernels are written as the mathematics: a prefix scan of outer products k_s ⊗ v_s read by a
// contraction with q_t. Materialised, the scan is [.., N, D, Dv]. This pass first recognises the pattern as a
// tril-masked contraction (which states the same sum without the scan), then evaluates that contraction
// chunk by chunk with an O(D·Dv) carried state: the standard chunked form of linear attention (SPEC §1).
//
//===----------------------------------------------------------------------===//

#include "Transforms/CausalChunkStep.h"
#include "Transforms/ChunkBandContractions.h"
#include "Transforms/ChunkBlockContractions.h"
#include "Transforms/ChunkDecayScans.h"
#include "Transforms/ChunkLoops.h"
#include "Transforms/ChunkPairContractions.h"
#include "Transforms/ChunkScanReaders.h"
#include "Transforms/ChunkTrilContractions.h"
#include "Transforms/Passes.h"
#include "Transforms/ProducerSlicer.h"

#include "Conversion/LAToLinalg/LoweringUtils.h"

#include "LA/IR/LAOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::la {
#define GEN_PASS_DEF_LACHUNKSCANS
#include "Transforms/Passes.h.inc"

namespace {

/// Rows (and columns) of a causal contraction's blocks (ChunkTrilContractions.h): the diagonal blocks add
/// T·R/2 pairs to the triangle's T²/2 (3% at T = 4096), and a 128×128 f32 operand block (64 KiB) stays in L2.
/// 128 measured 11–12% faster than 256 on causal AFT-full at T = 1024 and 4096, and 64 no faster than 128
/// (docs/BENCHMARKS.md, session 30).
constexpr int64_t kTrilBlock = 128;

/// A letter not used in `term`, for naming the key position.
char freshLetter(StringRef used) {
  for (char c = 'm'; c <= 'z'; ++c)
    if (!used.contains(c))
      return c;
  for (char c = 'a'; c < 'm'; ++c)
    if (!used.contains(c))
      return c;
  return 0;
}

/// The tril-masked causal contraction `op` (static shapes) evaluated chunk by chunk from `initialState` (zero
/// when null): returns the result and the state after the last chunk.
std::pair<Value, Value> buildChunkedCausal(PatternRewriter &rewriter, ContractOp op, const CausalLayout &layout,
                                           int64_t chunk, Value initialState) {
  int64_t nb = layout.batch.size();
  int64_t length = cast<RankedTensorType>(op.getInputs()[0].getType()).getDimSize(nb);
  auto resultType = op.getResult().getType();
  Location loc = op.getLoc();
  Value state = initialState ? initialState : buildZeroCausalState(rewriter, loc, op, layout);
  Value result = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(), resultType.getElementType());

  // One chunk of `size` positions starting at `start`: returns the new state and the new result.
  auto emitChunk = [&](OpBuilder &bld, Value start, int64_t size, ValueRange carried) -> SmallVector<Value> {
    // Operands that are single-use or cheap maps (Flow's v·comp) are recomputed on the chunk rather
    // than materialised over the whole sequence.
    ProducerSlicer slicer(bld, loc);
    slicer.recomputeCheapMaps();
    auto slice = [&](Value source) { return slicer.slice(source, {{nb, {start, size}}}); };
    Value qc = slice(op.getInputs()[0]);
    Value kc = slice(op.getInputs()[1]);
    Value vc = slice(op.getInputs()[2]);
    Value sum = buildCausalChunk(bld, loc, op, layout, qc, kc, vc, carried[0], size);
    Value updated = insertChunk(bld, loc, sum, carried[1], nb, start);
    return {buildCausalStateUpdate(bld, loc, op, layout, kc, vc, carried[0]), updated};
  };
  SmallVector<Value> loop = buildChunkLoop(rewriter, loc, length, chunk, {state, result}, emitChunk);
  return {loop[1], loop[0]};
}

/// contract(q, scan add (outer(k, v)) along n) ⇒ contract(q, k, v) mask tril(n, m). The vector form
/// contract(q, scan add (k) along n), a normaliser, is left to ChunkScanReader (rewrite 6), which chunks it
/// whether or not a map sits between the scan and the dot.
///
/// A scan that starts from an `init` or whose final state is also returned (a derived prefill or resume variant,
/// la-derive-state-variants) is chunked right away instead: the masked contraction has no place for either, and
/// the chunk loop starts from the init and ends with the final state.
struct FoldScanIntoCausalContract : OpRewritePattern<ContractOp> {
  FoldScanIntoCausalContract(MLIRContext *context, int64_t chunk) : OpRewritePattern(context), chunk(chunk) {}

  LogicalResult matchAndRewrite(ContractOp op, PatternRewriter &rewriter) const override {
    if (op.getMaskAttr() || op.getInputs().size() != 2)
      return failure();
    auto scan = op.getInputs()[1].getDefiningOp<ScanOp>();
    if (!scan || !scan.isInclusivePrefixSum())
      return failure();
    int64_t scanDim = scan.getDimAttr().getInt();
    SmallVector<tensor::CollapseShapeOp> finalStates;
    for (OpOperand &use : scan.getResult(0).getUses()) {
      if (use.getOwner() == op.getOperation() && use.getOperandNumber() == 1)
        continue;
      tensor::CollapseShapeOp collapse = matchFinalState(use.getOwner(), scan.getResult(0), scanDim);
      if (!collapse)
        return failure();
      finalStates.push_back(collapse);
    }
    bool stateful = !scan.getInit().empty() || !finalStates.empty();
    SubscriptsAttr s = op.getSubscripts();
    StringRef qTerm = s.getInput(0), sTerm = s.getInput(1), resultTerm = s.getResult();
    int64_t dim = scan.getDimAttr().getInt();
    if (dim >= static_cast<int64_t>(sTerm.size()))
      return failure();
    char n = sTerm[dim];
    std::string batch = sTerm.substr(0, dim).str();
    // The reader must be pointwise in n with the batch letters in front, q = "Bnd".
    if (qTerm.size() != batch.size() + 2 || qTerm.substr(0, batch.size() + 1) != batch + n ||
        resultTerm.substr(0, batch.size() + 1) != batch + n)
      return failure();
    char d = qTerm.back();
    char m = freshLetter(s.str());
    if (!m)
      return failure();
    std::string ms = batch + m;
    MaskAttr tril = MaskAttr::get(getContext(), MaskKind::tril, n, m, 0);

    // The scanned tensor is contract "Bnd,Bne->Bnde" (k, v).
    auto outer = scan.getInputs()[0].getDefiningOp<ContractOp>();
    if (!outer || outer.getMaskAttr() || outer.getInputs().size() != 2 || sTerm.size() != batch.size() + 3)
      return failure();
    char e = sTerm.back();
    SubscriptsAttr o = outer.getSubscripts();
    if (sTerm[dim + 1] != d || o.getResult() != sTerm || o.getInput(0) != batch + n + d ||
        o.getInput(1) != batch + n + e || resultTerm != batch + n + e)
      return failure();
    auto subscripts = SubscriptsAttr::getFromTerms(getContext(), {qTerm.str(), ms + d, ms + e}, resultTerm);
    if (!stateful) {
      rewriter.replaceOpWithNewOp<ContractOp>(op, op.getType(), subscripts,
                                              ValueRange{op.getInputs()[0], outer.getInputs()[0], outer.getInputs()[1]},
                                              tril, op.getAccAttr());
      return success();
    }
    if (!cast<RankedTensorType>(scan.getResult(0).getType()).hasStaticShape() || !op.getType().hasStaticShape())
      return failure();
    auto causal = ContractOp::create(rewriter, op.getLoc(), op.getType(), subscripts,
                                     ValueRange{op.getInputs()[0], outer.getInputs()[0], outer.getInputs()[1]}, tril,
                                     op.getAccAttr());
    std::optional<CausalLayout> layout = matchCausalContract(causal);
    Value init = scan.getInit().empty() ? Value() : scan.getInit().front();
    if (!layout || (init && init.getType() != getCausalStateType(causal, *layout))) {
      rewriter.eraseOp(causal);
      return failure();
    }
    auto [result, state] = buildChunkedCausal(rewriter, causal, *layout, chunk, init);
    for (tensor::CollapseShapeOp collapse : finalStates)
      rewriter.replaceOp(collapse, castToType(rewriter, op.getLoc(), state, collapse.getType()));
    rewriter.replaceOp(op, result);
    rewriter.eraseOp(causal);
    return success();
  }

  int64_t chunk;
};

/// prior_block(q, k, v) + q · S0 ⇒ the chunk loop of rewrite 2 started from S0, and S0 + Σ k ⊗ v ⇒ its final
/// state. A derived variant of FLASH (la-derive-state-variants, a stretch that starts on a block boundary)
/// writes both: run apart, the stretch's q · S0 is a second [N, Dv] product and its state a second pass over
/// k and v. The sum is a `la.map add`, or by the time this runs an `arith.addf` of two inputs of a map that
/// canonicalisation fused it into (FLASH's division by the positions before the block).
struct FoldStateIntoPriorBlock : OpRewritePattern<MapOp> {
  using OpRewritePattern::OpRewritePattern;

  /// Whether `carried` is q · S0 for `prior`'s q and a state of its chunked form.
  static bool isCarriedState(ContractOp prior, const CausalLayout &layout, ContractOp carried) {
    if (carried.getMaskAttr() || carried.getGate() || carried.getInputs().size() != 2 ||
        carried.getInputs()[0] != prior.getInputs()[0] || carried.getAccAttr() != prior.getAccAttr())
      return false;
    SubscriptsAttr c = carried.getSubscripts();
    return c.getInput(0) == prior.getSubscripts().getInput(0) && c.getInput(1) == layout.batch + layout.d + layout.e &&
           c.getResult() == prior.getSubscripts().getResult() &&
           carried.getInputs()[1].getType() == getCausalStateType(prior, layout);
  }

  /// The `la.map add`s of S0 and contract "Bmd,Bme->Bde" (k, v) of `prior`'s k and v: the state after it.
  static SmallVector<MapOp> finalStatesOf(ContractOp prior, const CausalLayout &layout, Value init) {
    SmallVector<MapOp> sums;
    for (Operation *user : init.getUsers()) {
      auto sum = dyn_cast<MapOp>(user);
      if (!sum || sum.getFn() != MapFn::add || sum.getSubscriptsAttr() || sum.getInputs().size() != 2)
        continue;
      auto own = sum.getInputs()[sum.getInputs()[0] == init ? 1 : 0].getDefiningOp<ContractOp>();
      if (own && !own.getMaskAttr() && !own.getGate() && own.getInputs().size() == 2 &&
          own.getAccAttr() == prior.getAccAttr() && own.getInputs()[0] == prior.getInputs()[1] &&
          own.getInputs()[1] == prior.getInputs()[2] && own.getType() == init.getType() &&
          own.getSubscripts().getResult() == layout.batch + layout.d + layout.e)
        sums.push_back(sum);
    }
    return sums;
  }

  LogicalResult matchAndRewrite(MapOp map, PatternRewriter &rewriter) const override {
    unsigned numInputs = map.getInputs().size();
    bool namedAdd = map.getFn() == MapFn::add && !map.getSubscriptsAttr() && numInputs == 2;
    Block *body = map.getBody().empty() ? nullptr : &map.getBody().front();
    for (unsigned i = 0; i < numInputs; ++i) {
      auto prior = map.getInputs()[i].getDefiningOp<ContractOp>();
      if (!prior || !prior->hasOneUse() || !prior.getMaskAttr() ||
          prior.getMaskAttr().getKind() != MaskKind::prior_block || !prior.getType().hasStaticShape())
        continue;
      std::optional<CausalLayout> layout = matchCausalContract(prior);
      if (!layout)
        continue;
      for (unsigned j = 0; j < numInputs; ++j) {
        auto carried = map.getInputs()[j].getDefiningOp<ContractOp>();
        if (j == i || !carried || !carried->hasOneUse() || !isCarriedState(prior, *layout, carried))
          continue;
        // In a fused body, the two inputs' elements must meet in one addition and nowhere else (and the map
        // must read them at the same indices).
        arith::AddFOp sum;
        if (!namedAdd) {
          SubscriptsAttr subscripts = map.getSubscriptsAttr();
          if (!body || (subscripts && subscripts.getInput(i) != subscripts.getInput(j)))
            continue;
          BlockArgument a = body->getArgument(i), b = body->getArgument(j);
          sum = a.hasOneUse() ? dyn_cast<arith::AddFOp>(*a.getUsers().begin()) : arith::AddFOp();
          if (!sum || !b.hasOneUse() || *b.getUsers().begin() != sum.getOperation())
            continue;
        }
        Value init = carried.getInputs()[1];
        SmallVector<MapOp> finalStates = finalStatesOf(prior, *layout, init);
        rewriter.setInsertionPoint(prior);
        auto [result, state] = buildChunkedCausal(rewriter, prior, *layout, prior.getMaskAttr().getSize(), init);
        for (MapOp finalState : finalStates)
          rewriter.replaceOp(finalState, state);
        if (namedAdd) {
          rewriter.replaceOp(map, result);
        } else {
          // Both inputs read the chunked result; the body keeps one of them (the other goes with the
          // unused-operand cleanup of the lowering).
          rewriter.modifyOpInPlace(map, [&] {
            map.getInputsMutable()[i].set(result);
            map.getInputsMutable()[j].set(result);
          });
          rewriter.replaceOp(sum, body->getArgument(i));
        }
        rewriter.eraseOp(carried);
        rewriter.eraseOp(prior);
        return success();
      }
    }
    return failure();
  }
};

/// A tril-masked causal contraction over a static sequence ⇒ scf.for over chunks with a carried state.
struct ChunkCausalContract : OpRewritePattern<ContractOp> {
  ChunkCausalContract(MLIRContext *context, int64_t chunk) : OpRewritePattern(context), chunk(chunk) {}

  LogicalResult matchAndRewrite(ContractOp op, PatternRewriter &rewriter) const override {
    std::optional<CausalLayout> layout = matchCausalContract(op);
    if (!layout)
      return failure();
    auto qType = cast<RankedTensorType>(op.getInputs()[0].getType());
    auto kType = cast<RankedTensorType>(op.getInputs()[1].getType());
    auto resultType = op.getResult().getType();
    if (!qType.hasStaticShape() || !kType.hasStaticShape() || !resultType.hasStaticShape())
      return failure();
    int64_t nb = layout->batch.size();
    int64_t length = qType.getDimSize(nb);
    // prior_block(n, m, c) is an exclusive scan over chunks of exactly c: each chunk reads only the state
    // of the chunks before it, and the masked form would cost O(N²) however short N is.
    MaskAttr causalMask = op.getMaskAttr();
    bool prior = causalMask.getKind() == MaskKind::prior_block;
    int64_t chunk = prior ? causalMask.getSize() : this->chunk;
    if ((!prior && length <= chunk) || kType.getDimSize(nb) != length)
      return failure();

    rewriter.replaceOp(op, buildChunkedCausal(rewriter, op, *layout, chunk, Value()).first);
    return success();
  }

  int64_t chunk;
};

struct LAChunkScansPass : impl::LAChunkScansBase<LAChunkScansPass> {
  using Base::Base;

  void runOnOperation() override {
    if (chunkSize < 1 || scanChunkSize < 1 || pairTile < 0) {
      getOperation().emitError() << "la-chunk-scans: chunk-size and scan-chunk-size must be positive and "
                                 << "pair-tile not negative, got " << int64_t(chunkSize) << ", "
                                 << int64_t(scanChunkSize) << " and " << int64_t(pairTile);
      return signalPassFailure();
    }
    RewritePatternSet folds(&getContext());
    folds.add<FoldScanIntoCausalContract>(&getContext(), chunkSize);
    folds.add<FoldStateIntoPriorBlock>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(folds))))
      return signalPassFailure();
    // Chunking runs once over the ops present now, so the per-chunk contractions it creates (which are
    // no longer than a chunk anyway) are never revisited.
    RewritePatternSet chunking(&getContext());
    chunking.add<ChunkCausalContract>(&getContext(), chunkSize);
    populateChunkDecayScanPatterns(chunking, chunkSize, factorGatedScores);
    populateChunkBlockContractionPatterns(chunking);
    populateChunkBandContractionPatterns(chunking, chunkSize);
    populateChunkTrilContractionPatterns(chunking, kTrilBlock);
    populateChunkScanReaderPatterns(chunking, scanChunkSize);
    GreedyRewriteConfig config;
    config.setMaxIterations(1);
    (void)applyPatternsGreedily(getOperation(), std::move(chunking), config);
    // Pairs tiles last: they also tile the pairs a chunking above left whole (FLASH's 256×256 diagonal
    // blocks; their causal triangles in the tril row blocks of ChunkTrilContractions.cpp, the scores
    // recomputed per tile), and the tiles they create are no larger than a tile, which they never revisit.
    if (pairTile > 0) {
      RewritePatternSet tiling(&getContext());
      populateChunkPairContractionPatterns(tiling, pairTile);
      populateChunkTrilContractionPatterns(tiling, pairTile, /*recomputeTriangles=*/true);
      (void)applyPatternsGreedily(getOperation(), std::move(tiling), config);
    }
  }
};

} // namespace
} // namespace mlir::la
