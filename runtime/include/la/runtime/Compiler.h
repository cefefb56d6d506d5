//===- Compiler.h - compile an la entry to native code, stage by stage -*- C++ -*-===//
//
// The ahead-of-time face of the pipeline, used by `lac compile` and by the runtime on a cache miss. Each
// call works in its own MLIRContext, so compilations of different kernels may run concurrently.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_COMPILER_H
#define LA_RUNTIME_COMPILER_H

#include "la/runtime/Runtime.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace la {

/// What `emitStage` prints, in pipeline order: the target-neutral stages, then the CPU target's
/// (LLVMDialect..Object), then the CUDA target's (GPU..Cubin). The ahead-of-time C launcher of
/// a call, which may launch several kernels, is Runtime::emitCudaLauncher's.
enum class Stage {
  LA,          ///< specialised `la` (shapes from the arguments)
  Fused,       ///< `la` after inlining, canonicalisation and chunking of causal scans
  Linalg,      ///< linalg on tensors, fused and tiled for the target
  LLVMDialect, ///< CPU: the MLIR translated to LLVM IR: the end of the pass pipeline
  LLVM,        ///< CPU: LLVM IR after -O3
  Asm,         ///< CPU: host assembly
  Object,      ///< CPU: host object file (binary)
  GPU,         ///< CUDA: each batch×head slice a kernel on one thread block: the end of the pass pipeline
  NVVM,        ///< CUDA: the LLVM dialect with NVVM ops, what the NVPTX backend translates
  PTX,         ///< CUDA: PTX text for the `arch` option
  Cubin        ///< CUDA: the ELF cubin ptxas makes of it (binary)
};
/// Parses "la", "fused", "linalg", "llvm-dialect", "llvm", "asm", "obj", "gpu", "nvvm", "ptx", "cubin".
std::optional<Stage> parseStage(llvm::StringRef name);
/// The target a stage belongs to (Common for la, fused, linalg).
mlir::la::PipelineTarget getStageTarget(Stage stage);
/// The stages `target` can stop after, as `parseStage` spells them.
llvm::SmallVector<llvm::StringRef> getStageNames(mlir::la::PipelineTarget target);
/// True for the stages whose text is binary (an object file, a cubin).
bool isBinaryStage(Stage stage);

/// How a call is cut into batch×head slices that the runtime runs in parallel (Analysis/BatchSlicing.h).
struct SliceLayout {
  /// Leading dimensions the caller iterates over, each compiled with size 1; 0 runs the kernel whole.
  int64_t dims = 0;
  /// Per argument: read whole by every slice, having none of those dimensions (AFT's bias w[T, T]). Empty
  /// when none is.
  std::vector<bool> sharedArguments;
  /// Pieces of each slice's sequence along the last sliced dimension: a GPU call in pieces views [B, H, N, ..]
  /// as [B, H·pieces, N/pieces, ..], and a kernel's position along H is then its coordinate / pieces.
  int64_t pieces = 1;

  bool isShared(size_t argument) const { return argument < sharedArguments.size() && sharedArguments[argument]; }
  /// The first argument with the sliced dimensions, whose sizes give the number of slices.
  size_t firstSlicedArgument() const {
    size_t argument = 0;
    while (isShared(argument))
      ++argument;
    return argument;
  }
  bool operator==(const SliceLayout &other) const {
    return dims == other.dims && sharedArguments == other.sharedArguments && pieces == other.pieces;
  }
};

/// A kernel compiled for one set of argument types.
struct CompiledKernel {
  std::string entry;
  /// Argument types it was compiled for (a single batch×head slice when `slicing.dims > 0`).
  std::vector<TensorSpec> arguments;
  /// Result types for those arguments.
  std::vector<TensorSpec> results;
  /// How the caller cuts a call into slices of `arguments`.
  SliceLayout slicing;
  /// CPU: a host object file defining `la_call_<entry>(void **descriptors)`. CUDA: the `gpu` stage as text
  /// (`gpu.module @la_kernels` with one kernel per entry, CUDATarget.h says how to launch it).
  std::vector<char> object;
  /// Name of the function to call.
  std::string symbol() const { return "la_call_" + entry; }
};

/// A version string of the compiler (the other part of every cache key): changes whenever the generated
/// code can change.
llvm::StringRef getCompilerVersion();

/// What the runtime needs to know about one public function of a program.
struct EntryInfo {
  std::string name;
  EntrySignature signature;
  /// Which leading dimensions are independent batch dimensions, and which arguments lack them.
  SliceLayout slicing;
  /// For a declared state-passing variant (SPEC §8; `lac --variant` declares them, and kernels/retention.mlir
  /// its `*_with_state` entries): "prefill", "resume" or "state", and the entry it is a variant of. Empty for
  /// an entry written out in full.
  std::string variantKind, variantOf;
};

/// Parses and verifies a program and describes its public functions, in file order. Errors carry
/// `name:line:col` diagnostics.
llvm::Expected<std::vector<EntryInfo>> inspectProgram(llvm::StringRef source, llvm::StringRef bufferName);

/// The `%names` of `entry`'s arguments as the source text writes them (MLIR does not keep SSA names); empty
/// when the text does not declare `entry` itself.
std::vector<std::string> entryArgumentNames(llvm::StringRef source, llvm::StringRef entry);

/// The declaration of a state-passing variant of the causal `entry` (SPEC §8), to append to `source`:
///   func.func private @<entry>.<variant>(<entry's arguments>, <states>) -> (<entry's results>, <states>)
///       attributes {la.<variant>_of = @<entry>}
/// `variant` is "prefill" (no state arguments: the compiler's initial state), "resume", or "state" (prefill
/// returning the states alone, which is all a piece of the sequence hands to the next). The entry's own
/// arguments keep their %names and domains; each state is named after the scan that carries it (`%s =
/// la.scan ...` gives `%s`). Errors name the op that makes `entry` non-causal.
/// A state variant of one `level` (SequenceStates::levels) returns only that level's states and their decays'
/// totals, as `<entry>.state.<level>` with `la.state_level = <level>`: a GPU call in pieces runs one per level.
/// With `alignedTo` > 1 the variant only runs stretches that start at multiples of that many positions
/// (`la.aligned_to`, SequenceStates::alignment), which lets contractions masked by blocks carry state.
llvm::Expected<std::string> declareStateVariant(llvm::StringRef source, llvm::StringRef bufferName,
                                                llvm::StringRef entry, llvm::StringRef variant,
                                                std::optional<int> level = std::nullopt, int64_t alignedTo = 1);

/// How one state combines across stretches of the sequence (mlir::la::StateCombine): added; decayed by the
/// stretch's log-gate total, which the `state` variant returns after every state; or one of an online
/// softmax's triple (average, running max, normaliser, consecutive), merged as softmax steps.
enum class StateCombine { Sum, Decay, SoftmaxAverage, SoftmaxMax, SoftmaxNorm };

/// How the causal `entry` carries its state along the sequence.
struct SequenceStates {
  /// The dimension its scans run along, at the same position in every operand.
  int64_t dimension = 0;
  /// Whether the state after a stretch of the sequence is the state before it plus the state the stretch
  /// hands on from the initial (zero) state (linear attention's sums; not Flow's, a decay's or a softmax's):
  /// a sequence-parallel call then sums two stretches' states at once.
  bool additive = false;
  /// Whether it follows from the state before it and that, each state as `combines` says, given the states
  /// before it at lower `levels`: also the decayed sums of retention, simple GLA and GLA, causal AFT's online
  /// softmax and Flow's sums of sums (mlir::la::DerivedStateVariant::combinable).
  bool combinable = false;
  /// Per state, in signature order.
  std::vector<StateCombine> combines;
  /// Per state, in signature order: 1 when what it scans depends on no state, else one more than the
  /// highest level of the states it depends on (mlir::la::StateOrigin::level). A stretch's own states at a
  /// level follow from the exact states before it at the levels below.
  std::vector<int> levels;
  /// Every stretch starts at a multiple of this many positions: 1, or (where getSequenceStates was allowed
  /// blocks) the block size of FLASH's block-masked contractions, 256, which a decode step cannot keep to.
  int64_t alignment = 1;
};

/// getSequenceStates' `alignedTo` that lets contractions masked by blocks set SequenceStates::alignment.
inline constexpr int64_t kAnyBlockAlignment = 0;

/// The state of the causal `entry`, whose stretches start at multiples of `alignedTo` positions (1: anywhere;
/// kAnyBlockAlignment: wherever its block masks allow). Errors as declareStateVariant's, for an entry that is
/// not causal.
llvm::Expected<SequenceStates> getSequenceStates(llvm::StringRef source, llvm::StringRef bufferName,
                                                 llvm::StringRef entry, int64_t alignedTo = 1);

/// `source` with every variant of `entry` declared after it, prefill, resume, state (and with states on several
/// levels, a state variant per level): the program la::Decoder,
/// sequence-parallel calls and `lac --variant` compile, so that its hash (which keys the kernel cache and the
/// tuning records) is one. Each declared `alignedTo` as declareStateVariant says: a GPU call in pieces of whole
/// blocks asks for SequenceStates::alignment.
llvm::Expected<std::string> withStateVariants(llvm::StringRef source, llvm::StringRef bufferName, llvm::StringRef entry,
                                              int64_t alignedTo = 1);

/// The arguments of one batch×head slice: the leading `slicing.dims` dimensions of each set to 1, except for
/// the shared arguments, which every slice reads whole. With `block` > 1 (a divisor of the last sliced
/// dimension's size), the arguments of that many consecutive slices along it: one call runs them all.
std::vector<TensorSpec> sliceArguments(llvm::ArrayRef<TensorSpec> arguments, const SliceLayout &slicing,
                                       int64_t block = 1);

/// The result types of `entry` (a declared variant included) for `arguments`: its body specialised to them
/// and nothing compiled, so a caller that needs only the shapes (a GPU call in pieces, for its states) pays
/// milliseconds, not a kernel's compile.
llvm::Expected<std::vector<TensorSpec>> inferResultSpecs(llvm::StringRef source, llvm::StringRef bufferName,
                                                         llvm::StringRef entry, llvm::ArrayRef<TensorSpec> arguments);

/// Compiles `entry` for `arguments` (exactly these shapes) for `options.target` (CompiledKernel::object).
llvm::Expected<CompiledKernel> compileKernel(llvm::StringRef source, llvm::StringRef bufferName, llvm::StringRef entry,
                                             llvm::ArrayRef<TensorSpec> arguments, const CompileOptions &options,
                                             const SliceLayout &slicing);

/// The textual pass pipeline `emitStage` runs for `entry` of the program `source` with these arguments and
/// options (`builtin.module(la-specialize{...},inline,...)`): `la-opt --pass-pipeline=<it>` on the program
/// prints what `emitStage` prints for the pipeline's last stage, `Stage::LLVMDialect` on the CPU and
/// `Stage::GPU` (one batch×head slice's kernel) on CUDA. Errors name an option value the target rejects.
llvm::Expected<std::string> getPipelineText(llvm::StringRef source, llvm::StringRef bufferName, llvm::StringRef entry,
                                            llvm::ArrayRef<TensorSpec> arguments, const CompileOptions &options);

/// The options as the cache key and `lac --json` record them: `target=<cpu|cuda>`, the canonical text of the
/// target's configuration with "host" resolved to this machine's CPU and features, then `slice=<0|1>`.
llvm::Expected<std::string> getResolvedOptionsText(const CompileOptions &options);

/// Runs the pipeline up to `stage` and returns its textual form (or object bytes for `Stage::Object`).
/// `arguments` may be empty for `Stage::LA`/`Stage::Fused` (no specialisation).
llvm::Expected<std::string> emitStage(llvm::StringRef source, llvm::StringRef bufferName, llvm::StringRef entry,
                                      llvm::ArrayRef<TensorSpec> arguments, const CompileOptions &options, Stage stage);

/// `entry` and the functions it calls, every f16/bf16/f32 type, constant and accumulator widened to f64
/// (`la-promote-to-f64`), as program text: the fp64 reference of the numerics guard (la/runtime/NumericsCheck.h).
llvm::Expected<std::string> promoteToF64(llvm::StringRef source, llvm::StringRef bufferName, llvm::StringRef entry);

/// "tensor<1x1x4096x64xf32>".
std::string toMLIRTypeString(const TensorSpec &spec);

} // namespace la

#endif // LA_RUNTIME_COMPILER_H
