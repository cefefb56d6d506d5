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

#endif // LA_TRANSFORMS_PASSES_TD
