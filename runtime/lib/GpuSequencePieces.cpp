//===- GpuSequencePieces.cpp - a causal call's chunks spread over a GPU's blocks ===//

#include "GpuSequencePieces.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

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

std::string piecePrefixSource(llvm::ArrayRef<size_t> ranks, int64_t pieceDim) {
  auto type = [](size_t rank) {
    std::string text = "tensor<";
    for (size_t d = 0; d < rank; ++d)
      text += "?x";
    return text + "f32>";
  };
  std::string arguments, results, body, returned;
  for (auto [i, rank] : llvm::enumerate(ranks)) {
    std::string separator = i == 0 ? "" : ", ";
    arguments += llvm::formatv("{0}%s{1}: {2}", separator, i, type(rank)).str();
    results += separator + type(rank);
    body += llvm::formatv("  %p{0} = la.scan add %s{0} along {1} exclusive : {2} -> {2}\n", i, pieceDim, type(rank))
                .str();
    returned += llvm::formatv("{0}%p{1}", separator, i).str();
  }
  return llvm::formatv("// The state before each piece: the sum of the states of the pieces before it.\n"
                       "func.func @{0}({1}) -> ({2}) {\n{3}  return {4} : {2}\n}\n",
                       kPiecePrefixEntry, arguments, results, body, returned)
      .str();
}

} // namespace la
