//===- LADialect.td - the `la` dialect and its op base -----*- tablegen -*-===//
//
// The `la` dialect describes linear-attention kernels as pattern-level ops on tensors. Every op is one idea
// of the seed papers (feature map, sequence reduction, normalisation, prefix scan, contraction, gate), so a
// kernel reads like its mathematics and the compiler, not the user, decides how it is fused and tiled.
//
//===----------------------------------------------------------------------===//

#ifndef LA_DIALECT_TD
#define LA_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def LA_Dialect : Dialect {
  let name = "la";
  let summary = "Pattern-level ops for linear-attention kernels";
  let description = [{
    Ops of the `la` dialect operate on ranked tensors of f16, bf16, f32 or f64 with static or dynamic
    dimensions. They carry tensor (value) semantics; bufferization happens after lowering.

    Shared conventions:
    * **Subscripts.** `la.contract` and the broadcasting form of `la.map` take an einsum-like string such as
      `"bhnd,bhmd->bhnm"`: one lower-case letter per dimension, operands separated by `,`, result after
      `->`. A letter names one index; all dimensions it names must agree in size.
    * **Prefix broadcasting.** Gates (`la.gate`, the log-gate of a `decay` scan) may have fewer
      dimensions than the value they scale; their shape is then a leading prefix of the value's shape and
      they are broadcast along the trailing dimensions.
    * **Accumulation.** Ops that sum (`reduce`, `scan`, `contract`, `normalize`) take an optional
      `acc(T)` type; absent, accumulation happens in f32 (or f64 for f64 inputs).
  }];
  let cppNamespace = "::mlir::la";
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  // `la.register_block` on an op must hold a #la.register_block (the register-tiling steps read it).
  let hasOperationAttrVerify = 1;
  // `la.domain` on a function argument must hold a #la.domain and sit on a floating-point tensor.
  let hasRegionArgAttrVerify = 1;
  let extraClassDeclaration = [{
    /// On a body-less func.func: it is the prefill (resume, state) variant of the named causal entry, written
    /// by la-derive-state-variants.
    static constexpr ::llvm::StringLiteral kPrefillOfAttrName = "la.prefill_of";
    static constexpr ::llvm::StringLiteral kResumeOfAttrName = "la.resume_of";
    static constexpr ::llvm::StringLiteral kStateOfAttrName = "la.state_of";
    /// Beside `la.state_of`: the state variant of one level of states (mlir::la::StateOrigin::level) alone.
    static constexpr ::llvm::StringLiteral kStateLevelAttrName = "la.state_level";
    /// Beside a variant's `la.*_of`: every stretch it runs starts at a multiple of this many positions, so a
    /// contraction masked by blocks of a size that divides it (FLASH's causal_block and prior_block) carries
    /// state across stretches (mlir::la::DerivedStateVariant::alignment).
    static constexpr ::llvm::StringLiteral kAlignedToAttrName = "la.aligned_to";
    /// On a result of a derived variant: it is a state (SPEC §8), carried to the next resume. With f16 or bf16
    /// inputs the entry's own results are stored in the half type, but a state stays in f32: rounding it at
    /// every resume would make a decode loop drift from the whole-sequence kernel.
    static constexpr ::llvm::StringLiteral kStateResultAttrName = "la.state";
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

class LA_Op<string mnemonic, list<Trait> traits = []> : Op<LA_Dialect, mnemonic, traits>;

class LA_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<LA_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

// Element types the kernels accept; accumulation precision is a separate attribute.
def LA_Float : AnyTypeOf<[F16, BF16, F32, F64], "f16, bf16, f32 or f64">;
def LA_Tensor : RankedTensorOf<[F16, BF16, F32, F64]>;

#endif // LA_DIALECT_TD
