//===- LAAttrs.td - enums and attributes of the `la` dialect -*- tablegen -*-===//

#ifndef LA_ATTRS_TD
#define LA_ATTRS_TD

include "LA/IR/LADialect.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Named elementwise functions of `la.map`.
//===----------------------------------------------------------------------===//

def LA_MapFn : I32EnumAttr<"MapFn", "named elementwise function of la.map", [
    // Unary feature maps and activations.
    I32EnumAttrCase<"identity", 0>,
    I32EnumAttrCase<"sigmoid", 1>,
    I32EnumAttrCase<"elu1", 2>,        // elu(x) + 1, the linear-attention feature map
    I32EnumAttrCase<"relu", 3>,
    I32EnumAttrCase<"relu2", 4>,       // relu(x)^2, the GAU/FLASH kernel
    I32EnumAttrCase<"exp", 5>,
    I32EnumAttrCase<"log", 6>,
    I32EnumAttrCase<"silu", 7>,
    I32EnumAttrCase<"neg", 8>,
    I32EnumAttrCase<"reciprocal", 9>,
    I32EnumAttrCase<"square", 10>,
    // Unary with scalar parameters: clamp(lo, hi), add_const(c), mul_const(c).
    I32EnumAttrCase<"clamp", 11>,
    I32EnumAttrCase<"add_const", 12>,
    I32EnumAttrCase<"mul_const", 13>,
    // Binary, with broadcasting.
    I32EnumAttrCase<"add", 14>,
    I32EnumAttrCase<"sub", 15>,
    I32EnumAttrCase<"mul", 16>,
    I32EnumAttrCase<"div", 17>,
    I32EnumAttrCase<"max", 18>,
    I32EnumAttrCase<"min", 19>,
    // Ternary: affine(x, gamma, beta) = gamma * x + beta (GAU's offset-scale).
    I32EnumAttrCase<"affine", 20>
  ]> {
  let cppNamespace = "::mlir::la";
}

//===----------------------------------------------------------------------===//
// Named combiners of `la.reduce` and `la.scan`.
//===----------------------------------------------------------------------===//

def LA_Combiner : I32EnumAttr<"Combiner", "named associative combiner", [
    I32EnumAttrCase<"add", 0>,
    I32EnumAttrCase<"max", 1>,
    I32EnumAttrCase<"min", 2>,
    I32EnumAttrCase<"logaddexp", 3>,
    // (a1, S1) + (a2, S2) = (a1 a2, a2 S1 + S2) with a = exp(log-gate); scan only.
    I32EnumAttrCase<"decay", 4>,
    // (m, n, z) running max / weighted sum / normaliser of softmax-weighted values; scan only.
    I32EnumAttrCase<"online_softmax", 5>
  ]> {
  let cppNamespace = "::mlir::la";
}

def LA_ScanKind : I32EnumAttr<"ScanKind", "inclusive or exclusive prefix", [
    I32EnumAttrCase<"inclusive", 0>,
    I32EnumAttrCase<"exclusive", 1>
  ]> {
  let cppNamespace = "::mlir::la";
}

def LA_NormalizeKind : I32EnumAttr<"NormalizeKind", "normalisation of la.normalize", [
    I32EnumAttrCase<"sum", 0>,       // x / (sum + eps)
    I32EnumAttrCase<"softmax", 1>    // exp(x - max) / sum exp(x - max)
  ]> {
  let cppNamespace = "::mlir::la";
}

def LA_GateFn : I32EnumAttr<"GateFn", "function applied to the gate of la.gate", [
    I32EnumAttrCase<"identity", 0>,
    I32EnumAttrCase<"sigmoid", 1>,
    I32EnumAttrCase<"silu", 2>
  ]> {
  let cppNamespace = "::mlir::la";
}

//===----------------------------------------------------------------------===//
// Subscripts of `la.contract` and the broadcasting `la.map`.
//===----------------------------------------------------------------------===//

// The letters of each input. The attribute's storage owns copies of the terms, so a rewrite may build one
// from temporary strings.
def LA_SubscriptTermsParameter
    : AttrOrTypeParameter<"::llvm::ArrayRef<::llvm::StringRef>", "letters naming each input's dimensions"> {
  let allocator = [{
    ::llvm::SmallVector<::llvm::StringRef> copies;
    for (::llvm::StringRef term : $_self)
      copies.push_back($_allocator.copyInto(term));
    $_dst = $_allocator.copyInto(::llvm::ArrayRef<::llvm::StringRef>(copies));
  }];
}

def LA_SubscriptsAttr : LA_Attr<"Subscripts", "subscripts"> {
  let summary = "Einsum-like subscripts: one letter per dimension of each input and of the result";
  let description = [{
    The parsed form of a subscript string such as `"bhnd,bhmd->bhnm"`: the letters of each input and of the
    result. Letters are `a`-`z` and distinct within a term; an empty term is a rank-0 operand. Ops print and
    parse it as the plain string (`la.contract "bhnd,bhmd->bhnm" ...`); on its own it reads
    `#la.subscripts<"bhnd,bhmd->bhnm">`.

    Every dimension query (which letters are contracted, which are batch letters, the indexing map of each
    operand) reads the parsed letters, so rewrites never re-parse or concatenate strings.
  }];
  let parameters = (ins LA_SubscriptTermsParameter:$inputs, StringRefParameter<"letters of the result">:$result);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Parses "ab,bc->ac"; a malformed string is reported through `emitError` (the message names the
    /// offending term and character) and gives a null attribute.
    static SubscriptsAttr parseText(::mlir::MLIRContext *context, ::llvm::StringRef text,
                                    ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError);
    /// From terms a rewrite builds out of letters (`{bn + d, bm + d}`); the attribute copies them. (Not an
    /// overload of get(): a braced list of strings would match both.)
    static SubscriptsAttr getFromTerms(::mlir::MLIRContext *context, ::llvm::ArrayRef<std::string> inputs,
                                       ::llvm::StringRef result);
    /// The canonical "ab,bc->ac" text.
    std::string str() const;
    unsigned getNumInputs() const { return getInputs().size(); }
    ::llvm::StringRef getInput(unsigned index) const { return getInputs()[index]; }
    /// Letters that occur in some input but not in the result, in first-occurrence order.
    std::string getContractedLetters() const;
    /// Letters present in every input and in the result (the batch dimensions), in result order.
    std::string getBatchLetters() const;
    /// Every letter once: the result's, then the contracted ones. The loop dimensions of getIndexingMaps().
    std::string getLetters() const;
    /// The map from the loops named by `loopLetters` (each letter once, a superset of every term) to the
    /// dimensions of each input, then of the result. Without letters, the loops are getLetters().
    ::llvm::SmallVector<::mlir::AffineMap> getIndexingMaps(::llvm::StringRef loopLetters = {}) const;
    /// The map from the loops named by `loopLetters` to the dimensions named by `term`.
    static ::mlir::AffineMap getLetterMap(::mlir::MLIRContext *context, ::llvm::StringRef loopLetters,
                                          ::llvm::StringRef term);
    /// Position of `letter` in the result, or -1 when it is contracted.
    int64_t getResultDim(char letter) const;
  }];
}

//===----------------------------------------------------------------------===//
// Masks of `la.contract`.
//===----------------------------------------------------------------------===//

def LA_MaskKind : I32EnumAttr<"MaskKind", "structural mask of a contraction", [
    I32EnumAttrCase<"tril", 0>,          // keep r >= c (causal, diagonal included)
    I32EnumAttrCase<"band", 1>,          // keep |r - c| < size
    I32EnumAttrCase<"causal_band", 2>,   // keep 0 <= r - c < size
    I32EnumAttrCase<"block", 3>,         // keep floor(r / size) == floor(c / size)
    I32EnumAttrCase<"causal_block", 4>,  // block and tril
    I32EnumAttrCase<"decay", 5>,         // weight exp(G_r - G_c) where r >= c, G = inclusive cumsum of g
    I32EnumAttrCase<"prior_block", 6>    // keep floor(c / size) < floor(r / size): earlier chunks only
  ]> {
  let cppNamespace = "::mlir::la";
  let genSpecializedAttr = 0;
}

def LA_MaskAttr : LA_Attr<"Mask", "mask"> {
  let summary = "Mask over a (row, column) pair of contraction indices";
  let description = [{
    Multiplies the contraction's summand by a function of the two positions indexed by `row` and `col`
    (both subscript letters of the contraction). `size` is the band width or block size for the kinds that
    take one. Example: `#la.mask<causal_block(n, m, 256)>`.

    `offset` (tril, band and causal_band only; default 0) shifts the row position before the comparison:
    the mask keeps or drops (r + offset, c) as its kind says of (r, c). It describes a window of a larger
    masked problem whose rows start `offset` positions after its columns, which is what chunking a band
    contraction produces: `#la.mask<band(t, s, 64, offset = 63)>`.
  }];
  let parameters = (ins EnumParameter<LA_MaskKind>:$kind, "char":$row, "char":$col,
                        DefaultValuedParameter<"int64_t", "0">:$size,
                        DefaultValuedParameter<"int64_t", "0">:$offset);
  let builders = [
    AttrBuilder<(ins "MaskKind":$kind, "char":$row, "char":$col, "int64_t":$size), [{
      return $_get($_ctxt, kind, row, col, size, /*offset=*/0);
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether this kind takes a `size` parameter.
    static bool kindHasSize(MaskKind kind);
    /// Whether this kind compares positions only (and so takes an `offset`).
    static bool kindTakesOffset(MaskKind kind);
    /// Parses `kind(r, c[, size])`, the form used inside ops and attributes.
    static ::mlir::Attribute parseBody(::mlir::AsmParser &parser);
    void printBody(::mlir::AsmPrinter &printer) const;
  }];
}

//===----------------------------------------------------------------------===//
// Argument domains.
//===----------------------------------------------------------------------===//

def LA_DomainAttr : LA_Attr<"Domain", "domain"> {
  let summary = "The interval of values an entry argument may hold";
  let description = [{
    Declares the values a kernel's mathematics is defined for, on a function argument:
    `%g: !g {la.domain = #la.domain<max = 0.0>}` says a log-gate is at most 0 (SPEC §5). Either bound may be
    left out; both are inclusive. The kernel does not clamp: the domain tells callers and tools what to
    feed it. `lac signature` shows it, `lac run --random` samples inside it, and the numerics guard
    (`lac run --check`) names an input that lies outside it before it blames the kernel for the outputs.
  }];
  // f64 FloatAttrs (a double parameter would have no hash); a null attribute is an absent bound.
  let parameters = (ins OptionalParameter<"::mlir::FloatAttr">:$min, OptionalParameter<"::mlir::FloatAttr">:$max);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The argument attribute that holds one.
    static constexpr ::llvm::StringLiteral kName = "la.domain";
    std::optional<double> getLowerBound() const {
      return getMin() ? std::optional<double>(getMin().getValueAsDouble()) : std::nullopt;
    }
    std::optional<double> getUpperBound() const {
      return getMax() ? std::optional<double>(getMax().getValueAsDouble()) : std::nullopt;
    }
    bool contains(double value) const {
      return (!getMin() || value >= getMin().getValueAsDouble()) && (!getMax() || value <= getMax().getValueAsDouble());
    }
    /// `name ≤ 0`, `0 ≤ name ≤ 1`: the domain as a message states it.
    std::string describe(::llvm::StringRef name) const {
      return describeInterval(getLowerBound(), getUpperBound(), name);
    }
    static std::string describeInterval(std::optional<double> min, std::optional<double> max,
                                        ::llvm::StringRef name);
    /// The shortest text of `value` that reads back exactly, always with a decimal point or exponent.
    static std::string formatBound(double value);
  }];
}

//===----------------------------------------------------------------------===//
// Register tiling: the lowering config of a contraction (compiler/Transforms/RegisterBlockConfig.h).
//===----------------------------------------------------------------------===//

def LA_RegisterBlockAttr : LA_Attr<"RegisterBlock", "register_block"> {
  let summary = "How a linalg op is cut into register blocks (the register-tiling lowering config)";
  let description = [{
    Attached as the discardable attribute `la.register_block` by `la-register-block-strategy` to each
    contraction it plans; the register-tiling steps (`la-reduction-panels`, `la-fuse-block-epilogues`,
    `la-transpose-block-inputs`, `la-tile-register-blocks`, `la-vectorize-register-blocks`) read it instead
    of planning again. All loop numbers are loops of the op it is attached to.

    * `tile`: the block shape, one size per loop (1 for the loops stepped one at a time).
    * `order`: the order of the block loops, outermost first: a permutation of the loops.
    * `vector`: the output's innermost loop, whose block is vectorised.
    * `rows` (optional): the output loop cut into blocks of rows.
    * `transpose` (optional): operand numbers of the inputs that read `vector` with a stride, to be copied
      into a layout where it is innermost.
    * `panel_loop` and `panel_size` (optional, together): the reduction loop to cut into cache panels of
      `panel_size` iterations first.

    An op whose static loop ranges all fit in `tile` is one register block: the tiling step leaves it and
    the vectorisation step vectorises it. The tiled blocks keep their contraction's config; the elementwise
    tiles fused into blocks (an epilogue, the accumulator's fill, a transposed copy) get one of their own.

    Example: `#la.register_block<tile = [1, 6, 64, 1], order = [0, 1, 2, 3], vector = 2, rows = 1>`.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$tileSizes, ArrayRefParameter<"int64_t">:$loopOrder,
                        "int64_t":$vectorLoop, OptionalParameter<"std::optional<int64_t>">:$rowLoop,
                        OptionalArrayRefParameter<"int64_t">:$transposeInputs,
                        OptionalParameter<"std::optional<int64_t>">:$panelLoop,
                        DefaultValuedParameter<"int64_t", "0">:$panelSize);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The name of the discardable attribute that holds a RegisterBlockAttr.
    static constexpr ::llvm::StringLiteral kName = "la.register_block";
    /// The config of a block that is already one register block of shape `shape` (an elementwise tile
    /// fused into a block): tiled one to one, loops in order, the last one vectorised.
    static RegisterBlockAttr getBlock(::mlir::MLIRContext *context, ::llvm::ArrayRef<int64_t> shape);
    /// The same config without the panel (once the panels are cut) or the transposes (once made).
    RegisterBlockAttr withoutPanel() const;
    RegisterBlockAttr withoutTransposes() const;
    /// Whether loop ranges `ranges` fit in one block: all static and none longer than its tile.
    bool fitsInOneBlock(::llvm::ArrayRef<int64_t> ranges) const;
  }];
}

#endif // LA_ATTRS_TD
