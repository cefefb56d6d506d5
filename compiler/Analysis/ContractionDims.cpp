//===- ContractionDims.cpp - batch/m/n/k roles of a la.contract's letters -===//

#include "Analysis/ContractionDims.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"

namespace mlir::la {

/// The rule for every form: batch letters are in every operand, m letters in the result and the first input
/// (but not every input), n letters in the result from later inputs only, k letters summed.
static ContractionDims classifyByLetters(SubscriptsAttr subscripts) {
  ContractionDims dims;
  for (char c : subscripts.getLetters()) {
    if (subscripts.getResultDim(c) < 0)
      dims.k.push_back(c);
    else if (subscripts.getBatchLetters().find(c) != std::string::npos)
      dims.batch.push_back(c);
    else if (subscripts.getInput(0).contains(c))
      dims.m.push_back(c);
    else
      dims.n.push_back(c);
  }
  return dims;
}

/// The classification of upstream linalg, for a two-input product that sums over letters both inputs
/// carry; none when the form is outside what it covers.
static std::optional<ContractionDims> classifyMatrixProduct(SubscriptsAttr subscripts) {
  std::string contracted = subscripts.getContractedLetters();
  if (subscripts.getNumInputs() != 2 || contracted.empty() || llvm::any_of(contracted, [&](char c) {
        return !subscripts.getInput(0).contains(c) || !subscripts.getInput(1).contains(c);
      }))
    return std::nullopt;
  std::string letters = subscripts.getLetters();
  FailureOr<linalg::ContractionDimensions> upstream = linalg::inferContractionDims(subscripts.getIndexingMaps());
  if (failed(upstream))
    return std::nullopt;
  auto lettersOf = [&](ArrayRef<unsigned> loops) {
    SmallVector<unsigned> sorted(loops);
    llvm::sort(sorted);
    std::string result;
    for (unsigned loop : sorted)
      result.push_back(letters[loop]);
    return result;
  };
  ContractionDims dims{lettersOf(upstream->batch), lettersOf(upstream->m), lettersOf(upstream->n),
                       lettersOf(upstream->k)};
  // Every letter has one role; anything else is a form upstream reads differently.
  if (dims.batch.size() + dims.m.size() + dims.n.size() + dims.k.size() != letters.size())
    return std::nullopt;
  return dims;
}

ContractionDims inferContractionDims(SubscriptsAttr subscripts) {
  if (std::optional<ContractionDims> dims = classifyMatrixProduct(subscripts))
    return *dims;
  return classifyByLetters(subscripts);
}

} // namespace mlir::la
