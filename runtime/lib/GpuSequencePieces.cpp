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

StateSelection selectStates(llvm::ArrayRef<StateCombine> combines, llvm::function_ref<bool(size_t)> selected) {
  StateSelection selection;
  for (size_t i = 0, decay = 0; i < combines.size(); ++i) {
    bool decays = combines[i] == StateCombine::Decay;
    if (selected(i)) {
      selection.states.push_back(i);
      if (decays)
        selection.decays.push_back(decay);
    }
    decay += decays;
  }
  return selection;
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

/// Ops that merge the pieces' online-softmax triples at states `i` (average), i + 1 (running max), i + 2
/// (normaliser) along `dim` into `%<out>{i..i+2}`, a scan of `kind` (exclusive: the state before each
/// piece; inclusive: after it) from the states `%h{i..i+2}` where `initial`. A piece's positions sum to
/// Σ e^k = z·e^m, so each piece is one softmax step of logit m + log z with its average as the value. That
/// scan keeps its normaliser relative to the largest such logit, which may exceed the largest key; the
/// triple SPEC §8 defines is relative to the largest key, max m: z = z'·e^{m' − max m}, and 0 (with an
/// average of 0) for the empty prefix, where z' = 0 and m' = max m = −inf.
std::string mergeSoftmaxPieces(size_t i, llvm::StringRef type, llvm::StringRef initialType, int64_t dim, bool initial,
                               llvm::StringRef kind, llvm::StringRef out) {
  std::string ops;
  if (kind == "exclusive") {
    ops += llvm::formatv("  %lz{0} = la.map log %s{1} : {2} -> {2}\n", i, i + 2, type);
    ops += llvm::formatv("  %L{0} = la.map add %s{1}, %lz{0} : {2}, {2} -> {2}\n", i, i + 1, type);
  }
  std::string init =
      initial ? llvm::formatv(" init(%h{0}, %h{1}, %h{2} : {3}, {3}, {3})", i, i + 1, i + 2, initialType).str() : "";
  std::string maxInit = initial ? llvm::formatv(" init(%h{0} : {1})", i + 1, initialType).str() : "";
  ops += llvm::formatv("  %{0}a{1}, %{0}m{1}, %{0}z{1} = la.scan online_softmax %L{1}, %s{1}{2} along {3} {4} : {5}, "
                       "{5} -> {5}, {5}, {5}\n",
                       out, i, init, dim, kind, type);
  ops += llvm::formatv("  %{0}{1} = la.scan max %s{1}{2} along {3} {4} : {5} -> {5}\n", out, i + 1, maxInit, dim, kind,
                       type);
  ops += llvm::formatv("  %{0}{1} = la.map %{0}z{2}, %{0}m{2}, %{0}{3} : {4}, {4}, {4} -> {4} {{\n"
                       "  ^bb0(%z: f32, %logit: f32, %max: f32):\n"
                       "    %zero = arith.constant 0.0 : f32\n"
                       "    %empty = arith.cmpf oeq, %z, %zero : f32\n"
                       "    %shift = arith.subf %logit, %max : f32\n"
                       "    %scale = math.exp %shift : f32\n"
                       "    %scaled = arith.mulf %z, %scale : f32\n"
                       "    %r = arith.select %empty, %zero, %scaled : f32\n"
                       "    la.yield %r : f32\n"
                       "  }\n",
                       out, i + 2, i, i + 1, type);
  ops += llvm::formatv("  %{0}{1} = la.map %{0}a{1}, %{0}{2} : {3}, {3} -> {3} {{\n"
                       "  ^bb0(%y: f32, %z: f32):\n"
                       "    %zero = arith.constant 0.0 : f32\n"
                       "    %empty = arith.cmpf oeq, %z, %zero : f32\n"
                       "    %r = arith.select %empty, %zero, %y : f32\n"
                       "    la.yield %r : f32\n"
                       "  }\n",
                       out, i, i + 2, type);
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
    if (prefixNeedsInitial(state.combine, call))
      initials.push_back(llvm::formatv("%h{0}: {1}", i, initialType).str());
    if (call.final) {
      finals.push_back(llvm::formatv("%f{0}", i).str());
      finalTypes.push_back(initialType);
    }
    if (state.gateRank)
      gates.push_back(llvm::formatv("%G{0}: {1}", i, dynamicType(*state.gateRank)).str());
  }
  // One scan per state, or per softmax triple (the state at `i` and the next two), exclusive for the state
  // before each piece and, where the call returns states, inclusive for the state after the last.
  for (size_t i = 0; i < states.size(); ++i) {
    const PrefixState &state = states[i];
    std::string stateType = dynamicType(state.rank), initialType = dynamicType(state.rank - 1);
    if (state.combine == StateCombine::SoftmaxAverage) {
      bool initial = prefixNeedsInitial(state.combine, call);
      body += mergeSoftmaxPieces(i, stateType, initialType, pieceDim, initial, "exclusive", "p");
      if (call.final) {
        body += mergeSoftmaxPieces(i, stateType, initialType, pieceDim, initial, "inclusive", "i");
        for (size_t j = i; j < i + 3; ++j)
          body += sliceLastPiece(j, states[j].rank, pieceDim);
      }
      i += 2;
      continue;
    }
    std::string head = llvm::formatv("add %s{0}", i).str(), types = stateType;
    if (state.gateRank) {
      head = llvm::formatv("decay %s{0}, %G{0}", i).str();
      types = stateType + ", " + dynamicType(*state.gateRank);
    }
    std::string init =
        prefixNeedsInitial(state.combine, call) ? llvm::formatv(" init(%h{0} : {1})", i, initialType).str() : "";
    body += llvm::formatv("  %p{0} = la.scan {1}{2} along {3} exclusive : {4} -> {5}\n", i, head, init, pieceDim, types,
                          stateType);
    if (call.final) {
      body += llvm::formatv("  %i{0} = la.scan {1}{2} along {3} inclusive : {4} -> {5}\n", i, head, init, pieceDim,
                            types, stateType);
      body += sliceLastPiece(i, state.rank, pieceDim);
    }
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
