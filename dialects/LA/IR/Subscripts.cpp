//===- Subscripts.cpp - einsum-like subscript strings ---------------------===//

#include "LA/IR/Subscripts.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::la;

static llvm::Error subscriptError(const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static llvm::Error checkTerm(StringRef term, StringRef what) {
  for (auto [pos, c] : llvm::enumerate(term)) {
    if (c < 'a' || c > 'z')
      return subscriptError(Twine("subscript ") + what + " '" + term + "' has '" + Twine(c) +
                            "' at position " + Twine(pos) + "; only letters a-z name dimensions");
    if (term.take_front(pos).contains(c))
      return subscriptError(Twine("subscript ") + what + " '" + term + "' repeats dimension '" + Twine(c) +
                            "'");
  }
  return llvm::Error::success();
}

llvm::Expected<Subscripts> Subscripts::parse(StringRef text) {
  auto [lhs, rhs] = text.split("->");
  if (lhs.size() == text.size())
    return subscriptError("subscripts '" + text + "' have no '->' before the result term");
  if (rhs.contains("->"))
    return subscriptError("subscripts '" + text + "' have more than one '->'");
  Subscripts parsed;
  SmallVector<StringRef> terms;
  lhs.split(terms, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/true);
  for (auto [index, term] : llvm::enumerate(terms)) {
    if (auto err = checkTerm(term, "of input #" + std::to_string(index)))
      return std::move(err);
    parsed.inputs.push_back(term.str());
  }
  if (auto err = checkTerm(rhs, "of the result"))
    return std::move(err);
  parsed.result = rhs.str();
  return parsed;
}

std::string Subscripts::str() const { return llvm::join(inputs, ",") + "->" + result; }

std::string Subscripts::contractedLetters() const {
  std::string letters;
  for (const std::string &term : inputs)
    for (char c : term)
      if (!StringRef(result).contains(c) && !StringRef(letters).contains(c))
        letters.push_back(c);
  return letters;
}

std::string Subscripts::batchLetters() const {
  std::string letters;
  for (char c : result)
    if (llvm::all_of(inputs, [c](const std::string &term) { return StringRef(term).contains(c); }))
      letters.push_back(c);
  return letters;
}
