//===- GpuPiecesPlan.cpp - the launches of a causal GPU call in pieces ----===//

#include "GpuPiecesPlan.h"

#include "llvm/ADT/STLExtras.h"

#include <limits>

namespace la {
namespace {

llvm::Error planError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

/// The empty prefix's value of a state: zero, but a softmax's running max, −inf (SPEC §8). Every piece's
/// state starts from it, and so does a call without states of its own where the prefix needs one.
float emptyFill(StateCombine combine) {
  return combine == StateCombine::SoftmaxMax ? -std::numeric_limits<float>::infinity() : 0.0f;
}

PlanTensor buffer(size_t index, const TensorSpec &spec) { return {PlanTensor::Place::Buffer, index, spec}; }

} // namespace

llvm::Expected<std::optional<GpuPiecesPlan>> planGpuPiecesCall(const EntryInfo &declared, const SliceLayout &slicing,
                                                               llvm::ArrayRef<TensorSpec> inputs,
                                                               llvm::ArrayRef<TensorSpec> outputs, int64_t pieceLength,
                                                               const PiecesPlanSources &sources) {
  int64_t sliced = slicing.dims;
  if (sliced == 0 || outputs.empty() || llvm::is_contained(slicing.sharedArguments, true))
    return std::nullopt;
  int64_t length = static_cast<int64_t>(outputs[0].shape.size()) > sliced ? outputs[0].shape[sliced] : 0;
  llvm::StringRef base = declared.name;
  PrefixCall call;
  if (declared.variantKind == "resume" || declared.variantKind == "prefill") {
    base = declared.variantOf;
    call.fromInitial = declared.variantKind == "resume";
    call.final = true;
  }
  std::shared_ptr<const SequenceVariants> variants = sources.variantsOf(base);
  if (!variants || !variants->combinableStates || variants->sequenceDim != sliced)
    return std::nullopt;
  // FLASH's pieces hold whole blocks (256 positions against the default 128).
  std::optional<GpuPieces> pieces =
      planGpuPieces(length, static_cast<int64_t>(llvm::alignTo(pieceLength, variants->alignment)));
  if (!pieces)
    return std::nullopt;
  size_t numStates = variants->numStates();
  if (inputs.size() != variants->numArguments + (call.fromInitial ? numStates : 0) ||
      outputs.size() != variants->numResults + (call.final ? numStates : 0))
    return std::nullopt;
  auto alongSequence = [&](const TensorSpec &spec) {
    return static_cast<int64_t>(spec.shape.size()) > sliced && spec.shape[sliced] == length;
  };
  if (!llvm::all_of(inputs.take_front(variants->numArguments), alongSequence) ||
      !llvm::all_of(outputs.take_front(variants->numResults), alongSequence))
    return std::nullopt;

  GpuPiecesPlan plan;
  plan.pieces = *pieces;
  // The call's own tensors, as a slice per piece.
  llvm::SmallVector<PlanTensor, 8> pieceInputs, pieceOutputs;
  std::vector<TensorSpec> pieceSpecs;
  for (auto [i, spec] : llvm::enumerate(inputs.take_front(variants->numArguments))) {
    pieceInputs.push_back({PlanTensor::Place::Input, i, viewAsPieces(spec, sliced, *pieces)});
    pieceSpecs.push_back(pieceInputs.back().spec);
  }
  for (auto [i, spec] : llvm::enumerate(outputs.take_front(variants->numResults)))
    pieceOutputs.push_back({PlanTensor::Place::Output, i, viewAsPieces(spec, sliced, *pieces)});
  const Program &variantProgram = *variants->program;
  // The states' shapes are prefill's last results: its body specialised to the pieces' shapes tells them
  // without a compile.
  auto prefillResults = inferResultSpecs(variantProgram.source(), variantProgram.name(), variants->prefill, pieceSpecs);
  if (!prefillResults)
    return prefillResults.takeError();
  std::vector<TensorSpec> stateSpecs(prefillResults->begin() + variants->numResults, prefillResults->end());
  std::vector<TensorSpec> withStates(pieceSpecs);
  withStates.insert(withStates.end(), stateSpecs.begin(), stateSpecs.end());

  // The state kernels: each level's state variant where the program has them (it computes that level's
  // states alone, and its decays' totals), else the state variant of every state, for every level.
  bool perLevel = !variants->levelStates.empty();
  auto coveredBy = [&](size_t kernel) {
    return selectStates(variants->combines, [&](size_t state) {
      return !perLevel || variants->levels[state] == static_cast<int>(kernel) + 1;
    });
  };
  // A state kernel returns each piece's states it covers, then each of their decays' total log-gate over
  // the piece.
  size_t numDecays = static_cast<size_t>(llvm::count(variants->combines, StateCombine::Decay));
  std::vector<TensorSpec> totalSpecs(numDecays);
  llvm::SmallVector<size_t, 4> stateKernels;
  for (const std::string &name : perLevel ? variants->levelStates : std::vector<std::string>{variants->state}) {
    auto specs = inferResultSpecs(variantProgram.source(), variantProgram.name(), name, withStates);
    if (!specs)
      return specs.takeError();
    StateSelection covered = coveredBy(stateKernels.size());
    if (specs->size() != covered.states.size() + covered.decays.size())
      return planError(variantProgram.name() + ": entry '" + declared.name + "': a state variant returns " +
                       llvm::Twine(specs->size()) + " results for " + llvm::Twine(covered.states.size()) +
                       " states and " + llvm::Twine(covered.decays.size()) + " gate totals");
    for (auto [j, decay] : llvm::enumerate(covered.decays))
      totalSpecs[decay] = (*specs)[covered.states.size() + j];
    stateKernels.push_back(plan.kernels.size());
    plan.kernels.push_back({&variantProgram, name, withStates, pieces->count});
  }
  size_t resumeKernel = plan.kernels.size();
  plan.kernels.push_back({&variantProgram, variants->resume, withStates, pieces->count});

  // Per state: the empty prefix (the state variant starts from it; resume then writes the states after
  // each piece there, which nothing reads), each piece's own state and the state before each piece, and
  // these along the pieces; per decay, each piece's gate total.
  llvm::SmallVector<PlanTensor, 4> empty, own, before, ownAlong, beforeAlong, totalsAlong;
  auto allocate = [&](const TensorSpec &spec, float fill, const llvm::Twine &what) {
    plan.buffers.push_back({spec, fill, what.str()});
    return buffer(plan.buffers.size() - 1, spec);
  };
  for (auto [i, spec, combine] : llvm::enumerate(stateSpecs, variants->combines)) {
    empty.push_back(allocate(spec, emptyFill(combine), "state " + llvm::Twine(i) + ": the empty prefix, per piece"));
    own.push_back(allocate(spec, 0.0f, "state " + llvm::Twine(i) + ": what each piece hands on by itself"));
    before.push_back(allocate(spec, 0.0f, "state " + llvm::Twine(i) + ": the state before each piece"));
    TensorSpec along = viewStatesAlongPieces(spec, sliced, *pieces);
    ownAlong.push_back(buffer(own.back().index, along));
    beforeAlong.push_back(buffer(before.back().index, along));
  }
  llvm::SmallVector<PlanTensor, 4> totals;
  for (auto [d, spec] : llvm::enumerate(totalSpecs)) {
    totals.push_back(allocate(spec, 0.0f, "decay " + llvm::Twine(d) + ": each piece's log-gate total"));
    totalsAlong.push_back(buffer(totals.back().index, viewStatesAlongPieces(spec, sliced, *pieces)));
  }
  // Per state, the state before the first piece where the prefix takes one (prefixNeedsInitial): the call's
  // own, or the empty prefix.
  llvm::SmallVector<std::optional<PlanTensor>, 4> initials(numStates);
  for (size_t i = 0; i < numStates; ++i) {
    if (!prefixNeedsInitial(variants->combines[i], call))
      continue;
    if (call.fromInitial) {
      initials[i] =
          PlanTensor{PlanTensor::Place::Input, variants->numArguments + i, inputs[variants->numArguments + i]};
      continue;
    }
    TensorSpec emptySpec = ownAlong[i].spec;
    emptySpec.shape.erase(emptySpec.shape.begin() + sliced);
    initials[i] = allocate(emptySpec, emptyFill(variants->combines[i]),
                           "state " + llvm::Twine(i) + ": the empty prefix, before the first piece");
  }

  // Level by level (SequenceStates::levels): every piece's own states from the exact states before it at the
  // lower levels, then the states before each piece at this level. One level for all but Flow's. Each
  // level's prefix takes its states along the pieces, then each decay's totals, then each initial; it
  // returns the states before each piece, then the final ones.
  int levels = *llvm::max_element(variants->levels);
  for (int level = 1; level <= levels; ++level) {
    PlanLaunch states;
    states.kernel = stateKernels[perLevel ? level - 1 : 0];
    states.inputs = pieceInputs;
    for (size_t i = 0; i < numStates; ++i)
      states.inputs.push_back(variants->levels[i] < level ? before[i] : empty[i]);
    StateSelection covered = coveredBy(perLevel ? level - 1 : 0);
    for (size_t i : covered.states)
      states.outputs.push_back(own[i]);
    for (size_t decay : covered.decays)
      states.outputs.push_back(totals[decay]);
    states.what = "the states each piece hands on by itself" +
                  (levels > 1 ? " at level " + std::to_string(level) : std::string()) +
                  (level > 1 ? ", from the states before it at the levels below" : "");
    plan.launches.push_back(std::move(states));

    PlanLaunch prefix;
    StateSelection atLevel =
        selectStates(variants->combines, [&](size_t state) { return variants->levels[state] == level; });
    llvm::SmallVector<PrefixState, 4> prefixStates;
    size_t decaysSoFar = 0;
    for (size_t i : atLevel.states) {
      prefixStates.push_back({ownAlong[i].spec.shape.size(), variants->combines[i], std::nullopt});
      if (variants->combines[i] == StateCombine::Decay)
        prefixStates.back().gateRank = totalsAlong[atLevel.decays[decaysSoFar++]].spec.shape.size();
      prefix.inputs.push_back(ownAlong[i]);
      prefix.outputs.push_back(beforeAlong[i]);
    }
    for (size_t decay : atLevel.decays)
      prefix.inputs.push_back(totalsAlong[decay]);
    for (size_t i : atLevel.states)
      if (initials[i])
        prefix.inputs.push_back(*initials[i]);
    for (size_t i : atLevel.states)
      if (call.final)
        prefix.outputs.push_back(
            {PlanTensor::Place::Output, variants->numResults + i, outputs[variants->numResults + i]});
    auto prefixProgram = sources.prefixProgram(piecePrefixSource(prefixStates, sliced, call));
    if (!prefixProgram)
      return prefixProgram.takeError();
    std::vector<TensorSpec> prefixSpecs;
    for (const PlanTensor &input : prefix.inputs)
      prefixSpecs.push_back(input.spec);
    prefix.kernel = plan.kernels.size();
    plan.kernels.push_back({*prefixProgram, kPiecePrefixEntry, std::move(prefixSpecs), /*slicePieces=*/1});
    prefix.what = "the states before each piece: a scan along the pieces" +
                  (call.final ? std::string(", and the states after the last") : std::string());
    plan.launches.push_back(std::move(prefix));
  }

  PlanLaunch outputsLaunch;
  outputsLaunch.kernel = resumeKernel;
  outputsLaunch.inputs = pieceInputs;
  outputsLaunch.inputs.append(before.begin(), before.end());
  outputsLaunch.outputs = pieceOutputs;
  outputsLaunch.outputs.append(empty.begin(), empty.end());
  outputsLaunch.what = "each piece's outputs from the state before it";
  plan.launches.push_back(std::move(outputsLaunch));
  return plan;
}

GpuPiecesPlan planWholeCall(const Program &program, llvm::StringRef entry, llvm::ArrayRef<TensorSpec> inputs,
                            llvm::ArrayRef<TensorSpec> outputs) {
  GpuPiecesPlan plan;
  plan.kernels.push_back({&program, entry.str(), std::vector<TensorSpec>(inputs.begin(), inputs.end()), 1});
  PlanLaunch launch;
  for (auto [i, spec] : llvm::enumerate(inputs))
    launch.inputs.push_back({PlanTensor::Place::Input, i, spec});
  for (auto [i, spec] : llvm::enumerate(outputs))
    launch.outputs.push_back({PlanTensor::Place::Output, i, spec});
  launch.what = "the whole call, one block per slice";
  plan.launches.push_back(std::move(launch));
  return plan;
}

} // namespace la
