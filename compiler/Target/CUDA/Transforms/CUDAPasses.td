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
      - places every `memref.alloc` (static shape) in a per-block global scratch buffer, a trailing
        `memref<Sxi8>` argument, as a `memref.view` at a 64-byte-aligned offset (one slot per alloc: after
        bufferisation without allocations returned from loops, no buffer outlives its loop iteration);
      - copies the `memref.global`s the body reads into the gpu.module;
      - records on the kernel `la.slice_bytes`, the bytes of one slice of each argument, which
        la-gpu-offset-slice-arguments turns into per-block pointer offsets after lowering, and
        `known_block_size` = (32·`warps-per-block`, 1, 1).
    Arguments keep their one-slice types, so the body is unchanged.
  }];
  let options = [
    Option<"warpsPerBlock", "warps-per-block", "int64_t", /*default=*/"4", "Warps of each thread block">
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::memref::MemRefDialect", "mlir::arith::ArithDialect"];
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
    marked `bufferization.writable = false`, so a state whose initial value is an input (h0) is copied
    rather than updated in the caller's buffer.
  }];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect"];
}

def LAGPUDistributeToThreads : Pass<"la-gpu-distribute-to-threads", "mlir::gpu::GPUModuleOp"> {
  let summary = "Spreads a kernel's parallel loops over the threads of its block and makes its other writes "
                "single-threaded: scf.parallel (i, j) => for t = tid; t < I·J; t += ntid { i, j = delin(t) }";
  let description = [{
    Every thread of a block runs the kernel body. Then:
      - each outermost `scf.parallel` (no reductions) becomes a loop over its linearised iteration space with
        the thread index as start and the block size as step; a nested `scf.parallel` becomes an `scf.for`
        nest run by the thread that owns the outer iteration;
      - a write outside those loops to memory that threads share (global or scratch; not `memref.alloca`)
        runs on thread 0 only;
      - `gpu.barrier` goes before and after each of those loops and writes, so that every thread sees a write
        before it reads the location and no write overwrites what another thread still reads.
    The code between them (scalar and vector arithmetic, reads, loop control) runs redundantly on every
    thread and computes the same values there, so loops keep uniform trip counts and barriers stay
    convergent. `memref.copy` becomes a parallel loop first; 1-D in-bounds `vector.transfer_read/write`
    become `vector.load/store` when contiguous and a load or store per element when strided. This is the correctness-first mapping: a loop of a contraction that reads
    the same operands in every iteration still pays two barriers per step.
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

#endif // LA_TARGET_CUDA_TRANSFORMS_PASSES_TD
