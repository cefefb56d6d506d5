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

namespace {

/// `tensor<?x...x?xf32>` of `rank` dimensions.
std::string dynamicType(size_t rank) {
  std::string text = "tensor<";
  for (size_t d = 0; d < rank; ++d)
    text += "?x";
  return text + "f32>";
}

/// Ops that set `%f<i>` to `%i<i>` (rank `rank`, type dynamicType) at its last position along `dim`, that
/// dimension dropped: the state after the last piece.
std::string sliceLastPiece(size_t i, size_t rank, int64_t dim) {
  std::string ops, offsets, sizes, ones, reassociation;
  for (size_t d = 0; d < rank; ++d) {
    ops += llvm::formatv("  %n{0}_{1} = tensor.dim %i{0}, %c{1} : {2}\n", i, d, dynamicType(rank));
    std::string sep = d ? ", " : "";
    bool last = static_cast<int64_t>(d) == dim;
    offsets += sep + (last ? llvm::formatv("%l{0}", i).str() : "0");
    sizes += sep + (last ? "1" : llvm::formatv("%n{0}_{1}", i, d).str());
    ones += sep + "1";
  }
  ops += llvm::formatv("  %l{0} = arith.subi %n{0}_{1}, %c1 : index\n", i, dim);
  // The unit dimension joins the one before it (the pieces follow the slices, so `dim` ≥ 1).
  std::string sliceType = "tensor<";
  for (size_t d = 0; d < rank; ++d) {
    sliceType += static_cast<int64_t>(d) == dim ? "1x" : "?x";
    if (static_cast<int64_t>(d) == dim)
      continue;
    std::string group = static_cast<int64_t>(d) + 1 == dim ? llvm::formatv("[{0}, {1}]", d, dim).str()
                                                           : llvm::formatv("[{0}]", d).str();
    reassociation += (reassociation.empty() ? "" : ", ") + group;
  }
  sliceType += "f32>";
  ops += llvm::formatv("  %e{0} = tensor.extract_slice %i{0}[{1}] [{2}] [{3}] : {4} to {5}\n", i, offsets, sizes, ones,
                       dynamicType(rank), sliceType);
  ops += llvm::formatv("  %f{0} = tensor.collapse_shape %e{0} [{1}] : {2} into {3}\n", i, reassociation, sliceType,
                       dynamicType(rank - 1));
  return ops;
}

} // namespace

std::string piecePrefixSource(llvm::ArrayRef<PrefixState> states, int64_t pieceDim, const PrefixCall &call) {
  llvm::SmallVector<std::string> arguments, gates, initials, results, resultTypes, returned, finals, finalTypes;
  std::string body;
  size_t maxRank = 0;
  for (const PrefixState &state : states)
    maxRank = std::max(maxRank, state.rank);
  if (call.final)
    for (size_t d = 0; d < std::max<size_t>(maxRank, 2); ++d)
      body += llvm::formatv("  %c{0} = arith.constant {0} : index\n", d);
  for (auto [i, state] : llvm::enumerate(states)) {
    std::string stateType = dynamicType(state.rank), initialType = dynamicType(state.rank - 1);
    arguments.push_back(llvm::formatv("%s{0}: {1}", i, stateType).str());
    // States stay f32 when the gates come in a half type (specialisation rounds other f32 results to it).
    results.push_back(stateType + " {la.state}");
    resultTypes.push_back(stateType);
    returned.push_back(llvm::formatv("%p{0}", i).str());
    std::string init;
    if (call.fromInitial) {
      initials.push_back(llvm::formatv("%h{0}: {1}", i, initialType).str());
      init = llvm::formatv(" init(%h{0} : {1})", i, initialType).str();
    }
    std::string combine = llvm::formatv("add %s{0}", i).str(), types = stateType;
    if (state.gateRank) {
      std::string totalType = dynamicType(*state.gateRank);
      gates.push_back(llvm::formatv("%G{0}: {1}", i, totalType).str());
      combine = llvm::formatv("decay %s{0}, %G{0}", i).str();
      types = stateType + ", " + totalType;
    }
    body += llvm::formatv("  %p{0} = la.scan {1}{2} along {3} exclusive : {4} -> {5}\n", i, combine, init, pieceDim,
                          types, stateType);
    if (!call.final)
      continue;
    body += llvm::formatv("  %i{0} = la.scan {1}{2} along {3} inclusive : {4} -> {5}\n", i, combine, init, pieceDim,
                          types, stateType);
    body += sliceLastPiece(i, state.rank, pieceDim);
    finals.push_back(llvm::formatv("%f{0}", i).str());
    finalTypes.push_back(initialType);
  }
  arguments.append(gates.begin(), gates.end());
  arguments.append(initials.begin(), initials.end());
  for (const std::string &type : finalTypes)
    results.push_back(type + " {la.state}");
  resultTypes.append(finalTypes.begin(), finalTypes.end());
  returned.append(finals.begin(), finals.end());
  return llvm::formatv("// The state before each piece, from the states the pieces hand on by themselves.\n"
                       "func.func @{0}({1}) -> ({2}) {\n{3}  return {4} : {5}\n}\n",
                       kPiecePrefixEntry, llvm::join(arguments, ", "), llvm::join(results, ", "), body,
                       llvm::join(returned, ", "), llvm::join(resultTypes, ", "))
      .str();
}

} // namespace la
