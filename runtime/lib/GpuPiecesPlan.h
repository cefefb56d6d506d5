//===- GpuPiecesPlan.h - the launches of a causal GPU call in pieces -*- C++ -*-===//
//
// What a chunk-parallel GPU call runs (GpuSequencePieces.h says why and how), as data: the kernels, the
// state buffers and the launches in stream order, each launch naming its tensors as views of the call's own
// tensors or of those buffers. The runtime executes a plan on the emulator or a device
// (RuntimeImpl::executePiecesOnGpu); `lac compile --emit=c` writes the same plan out as an ahead-of-time C
// launcher (AotLauncher.h), so a program that embeds the kernels launches what the runtime would.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_LIB_GPUPIECESPLAN_H
#define LA_RUNTIME_LIB_GPUPIECESPLAN_H

#include "GpuSequencePieces.h"

#include "la/runtime/Compiler.h"

#include <memory>

namespace la {

/// A causal entry's derived variants (SPEC §8), as a sequence-parallel call runs them.
struct SequenceVariants {
  /// The program with prefill, resume and state declared (withStateVariants).
  std::shared_ptr<Program> program;
  /// The entry, and its variants in `program`.
  std::string entry, prefill, resume, state;
  /// With states on several levels, the state variant of each level (level 1 first), where `program`
  /// declares them; empty otherwise (`state` then serves every level).
  std::vector<std::string> levelStates;
  /// The dimension the entry's scans run along.
  int64_t sequenceDim = 0;
  /// How a stretch's state combines with the state before it (SequenceStates).
  bool additiveStates = false, combinableStates = false;
  /// Every stretch the variants run starts at a multiple of this many positions (SequenceStates::alignment):
  /// pieces are then whole multiples of it.
  int64_t alignment = 1;
  /// Per state, in signature order (SequenceStates::combines, ::levels).
  std::vector<StateCombine> combines;
  std::vector<int> levels;
  /// The entry's own arguments and results.
  size_t numArguments = 0, numResults = 0;
  size_t numStates() const { return combines.size(); }
};

/// One tensor a launch reads or writes: the call's input or output `index`, or the plan's buffer `index`,
/// seen as `spec` (the same bytes, another shape: GpuSequencePieces.h's views).
struct PlanTensor {
  enum class Place { Input, Output, Buffer };
  Place place = Place::Input;
  size_t index = 0;
  TensorSpec spec;
};

/// Device memory the plan allocates for the call, every f32 of it `fill` before the first launch.
struct PlanBuffer {
  TensorSpec spec;
  float fill = 0.0f;
  /// What it holds, for the AOT launcher's comments.
  std::string what;
};

/// A kernel of the plan: `entry` of `program` for whole-call `arguments`, compiled for one slice of
/// `slicePieces` pieces (SliceLayout::pieces).
struct PlanKernel {
  const Program *program = nullptr;
  std::string entry;
  std::vector<TensorSpec> arguments;
  int64_t slicePieces = 1;
};

/// One launch: kernel `kernel` of the plan, one block per slice of its first sliced input.
struct PlanLaunch {
  size_t kernel = 0;
  llvm::SmallVector<PlanTensor, 8> inputs, outputs;
  /// What it computes, for the AOT launcher's comments.
  std::string what;
};

struct GpuPiecesPlan {
  GpuPieces pieces;
  std::vector<PlanKernel> kernels;
  std::vector<PlanBuffer> buffers;
  std::vector<PlanLaunch> launches;
};

/// What the planner asks of its caller, which caches both: the derived variants of a causal entry (null
/// where it has none), and the parsed `piece_prefix` program of piecePrefixSource's text.
struct PiecesPlanSources {
  llvm::function_ref<std::shared_ptr<const SequenceVariants>(llvm::StringRef entry)> variantsOf;
  llvm::function_ref<llvm::Expected<const Program *>(llvm::StringRef source)> prefixProgram;
};

/// The plan of a call of `entry` (`declared` its EntryInfo: the entry itself or a state-passing variant of
/// a causal entry) with whole-call `inputs` and `outputs`, sliced as `slicing` says, in pieces of
/// `pieceLength` positions, rounded up to a multiple of the variants' alignment. None where the call does not
/// qualify and should run whole: a piece length that does not cut the sequence, states that do not combine piece by
/// piece, an argument every slice shares or one without the sequence.
llvm::Expected<std::optional<GpuPiecesPlan>> planGpuPiecesCall(const EntryInfo &declared, const SliceLayout &slicing,
                                                               llvm::ArrayRef<TensorSpec> inputs,
                                                               llvm::ArrayRef<TensorSpec> outputs, int64_t pieceLength,
                                                               const PiecesPlanSources &sources);

/// The plan of a call that runs whole: `entry` of `program` in one launch, one block per slice, reading
/// `inputs` and writing `outputs` as they are.
GpuPiecesPlan planWholeCall(const Program &program, llvm::StringRef entry, llvm::ArrayRef<TensorSpec> inputs,
                            llvm::ArrayRef<TensorSpec> outputs);

} // namespace la

#endif // LA_RUNTIME_LIB_GPUPIECESPLAN_H
