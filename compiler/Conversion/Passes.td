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
                           "mlir::math::MathDialect", "mlir::vector::VectorDialect"];
  let options = [
    Option<"registerStateElements", "register-state-elements", "int64_t", /*default=*/"128",
           "Largest scan state (elements over all states) carried in vector registers; 0 keeps every "
           "scan state in a tensor">,
  ];
}

#endif // LA_CONVERSION_PASSES_TD
