//===- LADialect.cpp - the `la` dialect and its attributes ----------------===//

#include "LA/IR/LADialect.h"
#include "LA/IR/LAOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdlib>

using namespace mlir;
using namespace mlir::la;

#include "LA/IR/LADialect.cpp.inc"
#include "LA/IR/LAEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "LA/IR/LAAttrs.cpp.inc"

namespace {
/// la ops are pure tensor computations without symbols or control flow out of their regions, so calls to
/// helper functions made of them (e.g. a shared feature map) may always be inlined.
struct LAInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final { return true; }
  bool isLegalToInline(Region *, Region *, bool, IRMapping &) const final { return true; }
};
} // namespace

void LADialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "LA/IR/LAOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "LA/IR/LAAttrs.cpp.inc"
      >();
  addInterfaces<LAInlinerInterface>();
}

LogicalResult LADialect::verifyOperationAttribute(Operation *op, NamedAttribute attribute) {
  if (attribute.getName() == RegisterBlockAttr::kName && !isa<RegisterBlockAttr>(attribute.getValue()))
    return op->emitOpError() << "'" << RegisterBlockAttr::kName << "' must be a #la.register_block";
  if (attribute.getName() == kAlignedToAttrName) {
    auto positions = dyn_cast<IntegerAttr>(attribute.getValue());
    if (!positions || positions.getInt() < 1)
      return op->emitOpError()
             << "'" << kAlignedToAttrName
             << "' must be a positive integer (the positions every stretch starts a multiple of), not "
             << attribute.getValue();
  }
  if (attribute.getName() == kPrefillOfAttrName || attribute.getName() == kResumeOfAttrName ||
      attribute.getName() == kStateOfAttrName) {
    if (!isa<FlatSymbolRefAttr>(attribute.getValue()))
      return op->emitOpError() << "'" << attribute.getName().getValue() << "' must name the source entry (@name), not "
                               << attribute.getValue();
    if (op->getNumRegions() != 1)
      return op->emitOpError() << "'" << attribute.getName().getValue() << "' belongs on a func.func declaration";
  }
  return success();
}

LogicalResult LADialect::verifyRegionArgAttribute(Operation *op, unsigned regionIndex, unsigned argIndex,
                                                  NamedAttribute attribute) {
  if (attribute.getName() != DomainAttr::kName)
    return success();
  if (!isa<DomainAttr>(attribute.getValue()))
    return op->emitOpError() << "argument #" << argIndex << ": '" << DomainAttr::kName << "' must be a #la.domain, not "
                             << attribute.getValue();
  // A declaration has no entry block: the type comes from the function's signature.
  auto function = dyn_cast<FunctionOpInterface>(op);
  Type type =
      function ? function.getArgumentTypes()[argIndex] : op->getRegion(regionIndex).getArgument(argIndex).getType();
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !isa<FloatType>(shaped.getElementType()))
    return op->emitOpError() << "argument #" << argIndex << ": '" << DomainAttr::kName
                             << "' describes floating-point values, but the argument is " << type;
  return success();
}

Operation *LADialect::materializeConstant(OpBuilder &builder, Attribute value, Type type, Location loc) {
  if (arith::ConstantOp::isBuildableWith(value, type))
    return arith::ConstantOp::create(builder, loc, type, cast<TypedAttr>(value));
  return nullptr;
}

//===----------------------------------------------------------------------===//
// SubscriptsAttr construction (queries are in Subscripts.cpp)
//===----------------------------------------------------------------------===//

SubscriptsAttr SubscriptsAttr::parseText(MLIRContext *context, StringRef text,
                                         function_ref<InFlightDiagnostic()> emitError) {
  auto [lhs, rhs] = text.split("->");
  if (lhs.size() == text.size()) {
    emitError() << "subscripts '" << text << "' have no '->' before the result term";
    return {};
  }
  if (rhs.contains("->")) {
    emitError() << "subscripts '" << text << "' have more than one '->'";
    return {};
  }
  SmallVector<StringRef> inputs;
  lhs.split(inputs, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/true);
  return getChecked(emitError, context, inputs, rhs);
}

SubscriptsAttr SubscriptsAttr::getFromTerms(MLIRContext *context, ArrayRef<std::string> inputs, StringRef result) {
  SmallVector<StringRef> terms(inputs.begin(), inputs.end());
  return get(context, terms, result);
}

//===----------------------------------------------------------------------===//
// MaskAttr: `kind(row, col[, size])`
//===----------------------------------------------------------------------===//

bool MaskAttr::kindHasSize(MaskKind kind) {
  switch (kind) {
  case MaskKind::band:
  case MaskKind::causal_band:
  case MaskKind::block:
  case MaskKind::causal_block:
  case MaskKind::prior_block:
    return true;
  case MaskKind::tril:
  case MaskKind::decay:
    return false;
  }
  llvm_unreachable("unhandled MaskKind");
}

bool MaskAttr::kindTakesOffset(MaskKind kind) {
  return kind == MaskKind::tril || kind == MaskKind::band || kind == MaskKind::causal_band;
}

LogicalResult MaskAttr::verify(function_ref<InFlightDiagnostic()> emitError, MaskKind kind, char row, char col,
                               int64_t size, int64_t offset) {
  if (row == col)
    return emitError() << "mask " << stringifyMaskKind(kind) << " needs two different dimensions, got '" << row
                       << "' twice";
  if (kindHasSize(kind) && size <= 0)
    return emitError() << "mask " << stringifyMaskKind(kind) << " needs a positive size, got " << size;
  if (!kindHasSize(kind) && size != 0)
    return emitError() << "mask " << stringifyMaskKind(kind) << " takes no size, got " << size;
  if (offset != 0 && !kindTakesOffset(kind))
    return emitError() << "mask " << stringifyMaskKind(kind)
                       << " takes no offset (only tril, band and causal_band do), got " << offset;
  return success();
}

static ParseResult parseMaskLetter(AsmParser &parser, char &letter) {
  StringRef name;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&name))
    return failure();
  if (name.size() != 1 || name[0] < 'a' || name[0] > 'z')
    return parser.emitError(loc) << "mask dimension must be one subscript letter, got '" << name << "'";
  letter = name[0];
  return success();
}

Attribute MaskAttr::parseBody(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef kindName;
  if (parser.parseKeyword(&kindName))
    return {};
  std::optional<MaskKind> kind = symbolizeMaskKind(kindName);
  if (!kind) {
    parser.emitError(loc) << "unknown mask '" << kindName
                          << "'; expected tril, band, causal_band, block, causal_block, prior_block or decay";
    return {};
  }
  char row = 0, col = 0;
  int64_t size = 0, offset = 0;
  if (parser.parseLParen() || parseMaskLetter(parser, row) || parser.parseComma() || parseMaskLetter(parser, col))
    return {};
  // Then `, size` and/or `, offset = N`, in that order.
  bool sawSize = false;
  while (succeeded(parser.parseOptionalComma())) {
    if (succeeded(parser.parseOptionalKeyword("offset"))) {
      if (parser.parseEqual() || parser.parseInteger(offset))
        return {};
      break;
    }
    if (sawSize) {
      parser.emitError(parser.getCurrentLocation()) << "expected `offset = N` after the mask size";
      return {};
    }
    if (parser.parseInteger(size))
      return {};
    sawSize = true;
  }
  if (parser.parseRParen())
    return {};
  return parser.getChecked<MaskAttr>(loc, parser.getContext(), *kind, row, col, size, offset);
}

void MaskAttr::printBody(AsmPrinter &printer) const {
  printer << stringifyMaskKind(getKind()) << "(" << getRow() << ", " << getCol();
  if (kindHasSize(getKind()))
    printer << ", " << getSize();
  if (getOffset() != 0)
    printer << ", offset = " << getOffset();
  printer << ")";
}

Attribute MaskAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  Attribute body = parseBody(parser);
  if (!body || parser.parseGreater())
    return {};
  return body;
}

void MaskAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printBody(printer);
  printer << ">";
}

//===----------------------------------------------------------------------===//
// DomainAttr: `<min = a, max = b>`, either bound optional
//===----------------------------------------------------------------------===//

LogicalResult DomainAttr::verify(function_ref<InFlightDiagnostic()> emitError, FloatAttr min, FloatAttr max) {
  if (!min && !max)
    return emitError() << "#la.domain needs a min or a max bound";
  for (FloatAttr bound : {min, max})
    if (bound && std::isnan(bound.getValueAsDouble()))
      return emitError() << "#la.domain bound is NaN";
  if (min && max && min.getValueAsDouble() > max.getValueAsDouble())
    return emitError() << "#la.domain is empty: min " << formatBound(min.getValueAsDouble()) << " > max "
                       << formatBound(max.getValueAsDouble());
  return success();
}

Attribute DomainAttr::parse(AsmParser &parser, Type) {
  FloatAttr bounds[2];
  const char *names[2] = {"min", "max"};
  if (parser.parseLess())
    return {};
  // `min = a`, `max = b` or both, in that order.
  for (unsigned i = 0; i < 2; ++i) {
    if (i == 1 && bounds[0] && failed(parser.parseOptionalComma()))
      break;
    if (failed(parser.parseOptionalKeyword(names[i]))) {
      if (i == 1 && bounds[0]) {
        parser.emitError(parser.getCurrentLocation(), "expected `max = <number>` after the comma");
        return {};
      }
      continue;
    }
    double value;
    if (parser.parseEqual() || parser.parseFloat(value))
      return {};
    bounds[i] = FloatAttr::get(Float64Type::get(parser.getContext()), value);
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); }, parser.getContext(), bounds[0], bounds[1]);
}

std::string DomainAttr::formatBound(double value) {
  // The shortest text that reads back as the same double, with a `.0` so that it stays a float literal.
  std::string text;
  for (int precision = 1; precision <= 17; ++precision) {
    text = llvm::formatv("{0}", llvm::format("%.*g", precision, value)).str();
    if (std::strtod(text.c_str(), nullptr) == value)
      break;
  }
  if (llvm::StringRef(text).find_first_of(".eEn") == llvm::StringRef::npos)
    text += ".0";
  return text;
}

std::string DomainAttr::describeInterval(std::optional<double> min, std::optional<double> max, llvm::StringRef name) {
  std::string text;
  if (min)
    text += formatBound(*min) + " ≤ ";
  text += name.str();
  if (max)
    text += " ≤ " + formatBound(*max);
  return text;
}

void DomainAttr::print(AsmPrinter &printer) const {
  printer << "<";
  if (auto min = getLowerBound())
    printer << "min = " << formatBound(*min);
  if (getMin() && getMax())
    printer << ", ";
  if (auto max = getUpperBound())
    printer << "max = " << formatBound(*max);
  printer << ">";
}
