//===- LAGPUOps.td - the `la_gpu` dialect ------------------*- tablegen -*-===//
//
// Ops the CUDA target's passes hand to each other where a decision must wait for a later pass. An
// mma.sync operand fragment is one: la-gpu-contract-to-mma knows the fragment, but whether ldmatrix can
// load it depends on where la-gpu-outline-slice-kernel puts its buffer (shared memory or global scratch).
//
//===----------------------------------------------------------------------===//

#ifndef LA_GPU_OPS_TD
#define LA_GPU_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def LAGPU_Dialect : Dialect {
  let name = "la_gpu";
  let summary = "Hand-offs between the CUDA target's lowering passes";
  let description = [{
    Ops that exist between two passes of the CUDA target's lowering (compiler/Target/CUDA) and never reach
    the `gpu` stage: a later pass lowers each one once it knows what the first pass could not.
  }];
  let cppNamespace = "::mlir::lagpu";
}

def LAGPU_MmaFragmentOp : Op<LAGPU_Dialect, "mma_fragment", [MemoryEffects<[MemRead]>]> {
  let summary = "One lane's part of an mma.sync A or B operand, read from a buffer";
  let description = [{
    The registers one lane of a warp holds of the A operand (16 rows × K) or the B operand (K × 8 columns)
    of `mma.sync` m16n8kK, read from `source`. `origin` indexes the tile's first element in `source`;
    `row_dim` is the dimension of `source` along the fragment's rows (m for A, n for B) and `k_dim` the one
    along k. Every other dimension is read at its `origin` index.

    The result type says which operand it is: `vector<4xE×T>` is A, `vector<2xE×T>` is B, with E = 2 for
    f16/bf16 (K = 16) and E = 1 for f32 read as tf32 (K = 8). With g = lane / 4 and t = lane % 4, register r,
    element e is (the PTX ISA's fragment layouts for mma.m16n8k16 and mma.m16n8k8):
      A: row origin + g + 8·(r % 2), k origin + (r / 2)·K/2 + t·E + e
      B: row origin + g,             k origin + r·K/2 + t·E + e
    converted to T (rounded to nearest). With a `map` region, the element is first mapped by it: the region
    takes one element of `source` and yields the value to convert (an elementwise feature map such as φ(q)
    = elu(q) + 1, applied to the fragment in registers rather than materialised in memory). An element past
    the end of `source` along `row_dim` or `k_dim` is zero, after the map. The origin along `row_dim` is a
    multiple of the tile (16 for A, 8 for B) and along `k_dim` of K.

    la-gpu-lower-mma-fragments lowers it to `nvgpu.ldmatrix` where `source` is in shared memory, already of
    type T (16-bit), contiguous along one of the two dimensions with 16-byte aligned rows and covers whole
    tiles; to one load per element otherwise.

    ```mlir
    %a = la_gpu.mma_fragment %phi_q[%c0, %c0, %row, %k] lane %lane {row_dim = 2, k_dim = 3}
        : memref<1x1x16x64xf16> -> vector<4x2xf16>
    %b = la_gpu.mma_fragment %k[%c0, %c0, %col, %k] lane %lane {row_dim = 2, k_dim = 3}
        : memref<1x1x64x64xf16> -> vector<2x2xf16> map {
    ^bb0(%x: f16):
      %w = arith.extf %x : f16 to f32
      %e = math.exp %w : f32
      la_gpu.yield %e : f32
    }
    ```
  }];
  let arguments = (ins Arg<AnyStridedMemRef, "", [MemRead]>:$source, Variadic<Index>:$origin, Index:$lane,
                       I64Attr:$row_dim, I64Attr:$k_dim);
  let results = (outs VectorOfRankAndType<[2], [F16, BF16, F32]>:$fragment);
  let regions = (region AnyRegion:$map);
  let assemblyFormat = [{
    $source `[` $origin `]` `lane` $lane attr-dict `:` type($source) `->` type($fragment) (`map` $map^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether it is the A operand (four registers); else B (two).
    bool isA() { return getFragment().getType().getDimSize(0) == 4; }
    /// Operand elements per 32-bit register: 2 (f16, bf16) or 1 (tf32).
    int64_t getPerRegister() { return getFragment().getType().getDimSize(1); }
    /// The k of the mma instruction: 16 for f16/bf16, 8 for tf32.
    int64_t getK() { return 8 * getPerRegister(); }
    /// Rows of the tile: 16 for A, 8 for B.
    int64_t getTileRows() { return isA() ? 16 : 8; }
    /// Whether a `map` region maps each element before its conversion.
    bool hasMap() { return !getMap().empty(); }
  }];
}

def LAGPU_YieldOp : Op<LAGPU_Dialect, "yield", [Pure, Terminator, HasParent<"MmaFragmentOp">]> {
  let summary = "The mapped element of an mma_fragment's map region";
  let arguments = (ins AnyFloat:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

#endif // LA_GPU_OPS_TD
