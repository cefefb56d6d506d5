//===- Subscripts.cpp - #la.subscripts: einsum-like subscripts ------------===//
//
// `la.contract` and the broadcasting form of `la.map` name the dimensions of their operands with strings such
// as "bhnd,bhmd->bhnm". They are parsed once, into a SubscriptsAttr; this file has the attribute's verifier,
// its dimension queries and its assembly form (the text parser and the builders that unique it sit with the
// attribute storage in LADialect.cpp).
//
//===----------------------------------------------------------------------===//

#include "LA/IR/LAOps.h"

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::la;

/// Checks one term: letters a-z, each at most once.
static LogicalResult verifyTerm(function_ref<InFlightDiagnostic()> emitError, StringRef term, const Twine &what) {
  for (auto [pos, c] : llvm::enumerate(term)) {
    if (c < 'a' || c > 'z')
      return emitError() << "subscript " << what << " '" << term << "' has '" << Twine(c) << "' at position " << pos
                         << "; only letters a-z name dimensions";
    if (term.take_front(pos).contains(c))
      return emitError() << "subscript " << what << " '" << term << "' repeats dimension '" << Twine(c) << "'";
  }
  return success();
}

LogicalResult SubscriptsAttr::verify(function_ref<InFlightDiagnostic()> emitError, ArrayRef<StringRef> inputs,
                                     StringRef result) {
  for (auto [index, term] : llvm::enumerate(inputs))
    if (failed(verifyTerm(emitError, term, "of input #" + Twine(index))))
      return failure();
  return verifyTerm(emitError, result, "of the result");
}

std::string SubscriptsAttr::str() const { return llvm::join(getInputs(), ",") + "->" + getResult().str(); }

std::string SubscriptsAttr::getContractedLetters() const {
  std::string letters;
  for (StringRef term : getInputs())
    for (char c : term)
      if (!getResult().contains(c) && !StringRef(letters).contains(c))
        letters.push_back(c);
  return letters;
}

std::string SubscriptsAttr::getBatchLetters() const {
  std::string letters;
  for (char c : getResult())
    if (llvm::all_of(getInputs(), [c](StringRef term) { return term.contains(c); }))
      letters.push_back(c);
  return letters;
}

std::string SubscriptsAttr::getLetters() const { return getResult().str() + getContractedLetters(); }

AffineMap SubscriptsAttr::getLetterMap(MLIRContext *context, StringRef loopLetters, StringRef term) {
  SmallVector<AffineExpr> exprs;
  for (char c : term)
    exprs.push_back(getAffineDimExpr(loopLetters.find(c), context));
  return AffineMap::get(loopLetters.size(), 0, exprs, context);
}

SmallVector<AffineMap> SubscriptsAttr::getIndexingMaps(StringRef loopLetters) const {
  std::string letters = loopLetters.empty() ? getLetters() : loopLetters.str();
  SmallVector<AffineMap> maps;
  for (StringRef term : getInputs())
    maps.push_back(getLetterMap(getContext(), letters, term));
  maps.push_back(getLetterMap(getContext(), letters, getResult()));
  return maps;
}

int64_t SubscriptsAttr::getResultDim(char letter) const {
  size_t pos = getResult().find(letter);
  return pos == StringRef::npos ? -1 : static_cast<int64_t>(pos);
}

// `#la.subscripts<"ab,bc->ac">`: the text form the ops use, quoted.
Attribute SubscriptsAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  std::string text;
  if (parser.parseLess() || parser.parseString(&text) || parser.parseGreater())
    return {};
  return parseText(parser.getContext(), text, [&] { return parser.emitError(loc); });
}

void SubscriptsAttr::print(AsmPrinter &printer) const { printer << "<\"" << str() << "\">"; }
