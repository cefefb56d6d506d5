//===- Passes.td - transformations on the `la` dialect -----*- tablegen -*-===//
//
// Every pass of the compiler is declared here and nowhere else.
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

    Cost is a weighted op count: an exp, log or tanh counts 8, a division or square root 4, anything else
    1. A producer is recomputed in every consumer when it costs at most `max-recompute-cost`; costlier
    ones with several consumers are materialised once (`sigmoid(q)`, cost 14, is read by six sweeps:
    recomputing it cost 20% more time than reading it back, measured on Flow-Attention at N=4096). A
    producer that does not vary along the consumer's innermost loop is fused only when it costs at most 2:
    that loop is the vector lane loop (and in a register block the lanes and rows are broadcast), so
    anything costlier would be evaluated once per lane or per block.

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

def LAApproximateMath : Pass<"la-approximate-math", "mlir::func::FuncOp"> {
  let summary = "Replaces exp/log/log1p/expm1/tanh/erf with polynomial approximations: math.exp => arith";
  let description = [{
    LLVM cannot vectorise loops that call `expf`; MLIR's polynomial approximations (max error ~2 ulp in
    f32) are plain arithmetic that vectorises. Runs on loops after linalg lowering.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::math::MathDialect",
                           "mlir::vector::VectorDialect"];
}

def LAEmitCInterface : Pass<"la-emit-c-interface", "mlir::ModuleOp"> {
  let summary = "Marks every public function with llvm.emit_c_interface: func @f => @f + @_mlir_ciface_f";
  let description = [{
    The runtime calls kernels through the C interface: one pointer per memref descriptor, arguments first,
    then the out-parameters that `buffer-results-to-out-params` made of the results (`la-emit-call-wrappers`
    packs them into one array).
  }];
}

def LAEmitCallWrappers : Pass<"la-emit-call-wrappers", "mlir::ModuleOp"> {
  let summary = "Adds one packed entry per C interface: llvm.func @_mlir_ciface_f(a0..an) => "
                "+ llvm.func @la_call_f(args) calling it with args[0..n]";
  let description = [{
    The runtime calls every kernel the same way, whatever its number of arguments: `la_call_<f>(void **args)`
    with one memref-descriptor pointer per argument, then one per out-parameter. This pass builds that
    wrapper in the LLVM dialect for each `_mlir_ciface_<f>` (which `la-emit-c-interface` asked
    `convert-func-to-llvm` for), so the module it leaves is exactly what is translated to LLVM IR.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def LALLVMFunctionAttributes : Pass<"la-llvm-function-attributes", "mlir::ModuleOp"> {
  let summary = "Sets the LLVM attributes code generation relies on: target_cpu/target_features on every "
                "definition, llvm.noalias on kernel pointer arguments and on allocator results";
  let description = [{
    - Every function definition gets `target_cpu` and `target_features`, so LLVM vectorises for that CPU
      whatever target machine later optimises the module.
    - The pointer arguments of each public kernel (not of its C-interface and packed wrappers) are
      `llvm.noalias`: the runtime rejects outputs that overlap other tensors and never writes inputs, so
      LLVM may hoist input loads above output stores.
    - `_mlir_memref_to_llvm_aligned_alloc` and `_mlir_memref_to_llvm_alloc` return `llvm.noalias`
      memory, like malloc: a temporary never aliases another or an argument, so loops vectorise without
      runtime alias checks and their scalar fallbacks. (The pipeline asks for the aligned form, whose data
      pointer is the call's result itself, not an inttoptr of it.)
  }];
  let options = [
    Option<"targetCPU", "target-cpu", "std::string", /*default=*/"\"\"", "LLVM CPU name; empty sets none">,
    Option<"targetFeatures", "target-features", "std::string", /*default=*/"\"\"",
           "LLVM target features (+f,-g,...); empty sets none">
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def LAExpandStridedCopies : Pass<"la-expand-strided-copies", "mlir::func::FuncOp"> {
  let summary = "Rewrites memref.copy involving a strided view as linalg.copy (loops, no runtime call)";
  let description = [{
    Contiguous copies lower to a memcpy intrinsic; strided ones would lower to a call to `memrefCopy` from
    MLIR's C runner utilities, which the JIT does not link. Run after bufferization, before linalg becomes
    loops.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def LAPrefetchNextTile : Pass<"la-prefetch-next-tile", "mlir::func::FuncOp"> {
  let summary = "In a loop that steps through a kernel argument tile by tile, prefetches the next "
                "iteration's tile while this one is computed";
  let description = [{
    A cache panel (`kᵀ(v·c)` cut along the sequence) or a causal chunk reads each tile of an argument for the
    first time from DRAM, in a prologue that does little arithmetic, and then computes on it for much longer
    from cache. Hardware prefetchers do not run a whole tile ahead of such a loop. This pass finds, in each
    `scf.for`, the `memref.subview`s of read-only function arguments whose offset along one dimension is the
    induction variable and whose size along it is the step (at least 2 rows: the tile of that iteration),
    and prefetches the next iteration's tile, one `memref.prefetch` per cache line, clamped to the loop's
    range. The prefetches are spread over the longest loop in the body (preferably one that does not read
    the tile, i.e. the row blocks), a few rows per iteration: issued all at the start of the body they made
    the cache panels 5–8% slower. Only tiles of rows of a contiguous innermost dimension are handled. Run
    after bufferisation, before `scf` becomes control flow.
  }];
  let options = [
    Option<"lineBytes", "line-bytes", "int64_t", /*default=*/"64", "Bytes per cache line (one prefetch each)">,
    Option<"maxTileBytes", "max-tile-bytes", "int64_t", /*default=*/"65536", "Largest tile to prefetch">,
    Option<"locality", "locality", "int64_t", /*default=*/"2",
           "Temporal locality hint of the prefetches, 0 (none) to 3 (keep in every level)">
  ];
  let dependentDialects = ["mlir::memref::MemRefDialect", "mlir::scf::SCFDialect", "mlir::arith::ArithDialect"];
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
       `contract "bnd,bmd,bme->bne" (q, k, v) mask tril(n, m)`; likewise `contract "bnd,bnd->bn"
       (q, scan(k))` becomes `contract "bnd,bmd->bn" (q, k) mask tril(n, m)`. The `[.., N, D, Dv]` scan
       disappears.
    2. A `tril(n, m)`-masked contraction of that shape with a static sequence longer than `chunk-size`
       becomes an `scf.for` over chunks carrying the state `S = Σ_{m in earlier chunks} k_m ⊗ v_m`
       (`[.., D, Dv]`, or `[.., D]` for the two-input form). With values, each chunk adds `q_c S`
       (inter-chunk) and `(tril(q_c k_cᵀ)) v_c` (intra-chunk, two contractions of C×C), then updates `S`:
       cost O(N·C·(D + Dv) + N·D·Dv). Without values, each chunk dots `q_c` with the in-chunk prefix sum of
       `k_c` seeded with `S` (an `la.scan ... init(S)`): cost O(N·D). A last partial chunk is emitted
       separately so every shape stays static. Memory O(C·(D + Dv) + D·Dv).
    3. A `decay`-gated scan of outer products read by a contraction (retention, GLA) becomes SPEC §5's
       chunked form with the scan's `init` as the first state (ChunkDecayScans.cpp).
    4. A contraction with a `block`/`causal_block` mask over a contracted position (FLASH) is evaluated
       one diagonal block at a time, its masked producers recomputed on the block (ChunkBlockContractions.cpp);
       a `prior_block` causal contraction is rewrite 2 with chunk = the mask's size.
    5. A contraction with a `band(n, m, w)` mask over a contracted position m (AFT-local) is evaluated in
       blocks of `chunk-size` rows, each reading the `chunk-size + 2(w − 1)` columns its band reaches under a
       shifted mask `band(n, m, w, offset = ..)`: O(N·(C + 2w)) instead of O(N·M) (ChunkBandContractions.cpp).
    6. A row-wise dot product that reads an elementwise map of an inclusive `add` scan,
       `contract "bnd,bnd->bn" (x, f(scan(y)))` (Flow-Attention's causal normalisers, `f = + eps`), becomes
       a loop over chunks carrying the `[.., D]` running sum: each chunk's prefix sum is seeded with it and
       read by the chunk's dot while it is in cache; the `[.., N, D]` prefix sum is never built
       (ChunkScanReaders.cpp).

    With `causal-sweep` (off by default: not yet faster, see docs/BENCHMARKS.md, session 9), rewrite 1 is
    followed by rewrite 0: a kernel whose every op reading the sequence is causal (pointwise along it, an
    inclusive `add` scan along it, a `tril` contraction) becomes one loop over chunks computing every op on
    the chunk's positions, carrying only the scans' running sums and the contractions' states
    (ChunkCausalSweep.cpp). A kernel with any other reader of the sequence is left to rewrites 2-6.

    Chunk operands that are single-use or single-arithmetic-op maps (`v·comp`, `q + eps`) are recomputed
    on the chunk instead of being materialised over the whole sequence.

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
           "Chunk length of prefix sums fused with the dot product that reads them (rewrite 6)">,
    Option<"causalSweep", "causal-sweep", "bool", /*default=*/"false",
           "Evaluate a kernel that is causal throughout as one loop over chunks (rewrite 0)">
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
