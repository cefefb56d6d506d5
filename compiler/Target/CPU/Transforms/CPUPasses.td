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

#endif // LA_TARGET_CPU_TRANSFORMS_PASSES_TD
