//===- CPUPasses.td - the CPU target's passes --------------*- tablegen -*-===//
//
// Passes that only the CPU target runs: they shape loops for a CPU's vector units and caches, or prepare
// the LLVM dialect module that the CPU target translates and links. The target-neutral la→la and
// linalg-level passes are in compiler/Transforms/Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef LA_TARGET_CPU_TRANSFORMS_PASSES_TD
#define LA_TARGET_CPU_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def LATileIndependentDim : Pass<"la-tile-independent-dim", "mlir::func::FuncOp"> {
  let summary = "Tiles a whole function along a dimension every op computes independently, so that one "
                "tile's intermediates fit in cache: for h: { e^K, e^K ⊙ V, padded copies, window sums of head h }";
  let description = [{
    The runtime slices an entry over its leading batch dimensions; an independent dimension further in
    (AFT-conv's heads, [B, X, Y, h, c]) is left whole, so every intermediate is as large as the image:
    AFT-conv writes two padded copies of 10 MB per batch slice and reads them back after they have left the
    caches. This pass finds a loop of the function's final op that every op feeding it computes
    independently: a parallel loop that indexes each operand by itself (no window offset, no reduction),
    propagated producer by producer through their indexing maps, whose producers nothing outside that
    chain reads. When the intermediates of that chain exceed `cache-tile-bytes`, the final op is tiled
    along it with `scf::tileConsumerAndFuseProducersUsingSCF`, every producer of the chain fused, the tile
    the largest whose intermediates fit (at least one index). The innermost dimension of the result is
    never chosen: it is what the register blocks vectorise.
  }];
  let options = [
    Option<"cacheTileBytes", "cache-tile-bytes", "int64_t", /*default=*/"4194304",
           "Largest footprint of intermediates left whole, and of one tile's intermediates">
  ];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::tensor::TensorDialect", "mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect", "mlir::bufferization::BufferizationDialect"];
}

def LAFuseProducersIntoSweeps : Pass<"la-fuse-producers-into-sweeps", "mlir::func::FuncOp"> {
  let summary = "Computes an elementwise producer in the first loop that sweeps its result: "
                "%p = σ(%q); for n { Σ += %p[n] }; f(%p) => %p' = for n { r = σ(%q[n]); Σ += r; insert r }; f(%p')";
  let description = [{
    Flow-Attention writes σ(q) over the whole slice and then sums it along the sequence in a loop that reads
    it back a row at a time (la-to-linalg's row loop for `la.reduce`), a second pass over a MiB that has left
    L1. Where a single-result elementwise `linalg.generic` of static shape (its body not reading its init) is
    read by a `tensor.extract_slice` in an `scf.for` of the same block that visits the whole result once
    (from 0 to one dimension's size, a step of rows at the induction variable, every other dimension
    whole), and every other reader comes after that loop, the loop computes those rows itself
    (`tensor::replaceExtractSliceWithTiledProducer`, through TilingInterface), inserts them into a tensor it
    carries, and the later readers take that tensor. Nothing is computed twice; la-group-sweeps (off by
    default) regroups whole sweeps, this only removes the first pass.

    Two limits, each from a measured loss (docs/BENCHMARKS.md session 45). Only loops that carry vectors
    alone are sweeps: a loop that carries tensors is a chunk or tile loop, whose body later CPU passes lay
    out (prefetches of the next tile, register blocks), and producers moved into such loops made retention
    10% slower and Flow 3% slower (its softmax division in the tiles of kᵀ(v·comp), where
    la-prefetch-next-tile then spread the prefetches of v over 64 scalar divisions). And only results of at
    least `min-result-bytes` move: the pass saves a second pass over data that has left L1, which a smaller
    result does not need.
  }];
  let options = [
    Option<"minResultBytes", "min-result-bytes", "int64_t", /*default=*/"65536",
           "Smallest producer result, in bytes, that is moved into its sweep (L1-sized results stay)">
  ];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::tensor::TensorDialect", "mlir::linalg::LinalgDialect"];
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
    N = 16384, neutral to 5% slower at N = 4096 and 4–5% slower on the causal ones, whose sweeps outside
    the chunk loops only add per-tile overhead (docs/BENCHMARKS.md, "Figures behind the defaults").
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
    (ReductionPanels.h). A ragged last panel is peeled. A contraction whose reduction is too short to cut
    (a grouped sweep's step) but which has several row blocks gets the same split without the panels, so its
    blocks do not each recompute `v·c`. The panel contractions are planned again by the strategy (they have
    new operands and shapes).
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

def LAFuseBlockPrologues : Pass<"la-fuse-block-prologues", "mlir::func::FuncOp"> {
  let summary = "Computes an elementwise producer that the function returns on the register blocks that read "
                "it, and stores it from there: S' = S + k⊗v; o = q·S' => for d: S'[d] = S[d] + k[d]·v; o += q[d]·S'[d]";
  let description = [{
    A decode step's state update (elementwise) is read back by the read-out contraction's blocks; unfused,
    the new state is written whole and read again. A producer qualifies when it is elementwise with static
    shapes, its uses are the function's results and register blocks (directly, through a static slice, or
    through an expansion by unit dimensions), every tile loop of each block indexes what it reads (so each
    element is computed at one tile), and the blocks' regions partition the producer's result. Each block
    gets the producer restricted to its region and is tiled by its config with that fused into every tile
    (`scf::tileConsumerAndFuseProducersUsingSCF` with `yieldProducerReplacement`); the loops return the
    tiles, which inserted into the producer's destination replace its result. The fused tiles are marked
    as register blocks of their own shape for vectorisation; ragged loops are peeled.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::tensor::TensorDialect", "mlir::affine::AffineDialect",
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
    the cache panels slower (docs/BENCHMARKS.md, "Figures behind the defaults"). A loop whose body holds no
    register-blocked arithmetic (`vector.fma`), such as a grouped sweep that maps and sums its tile, is a
    plain stream that hardware prefetchers follow, and is left alone. Only tiles of rows of a contiguous
    innermost dimension are handled. Run after bufferisation, before `scf` becomes control flow.
  }];
  let options = [
    Option<"lineBytes", "line-bytes", "int64_t", /*default=*/"64", "Bytes per cache line (one prefetch each)">,
    Option<"maxTileBytes", "max-tile-bytes", "int64_t", /*default=*/"65536", "Largest tile to prefetch">,
    Option<"locality", "locality", "int64_t", /*default=*/"2",
           "Temporal locality hint of the prefetches, 0 (none) to 3 (keep in every level)">
  ];
  let dependentDialects = ["mlir::memref::MemRefDialect", "mlir::scf::SCFDialect", "mlir::arith::ArithDialect"];
}

def LAPrefetchStridedStreams : Pass<"la-prefetch-strided-streams", "mlir::func::FuncOp"> {
  let summary = "In a loop that reads one short run of a kernel argument per iteration, far from the last, "
                "prefetches the run `distance` iterations ahead";
  let description = [{
    Hardware prefetchers follow runs of consecutive cache lines; a loop that reads a short run per
    iteration at a large stride gives them nothing to follow, and waits on DRAM at every run. aft_conv,
    computed one head at a time (la-tile-independent-dim), reads each head's 256 bytes of every 2 KiB
    position of its [B, X, Y, h, c] operands this way. This pass finds, in each unit-step `scf.for` of at
    least four times `distance` iterations, the reads of a view of a read-only function argument whose
    index along one dimension is the induction variable and along every other dimension but the innermost
    is the same in all iterations: a `memref.subview` in the body, one element long but along the innermost
    dimension, or a load or transfer read in the body (at any depth) of a view from outside the loop, which
    reads that view's innermost dimension. Where the run is at least a line and at most `max-run-bytes`,
    and consecutive positions lie more than twice the run apart, and the argument is at least
    `min-argument-bytes`, the loop prefetches the position
    `distance` iterations ahead (clamped to its last), one `memref.prefetch` per cache line. Loops that
    hold register-blocked arithmetic (`vector.fma`) are left alone: their operands are panels and row
    blocks that the tiling keeps in cache (prefetching FLASH's v panel made causal FLASH 7% slower). So are
    loops over tiles of several positions (prefetching aft_conv's q a few row blocks ahead: 5% slower) and
    short loops (aft_local's 16-row tiles of its bias: 7-10% slower). Run after bufferisation, before `scf`
    becomes control flow.
  }];
  let options = [
    Option<"distance", "distance", "int64_t", /*default=*/"16",
           "Iterations ahead to prefetch (aft_conv at T = 4096: 8 and 16 alike, about 8% faster than none)">,
    Option<"lineBytes", "line-bytes", "int64_t", /*default=*/"64", "Bytes per cache line (one prefetch each)">,
    Option<"maxRunBytes", "max-run-bytes", "int64_t", /*default=*/"1024",
           "Longest run per iteration that is prefetched">,
    Option<"minArgumentBytes", "min-argument-bytes", "int64_t", /*default=*/"4194304",
           "Smallest argument whose streams are prefetched (aft_simple at T = 1024, 2 MiB per slice, which "
           "stays in cache between calls: 15% slower with them)">,
    Option<"locality", "locality", "int64_t", /*default=*/"2",
           "Temporal locality hint of the prefetches, 0 (none) to 3 (keep in every level)">
  ];
  let dependentDialects = ["mlir::memref::MemRefDialect", "mlir::arith::ArithDialect"];
}

def LAStreamLargeResults : Pass<"la-stream-large-results", "mlir::func::FuncOp"> {
  let summary = "Writes a large result that the kernel never reads back with non-temporal stores, in a "
                "version of the body taken when the result's buffer is 64-byte aligned";
  let description = [{
    A cached store to a line that is not in cache reads the line from memory first and then keeps it in
    cache, evicting what the kernel still reads. A statically shaped buffer argument of at least
    `min-bytes` (an out-parameter: results have become out-parameters by now) that the function only writes,
    and only with 1-D, unmasked, in-bounds `vector.transfer_write`s of whole 64-byte lines along its
    contiguous innermost dimension (through any views), is written with non-temporal `vector.store`s
    instead. x86 stores non-temporally only at aligned addresses, and a caller's buffer need not be aligned:
    the body is versioned on the alignment of the streamed buffers (`memref.extract_aligned_pointer_as_index`);
    in the aligned version each store carries a 64-byte alignment, which the pass proves from the write's
    indices and the subviews' offsets (constants, loop bounds and steps, sums and products), and the version
    ends with a store fence, since non-temporal stores are weakly ordered. A function that reads its
    result, writes part of a line, or writes where the alignment cannot be proven is left alone. Run after
    `convert-vector-to-scf` (1-D transfers), before `scf` becomes control flow.
  }];
  let options = [
    Option<"minBytes", "min-bytes", "int64_t", /*default=*/"2097152",
           "Smallest result to stream, in bytes">,
    Option<"sfence", "sfence", "bool", /*default=*/"true",
           "End the streaming version with x86's SFENCE; false: a portable seq_cst fence (other targets)">
  ];
  let dependentDialects = ["mlir::memref::MemRefDialect", "mlir::scf::SCFDialect", "mlir::arith::ArithDialect",
                           "mlir::vector::VectorDialect", "mlir::LLVM::LLVMDialect"];
}

#endif // LA_TARGET_CPU_TRANSFORMS_PASSES_TD
