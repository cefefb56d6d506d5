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
    materialised once (`sigmoid(q)`, cost 14, read by six sweeps, is faster read back than recomputed:
    docs/BENCHMARKS.md, "Figures behind the defaults"). A target where a large result costs more to
    materialise sets `large-result-bytes`: the CUDA target, where a result that does not fit a block's
    shared memory goes to global scratch, written in f32 and read back by each consumer. A producer that
    does not vary along the consumer's innermost loop is fused only when it is cheap (at most `kCheapRecomputeCost`, 2): that loop
    is the vector lane loop (and in a register block the lanes and rows are broadcast), so anything
    costlier would be evaluated once per lane or per block.

    An elementwise `x + r`, where `r` is a reduction started from a zero fill that nothing else reads and
    `x` is defined before it, becomes `r` started from `x`: a chunked causal contraction's state update
    `S + k_cᵀ v_c` accumulates into S, and a chunk's `q_c·S + tril(q_c k_cᵀ) v_c` accumulates its second
    term onto its first, without a zero-filled tile and an extra loop.
  }];
  let options = [
    Option<"maxRecomputeCost", "max-recompute-cost", "unsigned", /*default=*/"4",
           "Largest weighted producer cost recomputed in each of several consumers rather than materialised">,
    Option<"largeResultBytes", "large-result-bytes", "int64_t", /*default=*/"0",
           "A producer whose result is larger than this (0: none is large) is recomputed in each of several "
           "consumers when it costs at most `max-large-recompute-cost`">,
    Option<"maxLargeRecomputeCost", "max-large-recompute-cost", "unsigned", /*default=*/"32",
           "Largest weighted cost of a large producer (`large-result-bytes`) recomputed in each consumer">,
    Option<"keepContractions", "keep-contractions", "bool", /*default=*/"false",
           "Fuse nothing but widenings (`extf`) into a product of two matrices (a multiply-add contraction with "
           "one m, one n and one k dimension), so that matrix units can still run it">
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

def LAFactorJointSoftmax : Pass<"la-factor-joint-softmax", "mlir::func::FuncOp"> {
  let summary = "Evaluates a softmax over a broadcast sum as two matrix products: "
                "Σ_s softmax_s(A + B) V => (e^{A-mA} · (e^{B-mB} ⊙ V)) / (e^{A-mA} · e^{B-mB})";
  let description = [{
    Rewrites `contract(softmax_s(map add(A, B)), V)`, where A and B each lack dimensions of the other and V
    has B's dimensions (AFT-full: A = w[t, s], B = V = [b, s, d]), into two contractions of the separately
    shifted exponentials: O(T·S) exps and register-tiled matrix products instead of one exp per
    (b, t, s, d). A `tril` mask over s stays on the numerator, unless A is -inf outside it (causal AFT-full),
    where it changes nothing and is dropped.

    Rows whose denominator falls below 2^-64, where the separate shifts lose precision, are recomputed in
    the joint form inside the final elementwise map (an `scf.if` per element; the file comment gives the
    error bound behind the threshold).
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::tensor::TensorDialect", "mlir::arith::ArithDialect",
                           "mlir::math::MathDialect"];
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
       chunked form with the scan's `init` as the first state (ChunkDecayScans.cpp). With a per-key gate
       (GLA) and `factor-gated-scores`, the chunk's scores are the matrix product (q ⊙ e^{b})(k ⊙ e^{-b})ᵀ
       under a tril mask while the chunk decays by at most e^{-40} on every key dimension, and exact
       otherwise (an `scf.if` per chunk).
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
    7. With `pair-tile` T > 0, an unmasked contraction that reduces a computed [.., N, M] tensor over pairs
       of positions over M (GAU's `relu(q kᵀ)² v`) runs in tiles of T rows: each row tile sums the
       contractions of T-column tiles of the pairs tensor, recomputed from its producers per tile, so only
       a [.., T, T] tile of it exists at once (ChunkPairContractions.cpp). This runs after the rewrites
       above, so it also tiles the pairs they leave whole (FLASH's diagonal blocks); a `tril`-masked one
       (causal FLASH's) goes in row blocks of T (ChunkTrilContractions.cpp), its masked scores recomputed per
       tile, unmasked before the diagonal. Off (0) by default.

    Chunk operands that are single-use or cheap maps (`v·comp`, `q + eps`: at most `kCheapRecomputeCost`
    in RecomputeCost.h's model) are recomputed on the chunk instead of being materialised over the whole
    sequence.

    The batch letters (shared by every operand) stay in front; other layouts are left alone.
  }];
  let options = [
    Option<"chunkSize", "chunk-size", "int64_t", /*default=*/"16", "Chunk length along the sequence">,
    // Rewrite 6 does no C×C work, so its chunk only trades cache residency of the [C, D] prefix tile
    // against per-chunk overhead: at 32 positions (D = 64) the prefix tile and the panels it reads stay in
    // L1 (docs/BENCHMARKS.md, "Figures behind the defaults", has the measurements).
    Option<"scanChunkSize", "scan-chunk-size", "int64_t", /*default=*/"32",
           "Chunk length of prefix sums fused with the dot product that reads them (rewrite 6)">,
    // On: GLA's prefill at 2x8x4096x64 takes 11.4 instead of 15.5 ms on the CPU (C·C·D exps per chunk
    // become 2·C·D). The CUDA target turns it off: its chunk scores already run on tensor cores, and the
    // factored form has not been verified there (mma counts, f16 range).
    Option<"pairTile", "pair-tile", "int64_t", /*default=*/"0",
           "Rows and columns of the tiles in which a contraction over a computed pairs tensor runs (rewrite 7); "
           "0 builds the pairs tensor whole">,
    Option<"factorGatedScores", "factor-gated-scores", "bool", /*default=*/"true",
           "Compute per-key-gated chunk scores (GLA) as a matrix product of decayed queries and grown keys, "
           "exact where a chunk decays by more than e^-40 (rewrite 3)">
  ];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::tensor::TensorDialect", "mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect"];
}

def LADeriveStateVariants : Pass<"la-derive-state-variants", "mlir::ModuleOp"> {
  let summary = "Writes the body of each declared prefill/resume/state variant of a causal entry: "
                "func.func @gla_with_state(...) attributes {la.resume_of = @gla}";
  let description = [{
    A causal entry carries state from one position to the next: each prefix scan along the sequence
    (SPEC §8). For a body-less `func.func` with `la.prefill_of = @E`, the body becomes E's with every such
    scan's value at the last position returned after E's results; with `la.resume_of = @E` the scans also
    start from states passed after E's arguments, one per scan in program order; with `la.state_of = @E` the
    states are returned alone (what only E's results read is dead), followed by the sum of each decay scan's
    log-gates over the sequence, which scales the state before it: with them the states of consecutive
    stretches combine (a GPU call in pieces). With `la.state_level = L` beside `la.state_of` only the states
    of level L are returned (a state's level: 1 when what it scans depends on no state, else one more than
    the highest level of those it depends on), and only what they need is computed. Calls are inlined first.

    Errors: the declared signature is not the derived one (the derived one is printed); E is not causal (the
    op that reads later positions, or all earlier ones without a fixed-size state, is named).
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect", "mlir::arith::ArithDialect"];
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

    `shared-arguments` lists the arguments without those dimensions, which every slice reads whole (AFT's
    bias w[T, T]). They are marked `la.shared_argument`, so the GPU target does not step them per block, and
    the maps computed from them alone keep their own positions.

    `pieces` > 1 compiles a kernel that runs one of that many pieces of a slice's sequence, the pieces of
    a slice consecutive along the last sliced dimension (a GPU call in pieces, runtime/lib/GpuSequencePieces.h,
    views [B, H, N, ..] as [B, H·pieces, N/pieces, ..]): the coordinate along that dimension is then
    slice·pieces + piece, and `la.index` reads the slice's, ⌊coordinate / pieces⌋.
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"\"", "The sliced entry">,
    Option<"dims", "dims", "int64_t", /*default=*/"0", "Leading dimensions the runtime slices over">,
    Option<"pieces", "pieces", "int64_t", /*default=*/"1",
           "Pieces of each slice's sequence along the last sliced dimension (its coordinate is "
           "slice·pieces + piece)">,
    ListOption<"sharedArguments", "shared-arguments", "unsigned",
               "Arguments every slice reads whole, having none of the sliced dimensions">
  ];
  let dependentDialects = ["mlir::tensor::TensorDialect", "mlir::arith::ArithDialect"];
}

def LAReadOnlyArguments : Pass<"la-read-only-arguments", "mlir::func::FuncOp"> {
  let summary = "Marks every tensor argument of a function `bufferization.writable = false`";
  let description = [{
    A kernel's inputs belong to the caller: the runtime's contract is that a call reads them and writes only
    its outputs. One-shot bufferisation otherwise treats a function's tensor arguments as writable, so an op
    whose destination is an argument (a scan that starts from an input state, `init(%h0)`, lowered
    unchunked) would update the caller's buffer in place. Read-only arguments are copied first where a value
    must be computed in their place. Runs right before bufferisation, for every target.
  }];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect"];
}

def LAExpandPaddedCopies : Pass<"la-expand-padded-copies", "mlir::func::FuncOp"> {
  let summary = "Rewrites a constant `tensor.pad` as its source inserted into the interior of a fresh buffer "
                "and its border slabs filled";
  let description = [{
    `la.window` lowers to a `tensor.pad`, which tiling understands (`la-tile-independent-dim` slices it
    per head). One-shot bufferisation turns a pad into a fill of the whole buffer and a copy of the
    materialised source into it: two extra passes over the padded tensor. This pass, run right before
    bufferisation, rewrites the pad as a `bufferization.alloc_tensor` at the start of the pad's block with
    only its border slabs filled, makes the source's producer write straight into the interior (when its
    destination is a fresh tensor in the same block), and inserts the source back, in place, right before
    the padded tensor's first reader; every element is stored once.
  }];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect", "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

#endif // LA_TRANSFORMS_PASSES_TD
