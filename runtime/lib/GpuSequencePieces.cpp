//===- GpuSequencePieces.cpp - a causal call's chunks spread over a GPU's blocks ===//

#include "GpuSequencePieces.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

namespace la {

std::optional<GpuPieces> planGpuPieces(int64_t sequenceLength, int64_t pieceLength) {
  if (pieceLength <= 0 || sequenceLength <= pieceLength || sequenceLength % pieceLength != 0)
    return std::nullopt;
  return GpuPieces{sequenceLength / pieceLength, pieceLength};
}

TensorSpec viewAsPieces(const TensorSpec &spec, int64_t slicedDims, const GpuPieces &pieces) {
  TensorSpec view = spec;
  view.shape[slicedDims - 1] *= pieces.count;
  view.shape[slicedDims] = pieces.length;
  return view;
}

TensorSpec viewStatesAlongPieces(const TensorSpec &perPiece, int64_t slicedDims, const GpuPieces &pieces) {
  TensorSpec view = perPiece;
  view.shape[slicedDims - 1] /= pieces.count;
  view.shape.insert(view.shape.begin() + slicedDims, pieces.count);
  return view;
}

TensorSpec viewAlongPieces(const TensorSpec &spec, int64_t slicedDims, const GpuPieces &pieces) {
  TensorSpec view = spec;
  view.shape[slicedDims] = pieces.length;
  view.shape.insert(view.shape.begin() + slicedDims, pieces.count);
  return view;
}

std::string piecePrefixSource(llvm::ArrayRef<PrefixState> states, int64_t pieceDim) {
  auto type = [](size_t rank) {
    std::string text = "tensor<";
    for (size_t d = 0; d < rank; ++d)
      text += "?x";
    return text + "f32>";
  };
  llvm::SmallVector<std::string> arguments, gates, results, resultTypes, returned;
  std::string body;
  for (auto [i, state] : llvm::enumerate(states)) {
    std::string stateType = type(state.rank);
    arguments.push_back(llvm::formatv("%s{0}: {1}", i, stateType).str());
    // States stay f32 when the gates come in a half type (specialisation rounds other f32 results to it).
    results.push_back(stateType + " {la.state}");
    resultTypes.push_back(stateType);
    returned.push_back(llvm::formatv("%p{0}", i).str());
    if (!state.gateRank) {
      body += llvm::formatv("  %p{0} = la.scan add %s{0} along {1} exclusive : {2} -> {2}\n", i, pieceDim, stateType);
      continue;
    }
    // The sum of each piece's gates, along the positions within it.
    std::string gateType = type(*state.gateRank), totalType = type(*state.gateRank - 1);
    gates.push_back(llvm::formatv("%g{0}: {1}", i, gateType).str());
    body +=
        llvm::formatv("  %G{0} = la.reduce add %g{0} along [{1}] : {2} -> {3}\n", i, pieceDim + 1, gateType, totalType);
    body += llvm::formatv("  %p{0} = la.scan decay %s{0}, %G{0} along {1} exclusive : {2}, {3} -> {2}\n", i, pieceDim,
                          stateType, totalType);
  }
  arguments.append(gates.begin(), gates.end());
  return llvm::formatv("// The state before each piece, from the states the pieces hand on by themselves.\n"
                       "func.func @{0}({1}) -> ({2}) {\n{3}  return {4} : {5}\n}\n",
                       kPiecePrefixEntry, llvm::join(arguments, ", "), llvm::join(results, ", "), body,
                       llvm::join(returned, ", "), llvm::join(resultTypes, ", "))
      .str();
}

} // namespace la
