//===- CUDAPasses.td - the CUDA target's passes ------------*- tablegen -*-===//
//
// Passes that only the CUDA target runs: they map a bufferised batch×head slice onto a thread block. The
// target-neutral stages are in compiler/Transforms/Passes.td; the NVVM lowering tail (shared with the GPU
// emulator) is compiler/Target/NVVM.
//
//===----------------------------------------------------------------------===//

#ifndef LA_TARGET_CUDA_TRANSFORMS_PASSES_TD
#define LA_TARGET_CUDA_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def LAGPUOutlineSliceKernel : Pass<"la-gpu-outline-slice-kernel", "mlir::ModuleOp"> {
  let summary = "Makes each bufferised entry a kernel that one thread block runs per batch×head slice: "
                "func.func @f(memrefs) => gpu.module @la_kernels { gpu.func @f(memrefs, scratch) kernel }";
  let description = [{
    The runtime compiles a sliceable entry for one (batch, head) slice (Analysis/BatchSlicing.h); on the GPU
    each slice is one thread block, block (x, y) = (head, batch). This pass moves each public function with
    a body into `gpu.module @la_kernels` as a kernel and:
      - computes the slice coordinates (`la.slice_position` arguments, la-slice-positions) from the block
        index instead of taking them as arguments;
      - places every `memref.alloc` (static shape) at a 64-byte-aligned offset of a per-block buffer, as a
        `memref.view`: those chosen for `shared-memory-bytes` in a workgroup attribution, the others in a
        global scratch buffer, a trailing `memref<Sxi8>` argument. The choice fills the budget in two greedy
        orders, the smallest first (a chunk's state and tiles, read and written at every chunk) and the most
        accessed bytes per byte first (loads, stores and copies times the static trip counts around them),
        and keeps the one that leaves less of that traffic in global memory. Two allocations share bytes when their lifetimes do not
        overlap: a buffer holds data from the first top-level op of the body that uses it (or a view of it)
        to the last, and is live throughout any such op (a chunk loop); slots are packed largest first, each
        at the lowest offset free over its lifetime (causal Flow's resume kernel: every temporary in 48768
        bytes of shared memory, where a slot each left five 8 KiB tiles in global memory). An operand copy
        staged by la-gpu-contract-to-mma or la-gpu-register-tile that does not get shared memory is
        dissolved: its readers (loads and fragments, directly or through subviews: a long reduction's
        tiles) read the operand in place. One that does and that its loop can copy an
        iteration ahead (see la-gpu-prefetch-staged-copies) gets a second slot right after its own
        (`la.prefetch_slot_stride` on its view), in program order, while the shared buffer stays within
        the budget. Staged copies marked `la.staged_for_latency` (la-gpu-stage-loop-inputs) save no
        traffic: they take part in neither order and get shared memory after the choice, in program order,
        where it still has room. An allocation some user of which this pass cannot retype to the workgroup address space (anything
        but loads, stores and views) stays global;
      - copies the `memref.global`s the body reads into the gpu.module;
      - records on the kernel `la.slice_bytes`, the bytes of one slice of each argument, which
        la-gpu-offset-slice-arguments turns into per-block pointer offsets after lowering, and
        `known_block_size` = (32·`warps-per-block`, 1, 1) (PTX `.maxntid`) and `nvvm.minctasm` =
        `min-blocks-per-sm` (PTX `.minnctapersm`). Without the latter, ptxas sizes registers for as many
        blocks of that size as fit an SM, and spills rather than exceed that budget.
    Arguments keep their one-slice types, so the body is unchanged.
  }];
  let options = [
    Option<"warpsPerBlock", "warps-per-block", "int64_t", /*default=*/"4", "Warps of each thread block">,
    Option<"minBlocksPerSM", "min-blocks-per-sm", "int64_t", /*default=*/"1",
           "Thread blocks each SM must hold at once (nvvm.minctasm)">,
    Option<"sharedMemoryBytes", "shared-memory-bytes", "int64_t", /*default=*/"98304",
           "Bytes of temporaries each block keeps in shared memory, smallest first">
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::memref::MemRefDialect", "mlir::arith::ArithDialect"];
}

def LAGPUFuseProducersIntoLoops : Pass<"la-gpu-fuse-producers-into-loops", "mlir::func::FuncOp"> {
  let summary = "Computes an elementwise producer on each slice a loop takes of it: %p = generic(%x) over the "
                "sequence; scf.for { extract_slice %p[i] } => scf.for { generic(extract_slice %x[i]) }";
  let description = [{
    The CUDA target's tensor stage. The la→la stage leaves feature maps and casts (φ(q), φ(k), v widened to
    f32) as generics over the whole slice that chunk loops read a chunk at a time; on the GPU each is a
    global scratch buffer, written once and read back by every loop, and wider than its inputs. Each
    `tensor.extract_slice` of such a producer's result inside an `scf.for` that does not hold the producer
    becomes the producer computed on that slice (`tensor::replaceExtractSliceWithTiledProducer`, through
    TilingInterface), whose small result bufferises to a per-chunk temporary that
    la-gpu-outline-slice-kernel keeps in shared memory. Repeated until nothing moves, so a chain of producers
    follows. Taken for a single-result elementwise `linalg.generic` of static shape when it moves fewer
    global bytes per element of the result: with u slices in loops, I bytes of inputs and O of output,
    u·I against I + O + u·O (I + O + u·I against that when another use keeps the whole result anyway).
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

def LAGPULoopStateInPlace : Pass<"la-gpu-loop-state-in-place", "mlir::func::FuncOp"> {
  let summary = "Makes every loop-carried tensor live in its iteration argument's buffer: "
                "scf.yield %new => scf.yield (bufferization.materialize_in_destination %new in %iter_arg)";
  let description = [{
    A GPU kernel's temporaries are fixed slots of its scratch buffer (la-gpu-outline-slice-kernel), so no loop
    may yield a freshly allocated buffer per iteration, as the CPU's bufferisation allows (and frees). Run
    before one-shot bufferisation: each yielded tensor that is not already the iteration argument is
    materialised in it, so the loop state is updated in place, through a copy only where the new value
    cannot be computed in place (a decay scan's state: D×Dv per chunk). The function's tensor arguments are
    read-only to bufferisation (la-read-only-arguments), so a state whose initial value is an input (h0) is
    copied rather than updated in the caller's buffer.

    A state the loop reads (any use of its iteration argument but as the destination of a
    `tensor.insert_slice`) and the function returns is copied out after the loop (`linalg.copy` into an
    empty tensor). Returned as it is, buffer-results-to-out-params would make the caller's result buffer the
    loop's state, read and written in global memory at every chunk; with the copy the state is a temporary,
    which la-gpu-outline-slice-kernel keeps in shared memory (a resumed causal linear attention: 8.6x -> 3.3x
    the minimum global traffic). A sequence-long result that the loop only writes a slice at a time is
    returned as it is.
  }];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect", "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def LAGPUContractToMma : Pass<"la-gpu-contract-to-mma", "mlir::func::FuncOp"> {
  let summary = "Runs each matrix contraction on tensor cores: linalg.generic C(m,n) += A(m,k)·B(k,n) => "
                "warps of 32 lanes, one 16×8 tile of C each, stepping k by nvgpu.mma.sync m16n8k16 (m16n8k8 tf32)";
  let description = [{
    Runs on the bufferised entry, before the remaining linalg ops become loops. A contraction qualifies when
    it is a `linalg` contraction (a multiply-add body, inferContractionDims gives exactly one m, one n and one
    k dimension, every batch dimension has size 1), its loop ranges are static with m ≥ 16, n ≥ 8 and k at
    least one mma step, its indexing maps are projected permutations, and its output is f32. It becomes an
    `scf.parallel` over warps × 32 lanes, marked `la.warp_lanes`: la-gpu-distribute-to-threads gives 32
    consecutive iterations to the 32 lanes of one warp, so each warp owns whole tiles. A warp owns w tiles
    side by side along n (w the largest divisor of ceil(n/8), at most 8, that leaves ceil(m/16)·ceil(n/8)/w ≥
    `warps-per-block` warps): it gathers its A fragment once per k step for the w mma.sync, where a warp per
    tile would gather it w times. Each k
    step reads the lane's A and B fragments as `la_gpu.mma_fragment` ops (the PTX ISA's layouts, "Matrix
    fragments for mma.m16n8k16"; converted to the operand type), which la-gpu-lower-mma-fragments loads by
    ldmatrix or element by element once la-gpu-outline-slice-kernel has placed their buffers; the lane
    gathers its part of C, which stays in registers across k, and stores it at the end. Ragged edges (m, n or k not a multiple of the tile) read zeros
    from clamped, in-bounds addresses and skip their stores, so every lane of a warp reaches every mma.

    Contractions that accumulate one after the other into the same output buffer with the same tiles (a
    causal chunk's O = φ(Q)·H, then O += S·V) form a chain when nothing between them touches that output or
    writes their operands: one lane loop runs a k loop per contraction, where the last one was, with the
    accumulators in registers throughout, and stores the output once. When a `linalg.fill` of zeros into
    exactly that output comes right before the first, the accumulators start at zero and the fill goes;
    when a `memref.copy` of another buffer of its type does (a state variant's S0 + φ(K)ᵀV, whose read-only
    S0 bufferisation copies into the result) and nothing writes that buffer before the chain runs, they
    start from the copy's source and the copy goes (causal linear attention at B=2 H=8 N=4096: 4.0x -> 3.5x
    the minimum global traffic). When the chain starts from zero and its output's only reader is an
    elementwise `linalg.generic` after it (identity maps on the output and its own result, other inputs
    read by projected permutations), with nothing between them that the chain could not run after, the
    chain runs there instead and each accumulator element goes through the generic's body on its way to the
    generic's result: the output is never stored (linear attention's numerator φ(Q)·S, divided by its
    denominator and rounded to f16 as it is stored: a [N, Dv] f32 tensor of global scratch written and read
    back, at B=1 H=2 N=1024 f16 3.25x -> 2.25x the minimum traffic).

    A lone contraction (no chain, no epilogue) whose k is a multiple of 128 and longer, with an argument
    operand that several warps gather and that is more than half of `shared-memory-bytes` (so it would
    not be staged whole), runs in a `scf.for` over k tiles of 128: each iteration the contraction on its
    operands' tiles, its accumulators loaded from and stored to the output (whose zero fill stays before
    the loop), the gathered tile staged (and prefetched a tile ahead by la-gpu-prefetch-staged-copies).
    Linear attention's φ(K)ᵀV at N ≥ 1024: V was gathered from global memory by each of the 4 warps of
    its row of tiles, 2.2x -> 1.5x the minimum traffic at N=4096.

    An operand that is an argument of the kernel (global memory) and that several warps gather (every warp
    of a row of tiles gathers the same B fragments, every warp of a column of tile groups the same A
    fragments) is copied into a temporary first, read once with consecutive threads on consecutive
    elements (a state kernel's φ(K)^T·V over a 128-position piece: 1.80x -> 1.20x the minimum global
    traffic). la-gpu-outline-slice-kernel keeps the copy in shared memory when it fits and otherwise
    dissolves it (Target/CUDA/Transforms/StagedOperands.h); la-gpu-prefetch-staged-copies issues it by
    cp.async. An f32 temporary that an elementwise generic of a whole argument view of the operand type
    writes, and that only tensor-core contractions read before it is next overwritten (bufferisation may
    give its buffer to other values before and after), is computed where it is read: the generic becomes
    such a staged copy of the argument, in the operand type, and the gathers apply its body to each element
    in registers (the fragment's `map` region; none for a plain `extf`, whose rounding back gives the
    argument's element again), and the temporary goes. Causal linear attention's v per chunk: 4 KiB of f32
    in shared memory and a pass over it, now 2 KiB of f16; its φ(q) and φ(k) per chunk, two 2 KiB f16 tiles,
    now none; non-causal linear attention's φ(Q) and φ(K), two [N, D] f32 tensors of global scratch, now
    none (B=1 H=2 N=256 f16: 3.25x -> 1.50x the minimum traffic).

    The operand type follows `mode` and the entry's arguments: `auto` uses f16 (or bf16) when the entry
    takes f16 (bf16) tensors, whose values the SPEC computes with f16/bf16 tensor-core fragments and f32
    accumulators, and leaves f32 entries on FMA; `tf32` also runs f32 contractions on TF32 tensor cores
    (m16n8k8, about 1e-3 relative error, opt-in); `off` keeps every contraction on FMA.
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"auto\"", "auto, tf32 or off">,
    Option<"warpsPerBlock", "warps-per-block", "int64_t", /*default=*/"4",
           "Warps of each thread block: a warp takes several tiles only while every warp still has one">,
    Option<"sharedMemoryBytes", "shared-memory-bytes", "int64_t", /*default=*/"0",
           "A block's shared memory: a reduction whose gathered argument operand exceeds half of it runs in "
           "tiles of 128 along k (0: never)">
  ];
  let dependentDialects = ["mlir::nvgpu::NVGPUDialect", "mlir::scf::SCFDialect", "mlir::arith::ArithDialect",
                           "mlir::vector::VectorDialect", "mlir::memref::MemRefDialect",
                           "mlir::lagpu::LAGPUDialect"];
}

def LAGPUNarrowFragmentTemporaries : Pass<"la-gpu-narrow-fragment-temporaries", "mlir::func::FuncOp"> {
  let summary = "Stores an f32 temporary that only tensor-core fragments read in their 16-bit operand type, "
                "rounded where it is written";
  let description = [{
    Runs right after la-gpu-contract-to-mma. An f32 `memref.alloc` whose readers are all `la_gpu.mma_fragment`
    of one 16-bit type (f16 or bf16) and whose writers only write it (a `linalg.fill`, or a `linalg.generic`
    that takes it as an output whose old value its body does not read) becomes an allocation of that type:
    the fill's value and each generic's yielded value are rounded to it (`arith.truncf`). The fragments
    rounded every element they read to that type already, so the operands are the same, bit for bit. The
    temporary takes half the bytes, so more of a kernel's temporaries fit in shared memory, and
    la-gpu-lower-mma-fragments can load it by ldmatrix (a causal chunk's φ(Q) and φ(K)).

    An f32 temporary that one elementwise `linalg.generic` rewrites in place (reads as an input and writes,
    with identity maps, its only output), where every other use of it comes before that generic in its block
    except fragments of one 16-bit type after it (a causal chunk's score tile, written by the tensor cores
    and then masked), first gets a new temporary that those fragments read and that generic writes: instead
    of the old one where the old one is allocated in the generic's block, beside it (a second output) where
    the old one outlives a loop around the generic, whose next iteration might read it. The new temporary
    is then stored narrow as above (512 bytes more for a 16×16 tile).
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def LANVGPUBF16MmaToNVVM : Pass<"la-nvgpu-bf16-mma-to-nvvm"> {
  let summary = "Lowers bf16 nvgpu.mma.sync, which MLIR 22's convert-nvgpu-to-nvvm rejects ('failed to deduce "
                "operand PTX types'), to nvvm.mma.sync with bf16 multiplicands packed two to an i32";
  let description = [{
    Part of the NVVM tail, before convert-nvgpu-to-nvvm. An m16n8k16 `nvgpu.mma.sync` on vector<4x2xbf16> and
    vector<2x2xbf16> with a vector<2x2xf32> accumulator becomes `nvvm.mma.sync` (row.col, multiplicands
    bf16): each vector<2xbf16> register is bitcast to the i32 the instruction takes, the four accumulator
    values are passed as f32, and the result struct is unpacked into vector<2x2xf32>. f16 and tf32 are left
    to the upstream conversion, which handles them.
  }];
  let dependentDialects = ["mlir::NVVM::NVVMDialect", "mlir::LLVM::LLVMDialect", "mlir::vector::VectorDialect"];
}

def LAGPUStageLoopInputs : Pass<"la-gpu-stage-loop-inputs", "mlir::func::FuncOp"> {
  let summary = "Reads a chunk loop's input slices from a staged copy, which can be copied an iteration "
                "ahead";
  let description = [{
    Runs on bufferised bodies, before la-gpu-outline-slice-kernel. A `memref.subview` of a function argument
    (an input) with a static shape that an `scf.for` of the body itself (a chunk loop; not a loop nested in
    another, such as a scan over a chunk's rows, which would copy and wait row by row) computes from its
    induction variable and values defined outside it, and that only `memref.load`s and `la_gpu.mma_fragment`s
    read (a chunk's rows of q, k or v, read by the per-chunk maps and the tensor cores), is copied into a
    staged temporary (`la.staged_copy`, as la-gpu-contract-to-mma stages operands) and those reads read the
    copy. The copy saves no global traffic: the loop reads each byte once either way (la-gpu-contract-to-mma
    has already staged the inputs that several warps read as fragments). It lets la-gpu-prefetch-staged-copies copy the next chunk's
    slice by cp.async while the loop computes on this one, so the temporary is marked
    `la.staged_for_latency`: la-gpu-outline-slice-kernel gives it shared memory only where the temporaries
    that save traffic leave room, and dissolves it otherwise (the loads read the input again).
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def LAGPUPrefetchStagedCopies : Pass<"la-gpu-prefetch-staged-copies", "mlir::gpu::GPUModuleOp"> {
  let summary = "Fills the staged operand copies in shared memory by cp.async, one loop iteration ahead where "
                "a second slot was reserved";
  let description = [{
    Runs on the kernels of la-gpu-outline-slice-kernel, before la-gpu-distribute-to-threads. A staged
    operand copy (a `memref.copy` from a kernel argument into a `la.staged_copy` view of shared memory,
    made by la-gpu-contract-to-mma or la-gpu-register-tile) becomes a parallel loop of
    `nvgpu.device_async_copy` (cp.async) of 16, 8 or 4 bytes, the largest that the row length, the element
    type and the alignment of both ends allow (16-byte copies bypass L1: the block reads the bytes from
    shared memory afterwards). The source's alignment is proven from its subview chain and the argument's
    per-block slice; kernel arguments are taken to be 16-byte aligned. A copy cp.async cannot issue stays a
    plain copy.

    A copy in an `scf.for` whose source the loop computes from its induction variable alone, and for which
    la-gpu-outline-slice-kernel reserved a second slot (`la.prefetch_slot_stride`), is double-buffered:
    before the loop, the first iteration's copies go into the first slots; each iteration then
    (after a barrier: the previous iteration read them) issues the next iteration's copies into the other
    slots, commits them as one group (an empty one in the last iteration), waits until only that group is in
    flight, and passes a barrier, so that it reads its own operands, copied during the previous iteration.
    Any other copy commits and waits at once.
  }];
  let dependentDialects = ["mlir::nvgpu::NVGPUDialect", "mlir::NVVM::NVVMDialect", "mlir::gpu::GPUDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect", "mlir::memref::MemRefDialect"];
}

def LAGPULowerMmaFragments : Pass<"la-gpu-lower-mma-fragments", "mlir::gpu::GPUModuleOp"> {
  let summary = "Loads each tensor-core operand fragment (la_gpu.mma_fragment) by ldmatrix where its buffer "
                "allows, else element by element";
  let description = [{
    Runs on the kernels of la-gpu-outline-slice-kernel, once temporaries have their places, before
    la-gpu-distribute-to-threads. A `la_gpu.mma_fragment` (made by la-gpu-contract-to-mma) becomes one
    `nvgpu.ldmatrix` (x4 for A, x2 for B; x4 for the B fragments of two tiles side by side, 8 columns
    apart, read from the same buffer in the same block) when its buffer
      - is in shared memory and of the fragment's 16-bit element type,
      - is contiguous along k (plain ldmatrix) or along the fragment's rows (`.trans`), with every other
        stride a multiple of 16 bytes,
      - starts 16 bytes aligned: subviews with static offsets of a `memref.view` whose byte shift is
        provably a multiple of 16 (constants, and sums and products of them), with the fragment's origin
        along the contiguous dimension provably a multiple of 8 elements,
      - and holds whole tiles along both dimensions (no ragged edge).
    Lane l gives the address of row l % 8 of the l / 8-th 8×8 matrix of the fragment. Otherwise each lane
    loads its 8 (A) or 4 (B) elements one by one and converts them to the operand type, reading past a
    ragged edge from a clamped address and selecting zero. A fragment with a `map` region gets the region's
    ops applied to each element after either load, before the conversion (and before the zero past an
    edge); two B fragments share one ldmatrix only when their maps are the same.
  }];
  let dependentDialects = ["mlir::nvgpu::NVGPUDialect", "mlir::arith::ArithDialect", "mlir::memref::MemRefDialect",
                           "mlir::vector::VectorDialect"];
}

def LAGPUDynamicSharedMemory : Pass<"la-gpu-dynamic-shared-memory", "mlir::gpu::GPUModuleOp"> {
  let summary = "Makes a kernel's shared buffer beyond 48 KiB dynamic shared memory: an external zero-length "
                "array in address space 3, PTX's `.extern .shared`";
  let description = [{
    Runs on the LLVM dialect of the kernels (after la-gpu-to-nvvm), for PTX. A block may declare at most
    48 KiB of shared memory statically; sm_80 lets a launch ask for up to 163 KiB and sm_90 for 227 KiB of
    dynamic shared memory once the kernel's CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES allows it. So a
    workgroup global (the buffer la-gpu-outline-slice-kernel gives a block's shared temporaries) larger than
    48 KiB becomes `external` and zero-length: PTX then declares it `.extern .shared`, the dynamic shared
    memory, and whoever launches the kernel passes its bytes (AotKernel::dynamicSharedBytes, read off the
    `gpu` stage's workgroup attribution). A kernel has one such buffer at most: every `.extern .shared`
    array starts at the same address.

    Not `gpu.dynamic_shared_memory`: MLIR 22 lowers it to a one-byte internal global, whose accesses past
    the first byte LLVM's optimiser then deletes (DESIGN.md). The emulator runs the static form, which
    behaves the same.
  }];
}

def LAGPUDistributeToThreads : Pass<"la-gpu-distribute-to-threads", "mlir::gpu::GPUModuleOp"> {
  let summary = "Spreads a kernel's parallel loops over the threads of its block and makes its other writes "
                "single-threaded: scf.parallel (i, j) => for t = tid; t < I·J; t += ntid { i, j = delin(t) }";
  let description = [{
    Every thread of a block runs the kernel body. Then:
      - each outermost `scf.parallel` (no reductions) becomes a loop over its linearised iteration space with
        the thread index as start and the block size as step; a nested `scf.parallel` becomes an `scf.for`
        nest run by the thread that owns the outer iteration. Since the block size is a multiple of 32,
        iterations 32w..32w+31 of a loop whose trip count is a multiple of 32 (a `la.warp_lanes` loop of
        la-gpu-contract-to-mma) fall on the 32 lanes of one warp together; such a loop nested in another is
        an error;
      - a loop or branch outside those loops that writes shared memory, yields nothing and holds no thread
        loop, barrier or gpu/nvgpu op (a scan over a chunk's rows) runs on thread 0 only, whole: run by
        every thread it would issue its loads once per thread for one thread's stores;
      - any other write outside those loops to memory that threads share (global or scratch; not
        `memref.alloca`) runs on thread 0 only;
      - `gpu.barrier` goes before and after each of those loops and writes, so that every thread sees a write
        before it reads the location and no write overwrites what another thread still reads; a barrier
        that follows another with only memory-free ops (index arithmetic, views) in between goes.
    The code between them (scalar and vector arithmetic, reads, loop control) runs redundantly on every
    thread and computes the same values there, so loops keep uniform trip counts and barriers stay
    convergent. `memref.copy` becomes a parallel loop first (a copy of a buffer onto itself, which
    bufferisation leaves of a state updated in place, is dropped); 1-D in-bounds `vector.transfer_read/write`
    become `vector.load/store` when contiguous and a load or store per element when strided. The loops of
    cp.async that la-gpu-prefetch-staged-copies made are spread like any other.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect", "mlir::arith::ArithDialect",
                           "mlir::vector::VectorDialect", "mlir::memref::MemRefDialect"];
}

def LAGPUOffsetSliceArguments : Pass<"la-gpu-offset-slice-arguments", "mlir::gpu::GPUModuleOp"> {
  let summary = "Points each pointer argument of a slice kernel at its block's slice: "
                "%p => getelementptr i8 %p[slice · la.slice_bytes[i]], slice = ctaid.x + nctaid.x · ctaid.y";
  let description = [{
    Runs on the LLVM dialect (after convert-gpu-to-nvvm with bare-pointer arguments) on every kernel that
    la-gpu-outline-slice-kernel marked with `la.slice_bytes`. Until then the kernel addresses its arguments
    as one slice; here each pointer argument is advanced once, at the entry, by the block's linear slice
    index times the bytes of one slice of that argument.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::NVVM::NVVMDialect"];
}

def LAGPURegisterTile : Pass<"la-gpu-register-tile", "mlir::func::FuncOp"> {
  let summary = "Runs each reduction left on FMA over register tiles of its outputs: linalg.generic (p, q "
                "parallel; r reduction) => scf.parallel over (p/tp, q/tq) tiles { tp·tq values iter_args of "
                "scf.for r { one load per operand element the tile uses } }";
  let description = [{
    Without it a contraction left on FMA (every contraction of an f32 entry; Flow's K^T·V scaled by a third
    operand) gives each thread one output and reads both operands once per output: k loads for k FMAs. A
    tile of tp×tq outputs in registers loads an element of an operand once for the tp (or tq) outputs that
    use it. Taken: a bufferised generic outside any parallel loop with one output that is not also an input,
    static ranges, projected-permutation maps, a reduction loop and a parallel one, and no `linalg.index`.
    The two largest parallel loops are tiled by the largest of 4×4, 4×2, 2×4, 2×2, 4×1, 2×1 that divides
    them and leaves at least one tile per thread of the block (32·`warps-per-block`), or per four outputs
    when there are fewer: a small product keeps its threads busy rather than its loads few. The body is
    cloned once per output of the tile; the reduction loops become `scf.for` carrying the tile's values.
    An input that is an argument of the kernel (global memory) and that several tiles read (every tile
    along a parallel loop the input is not indexed by) is copied into a temporary first, as
    la-gpu-contract-to-mma does (StagedOperands.h): f32 causal linear attention's resume kernel 7.2x ->
    2.8x the minimum global traffic. Runs after la-gpu-contract-to-mma, which takes the contractions tensor
    cores can run.
  }];
  let options = [
    Option<"warpsPerBlock", "warps-per-block", "int64_t", /*default=*/"4", "Warps of each thread block">
  ];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::arith::ArithDialect", "mlir::memref::MemRefDialect"];
}

def LAGPUReductionsInnermost : Pass<"la-gpu-reductions-innermost", "mlir::func::FuncOp"> {
  let summary = "Puts each bufferised linalg.generic's reduction loops inside its parallel ones: "
                "(n reduction, d parallel, e parallel) => (d, e, n)";
  let description = [{
    linalg lowers a generic's loops in their declared order, and la-gpu-distribute-to-threads spreads the
    outermost parallel loop over the block's threads. A reduction first, as K^T·V over the rows n of a
    non-causal entry, becomes a sequential loop of n steps each holding a thread loop between two barriers:
    every step reloads and restores the whole accumulator. With the parallel loops first each thread owns its
    accumulator elements for the whole reduction (la-gpu-promote-accumulators then keeps them in registers)
    and the barriers go. Parallel and reduction loops keep their relative order; contractions already on
    tensor cores (la-gpu-contract-to-mma) are not generics any more.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def LAGPUScanLanes : Pass<"la-gpu-scan-lanes", "mlir::func::FuncOp"> {
  let summary = "Runs a scan over a chunk's rows lane by lane: scf.for rows iter_args(acc: vector<64xf32>) "
                "{ ... } => scf.parallel (64 lanes) { scf.for rows iter_args(acc: f32) { ... } }";
  let description = [{
    A prefix scan along the sequence inside a chunk (causal linear attention's and causal Flow's running
    sums, GLA's log-gate sums) bufferises to a loop over the chunk's rows that carries the running row as a
    vector. la-gpu-distribute-to-threads can only run such a loop on every thread of the block, each thread
    reading every element of every row, with thread 0 alone storing and barriers around each row's writes.
    The row's elements are independent: this pass gives each its own lane, a loop over the rows carrying a
    scalar, in an `scf.parallel` that the distribution spreads over the threads, with no barrier inside.

    A loop is rewritten when its results are unused, its one carried vector is 1-D and starts from a
    transfer read of a memref or from a splat constant, and its body holds only: views (`memref.subview`),
    elementwise linalg.generics over memrefs whose one non-unit dimension is the row's (identity maps),
    transfer reads and writes of a whole row along the innermost dimension (in bounds, unmasked), copies
    between row views, elementwise arith and math ops on the row, and splat constants. Each becomes its
    scalar at the lane's element. Anything else leaves the loop as it was.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::memref::MemRefDialect", "mlir::arith::ArithDialect"];
}

def LAGPUWarpReductions : Pass<"la-gpu-warp-reductions", "mlir::func::FuncOp"> {
  let summary = "Runs a reduction to at most half a block's threads of elements on the block's lanes, combined "
                "by shuffles: linalg.generic (reduce 4096 steps to 1) => scf.parallel (elements × lanes) { "
                "strided partials; gpu.shuffle xor butterfly; each element's first lane stores }";
  let description = [{
    la-gpu-distribute-to-threads gives each thread whole output elements, so a reduction to a few elements
    runs on as many threads, each through every step: Flow's softmax over the sources, a maximum and a sum of
    4096 steps per batch×head, on one thread of 128; a sum over the rows of 64 columns on half the block (and
    la-gpu-register-tile, which runs after this pass, would give aft_simple's maximum over T of 16 channels
    to 4 threads). A bufferised generic with one reduction loop, static loops, projected-permutation maps, an
    f32 output of at most 16·`warps-per-block` elements (half the block's threads), at least `min-steps`
    steps and a body whose one use of the output's old value is the combine (addf, maximumf, minimumf,
    maxnumf, minnumf: its value then starts from the combine's identity) runs on the block's lanes instead:
    the output elements rounded up to a power of two E, F = min(32, 32·`warps-per-block` / E) lanes each
    (an element's lanes within one warp), lane j combining steps j, j + F, ... (consecutive lanes read
    consecutive steps), then log2(F) `gpu.shuffle xor` steps, and the element's first lane combining the
    result into the output's old value. The float sum is reassociated, as the tensor-core and
    register-tiled contractions already do.
  }];
  let options = [
    Option<"minSteps", "min-steps", "int64_t", "64",
           "Fewest reduction steps for which lanes are used: at 64 each lane of a one-element reduction still "
           "takes two">,
    Option<"warpsPerBlock", "warps-per-block", "int64_t", /*default=*/"4", "Warps of each thread block">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def LAGPUPromoteAccumulators : Pass<"la-gpu-promote-accumulators", "mlir::func::FuncOp"> {
  let summary = "Keeps a loop's accumulator in a register: scf.for { x = load M[i]; ...; store y, M[i] } => "
                "x0 = load M[i]; scf.for iter_args(x = x0) { ...; yield y }; store M[i]";
  let description = [{
    After la-gpu-reductions-innermost a reduction loop loads and stores the same element on every step; on
    the GPU that is two global accesses per step where one before and one after the loop suffice. Promoted:
    a `memref.load` and a later `memref.store` directly in an `scf.for` body, on the same memref at the same
    loop-invariant indices, when nothing else in the loop touches a buffer of the same root (an allocation or
    a function argument, through view-like ops). The runtime guarantees that outputs overlap no other
    argument, so distinct roots do not alias.
  }];
}

#endif // LA_TARGET_CUDA_TRANSFORMS_PASSES_TD
