//===- Passes.td - target-neutral transformations ---------*- tablegen -*-===//
//
// The passes every target shares: la→la (specialise, reassociate, chunk) and the linalg-level fusion
// that follows the lowering to linalg. A target's own passes are declared with it, in
// compiler/Target/<target>/Transforms/.
//
//===----------------------------------------------------------------------===//

#ifndef LA_TRANSFORMS_PASSES_TD
#define LA_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def LAReassociate : Pass<"la-reassociate"> {
  let summary = "Reorders chains of unmasked contractions to the cheapest pairwise order: (QKᵀ)V => Q(KᵀV)";
  let description = [{
    A product of three tensors written as two `la.contract`s (or one three-input `la.contract`) without a
    mask can be evaluated in three pairwise orders. With static shapes (the runtime specialises kernels to
    the shapes they are called with), this pass counts the multiply-adds of each order and rewrites to the
    cheapest. Non-causal linear attention written as `(φ(Q) φ(K)ᵀ) V` becomes `φ(Q) (φ(K)ᵀ V)`: O(N·D·Dv)
    instead of O(N·M·(D + Dv)), and no N×M intermediate.

    Masked contractions are left alone (a mask ties the two sequence positions together, which is why
    causal forms are written as scans), as are chains whose inner product has other uses and any chain
    with a dynamic dimension, whose cost is unknown.
  }];
  let dependentDialects = ["::mlir::la::LADialect"];
}

def LARefineResultTypes : Pass<"la-refine-result-types", "mlir::ModuleOp"> {
  let summary = "Gives public functions the static result types their bodies compute: "
                "return (tensor.cast %static) => return %static";
  let description = [{
    Once a kernel is specialised to static argument shapes and lowered, canonicalisation makes every
    intermediate static, but the function still returns `tensor<?x...>` through a `tensor.cast`. This pass
    returns the static value instead and updates the function type, so the runtime knows the result shapes
    at compile time and can allocate outputs before the call. Functions with callers are left alone.
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect"];
}

def LAPromoteToF64 : Pass<"la-promote-to-f64", "mlir::ModuleOp"> {
  let summary = "Retypes every f16, bf16 and f32 value, constant and accumulator type to f64: "
                "tensor<?x?xf32> => tensor<?x?xf64>";
  let description = [{
    Builds the fp64 reference of a kernel for the numerics guard (`lac run --check`,
    `RuntimeOptions::checkNumerics`): the same program, every floating-point type widened to f64, function
    signatures, block arguments, `arith.constant` values and `acc = ...` types included. Dense constants are
    converted value by value. The result is compiled like any kernel, without fusion, register tiling or
    approximate math, so it shares only the `la`-level algebra with the kernel it checks.

    A program whose meaning depends on a narrow type (an explicit `arith.truncf`, say) no longer verifies
    after widening; the pass then fails with the verifier's message rather than produce a wrong reference.
  }];
}

def LAFuseElementwise : Pass<"la-fuse-elementwise", "mlir::func::FuncOp"> {
  let summary = "Fuses elementwise linalg.generics into their consumers, recomputing cheap ones: "
                "generic(map(x)) => generic'(x)";
  let description = [{
    Producer-consumer fusion of elementwise `linalg.generic`s (the lowered `la.map`, `la.gate` and
    normalisations) into the generics that consume them, including reductions and contractions. Unlike
    upstream `linalg-fuse-elementwise-ops`, a producer with several consumers is fused into each of them
    (recomputed) when its body is cheap, so `q + eps` is never materialised.

    Cost is the weighted op count of RecomputeCost.h, the model the chunking rewrites use too: an exp, log
    or tanh counts 8, a division or square root 4, a constant 0, anything else 1. A producer is recomputed
    in every consumer when it costs at most `max-recompute-cost`; costlier ones with several consumers are
    materialised once (`sigmoid(q)`, cost 14, is read by six sweeps: recomputing it cost 20% more time than
    reading it back, measured on Flow-Attention at N=4096). A producer that does not vary along the
    consumer's innermost loop is fused only when it is cheap (at most `kCheapRecomputeCost`, 2): that loop
    is the vector lane loop (and in a register block the lanes and rows are broadcast), so anything
    costlier would be evaluated once per lane or per block.

    An elementwise `x + r`, where `r` is a reduction started from a zero fill that nothing else reads and
    `x` is defined before it, becomes `r` started from `x`: a chunked causal contraction's state update
    `S + k_cᵀ v_c` accumulates into S, and a chunk's `q_c·S + tril(q_c k_cᵀ) v_c` accumulates its second
    term onto its first, without a zero-filled tile and an extra loop (Flow causal: 12.7 to 11.2 ms at
    N=4096).
  }];
  let options = [
    Option<"maxRecomputeCost", "max-recompute-cost", "unsigned", /*default=*/"4",
           "Largest weighted producer cost recomputed in each of several consumers rather than materialised">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def LASpecialize : Pass<"la-specialize", "mlir::ModuleOp"> {
  let summary = "Specialises one entry to concrete argument types and refines every la result type: "
                "tensor<?x?xf32> => tensor<37x64xf32>";
  let description = [{
    The runtime compiles a kernel for the shapes it is called with. This pass keeps only `entry` (other
    functions become private and are erased once unused), gives its arguments the `arg-types` (e.g.
    `tensor<1x1x4096x64xf32>`; `?` dimensions of the signature may become static, static ones must match),
    then infers each `la` op's result type from its operands, so every later stage sees static loop
    bounds. A mismatch with the signature is reported with the argument index and dimension.

    Half-precision storage: an `f32` argument may be given as `f16` or `bf16` (all such arguments one
    type). It is widened to f32 where the body starts, so the kernel computes and accumulates in f32 as
    written, and every f32 result is rounded to that half type at the return.
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"\"", "Function to keep and specialise">,
    ListOption<"argTypes", "arg-types", "std::string", "Argument types, one per argument, e.g. tensor<1x1x37x64xf32>">
  ];
  let dependentDialects = ["mlir::tensor::TensorDialect", "mlir::linalg::LinalgDialect", "mlir::arith::ArithDialect"];
}

def LAChunkScans : Pass<"la-chunk-scans", "mlir::func::FuncOp"> {
  let summary = "Turns causal prefix scans read by a contraction into chunks: "
                "q·scan(k⊗v) => Σ_c (q_c·S_{<c} + tril(q_c k_cᵀ) v_c)";
  let description = [{
    Rewrites, applied in order:

    1. A contraction that reads an inclusive `add` scan along the sequence of an outer product,
       `contract "bnd,bnde->bne" (q, scan(contract "bnd,bne->bnde" (k, v)))`, is the causal product
       `contract "bnd,bmd,bme->bne" (q, k, v) mask tril(n, m)`. The `[.., N, D, Dv]` scan disappears.
    2. A `tril(n, m)`-masked contraction of that shape with a static sequence longer than `chunk-size`
       becomes an `scf.for` over chunks carrying the `[.., D, Dv]` state `S = Σ_{m in earlier chunks}
       k_m ⊗ v_m`. Each chunk adds `q_c S` (inter-chunk) and `(tril(q_c k_cᵀ)) v_c` (intra-chunk, two
       contractions of C×C), then updates `S`: cost O(N·C·(D + Dv) + N·D·Dv). A last partial chunk is
       emitted separately so every shape stays static. Memory O(C·(D + Dv) + D·Dv).
    3. A `decay`-gated scan of outer products read by a contraction (retention, GLA) becomes SPEC §5's
       chunked form with the scan's `init` as the first state (ChunkDecayScans.cpp).
    4. A contraction with a `block`/`causal_block` mask over a contracted position (FLASH) is evaluated
       one diagonal block at a time, its masked producers recomputed on the block (ChunkBlockContractions.cpp);
       a `prior_block` causal contraction is rewrite 2 with chunk = the mask's size.
    5. A contraction with a `band(n, m, w)` mask over a contracted position m (AFT-local) is evaluated in
       blocks of `chunk-size` rows, each reading the `chunk-size + 2(w − 1)` columns its band reaches under a
       shifted mask `band(n, m, w, offset = ..)`: O(N·(C + 2w)) instead of O(N·M) (ChunkBandContractions.cpp).
    6. A row-wise dot product that reads an inclusive `add` scan, directly or through an elementwise map,
       `contract "bnd,bnd->bn" (x, f(scan(y)))` (every causal normaliser: linear attention's `q·Σk`,
       Flow-Attention's with `f = + eps`), becomes a loop over chunks of `scan-chunk-size` carrying the
       `[.., D]` running sum: each chunk's prefix sum is seeded with it and read by the chunk's dot while
       it is in cache, O(N·D); the `[.., N, D]` prefix sum is never built (ChunkScanReaders.cpp). This is
       the one chunked form of a normaliser: rewrites 1 and 2 take only the form with values.

    Chunk operands that are single-use or cheap maps (`v·comp`, `q + eps`: at most `kCheapRecomputeCost`
    in RecomputeCost.h's model) are recomputed on the chunk instead of being materialised over the whole
    sequence.

    The batch letters (shared by every operand) stay in front; other layouts are left alone.
  }];
  let options = [
    Option<"chunkSize", "chunk-size", "int64_t", /*default=*/"16", "Chunk length along the sequence">,
    // Rewrite 6 does no C×C work, so its chunk only trades cache residency of the [C, D] prefix tile
    // against per-chunk overhead. At 32 positions (D = 64) the prefix tile and the panels it reads (8 KiB
    // each) stay in L1: Flow causal 9.6–9.7 → 9.4–9.6 ms against 64 at N = 4096, 44.6 → 42.5–44.1 ms at
    // N = 16384, same cold compile (0.27 s); at 16 the kernel is no faster than at 32 and the compile
    // grows to 0.38 s (LLVM unrolls the loops), and at 128 Flow causal is 7% slower.
    Option<"scanChunkSize", "scan-chunk-size", "int64_t", /*default=*/"32",
           "Chunk length of prefix sums fused with the dot product that reads them (rewrite 6)">
  ];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::tensor::TensorDialect", "mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect"];
}

def LAGroupSweeps : Pass<"la-group-sweeps", "mlir::func::FuncOp"> {
  let summary = "Groups the ops that read the sequence tile by tile into one loop per sweep: "
                "a = 1/(q·s); r = Σ_n q_n a_n => for n-tile: { a_t = 1/(q_t·s); r += q_tᵀ a_t }";
  let description = [{
    Visits the linalg.generics of a function body from the last to the first. A generic whose longest
    loop (on static shapes) is longer than `sweep-tile` becomes a *sweep root*: it is tiled along that
    loop with `scf::tileConsumerAndFuseProducersUsingSCF`, and each linalg producer it reads tile by tile
    is computed inside the loop, transitively. A producer with readers after the root is still fused, and
    the loop yields its whole value for them; a producer read by an op before the root, a producer read
    whole (a `[D, Dv]` state), and the accumulator of a tiled reduction stay outside. Nothing is computed
    twice. The last partial tile of each sweep is peeled, so the main loop's tiles have static shapes.

    On Flow-Attention this turns about a dozen loops over `[N, D]` operands into the sweeps of SPEC.md §6:
    Σq and Σk with the feature maps; the flows I, O with Σk·b and Σq·a; the competition with kᵀ(v·comp);
    the read-out q·(kᵀv) with the conserved flow and the gate.

    Off by default; a tunable (`group-sweeps` in compiler/Pipelines/PipelineOptions.def) because it is
    faster only where one slice's operands outgrow L2: 13–15% faster on the non-causal kernels at
    N = 16384 (Flow 40.4 → 35.1 ms, linear 36.2 → 30.9 ms), neutral to 5% slower at N = 4096 and 4–5%
    slower on the causal ones, whose sweeps outside the chunk loops only add per-tile overhead
    (docs/BENCHMARKS.md, session 4).
  }];
  let options = [
    Option<"sweepTile", "sweep-tile", "int64_t", /*default=*/"64", "Rows of the sequence per sweep step">
  ];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::tensor::TensorDialect", "mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect", "mlir::bufferization::BufferizationDialect"];
}

// Register tiling, as steps (IREE's LLVMCPU pipeline is the model): a strategy pass attaches a
// #la.register_block config to each contraction it plans, and single-purpose passes carry it out. The
// `la-register-tile-contractions` pipeline (Target/CPU/RegisterTilePipeline.h) lists them in order.

def LARegisterBlockStrategy : Pass<"la-register-block-strategy", "mlir::func::FuncOp"> {
  let summary = "Plans register blocks: attaches #la.register_block to each contraction worth blocking";
  let description = [{
    Targets generics on static tensors with one output and at least one reduction loop whose output's
    innermost loop (the *vector loop*) is also the innermost (unit-stride) index of every input that reads
    it. That covers `q·(kᵀv)`, `kᵀv`, the chunked causal products and the reductions to vectors over the
    sequence; dot-product shapes (the vector loop strided in an input) are left to LLVM's loop vectoriser. An
    input that reads the vector loop with a stride in a matrix product that reuses it at least 8 times
    (`k[m, d]` in `q·kᵀ`) is planned for a transposed copy instead. Contractions that evaluate a
    transcendental function of the output position in every summand (GLA's per-key decay) are left alone:
    they are bound by that function, not by FMAs.

    The plan (`#la.register_block`, attribute `la.register_block`, LAAttrs.td): the vector loop is cut into
    blocks of up to `vector-tile` lanes, the output's next loop longer than one (the *row loop*) into as many
    rows as fit `register-budget` vector registers (at most `max-rows`), every other loop into 1, with the
    reduction loops innermost. A contraction with several row blocks and one reduction at least two panels
    long also gets a panel of `reduction-panel` reduction steps (0: none).

    The config is recomputed for every generic that is not one register block already, and dropped where it
    no longer applies; so the strategy runs again after a step that reshapes the contractions (panels,
    epilogue fusion). Decisions are logged under `-debug-only=la-register-block-strategy`.
  }];
  let options = [
    Option<"vectorTile", "vector-tile", "int64_t", /*default=*/"64", "Largest tile of the vector loop (lanes)">,
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16", "Lanes of one hardware vector register">,
    Option<"registerBudget", "register-budget", "int64_t", /*default=*/"24",
           "Vector registers for the accumulator tile (rows × ⌈vector-tile / vector-width⌉)">,
    Option<"maxRows", "max-rows", "int64_t", /*default=*/"8", "Largest tile of the row loop">,
    Option<"reductionPanel", "reduction-panel", "int64_t", /*default=*/"64",
           "Reduction iterations per cache panel of a long contraction (0: no panels)">
  ];
  let dependentDialects = ["mlir::la::LADialect"];
}

def LAReductionPanels : Pass<"la-reduction-panels", "mlir::func::FuncOp"> {
  let summary = "Cuts the long reduction of each contraction whose #la.register_block has a panel into "
                "cache panels: for p: C += A[:, p:p+P]·B[p:p+P, :]";
  let description = [{
    A register-blocked contraction with a long reduction (`kᵀ(v·c)` over the sequence) reads both operands
    once per row block. Cutting the reduction into panels of `panel_size` steps keeps each panel's operands
    in L1 while every row block reads them; the part of its fused body that does not depend on the row loop
    (`v·c`) becomes an elementwise generic computed once per panel instead of once per row block
    (ReductionPanels.h). A ragged last panel is peeled. The panel contractions are planned again by the
    strategy (they have new operands and shapes).
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::tensor::TensorDialect", "mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect"];
}

def LAFuseBlockEpilogues : Pass<"la-fuse-block-epilogues", "mlir::func::FuncOp"> {
  let summary = "Applies the elementwise consumer of a blocked matrix product to each register block: "
                "y = f(A·B) => for block: y[block] = f(A[rows]·B[:, lanes])";
  let description = [{
    A matrix product (a contraction whose #la.register_block has a row loop) whose only user is elementwise
    (a gate `w[n]·(q·kv)[n,e]`, a division by a row normaliser) is fused with it block by block: the consumer
    is tiled by the product's register block and the product, with the zero fill of its accumulator, is
    fused into each tile (BlockEpilogues.h). Each block then stores the output once, and no N×Dv temporary
    is filled, written and read back. Likewise an elementwise consumer of a loop that writes its result a
    tile at a time (a causal chunk loop's output) is fused into the loop and applied to each tile. The
    consumer and fill tiles are marked as register blocks for vectorisation; the fused products, now
    block-sized, are planned again by the strategy.
  }];
  let dependentDialects = ["mlir::la::LADialect", "mlir::scf::SCFDialect", "mlir::tensor::TensorDialect", "mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect"];
}

def LATransposeBlockInputs : Pass<"la-transpose-block-inputs", "mlir::func::FuncOp"> {
  let summary = "Copies the inputs that a #la.register_block lists under `transpose` into a layout whose "
                "innermost dimension is the vector loop: k[m, d] => kᵀ[d, m]";
  let description = [{
    Each copy is made once, in front of the outermost loop around the contraction that the input is defined
    outside of. When both moved dimensions are multiples of `vector-width`, the copy is tiled into
    `vector-width`×`vector-width` register blocks (a `vector.transpose` each, lowered as a shuffle network);
    other shapes keep a scalar copy.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16", "Lanes of one hardware vector register">
  ];
  let dependentDialects = ["mlir::la::LADialect", "mlir::scf::SCFDialect", "mlir::tensor::TensorDialect", "mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect"];
}

def LATileRegisterBlocks : Pass<"la-tile-register-blocks", "mlir::func::FuncOp"> {
  let summary = "Tiles each contraction into the blocks of its #la.register_block and peels ragged loops: "
                "C[n,e] += A[n,d]·B[d,e] => for n-block, e-block, d: C[R×V] += A[R, d]·B[d, V]";
  let description = [{
    `scf::tileUsingSCF` builds the block loops in the config's order; each loop whose trip does not divide
    is peeled (the remainder blocks too, outer to inner), and canonicalisation folds the peeled bounds, so
    every block has a static shape. The blocks keep the config, which marks them for vectorisation.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::tensor::TensorDialect", "mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect"];
}

def LAVectorizeRegisterBlocks : Pass<"la-vectorize-register-blocks", "mlir::func::FuncOp"> {
  let summary = "Vectorises every register block (an op whose loops fit its #la.register_block) and drops "
                "the configs";
  let description = [{
    `linalg::vectorize` turns each static block into n-D vector ops (a block left dynamic stays a generic and
    becomes scalar loops). The clean-up then lowers broadcasting reads to read + `vector.broadcast`, moves
    elementwise ops above the broadcasts so a fused `exp(x[m])` runs once per block row instead of once per
    lane, and turns multiply-adds into `vector.fma` (RegisterBlockPatterns.h).
  }];
  let dependentDialects = ["mlir::vector::VectorDialect", "mlir::arith::ArithDialect"];
}

def LAHoistBlockAccumulators : Pass<"la-hoist-block-accumulators", "mlir::func::FuncOp"> {
  let summary = "Carries each register block's accumulator across its reduction loops in registers: "
                "for d: acc = read C; acc += ...; write C => acc = read C; for d: acc += ...; write C";
  let description = [{
    `hoistLoopInvariantSubsets` on every loop of a function with register blocks (vector transfers), so each
    reduction step is R broadcasts, ⌈V/width⌉ loads and R·⌈V/width⌉ FMAs, with no load or store of the
    accumulator. Functions without register blocks are left to LLVM.
  }];
}

def LASlicePositions : Pass<"la-slice-positions", "mlir::ModuleOp"> {
  let summary = "Makes a batch×head slice of an entry read its position from arguments: "
                "la.index 1 => la.index 1 + extract(%position_1[0, 0])";
  let description = [{
    The runtime compiles a kernel that is independent over its leading `dims` dimensions (batch, head) once
    for a single slice, those dimensions of size 1, and calls it once per slice (Analysis/BatchSlicing.h).
    A `la.index d` on such a dimension (retention's per-head decay 1 − 2^{−5−h}) would then always read 0.
    This pass appends `dims` arguments `tensor<1x...x1xf32>` to `entry`, the slice's coordinate along each
    leading dimension, which the runtime fills per call, and adds that coordinate to every `la.index d`,
    d < `dims`. Without it such an entry could only be sliced over the dimensions before the first one it
    indexes: retention over the batch alone, so at B = 1 on one core.

    Run after inlining (the index may sit in a callee) and before canonicalisation folds maps together. The
    coordinates are f32: exact up to 2^24, beyond any batch or head count.
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"\"", "The sliced entry">,
    Option<"dims", "dims", "int64_t", /*default=*/"0", "Leading dimensions the runtime slices over">
  ];
  let dependentDialects = ["mlir::tensor::TensorDialect", "mlir::arith::ArithDialect"];
}

#endif // LA_TRANSFORMS_PASSES_TD
