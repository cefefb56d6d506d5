//===- LAOps.td - ops of the `la` dialect ------------------*- tablegen -*-===//

#ifndef LA_OPS_TD
#define LA_OPS_TD

include "LA/IR/LADialect.td"
include "LA/IR/LAAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/OpAsmInterface.td"

//===----------------------------------------------------------------------===//
// la.map
//===----------------------------------------------------------------------===//

def LA_MapOp : LA_Op<"map", [RecursiveMemoryEffects,
    DeclareOpInterfaceMethods<InferShapedTypeOpInterface, ["inferReturnTypeComponents"]>]> {
  let summary = "Elementwise function with explicit broadcasting";
  let description = [{
    Applies a scalar function to every element of the result. The function is either a named one
    (`sigmoid`, `elu1`, `relu2`, `clamp(lo, hi)`, `mul`, `affine`, ...; see `MapFn`) or a region whose block
    takes one scalar per input and ends in `la.yield`. Inside the region `la.index D` gives the position
    along result dimension `D`; values defined above the op may be used.

    Without a subscript string every input has the result's type. With one, each input names the result
    dimensions it spans, so `"bhne,bhn->bhne"` broadcasts the second input along `e`; inputs may not sum
    over a dimension (use `la.contract`) and a rank-0 input has an empty subscript (`",bhn->bhn"`).

    ```mlir
    %q1 = la.map elu1 %q : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
    %c = la.map clamp(-1.0, 1.0) %o : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
    %w = la.map mul "bhme,bhm->bhme" %v, %comp
        : tensor<?x?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?x?xf32>
    %n = la.map "bhn->bhn" %d : tensor<?x?x?xf32> -> tensor<?x?x?xf32> {
    ^bb0(%x: f32):
      %t = la.index 2 : index
      ...
      la.yield %r : f32
    }
    ```
  }];
  let arguments = (ins OptionalAttr<LA_MapFn>:$fn,
                       DefaultValuedOptionalAttr<DenseF64ArrayAttr, "{}">:$params,
                       OptionalAttr<LA_SubscriptsAttr>:$subscripts,
                       Variadic<LA_Tensor>:$inputs);
  let results = (outs LA_Tensor:$result);
  let regions = (region AnyRegion:$body);
  let assemblyFormat = [{
    custom<MapHead>($fn, $params, $subscripts, $inputs) attr-dict `:` type($inputs) `->` type($result)
    ($body^)?
  }];
  // Builders for C++ rewrites: the optional function parameters and subscripts default to none.
  let builders = [
    // A named function without parameters.
    OpBuilder<(ins "Type":$result, "MapFn":$fn, "ValueRange":$inputs,
                   CArg<"SubscriptsAttr", "{}">:$subscripts), [{
      build($_builder, $_state, result, MapFnAttr::get($_builder.getContext(), fn), DenseF64ArrayAttr(),
            subscripts, inputs);
    }]>,
    // A region body, which the caller then fills in.
    OpBuilder<(ins "Type":$result, "ValueRange":$inputs, CArg<"SubscriptsAttr", "{}">:$subscripts), [{
      build($_builder, $_state, result, MapFnAttr(), DenseF64ArrayAttr(), subscripts, inputs);
    }]>
  ];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    /// For each input, the result dimension each of its dimensions spans.
    ::llvm::SmallVector<::llvm::SmallVector<int64_t>> getInputToResultDims();
    /// Whether the function is given by the region rather than by name.
    bool hasRegionBody() { return !getBody().empty(); }
  }];
}

def LA_IndexOp : LA_Op<"index", [Pure, HasParent<"MapOp">]> {
  let summary = "Position of the current element inside a la.map region";
  let description = [{
    Returns the index of the element being computed along result dimension `dim` of the enclosing
    `la.map`, as an `index` or converted to `f32`/`f64` (causal kernels use it for the prefix length
    `n_t = t + 1`).

    ```mlir
    %t = la.index 2 : f32
    ```
  }];
  let arguments = (ins I64Attr:$dim);
  let results = (outs AnyTypeOf<[Index, F32, F64]>:$result);
  let assemblyFormat = "$dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def LA_YieldOp : LA_Op<"yield", [Pure, Terminator, ReturnLike,
                                ParentOneOf<["MapOp", "ReduceOp", "ScanOp"]>]> {
  let summary = "Returns the scalar results of a la region";
  let description = [{
    Terminates the body of `la.map` and the combiner of `la.reduce` / `la.scan`.

    ```mlir
    la.yield %a, %b : f32, f32
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

//===----------------------------------------------------------------------===//
// la.reduce
//===----------------------------------------------------------------------===//

def LA_ReduceOp : LA_Op<"reduce", [RecursiveMemoryEffects,
    DeclareOpInterfaceMethods<InferShapedTypeOpInterface, ["inferReturnTypeComponents"]>]> {
  let summary = "Associative reduction over one or more dimensions";
  let description = [{
    Combines the elements along `dims` with an associative, commutative combiner and drops those dimensions
    from the result. The combiner is named (`add`, `max`, `min`, `logaddexp`) or a region taking the
    accumulated values then the new values (`2n` scalars for `n` inputs) and yielding `n` scalars. The
    compiler may regroup and reorder combinations freely: that freedom is the contract.

    ```mlir
    %sk = la.reduce add %k along [2] : tensor<?x?x?x?xf32> -> tensor<?x?x?xf32>
    %m = la.reduce %x along [1] : tensor<?x?xf32> -> tensor<?xf32> {
    ^bb0(%acc: f32, %v: f32):
      %r = arith.maximumf %acc, %v : f32
      la.yield %r : f32
    }
    ```
  }];
  let arguments = (ins OptionalAttr<LA_Combiner>:$combiner,
                       Variadic<LA_Tensor>:$inputs,
                       DenseI64ArrayAttr:$dims,
                       OptionalAttr<TypeAttr>:$acc);
  let results = (outs Variadic<LA_Tensor>:$results);
  let regions = (region AnyRegion:$body);
  let assemblyFormat = [{
    custom<CombinerHead>($combiner, $inputs) `along` $dims (`acc` `(` $acc^ `)`)? attr-dict
    `:` type($inputs) `->` type($results) ($body^)?
  }];
  let builders = [
    // A named combiner over one input.
    OpBuilder<(ins "Type":$result, "Combiner":$combiner, "Value":$input, "ArrayRef<int64_t>":$dims,
                   CArg<"TypeAttr", "{}">:$acc), [{
      build($_builder, $_state, TypeRange{result}, CombinerAttr::get($_builder.getContext(), combiner),
            ValueRange{input}, dims, acc);
    }]>
  ];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// la.scan
//===----------------------------------------------------------------------===//

def LA_ScanOp : LA_Op<"scan", [RecursiveMemoryEffects, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<InferShapedTypeOpInterface, ["inferReturnTypeComponents"]>]> {
  let summary = "Associative prefix scan along one dimension";
  let description = [{
    Computes running combinations along dimension `dim`: `inclusive` gives `y_t = x_0 ⊕ ... ⊕ x_t`,
    `exclusive` gives `y_t = x_0 ⊕ ... ⊕ x_{t-1}` (identity at `t = 0`); `reverse` runs from the end.
    `init(%s)` supplies the state before the first element (shape of the input without `dim`).

    Combiners:
    * `add`, `max`, `min`, `logaddexp`: one input, one result.
    * `decay %x, %g`: `S_t = exp(g_t) S_{t-1} + x_t`, `g` a log-gate (≤ 0) that prefix-broadcasts into `x`
      (`[B,H,T]` per head, `[B,H,T,K]` per key dimension against `x : [B,H,T,K,V]`).
    * `online_softmax %k, %v`: `y_t = Σ_{s≤t} e^{k_s} v_s / Σ_{s≤t} e^{k_s}` computed with a running max,
      finite for any finite logits. Its state is the online-softmax triple, the weighted sum kept normalised:
      `y_t`, the running max `m_t = max_{s≤t} k_s` and the normaliser `z_t = Σ_{s≤t} e^{k_s − m_t}`. The op
      returns `y` alone, or all three (`-> y, m, z`, each of the values' type), and `init(%y0, %m0, %z0)`
      gives all three (SPEC §8: a resumed sequence; m0 = −inf, z0 = 0 is the empty prefix). A result read only
      at the last position is not materialised per position. An exclusive form needs the init: its first
      position's state.
    * a region taking the accumulated state then the new element (`2n` scalars) and yielding `n` scalars.

    The combiner must be associative (it need not be commutative): the compiler splits the sequence into
    chunks, scans them in parallel and combines chunk states. A `window(w)` restricts an `add` scan to the
    last `w` elements.

    ```mlir
    %s = la.scan add %kv along 2 inclusive : tensor<?x?x?x?x?xf32> -> tensor<?x?x?x?x?xf32>
    %h = la.scan decay %kv, %g init(%h0 : tensor<?x?x?x?xf32>) along 2 inclusive
        : tensor<?x?x?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?x?x?xf32>
    ```
  }];
  let arguments = (ins OptionalAttr<LA_Combiner>:$combiner,
                       Variadic<LA_Tensor>:$inputs,
                       Variadic<LA_Tensor>:$init,
                       I64Attr:$dim,
                       LA_ScanKind:$kind,
                       UnitAttr:$reverse,
                       OptionalAttr<I64Attr>:$window,
                       OptionalAttr<TypeAttr>:$acc);
  let results = (outs Variadic<LA_Tensor>:$results);
  let regions = (region AnyRegion:$body);
  let assemblyFormat = [{
    custom<CombinerHead>($combiner, $inputs) (`init` `(` $init^ `:` type($init) `)`)?
    `along` $dim $kind (`reverse` $reverse^)? (`window` `(` $window^ `)`)? (`acc` `(` $acc^ `)`)?
    attr-dict `:` type($inputs) `->` type($results) ($body^)?
  }];
  let builders = [
    // An inclusive forward scan with a named combiner over one input, optionally from an initial state.
    OpBuilder<(ins "Type":$result, "Combiner":$combiner, "Value":$input, "int64_t":$dim,
                   CArg<"Value", "{}">:$init, CArg<"TypeAttr", "{}">:$acc), [{
      build($_builder, $_state, TypeRange{result}, CombinerAttr::get($_builder.getContext(), combiner),
            ValueRange{input}, init ? ValueRange{init} : ValueRange{}, dim, ScanKind::inclusive,
            /*reverse=*/false, IntegerAttr(), acc);
    }]>
  ];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    /// Number of state values the combiner carries per element (results of the op).
    unsigned getNumStates() { return getResults().size(); }
    /// Whether this is a plain running sum `y_t = s_0 + Σ_{s≤t} x_s`: `add`, inclusive, forward, no window
    /// (s_0 the `init`, zero without one). The chunking rewrites restart such a scan on any chunk, seeded
    /// with the sum carried from the chunks before it (from s_0 for the first).
    bool isInclusivePrefixSum();
  }];
}

//===----------------------------------------------------------------------===//
// la.normalize
//===----------------------------------------------------------------------===//

def LA_NormalizeOp : LA_Op<"normalize", [Pure,
    DeclareOpInterfaceMethods<InferShapedTypeOpInterface, ["inferReturnTypeComponents"]>]> {
  let summary = "Sum-normalisation or softmax along one dimension";
  let description = [{
    `sum`: `y = x / (Σ_dim x + eps)`; with `by %d` the denominator is given (shape of `x` without `dim`)
    and `y = x / (d + eps)`, broadcast along `dim`. `softmax`: `y = exp(x - max) / Σ exp(x - max)` along
    `dim` (no eps). `eps` defaults to 1e-6 for `sum`.

    ```mlir
    %o = la.normalize sum %num by %den along 3 eps(1.0e-6)
        : tensor<?x?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?x?xf32>
    %c = la.normalize softmax %o along 2 : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
    ```
  }];
  let arguments = (ins LA_NormalizeKind:$kind,
                       LA_Tensor:$input,
                       Optional<LA_Tensor>:$denominator,
                       I64Attr:$dim,
                       OptionalAttr<F64Attr>:$eps,
                       OptionalAttr<TypeAttr>:$acc);
  let results = (outs LA_Tensor:$result);
  let assemblyFormat = [{
    $kind $input (`by` $denominator^)? `along` custom<DimAndEps>($dim, $eps) (`acc` `(` $acc^ `)`)?
    attr-dict `:` type($input) (`,` type($denominator)^)? `->` type($result)
  }];
  let builders = [
    // The default eps and accumulation; `denominator` may be null.
    OpBuilder<(ins "Type":$result, "NormalizeKind":$kind, "Value":$input, "Value":$denominator,
                   "int64_t":$dim), [{
      build($_builder, $_state, result, kind, input, denominator, static_cast<uint64_t>(dim), FloatAttr(),
            TypeAttr());
    }]>
  ];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The eps added to the denominator: the attribute, or the SPEC default 1e-6 for `sum`, 0 for softmax.
    double getEpsOrDefault();
  }];
}

//===----------------------------------------------------------------------===//
// la.contract
//===----------------------------------------------------------------------===//

def LA_ContractOp : LA_Op<"contract", [Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<InferShapedTypeOpInterface, ["inferReturnTypeComponents"]>]> {
  let summary = "Einsum-like contraction of two or three tensors, optionally masked";
  let description = [{
    Sums the product of the inputs over every subscript letter absent from the result. The mask (see
    `#la.mask`) multiplies each summand by a function of the positions of two of its letters:
    * `tril(n, m)` keeps `n >= m` (causal, diagonal included);
    * `band(n, m, w)` keeps `|n - m| < w`, `causal_band(n, m, w)` keeps `0 <= n - m < w`;
    * `block(n, m, c)` keeps pairs in the same chunk of `c` positions, `causal_block` also needs `n >= m`,
      `prior_block(n, m, c)` keeps only chunks strictly before `n`'s (FLASH's linear part);
    * `decay(n, m) gate(%g)` weights by `exp(Σ_{m<r≤n} g_r)` for `n >= m`; the log-gate `g` has the
      batch dimensions (letters shared by every operand and the result) followed by the position `n`, and
      optionally by the one contracted letter `d` (a gate per position and feature, as in GLA: the weight
      `exp(Σ_{m<r≤n} g_{r,d})` then multiplies each summand).

    ```mlir
    %kv = la.contract "bhmd,bhme->bhde" %k, %v
        : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
    %o = la.contract "bhnd,bhmd,bhme->bhne" %q, %k, %v mask tril(n, m)
        : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
    ```
  }];
  let arguments = (ins LA_SubscriptsAttr:$subscripts,
                       Variadic<LA_Tensor>:$inputs,
                       OptionalAttr<LA_MaskAttr>:$mask,
                       Optional<LA_Tensor>:$gate,
                       OptionalAttr<TypeAttr>:$acc);
  let results = (outs LA_Tensor:$result);
  let assemblyFormat = [{
    custom<Subscripts>($subscripts) $inputs (`mask` custom<Mask>($mask)^)? (`gate` `(` $gate^ `:` type($gate) `)`)?
    (`acc` `(` $acc^ `)`)? attr-dict `:` type($inputs) `->` type($result)
  }];
  // Builders for C++ rewrites: no mask, or a mask that needs no gate; a decay mask with its gate takes the
  // generated builder with every operand.
  let builders = [
    OpBuilder<(ins "Type":$result, "SubscriptsAttr":$subscripts, "ValueRange":$inputs,
                   CArg<"TypeAttr", "{}">:$acc), [{
      build($_builder, $_state, result, subscripts, inputs, MaskAttr(), Value(), acc);
    }]>,
    OpBuilder<(ins "Type":$result, "SubscriptsAttr":$subscripts, "ValueRange":$inputs, "MaskAttr":$mask,
                   CArg<"TypeAttr", "{}">:$acc), [{
      build($_builder, $_state, result, subscripts, inputs, mask, Value(), acc);
    }]>,
    // From the text form, for host programs that write kernels in C++ ("bhmd,bhme->bhde"); a malformed
    // string is reported at the op's location and leaves the op invalid.
    OpBuilder<(ins "Type":$result, "StringRef":$subscripts, "ValueRange":$inputs,
                   CArg<"TypeAttr", "{}">:$acc), [{
      SubscriptsAttr parsed = SubscriptsAttr::parseText($_builder.getContext(), subscripts,
                                                        [&] { return ::mlir::emitError($_state.location); });
      build($_builder, $_state, result, parsed, inputs, MaskAttr(), Value(), acc);
    }]>
  ];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The letters indexing the decay gate of a verified op with a decay mask: batch letters, the mask row,
    /// and the contracted letter when the gate has a feature dimension.
    std::string getDecayGateLetters();
  }];
}

//===----------------------------------------------------------------------===//
// la.gate
//===----------------------------------------------------------------------===//

def LA_GateOp : LA_Op<"gate", [Pure,
    DeclareOpInterfaceMethods<InferShapedTypeOpInterface, ["inferReturnTypeComponents"]>]> {
  let summary = "Gated combine: f(gate) ⊙ (x_1 + ... + x_k)";
  let description = [{
    Scales the sum of one or more branches by `f(gate)`, `f` ∈ {`identity`, `sigmoid`, `silu`}. Branches
    have the result's type; the gate has it too or prefix-broadcasts into it (GAU/FLASH use a full-shape
    `U`, Flow-Attention a per-position `[B,H,N]` allocation).

    ```mlir
    %o = la.gate identity %u, %vq, %vl
        : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32> -> tensor<?x?x?xf32>
    ```
  }];
  let arguments = (ins LA_GateFn:$fn, LA_Tensor:$gate, Variadic<LA_Tensor>:$branches);
  let results = (outs LA_Tensor:$result);
  let assemblyFormat = [{
    $fn $gate `,` $branches attr-dict `:` type($gate) `,` type($branches) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// la.size
//===----------------------------------------------------------------------===//

def LA_SizeOp : LA_Op<"size", [Pure,
    DeclareOpInterfaceMethods<InferShapedTypeOpInterface, ["inferReturnTypeComponents"]>]> {
  let summary = "Size of a dimension as a rank-0 floating-point tensor";
  let description = [{
    Kernels that scale by a sequence length (Flow-Attention's `N/M`, FLASH's `1/N`) take it from here so
    the same kernel serves every shape. Folds to a constant when the dimension is static.

    ```mlir
    %m = la.size %k along 2 : tensor<?x?x?x?xf32> -> tensor<f32>
    ```
  }];
  let arguments = (ins LA_Tensor:$input, I64Attr:$dim);
  let results = (outs 0DTensorOf<[F16, BF16, F32, F64]>:$result);
  let assemblyFormat = "$input `along` $dim attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// la.window
//===----------------------------------------------------------------------===//

def LA_WindowOp : LA_Op<"window", [Pure,
    DeclareOpInterfaceMethods<InferShapedTypeOpInterface, ["inferReturnTypeComponents"]>]> {
  let summary = "Centred, zero-padded sliding windows along some dimensions (a stride-1 'same' convolution's view)";
  let description = [{
    For each dimension `dims[j]` with odd window size `sizes[j] = 2·p_j + 1`, inserts a window-offset
    dimension u_j of that size right after it:

      result[.., i_dims[j], u_j, ..] = input[.., i_dims[j] + u_j − p_j, ..]

    and 0 where a shifted position lies outside the input. A 2-D convolution (AFT-conv's `conv2d(x, kernel)`,
    correlation orientation) is then a contraction of the window with the kernel over the offset letters:

    ```mlir
    %win = la.window %x along [1, 2] size [3, 3] : tensor<?x?x?x?xf32> -> tensor<?x?x3x?x3x?xf32>
    %y = la.contract "bxuyvc,cuv->bxyc" %win, %kernel
        : tensor<?x?x3x?x3x?xf32>, tensor<?x3x3xf32> -> tensor<?x?x?x?xf32>
    ```

    Offsets sit next to their dimension (not at the end) so that the input's contiguous dimension stays the
    window's last one, which is what the contraction's loop order and the vectoriser key on. Lowering pads
    the input with zeros once and reads it through shifted indexing maps; elementwise fusion folds that read
    into the consumer, so the window (sizes[0]·…·sizes[k-1] times the input) is not built.
  }];
  let arguments = (ins LA_Tensor:$input, DenseI64ArrayAttr:$dims, DenseI64ArrayAttr:$sizes);
  let results = (outs LA_Tensor:$result);
  let assemblyFormat = "$input `along` $dims `size` $sizes attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The result shape for an input of shape `inputShape`: each windowed dimension followed by its window.
    static SmallVector<int64_t> inferShape(ArrayRef<int64_t> inputShape, ArrayRef<int64_t> dims,
                                           ArrayRef<int64_t> sizes);
  }];
}

#endif // LA_OPS_TD
