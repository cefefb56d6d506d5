//===- LAOps.cpp - custom syntax and verifiers of `la` ops ----------------===//
//
// Verifiers report the operand, dimension and sizes at fault so that a malformed kernel points at its own
// mistake. Folds and canonicalisations live in LAFolds.cpp.
//
//===----------------------------------------------------------------------===//

#include "LA/IR/LAOps.h"
#include "LA/IR/LAMapFns.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdlib>

using namespace mlir;
using namespace mlir::la;

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

/// Prints `value` with the fewest significant digits that parse back to the same double, always with a
/// decimal point so MLIR's lexer reads it as a float (1e-6 prints as `1.0e-06`, not 9.99...E-7).
static void printShortestFloat(OpAsmPrinter &printer, double value) {
  std::string text;
  for (int digits = 1; digits <= 17; ++digits) {
    text = llvm::formatv("{0}", llvm::format("%.*g", digits, value)).str();
    if (std::strtod(text.c_str(), nullptr) == value)
      break;
  }
  if (StringRef(text).find_first_of(".en") == StringRef::npos)
    text += ".0";
  else if (!StringRef(text).contains('.') && StringRef(text).contains('e'))
    text.insert(text.find('e'), ".0");
  printer << text;
}

using UnresolvedOperands = SmallVectorImpl<OpAsmParser::UnresolvedOperand>;

/// `[fn ['(' params ')']] ["subscripts"] inputs` at the head of la.map.
static ParseResult parseMapHead(OpAsmParser &parser, MapFnAttr &fn, DenseF64ArrayAttr &params,
                                SubscriptsAttr &subscripts, UnresolvedOperands &inputs) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef name;
  if (succeeded(parser.parseOptionalKeyword(&name))) {
    std::optional<MapFn> kind = symbolizeMapFn(name);
    if (!kind)
      return parser.emitError(loc) << "unknown la.map function '" << name << "'";
    fn = MapFnAttr::get(parser.getContext(), *kind);
    SmallVector<double> values;
    if (succeeded(parser.parseOptionalLParen())) {
      if (parser.parseCommaSeparatedList([&] { return parser.parseFloat(values.emplace_back()); }) ||
          parser.parseRParen())
        return failure();
    }
    if (!values.empty())
      params = DenseF64ArrayAttr::get(parser.getContext(), values);
  }
  SMLoc textLoc = parser.getCurrentLocation();
  std::string text;
  if (succeeded(parser.parseOptionalString(&text))) {
    subscripts = SubscriptsAttr::parseText(parser.getContext(), text, [&] { return parser.emitError(textLoc); });
    if (!subscripts)
      return failure();
  }
  return parser.parseOperandList(inputs);
}

static void printMapHead(OpAsmPrinter &printer, MapOp, MapFnAttr fn, DenseF64ArrayAttr params,
                         SubscriptsAttr subscripts, OperandRange inputs) {
  if (fn) {
    printer << stringifyMapFn(fn.getValue());
    if (params && !params.empty()) {
      printer << "(";
      llvm::interleaveComma(params.asArrayRef(), printer, [&](double v) { printShortestFloat(printer, v); });
      printer << ")";
    }
    printer << " ";
  }
  if (subscripts)
    printer << "\"" << subscripts.str() << "\" ";
  printer << inputs;
}

/// `[combiner] inputs` at the head of la.reduce / la.scan.
static ParseResult parseCombinerHead(OpAsmParser &parser, CombinerAttr &combiner, UnresolvedOperands &inputs) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef name;
  if (succeeded(parser.parseOptionalKeyword(&name))) {
    std::optional<Combiner> kind = symbolizeCombiner(name);
    if (!kind)
      return parser.emitError(loc) << "unknown combiner '" << name
                                   << "'; expected add, max, min, logaddexp, decay or online_softmax";
    combiner = CombinerAttr::get(parser.getContext(), *kind);
  }
  return parser.parseOperandList(inputs);
}

static void printCombinerHead(OpAsmPrinter &printer, Operation *, CombinerAttr combiner, OperandRange inputs) {
  if (combiner)
    printer << stringifyCombiner(combiner.getValue()) << " ";
  printer << inputs;
}

/// `dim [eps '(' value ')']` of la.normalize.
static ParseResult parseDimAndEps(OpAsmParser &parser, IntegerAttr &dim, FloatAttr &eps) {
  int64_t value;
  if (parser.parseInteger(value))
    return failure();
  dim = parser.getBuilder().getI64IntegerAttr(value);
  if (failed(parser.parseOptionalKeyword("eps")))
    return success();
  double epsValue;
  if (parser.parseLParen() || parser.parseFloat(epsValue) || parser.parseRParen())
    return failure();
  eps = parser.getBuilder().getF64FloatAttr(epsValue);
  return success();
}

static void printDimAndEps(OpAsmPrinter &printer, NormalizeOp, IntegerAttr dim, FloatAttr eps) {
  printer << dim.getInt();
  if (eps) {
    printer << " eps(";
    printShortestFloat(printer, eps.getValueAsDouble());
    printer << ")";
  }
}

/// The subscripts of la.contract, written as the plain string ("bhnd,bhmd->bhnm"), parsed once here.
static ParseResult parseSubscripts(OpAsmParser &parser, SubscriptsAttr &subscripts) {
  SMLoc loc = parser.getCurrentLocation();
  std::string text;
  if (parser.parseString(&text))
    return failure();
  subscripts = SubscriptsAttr::parseText(parser.getContext(), text, [&] { return parser.emitError(loc); });
  return success(subscripts != nullptr);
}

static void printSubscripts(OpAsmPrinter &printer, ContractOp, SubscriptsAttr subscripts) {
  printer << "\"" << subscripts.str() << "\"";
}

static ParseResult parseMask(OpAsmParser &parser, MaskAttr &mask) {
  mask = dyn_cast_or_null<MaskAttr>(MaskAttr::parseBody(parser));
  return success(mask != nullptr);
}

static void printMask(OpAsmPrinter &printer, ContractOp, MaskAttr mask) { mask.printBody(printer); }

#define GET_OP_CLASSES
#include "LA/IR/LAOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared verifier helpers
//===----------------------------------------------------------------------===//

static std::string shapeString(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  return llvm::join(
      llvm::map_range(shape, [](int64_t d) { return ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d); }),
      "x");
}

static bool sizesConflict(int64_t a, int64_t b) {
  return !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b;
}

/// `shape` with dimension `dim` removed.
static SmallVector<int64_t> dropDim(ArrayRef<int64_t> shape, int64_t dim) {
  SmallVector<int64_t> result(shape);
  result.erase(result.begin() + dim);
  return result;
}

/// Checks that `actual` equals `expected` dimension by dimension, static sizes only.
static LogicalResult verifyShapeMatches(Operation *op, ArrayRef<int64_t> actual, ArrayRef<int64_t> expected,
                                        const Twine &what, const Twine &against) {
  if (actual.size() != expected.size())
    return op->emitOpError() << what << " has rank " << actual.size() << " (" << shapeString(actual) << ") but "
                             << against << " needs rank " << expected.size() << " (" << shapeString(expected) << ")";
  for (auto [dim, sizes] : llvm::enumerate(llvm::zip(actual, expected)))
    if (sizesConflict(std::get<0>(sizes), std::get<1>(sizes)))
      return op->emitOpError() << what << " dimension " << dim << " has size " << std::get<0>(sizes) << " but "
                               << against << " needs " << std::get<1>(sizes);
  return success();
}

/// Checks that a gate shape is a leading prefix of `valueShape` (prefix broadcasting).
static LogicalResult verifyPrefixBroadcast(Operation *op, ArrayRef<int64_t> gate, ArrayRef<int64_t> value,
                                           const Twine &what) {
  if (gate.size() > value.size())
    return op->emitOpError() << what << " has rank " << gate.size() << " (" << shapeString(gate) << "), more than the "
                             << value.size() << " dimensions (" << shapeString(value) << ") it scales";
  return verifyShapeMatches(op, gate, value.take_front(gate.size()), what,
                            "prefix broadcasting into " + shapeString(value));
}

static LogicalResult verifySameElementType(Operation *op, TypeRange types, Type expected) {
  for (auto [index, type] : llvm::enumerate(types)) {
    Type element = cast<ShapedType>(type).getElementType();
    if (element != expected)
      return op->emitOpError() << "operand #" << index << " has element type " << element << " but " << expected
                               << " is expected (all operands and results share one type)";
  }
  return success();
}

static LogicalResult verifyAccType(Operation *op, std::optional<Type> acc) {
  if (acc && !isa<FloatType>(*acc))
    return op->emitOpError() << "accumulation type must be a float type, got " << *acc;
  return success();
}

static LogicalResult verifyDimInRange(Operation *op, int64_t dim, int64_t rank, StringRef what) {
  if (dim < 0 || dim >= rank)
    return op->emitOpError() << what << " " << dim << " is out of range for rank " << rank;
  return success();
}

/// Checks a combiner block: `2 * n` scalar arguments (accumulated state, then new element) of the given
/// element types, and a `la.yield` of `n` values of the same types.
static LogicalResult verifyCombinerRegion(Operation *op, Region &region, TypeRange elementTypes) {
  if (!region.hasOneBlock())
    return op->emitOpError() << "combiner region must have exactly one block";
  Block &block = region.front();
  size_t n = elementTypes.size();
  if (block.getNumArguments() != 2 * n)
    return op->emitOpError() << "combiner must take " << 2 * n << " scalar arguments (" << n << " accumulated, then "
                             << n << " new) but takes " << block.getNumArguments();
  for (size_t i = 0; i < 2 * n; ++i)
    if (block.getArgument(i).getType() != elementTypes[i % n])
      return op->emitOpError() << "combiner argument #" << i << " has type " << block.getArgument(i).getType()
                               << " but the element type " << elementTypes[i % n] << " is expected";
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return op->emitOpError() << "combiner must end in la.yield";
  if (yield.getValues().size() != n)
    return op->emitOpError() << "combiner must yield " << n << " values (the combined state) but yields "
                             << yield.getValues().size();
  for (auto [i, value] : llvm::enumerate(yield.getValues()))
    if (value.getType() != elementTypes[i])
      return op->emitOpError() << "combiner yields " << value.getType() << " as value #" << i << " but "
                               << elementTypes[i] << " is expected";
  return success();
}

static SmallVector<Type> elementTypesOf(TypeRange types) {
  return llvm::map_to_vector(types, [](Type t) { return cast<ShapedType>(t).getElementType(); });
}

/// Checks that a reduce/scan gives exactly one of a named combiner and a combiner region, and the region's
/// signature when it is the one given.
static LogicalResult verifyCombinerChoice(Operation *op, bool named, Region &region, ValueRange inputs) {
  if (named) {
    if (!region.empty())
      return op->emitOpError() << "has both a named combiner and a combiner region; give one of them";
    return success();
  }
  if (region.empty())
    return op->emitOpError() << "needs a named combiner or a combiner region";
  return verifyCombinerRegion(op, region, elementTypesOf(inputs.getTypes()));
}

//===----------------------------------------------------------------------===//
// MapOp
//===----------------------------------------------------------------------===//

SmallVector<SmallVector<int64_t>> MapOp::getInputToResultDims() {
  SmallVector<SmallVector<int64_t>> dims;
  SubscriptsAttr subscripts = getSubscriptsAttr();
  if (!subscripts) {
    int64_t rank = getResult().getType().getRank();
    for (size_t i = 0; i < getInputs().size(); ++i)
      dims.push_back(llvm::to_vector(llvm::seq<int64_t>(0, rank)));
    return dims;
  }
  for (StringRef term : subscripts.getInputs())
    dims.push_back(llvm::map_to_vector(term, [&](char c) { return subscripts.getResultDim(c); }));
  return dims;
}

LogicalResult MapOp::verify() {
  auto resultType = getResult().getType();
  if (getInputs().empty())
    return emitOpError() << "needs at least one input";
  if (failed(verifySameElementType(*this, getInputs().getTypes(), resultType.getElementType())))
    return failure();

  if (getFn()) {
    MapFn fn = *getFn();
    if (getMapFnArity(fn) != getInputs().size())
      return emitOpError() << "function '" << stringifyMapFn(fn) << "' takes " << getMapFnArity(fn) << " inputs but "
                           << getInputs().size() << " are given";
    if (getMapFnNumParams(fn) != getParams().size())
      return emitOpError() << "function '" << stringifyMapFn(fn) << "' takes " << getMapFnNumParams(fn)
                           << " parameters but " << getParams().size() << " are given";
    for (double param : getParams())
      if (!std::isfinite(param))
        return emitOpError() << "parameters must be finite, got " << param;
    if (fn == MapFn::clamp && getParams()[0] > getParams()[1])
      return emitOpError() << "clamp bounds are reversed: lower " << getParams()[0] << " > upper " << getParams()[1];
  } else if (!getParams().empty()) {
    return emitOpError() << "parameters are only meaningful with a named function";
  }

  SubscriptsAttr parsed = getSubscriptsAttr();
  if (!parsed) {
    for (auto [index, input] : llvm::enumerate(getInputs()))
      if (failed(verifyShapeMatches(*this, cast<ShapedType>(input.getType()).getShape(), resultType.getShape(),
                                    "input #" + Twine(index),
                                    "the result (give a subscript string such as \"bhn,bh->bhn\" to "
                                    "broadcast)")))
        return failure();
    return success();
  }

  if (parsed.getNumInputs() != getInputs().size())
    return emitOpError() << "subscripts name " << parsed.getNumInputs() << " inputs but " << getInputs().size()
                         << " are given";
  if (parsed.getResult().size() != static_cast<size_t>(resultType.getRank()))
    return emitOpError() << "result subscript '" << parsed.getResult() << "' names " << parsed.getResult().size()
                         << " dimensions but the result has rank " << resultType.getRank();
  for (auto [index, input] : llvm::enumerate(getInputs())) {
    ArrayRef<int64_t> shape = cast<ShapedType>(input.getType()).getShape();
    StringRef term = parsed.getInput(index);
    if (term.size() != shape.size())
      return emitOpError() << "input #" << index << " has rank " << shape.size() << " but subscript '" << term
                           << "' names " << term.size() << " dimensions";
    for (auto [pos, letter] : llvm::enumerate(term)) {
      size_t resultDim = parsed.getResult().find(letter);
      if (resultDim == StringRef::npos)
        return emitOpError() << "input #" << index << " dimension '" << letter
                             << "' is not a result dimension; la.map cannot sum over it (use la.reduce "
                                "or la.contract)";
      if (sizesConflict(shape[pos], resultType.getDimSize(resultDim)))
        return emitOpError() << "dimension '" << letter << "' has size " << shape[pos] << " in input #" << index
                             << " but " << resultType.getDimSize(resultDim) << " in the result";
    }
  }
  // The result's size is read off the inputs, so every result dimension needs one.
  for (char letter : parsed.getResult())
    if (llvm::none_of(parsed.getInputs(), [&](StringRef term) { return term.contains(letter); }))
      return emitOpError() << "result dimension '" << letter
                           << "' is spanned by no input, so its size is unknown (map over a tensor.empty of "
                              "the wanted shape)";
  return success();
}

LogicalResult MapOp::verifyRegions() {
  if (getFn()) {
    if (hasRegionBody())
      return emitOpError() << "has both a named function and a body; give one of them";
    return success();
  }
  if (!hasRegionBody())
    return emitOpError() << "needs a named function or a body";
  if (!getBody().hasOneBlock())
    return emitOpError() << "body must have exactly one block";
  Block &block = getBody().front();
  Type element = getResult().getType().getElementType();
  if (block.getNumArguments() != getInputs().size())
    return emitOpError() << "body takes " << block.getNumArguments() << " arguments but there are "
                         << getInputs().size() << " inputs";
  for (auto [index, arg] : llvm::enumerate(block.getArguments()))
    if (arg.getType() != element)
      return emitOpError() << "body argument #" << index << " has type " << arg.getType() << " but the element "
                           << "type is " << element;
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield || yield.getValues().size() != 1 || yield.getValues()[0].getType() != element)
    return emitOpError() << "body must end in la.yield of one " << element << " value";
  return success();
}

LogicalResult IndexOp::verify() {
  auto map = cast<MapOp>(getOperation()->getParentOp());
  return verifyDimInRange(*this, getDim(), map.getResult().getType().getRank(), "dimension");
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "needs at least one input";
  if (getResults().size() != getInputs().size())
    return emitOpError() << "has " << getInputs().size() << " inputs but " << getResults().size()
                         << " results; each input reduces to one result";
  if (failed(verifyAccType(*this, getAcc())))
    return failure();
  auto firstType = cast<RankedTensorType>(getInputs()[0].getType());
  ArrayRef<int64_t> dims = getDims();
  for (auto [pos, dim] : llvm::enumerate(dims)) {
    if (failed(verifyDimInRange(*this, dim, firstType.getRank(), "reduced dimension")))
      return failure();
    if (pos > 0 && dim <= dims[pos - 1])
      return emitOpError() << "reduced dimensions must be strictly increasing, got " << dims[pos - 1] << " before "
                           << dim;
  }
  SmallVector<int64_t> expected;
  for (auto [dim, size] : llvm::enumerate(firstType.getShape()))
    if (!llvm::is_contained(dims, static_cast<int64_t>(dim)))
      expected.push_back(size);
  for (auto [index, pair] : llvm::enumerate(llvm::zip(getInputs(), getResults()))) {
    auto inputType = cast<RankedTensorType>(std::get<0>(pair).getType());
    auto resultType = cast<RankedTensorType>(std::get<1>(pair).getType());
    if (failed(verifyShapeMatches(*this, inputType.getShape(), firstType.getShape(), "input #" + Twine(index),
                                  "input #0")))
      return failure();
    if (inputType.getElementType() != resultType.getElementType())
      return emitOpError() << "result #" << index << " has element type " << resultType.getElementType()
                           << " but input #" << index << " has " << inputType.getElementType();
    if (failed(verifyShapeMatches(*this, resultType.getShape(), expected, "result #" + Twine(index),
                                  "reducing input #" + Twine(index) + " along the given dimensions")))
      return failure();
  }
  if (auto combiner = getCombiner()) {
    if (*combiner == Combiner::decay || *combiner == Combiner::online_softmax)
      return emitOpError() << "combiner '" << stringifyCombiner(*combiner)
                           << "' depends on sequence order; use la.scan";
    if (getInputs().size() != 1)
      return emitOpError() << "named combiner '" << stringifyCombiner(*combiner) << "' takes one input, got "
                           << getInputs().size();
  }
  return success();
}

LogicalResult ReduceOp::verifyRegions() {
  return verifyCombinerChoice(*this, getCombiner().has_value(), getBody(), getInputs());
}

//===----------------------------------------------------------------------===//
// ScanOp
//===----------------------------------------------------------------------===//

LogicalResult ScanOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "needs at least one input";
  if (failed(verifyAccType(*this, getAcc())))
    return failure();
  auto valueType = cast<RankedTensorType>(getInputs()[0].getType());
  if (failed(verifyDimInRange(*this, getDim(), valueType.getRank(), "scan dimension")))
    return failure();

  if (auto combiner = getCombiner()) {
    switch (*combiner) {
    case Combiner::add:
    case Combiner::max:
    case Combiner::min:
    case Combiner::logaddexp:
      if (getInputs().size() != 1)
        return emitOpError() << "combiner '" << stringifyCombiner(*combiner) << "' takes one input, got "
                             << getInputs().size();
      break;
    case Combiner::decay: {
      if (getInputs().size() != 2)
        return emitOpError() << "combiner 'decay' takes the values and their log-gate (2 inputs), got "
                             << getInputs().size();
      auto gateType = cast<RankedTensorType>(getInputs()[1].getType());
      if (gateType.getRank() <= static_cast<int64_t>(getDim()))
        return emitOpError() << "decay log-gate of rank " << gateType.getRank() << " must span the scan dimension "
                             << getDim();
      if (failed(verifyPrefixBroadcast(*this, gateType.getShape(), valueType.getShape(), "decay log-gate")))
        return failure();
      break;
    }
    case Combiner::online_softmax:
      if (getInputs().size() != 2)
        return emitOpError() << "combiner 'online_softmax' takes logits and values (2 inputs), got "
                             << getInputs().size();
      if (failed(verifyShapeMatches(*this, cast<ShapedType>(getInputs()[1].getType()).getShape(), valueType.getShape(),
                                    "values", "the logits")))
        return failure();
      valueType = cast<RankedTensorType>(getInputs()[1].getType());
      // From an init, the first position's value is the init's (a GPU call's pieces start from the states
      // of the pieces before them, GpuSequencePieces.h); from the empty prefix it is 0/0.
      if (getKind() == ScanKind::exclusive && getInit().empty())
        return emitOpError() << "exclusive online_softmax without init has no value at the first position (0/0)";
      // The triple (y, m, z) as results and as init: the checks below pair each init with its result.
      if (getResults().size() != 1 && getResults().size() != 3)
        return emitOpError() << "combiner 'online_softmax' returns its value, or its value, running max and "
                                "normaliser (1 or 3 results), got "
                             << getResults().size();
      if (!getInit().empty() && getInit().size() != 3)
        return emitOpError() << "online_softmax starts from its value, running max and normaliser (3 init "
                                "states), got "
                             << getInit().size();
      break;
    }
    if (getResults().size() != 1 && *combiner != Combiner::online_softmax)
      return emitOpError() << "named combiner '" << stringifyCombiner(*combiner) << "' has one result, got "
                           << getResults().size();
    for (Type resultType : getResultTypes())
      if (mlir::getElementTypeOrSelf(resultType) != valueType.getElementType() ||
          failed(mlir::verifyCompatibleShape(resultType, valueType)))
        return emitOpError() << "result type " << resultType << " must match the value type " << valueType;
  } else {
    if (getResults().size() != getInputs().size())
      return emitOpError() << "a combiner region carries one state per input: " << getInputs().size() << " inputs but "
                           << getResults().size() << " results";
    for (auto [index, pair] : llvm::enumerate(llvm::zip(getInputs(), getResults()))) {
      if (failed(verifyShapeMatches(*this, cast<ShapedType>(std::get<0>(pair).getType()).getShape(),
                                    valueType.getShape(), "input #" + Twine(index), "input #0")))
        return failure();
      if (std::get<0>(pair).getType() != std::get<1>(pair).getType())
        return emitOpError() << "result #" << index << " has type " << std::get<1>(pair).getType() << " but input #"
                             << index << " has " << std::get<0>(pair).getType();
    }
  }

  for (Value input : getInputs())
    if (cast<ShapedType>(input.getType()).getElementType() != valueType.getElementType())
      return emitOpError() << "inputs must share one element type, got "
                           << cast<ShapedType>(input.getType()).getElementType() << " and "
                           << valueType.getElementType();

  if (!getInit().empty()) {
    if (getInit().size() != getResults().size())
      return emitOpError() << "init gives " << getInit().size() << " states but the scan carries "
                           << getResults().size();
    for (auto [index, pair] : llvm::enumerate(llvm::zip(getInit(), getResults()))) {
      auto resultType = cast<RankedTensorType>(std::get<1>(pair).getType());
      auto initType = cast<RankedTensorType>(std::get<0>(pair).getType());
      // An init that is a function's argument (a resume variant's state, SPEC §8) is named as the argument,
      // so that a caller who passes a state of the wrong shape learns which one.
      std::string what = ("init #" + Twine(index)).str();
      if (auto argument = dyn_cast<BlockArgument>(std::get<0>(pair)))
        if (isa_and_nonnull<FunctionOpInterface>(argument.getOwner()->getParentOp()))
          what += (" (the function's argument #" + Twine(argument.getArgNumber()) + ")").str();
      if (initType.getElementType() != resultType.getElementType())
        return emitOpError() << what << " has element type " << initType.getElementType() << " but the scan computes "
                             << resultType.getElementType();
      if (failed(verifyShapeMatches(*this, initType.getShape(), dropDim(resultType.getShape(), getDim()), what,
                                    "the result without the scan dimension")))
        return failure();
    }
  }

  if (IntegerAttr window = getWindowAttr()) {
    if (window.getInt() <= 0)
      return emitOpError() << "window must be positive, got " << window.getInt();
    if (getCombiner() != Combiner::add)
      return emitOpError() << "window needs combiner 'add' (a sliding window subtracts what leaves it)";
  }
  return success();
}

LogicalResult ScanOp::verifyRegions() {
  return verifyCombinerChoice(*this, getCombiner().has_value(), getBody(), getInputs());
}

bool ScanOp::isInclusivePrefixSum() {
  return getCombiner() == Combiner::add && getKind() == ScanKind::inclusive && !getReverse() && !getWindow();
}

//===----------------------------------------------------------------------===//
// NormalizeOp
//===----------------------------------------------------------------------===//

double NormalizeOp::getEpsOrDefault() {
  if (auto eps = getEps())
    return eps->convertToDouble();
  return getKind() == NormalizeKind::sum ? 1e-6 : 0.0;
}

LogicalResult NormalizeOp::verify() {
  auto inputType = getInput().getType();
  if (failed(verifyDimInRange(*this, getDim(), inputType.getRank(), "normalised dimension")) ||
      failed(verifyAccType(*this, getAcc())))
    return failure();
  if (getResult().getType() != inputType)
    return emitOpError() << "result type " << getResult().getType() << " must equal the input type " << inputType;
  if (getKind() == NormalizeKind::softmax) {
    if (getDenominator())
      return emitOpError() << "softmax computes its own denominator; 'by' is only for sum";
    if (getEps())
      return emitOpError() << "softmax takes no eps";
  }
  if (auto eps = getEps(); eps && eps->convertToDouble() < 0.0)
    return emitOpError() << "eps must be non-negative, got " << eps->convertToDouble();
  if (Value den = getDenominator()) {
    auto denType = cast<RankedTensorType>(den.getType());
    if (denType.getElementType() != inputType.getElementType())
      return emitOpError() << "denominator element type " << denType.getElementType() << " differs from the input's "
                           << inputType.getElementType();
    return verifyShapeMatches(*this, denType.getShape(), dropDim(inputType.getShape(), getDim()), "denominator",
                              "the input without dimension " + Twine(getDim()));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ContractOp
//===----------------------------------------------------------------------===//

LogicalResult ContractOp::verify() {
  auto resultType = getResult().getType();
  if (getInputs().size() < 2 || getInputs().size() > 3)
    return emitOpError() << "contracts 2 or 3 inputs, got " << getInputs().size()
                         << " (use la.reduce to sum one tensor)";
  if (failed(verifySameElementType(*this, getInputs().getTypes(), resultType.getElementType())) ||
      failed(verifyAccType(*this, getAcc())))
    return failure();
  SubscriptsAttr parsed = getSubscripts();
  if (parsed.getNumInputs() != getInputs().size())
    return emitOpError() << "subscripts name " << parsed.getNumInputs() << " inputs but " << getInputs().size()
                         << " are given";

  // Every letter must have one size across the operands and the result.
  llvm::DenseMap<char, std::pair<int64_t, std::string>> sizeOf;
  auto record = [&](char letter, int64_t size, const std::string &where) -> LogicalResult {
    auto [it, inserted] = sizeOf.try_emplace(letter, size, where);
    if (inserted || !sizesConflict(it->second.first, size)) {
      if (ShapedType::isDynamic(it->second.first))
        it->second = {size, where};
      return success();
    }
    return emitOpError() << "dimension '" << letter << "' has size " << it->second.first << " in " << it->second.second
                         << " but " << size << " in " << where;
  };
  for (auto [index, input] : llvm::enumerate(getInputs())) {
    ArrayRef<int64_t> shape = cast<ShapedType>(input.getType()).getShape();
    StringRef term = parsed.getInput(index);
    if (term.size() != shape.size())
      return emitOpError() << "input #" << index << " has rank " << shape.size() << " but subscript '" << term
                           << "' names " << term.size() << " dimensions";
    for (auto [pos, letter] : llvm::enumerate(term))
      if (failed(record(letter, shape[pos], "input #" + std::to_string(index))))
        return failure();
  }
  if (parsed.getResult().size() != static_cast<size_t>(resultType.getRank()))
    return emitOpError() << "result subscript '" << parsed.getResult() << "' names " << parsed.getResult().size()
                         << " dimensions but the result has rank " << resultType.getRank();
  for (auto [pos, letter] : llvm::enumerate(parsed.getResult())) {
    if (!sizeOf.count(letter))
      return emitOpError() << "result dimension '" << letter << "' does not appear in any input";
    if (failed(record(letter, resultType.getDimSize(pos), "the result")))
      return failure();
  }

  MaskAttr mask = getMaskAttr();
  if (!mask) {
    if (getGate())
      return emitOpError() << "a gate is only meaningful with mask decay";
    return success();
  }
  for (char letter : {mask.getRow(), mask.getCol()})
    if (!sizeOf.count(letter))
      return emitOpError() << "mask dimension '" << letter << "' does not appear in the subscripts '" << parsed.str()
                           << "'";
  bool causal = mask.getKind() == MaskKind::tril || mask.getKind() == MaskKind::causal_band ||
                mask.getKind() == MaskKind::causal_block || mask.getKind() == MaskKind::prior_block ||
                mask.getKind() == MaskKind::decay;
  int64_t rows = sizeOf[mask.getRow()].first, cols = sizeOf[mask.getCol()].first;
  // A shifted mask is a window of a larger causal problem, whose rows and columns may differ in length.
  if (causal && mask.getOffset() == 0 && sizesConflict(rows, cols))
    return emitOpError() << "causal mask " << stringifyMaskKind(mask.getKind()) << " needs equal lengths, but '"
                         << mask.getRow() << "' has size " << rows << " and '" << mask.getCol() << "' has " << cols;
  if (mask.getKind() != MaskKind::decay) {
    if (getGate())
      return emitOpError() << "a gate is only meaningful with mask decay";
    return success();
  }
  Value gate = getGate();
  if (!gate)
    return emitOpError() << "mask decay needs its log-gate: add gate(%g : tensor<...>)";
  auto gateType = cast<RankedTensorType>(gate.getType());
  if (gateType.getElementType() != resultType.getElementType())
    return emitOpError() << "gate element type " << gateType.getElementType() << " differs from "
                         << resultType.getElementType();
  std::string gateLetters = parsed.getBatchLetters();
  gateLetters.push_back(mask.getRow());
  if (gateType.getRank() == static_cast<int64_t>(gateLetters.size()) + 1) {
    std::string contracted = parsed.getContractedLetters();
    if (contracted.size() != 1)
      return emitOpError() << "a decay gate with a feature dimension needs exactly one contracted letter, '"
                           << parsed.str() << "' has " << contracted.size();
    gateLetters += contracted;
  }
  SmallVector<int64_t> expected = llvm::map_to_vector(gateLetters, [&](char c) { return sizeOf[c].first; });
  return verifyShapeMatches(*this, gateType.getShape(), expected, "gate",
                            "indexing by the batch dimensions and the position ('" + gateLetters +
                                "'), optionally followed by the contracted letter");
}

std::string ContractOp::getDecayGateLetters() {
  SubscriptsAttr parsed = getSubscripts();
  std::string letters = parsed.getBatchLetters();
  letters.push_back(getMaskAttr().getRow());
  if (cast<RankedTensorType>(getGate().getType()).getRank() == static_cast<int64_t>(letters.size()) + 1)
    letters += parsed.getContractedLetters();
  return letters;
}

//===----------------------------------------------------------------------===//
// GateOp
//===----------------------------------------------------------------------===//

LogicalResult GateOp::verify() {
  auto resultType = getResult().getType();
  if (getBranches().empty())
    return emitOpError() << "needs at least one branch to gate";
  for (auto [index, branch] : llvm::enumerate(getBranches()))
    if (branch.getType() != resultType)
      return emitOpError() << "branch #" << index << " has type " << branch.getType() << " but the result has "
                           << resultType;
  auto gateType = getGate().getType();
  if (gateType.getElementType() != resultType.getElementType())
    return emitOpError() << "gate element type " << gateType.getElementType() << " differs from "
                         << resultType.getElementType();
  return verifyPrefixBroadcast(*this, gateType.getShape(), resultType.getShape(), "gate");
}

//===----------------------------------------------------------------------===//
// SizeOp
//===----------------------------------------------------------------------===//

LogicalResult WindowOp::verify() {
  ArrayRef<int64_t> dims = getDims(), sizes = getSizes();
  auto inputType = getInput().getType();
  auto resultType = getResult().getType();
  if (dims.empty())
    return emitOpError() << "needs at least one windowed dimension";
  if (dims.size() != sizes.size())
    return emitOpError() << "has " << dims.size() << " windowed dimensions but " << sizes.size() << " window sizes";
  for (auto [j, dim] : llvm::enumerate(dims)) {
    if (failed(verifyDimInRange(*this, dim, inputType.getRank(), "windowed dimension")))
      return failure();
    if (j > 0 && dim <= dims[j - 1])
      return emitOpError() << "windowed dimensions must be strictly increasing, got " << dims[j - 1] << " then " << dim;
    if (sizes[j] < 1 || sizes[j] % 2 == 0)
      return emitOpError() << "window size of dimension " << dim << " must be odd and positive (a centred window), got "
                           << sizes[j];
  }
  if (resultType.getRank() != inputType.getRank() + static_cast<int64_t>(dims.size()))
    return emitOpError() << "result must have rank " << inputType.getRank() + static_cast<int64_t>(dims.size())
                         << " (the input's " << inputType.getRank() << " plus one per window), got "
                         << resultType.getRank();
  if (resultType.getElementType() != inputType.getElementType())
    return emitOpError() << "result element type " << resultType.getElementType() << " differs from the input's "
                         << inputType.getElementType();
  SmallVector<int64_t> expected = inferShape(inputType.getShape(), dims, sizes);
  for (auto [d, size] : llvm::enumerate(expected))
    if (sizesConflict(resultType.getDimSize(d), size))
      return emitOpError() << "result dimension " << d << " has size " << resultType.getDimSize(d) << " but "
                           << (ShapedType::isDynamic(size) ? "?" : std::to_string(size))
                           << " is expected (each windowed dimension is followed by its window)";
  return success();
}

SmallVector<int64_t> WindowOp::inferShape(ArrayRef<int64_t> inputShape, ArrayRef<int64_t> dims,
                                          ArrayRef<int64_t> sizes) {
  SmallVector<int64_t> shape;
  for (auto [d, size] : llvm::enumerate(inputShape)) {
    shape.push_back(size);
    for (auto [dim, window] : llvm::zip(dims, sizes))
      if (dim == static_cast<int64_t>(d))
        shape.push_back(window);
  }
  return shape;
}

LogicalResult SizeOp::verify() {
  return verifyDimInRange(*this, getDim(), getInput().getType().getRank(), "dimension");
}

SmallVector<ReassociationIndices> mlir::la::getUnitDimReassociation(int64_t rank, int64_t dim) {
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < rank && rank > 1; ++d) {
    bool joinsPrevious = d == dim + 1 || (d == dim && dim == rank - 1);
    if (joinsPrevious)
      groups.back().push_back(d);
    else
      groups.push_back({d});
  }
  return groups;
}
