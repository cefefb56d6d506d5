//===- Passes.td - conversions out of the la dialect --------*- tablegen -*-===//

#ifndef LA_CONVERSION_PASSES_TD
#define LA_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def LAToLinalg : Pass<"la-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lower every la op to linalg/tensor/scf on tensors";
  let description = [{
    `la.map`, `la.gate`, `la.normalize` ⇒ elementwise `linalg.generic`; `la.reduce` and `la.contract` ⇒
    `linalg.generic` with reduction iterators (masks become `linalg.index` comparisons, accumulation in the
    op's `acc` type); `la.scan` ⇒ an `scf.for` over the scanned dimension carrying the state; `la.size` ⇒
    `tensor.dim`. A scan whose state is static, at most `register-state-elements` elements in all and
    has one non-unit dimension (the innermost; a sliced kernel's `[1, 1, D]` running sum) carries it as a
    vector, which stays in registers across the steps, instead of a tensor, which bufferises to memory and
    puts a store-to-load round trip on the scan's dependence chain. The loop order of each generic puts
    the longest dimensions outermost and a contiguous dimension innermost, so the loops that
    `convert-linalg-to-loops` emits vectorise. Ops the CPU path does
    not lower yet (decay and online-softmax scans, region combiners without an identity) are reported with
    their location.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect",
                           "mlir::scf::SCFDialect", "mlir::arith::ArithDialect",
                           "mlir::math::MathDialect", "mlir::vector::VectorDialect",
                           "mlir::affine::AffineDialect", "mlir::bufferization::BufferizationDialect"];
  let options = [
    Option<"registerStateElements", "register-state-elements", "int64_t", /*default=*/"128",
           "Largest scan state (elements over all states) carried in vector registers; 0 keeps every "
           "scan state in a tensor">,
  ];
}

def LANVVMToEmulator : Pass<"la-nvvm-to-emulator", "mlir::ModuleOp"> {
  let summary = "Turn each gpu.module's NVVM kernels into host functions that run on the GPU emulator";
  let description = [{
    Runs after the NVVM conversions (`la-gpu-to-nvvm`), on the exact IR the NVPTX backend would translate.
    Each `gpu.module @m` is dissolved into the enclosing module: its functions and globals become `@m.<name>`,
    and every operation the emulator must see becomes a call into its C ABI
    (runtime/emulator/include/la/emulator/ABI.h), with the operation's `file:line:col` for the findings:

    - NVVM special registers, barriers, `shfl`, `vote`, `redux`, `bar.warp.sync`, `membar` ⇒
      `__la_emu_tid_x()`, `__la_emu_barrier0(loc)`, `__la_emu_shfl_sync(...)`, ...;
    - `ldmatrix`, `mma.sync`, `wmma.{load,mma,store}` ⇒ the warp-collective tensor-core calls, fragments
      passed as words on the thread's stack;
    - `cp.async` and its commit and wait groups ⇒ `__la_emu_cp_async*`;
    - `llvm.load`/`llvm.store`/`atomicrmw`/`cmpxchg` on shared (address space 3) or global memory ⇒
      `__la_emu_{ld,st,atom}_{shared,global}`; accesses to the thread's stack and to module globals stay
      native;
    - a shared global ⇒ its byte offset in the block's arena (`llvm.mlir.addressof` ⇒ `llvm.inttoptr`);
    - `llvm.intr.fma`/`fmuladd` ⇒ counted with `__la_emu_count_fma` and kept;
    - address spaces are dropped.

    Each kernel `@m.k` gets `la_emu.kernel = "m::k"`, `la_emu.shared_bytes` (the arena it needs) and, when
    the kernel declared one, `la_emu.block_size`; and a packed entry point `@m.k.call(!llvm.ptr)` that takes
    an array of pointers to the argument values (what the emulator's launcher calls).

    An NVVM operation, inline PTX, or a call to an external function the emulator does not provide is an
    error that names the operation and its location; nothing is skipped. libdevice calls (`__nv_*`) stay
    calls: the emulator defines them on the host.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

#endif // LA_CONVERSION_PASSES_TD
