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
    `tensor.dim`. The loop order of each generic puts the longest dimensions outermost and a contiguous
    dimension innermost, so the loops that `convert-linalg-to-loops` emits vectorise. Ops the CPU path does
    not lower yet (decay and online-softmax scans, region combiners without an identity) are reported with
    their location.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect",
                           "mlir::scf::SCFDialect", "mlir::arith::ArithDialect",
                           "mlir::math::MathDialect"];
}

#endif // LA_CONVERSION_PASSES_TD
