//===- ChunkDecayScans.cpp - chunked form of decay scans ------------------===//
//
// Retention and gated linear attention are written as the recurrence: S_t = diag(e^{g_t}) S_{t-1} + k_t ⊗ v_t
// scanned along the sequence, read by o_t = q_t S_t. Materialised, the states are [.., T, K, V]. This rewrite
// evaluates the same sum chunk by chunk (SPEC §5), with b the in-chunk inclusive cumsum of the log-gates:
//
//   o_c   = (q_c ⊙ e^{b}) S  +  (q_c k_cᵀ ⊙ L) v_c,     L_ij = e^{b_i - b_j} [i ≥ j]   (decay mask)
//   S    ← e^{b_last} S  +  (k_c ⊙ e^{b_last - b})ᵀ v_c
//
// Every exponent is ≤ 0 (log-gates are ≤ 0), so nothing overflows. A per-key gate (GLA) makes L depend on
// the key dimension, so the decay is applied inside the score contraction instead of on its result. The
// scan's `init` is the state before the first chunk; the slice of the scan at its last position, collapsed
// to [.., K, V] (the final state, a second kernel result), becomes the state after the last chunk.
//
// With several (batch, head) slices (a kernel the runtime does not slice, such as retention, whose gate
// depends on the head), the slices run one after the other, each with its own chunk loop: the carried state
// is one slice's [K, V] and stays in cache, as in a kernel compiled per slice, instead of a [B, H, K, V]
// state swept by every op of every chunk.
//
//===----------------------------------------------------------------------===//

#include "Transforms/ChunkDecayScans.h"
#include "Transforms/ChunkLoops.h"

#include "Conversion/LAToLinalg/LoweringUtils.h"
#include "Transforms/ProducerSlicer.h"

#include "LA/IR/LAOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::la {
namespace {

/// The letters of `contract "Bnd,Bnde->Bne" (q, scan decay (contract "Bnd,Bne->Bnde" (k, v)), g)`.
struct DecayLayout {
  std::string batch;
  char n = 0, m = 0, d = 0, e = 0;
  bool perKeyGate = false; // g : [B, n, d] (GLA) instead of [B, n]
};

struct ChunkDecayScan : OpRewritePattern<ScanOp> {
  ChunkDecayScan(MLIRContext *context, int64_t chunk, bool factorGatedScores)
      : OpRewritePattern(context), chunk(chunk), factorGatedScores(factorGatedScores) {}

  LogicalResult matchAndRewrite(ScanOp scan, PatternRewriter &rewriter) const override {
    if (scan.getCombiner() != Combiner::decay || scan.getKind() != ScanKind::inclusive || scan.getReverse() ||
        scan.getWindow())
      return failure();
    auto stateSeq = cast<RankedTensorType>(scan.getResult(0).getType());
    if (!stateSeq.hasStaticShape())
      return failure();
    int64_t nb = scan.getDimAttr().getInt();
    if (stateSeq.getRank() != nb + 3)
      return rewriter.notifyMatchFailure(scan, "scanned values are not [B.., T, K, V]");

    // One reader contracting with queries; every other user takes the final state.
    ContractOp reader;
    SmallVector<tensor::CollapseShapeOp> finalStates;
    for (Operation *user : scan.getResult(0).getUsers()) {
      if (tensor::CollapseShapeOp collapse = matchFinalState(user, scan.getResult(0), nb))
        finalStates.push_back(collapse);
      else if (auto contract = dyn_cast<ContractOp>(user); contract && !reader)
        reader = contract;
      else
        return rewriter.notifyMatchFailure(scan, "a user is neither the query contraction nor a final slice");
    }
    auto outer = scan.getInputs()[0].getDefiningOp<ContractOp>();
    if (!reader || !outer || !outer->hasOneUse() || outer.getMaskAttr() || outer.getInputs().size() != 2 ||
        reader.getMaskAttr() || reader.getInputs().size() != 2 || reader.getInputs()[1] != scan.getResult(0))
      return rewriter.notifyMatchFailure(scan, "not q · scan(k ⊗ v)");

    SubscriptsAttr r = reader.getSubscripts(), o = outer.getSubscripts();
    DecayLayout l;
    l.batch = o.getResult().substr(0, nb).str();
    l.n = o.getResult()[nb];
    l.d = o.getResult()[nb + 1];
    l.e = o.getResult()[nb + 2];
    const std::string &b = l.batch;
    std::string bn = b + l.n;
    if (o.getInput(0) != bn + l.d || o.getInput(1) != bn + l.e || r.getInput(0) != bn + l.d ||
        r.getInput(1) != o.getResult() || r.getResult() != bn + l.e)
      return rewriter.notifyMatchFailure(scan, "letters are not Bnd,Bne->Bnde read by Bnd,Bnde->Bne");
    // The key position's letter: 'm' by convention, else the next unused one.
    for (char c : StringRef("mpqrsuvwxyzabcfgijklot"))
      if (!l.m && !o.getResult().contains(c))
        l.m = c;
    Value gate = scan.getInputs()[1];
    auto gateType = cast<RankedTensorType>(gate.getType());
    l.perKeyGate = gateType.getRank() == nb + 2;
    if (gateType.getRank() != nb + 1 && !l.perKeyGate)
      return rewriter.notifyMatchFailure(scan, "the gate is neither per position nor per position and key");

    Value q = reader.getInputs()[0], k = outer.getInputs()[0], v = outer.getInputs()[1];
    auto resultType = reader.getResult().getType();
    Type elementType = resultType.getElementType();
    int64_t length = stateSeq.getDimSize(nb);
    int64_t dSize = stateSeq.getDimSize(nb + 1), eSize = stateSeq.getDimSize(nb + 2);
    ArrayRef<int64_t> batchShape = stateSeq.getShape().take_front(nb);
    bool oneSlice = llvm::all_of(batchShape, [](int64_t size) { return size == 1; });
    // Every value below is one (batch, head) slice: leading dimensions of size 1.
    auto shaped = [&](ArrayRef<int64_t> tail) {
      SmallVector<int64_t> shape(nb, 1);
      shape.append(tail.begin(), tail.end());
      return RankedTensorType::get(shape, elementType);
    };
    RankedTensorType stateType = shaped({dSize, eSize});
    Location loc = scan.getLoc();
    MLIRContext *context = getContext();
    auto acc = reader.getAccAttr();
    auto named = [&](OpBuilder &bld, MapFn fn, SubscriptsAttr subscripts, Type type, ValueRange inputs) {
      return MapOp::create(bld, loc, type, fn, inputs, subscripts).getResult();
    };
    auto terms = [&](ArrayRef<std::string> inputs, StringRef result) {
      return SubscriptsAttr::getFromTerms(context, inputs, result);
    };

    // One chunk of `size` positions from `start` of the slice at `index`: returns the state after it and the
    // result with its rows written.
    auto emitChunk = [&](OpBuilder &bld, ArrayRef<DimWindow> index, Value start, int64_t size,
                         ValueRange carried) -> SmallVector<Value> {
      Value st = carried[0], res = carried[1];
      SmallVector<DimWindow> windows(index);
      windows.push_back({nb, {start, size}});
      // A cheap or single-use map of an operand (q's scaling) is recomputed on the chunk rather than
      // materialised over every slice at once, except q's in a kernel of one slice (what the runtime
      // compiles): there one streaming pass over the slice's q is faster than a chunk-sized temporary per
      // chunk (simple GLA 5% at N = 16384; docs/BENCHMARKS.md, session 15).
      ProducerSlicer slicer(bld, loc);
      slicer.recomputeCheapMaps();
      auto slice = [&](Value source) { return slicer.slice(source, windows); };
      Value qc = oneSlice ? extractWindows(bld, loc, q, windows) : slice(q);
      Value kc = slice(k), vc = slice(v), gc = slice(gate);
      // Letters and shapes of the gate: per position ("Bn"), or per position and key ("Bnd").
      std::string gTerm = l.perKeyGate ? bn + l.d : bn;
      std::string lastTerm = l.perKeyGate ? b + l.d : b;
      RankedTensorType gType = l.perKeyGate ? shaped({size, dSize}) : shaped({size});
      RankedTensorType lastType = l.perKeyGate ? shaped({dSize}) : shaped({});
      RankedTensorType qkType = shaped({size, dSize});
      RankedTensorType outType = shaped({size, eSize});

      // b = in-chunk inclusive cumsum of g; b_last = the chunk's total.
      Value cum = ScanOp::create(bld, loc, gType, Combiner::add, gc, nb, Value(), acc).getResult(0);
      Value last = ReduceOp::create(bld, loc, lastType, Combiner::add, gc, ArrayRef<int64_t>{nb}, acc).getResult(0);

      // q_c ⊙ e^{b}: the inter-chunk term's queries, and the factored scores' (below).
      Value qDecayed = named(bld, MapFn::mul, terms({bn + l.d, gTerm}, bn + l.d), qkType,
                             ValueRange{qc, named(bld, MapFn::exp, {}, gType, ValueRange{cum})});
      // Intra-chunk: decay-masked scores (the mask computes e^{b_i - b_j} from gc), then times v_c.
      MaskAttr decay = MaskAttr::get(context, MaskKind::decay, l.n, l.m, 0);
      std::string bm = b + l.m;
      RankedTensorType scoresType = shaped({size, size});
      auto exactScores = [&](OpBuilder &at) {
        return ContractOp::create(at, loc, scoresType, terms({bn + l.d, bm + l.d}, bn + l.m), ValueRange{qc, kc}, decay,
                                  gc, acc)
            .getResult();
      };
      Value scores;
      // In f32 or f64 only: a half type's range (e^11 for f16) holds no useful factor.
      if (factorGatedScores && l.perKeyGate && size > 1 && (elementType.isF32() || elementType.isF64())) {
        // A per-key gate puts e^{b_i,d - b_j,d} inside the sum over d: C·C·D exps per chunk, which make GLA
        // exp-bound. Split into (q_i ⊙ e^{b_i}) · (k_j ⊙ e^{-b_j}), the scores become a tril-masked matrix
        // product with 2·C·D exps (the GLA paper's secondary chunking, with the chunk start as reference).
        // e^{b_i} ≤ 1, but e^{-b_j} grows with the chunk's total decay: while every key dimension decays by at
        // most e^{-kMaxFactoredDecay} over the chunk, the factors stay far from f32's range (e^{88}) and each
        // product is q_i k_j e^{b_i - b_j} to rounding; a chunk that decays faster takes the exact form.
        constexpr double kMaxFactoredDecay = 40.0;
        Value lastMin = ReduceOp::create(bld, loc, shaped({}), Combiner::min, last,
                                         ArrayRef<int64_t>{static_cast<int64_t>(nb)}, acc)
                            .getResult(0);
        SmallVector<Value> origin(nb, arith::ConstantIndexOp::create(bld, loc, 0));
        Value decayMin = tensor::ExtractOp::create(bld, loc, lastMin, origin);
        Value bound = arith::ConstantOp::create(bld, loc, FloatAttr::get(elementType, -kMaxFactoredDecay));
        Value factorable = arith::CmpFOp::create(bld, loc, arith::CmpFPredicate::OGE, decayMin, bound);
        auto branch = scf::IfOp::create(
            bld, loc, factorable,
            [&](OpBuilder &then, Location) {
              Value grown = named(then, MapFn::exp, {}, gType, ValueRange{named(then, MapFn::neg, {}, gType, {cum})});
              Value kGrown = named(then, MapFn::mul, terms({bn + l.d, gTerm}, bn + l.d), qkType, ValueRange{kc, grown});
              MaskAttr tril = MaskAttr::get(context, MaskKind::tril, l.n, l.m, 0);
              Value factored = ContractOp::create(then, loc, scoresType, terms({bn + l.d, bm + l.d}, bn + l.m),
                                                  ValueRange{qDecayed, kGrown}, tril, acc);
              scf::YieldOp::create(then, loc, factored);
            },
            [&](OpBuilder &otherwise, Location) { scf::YieldOp::create(otherwise, loc, exactScores(otherwise)); });
        scores = branch.getResult(0);
      } else {
        scores = exactScores(bld);
      }
      Value intra =
          ContractOp::create(bld, loc, outType, terms({bn + l.m, bm + l.e}, bn + l.e), ValueRange{scores, vc}, acc);
      // Inter-chunk: (q_c ⊙ e^{b}) S.
      Value inter = ContractOp::create(bld, loc, outType, terms({bn + l.d, b + l.d + l.e}, bn + l.e),
                                       ValueRange{qDecayed, st}, acc);
      Value sum = named(bld, MapFn::add, {}, outType, ValueRange{inter, intra});

      // State: e^{b_last} S + (k_c ⊙ e^{b_last - b})ᵀ v_c.
      Value toEnd = named(bld, MapFn::sub, terms({lastTerm, gTerm}, gTerm), gType, ValueRange{last, cum});
      Value kDecayed = named(bld, MapFn::mul, terms({bn + l.d, gTerm}, bn + l.d), qkType,
                             ValueRange{kc, named(bld, MapFn::exp, {}, gType, ValueRange{toEnd})});
      Value added = ContractOp::create(bld, loc, stateType, terms({bn + l.d, bn + l.e}, b + l.d + l.e),
                                       ValueRange{kDecayed, vc}, acc);
      Value kept = named(bld, MapFn::mul, terms({lastTerm, b + l.d + l.e}, b + l.d + l.e), stateType,
                         ValueRange{named(bld, MapFn::exp, {}, lastType, ValueRange{last}), st});
      Value next = named(bld, MapFn::add, {}, stateType, ValueRange{kept, added});

      return {next, insertWindows(bld, loc, sum, res, windows)};
    };

    // The (batch, head) slices one after the other, each a loop over its chunks: the carried [K, V] state is
    // one slice's, which stays in cache, as in a kernel the runtime compiles per slice. Carried across slices:
    // the result and, when it is read, the final state of every slice.
    Value zeroState;
    if (scan.getInit().empty())
      zeroState = arith::ConstantOp::create(rewriter, loc, stateType,
                                            DenseElementsAttr::get(stateType, rewriter.getZeroAttr(elementType)));
    SmallVector<Value> slicesInit{tensor::EmptyOp::create(rewriter, loc, resultType.getShape(), elementType)};
    if (!finalStates.empty())
      slicesInit.push_back(
          tensor::EmptyOp::create(rewriter, loc, finalStates.front().getResultType().getShape(), elementType));
    auto emitSlice = [&](OpBuilder &bld, ArrayRef<DimWindow> index, ValueRange carried) -> SmallVector<Value> {
      Value state = zeroState ? zeroState : extractWindows(bld, loc, scan.getInit().front(), index);
      // Full chunks in a loop (none when the sequence fits one chunk), then the partial tail.
      SmallVector<Value> out =
          buildChunkLoop(bld, loc, length, chunk, {state, carried[0]},
                         [&](OpBuilder &inner, Value start, int64_t size, ValueRange chunkCarried) {
                           return emitChunk(inner, index, start, size, chunkCarried);
                         });
      SmallVector<Value> next{out[1]};
      if (!finalStates.empty())
        next.push_back(insertWindows(bld, loc, out[0], carried[1], index));
      return next;
    };
    SmallVector<Value> out = buildBatchLoops(rewriter, loc, batchShape, slicesInit, emitSlice);
    Value result = out[0];
    Value state = finalStates.empty() ? Value() : out[1];

    for (tensor::CollapseShapeOp finalState : finalStates) {
      auto slice = finalState.getSrc().getDefiningOp<tensor::ExtractSliceOp>();
      rewriter.replaceOp(finalState, state);
      if (slice)
        rewriter.eraseOp(slice);
    }
    rewriter.replaceOp(reader, result);
    rewriter.eraseOp(scan);
    rewriter.eraseOp(outer);
    return success();
  }

  int64_t chunk;
  bool factorGatedScores;
};

} // namespace

void populateChunkDecayScanPatterns(RewritePatternSet &patterns, int64_t chunk, bool factorGatedScores) {
  patterns.add<ChunkDecayScan>(patterns.getContext(), chunk, factorGatedScores);
}

} // namespace mlir::la
