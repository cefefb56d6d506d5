//===- lac.cpp - the la kernel compiler driver ----------------------------===//
//
//   lac compile FILE [--entry NAME] [--shape [ARG=]BxHxNxD ...] [-o OUT]
//           [--target=cpu|cuda [--arch=sm_80|sm_90]]
//           --emit=la|fused|linalg|pipeline|program, then llvm-dialect|llvm|asm|obj (cpu) or
//           gpu|nvvm|ptx|cubin|h|c (cuda)
//   lac gpu-run FILE --kernel MODULE::FUNC --grid X,Y,Z --block X,Y,Z --arg A.npy ... (GpuRun.cpp)
//   lac run FILE [--entry NAME] (--input A.npy ... | --random B,H,N,D) [--output OUT.npy ...]
//           [--repeat N] [--threads T] [--check] [--json] [--tuning-db PATH]
//   lac tune FILE ... (Tune.cpp)
//   lac signature FILE [--entry NAME [--variant prefill|resume|state]] [--shape [ARG=]BxHxNxD ...] [--dtype T] [--json]
//   (compile, run, tune and signature take --variant: the state-passing variants of a causal entry,
//   docs/prefill-decode.md)
//
// Both take every compiler option as a flag (--chunk-size=32, --group-sweeps, --fuse=false, --target-cpu=...),
// generated from the option registry (compiler/Pipelines/PipelineOptions.def).
//
// Option parsing and printing only: compilation is la/runtime/Compiler.h, execution la/runtime/Runtime.h.
//
//===----------------------------------------------------------------------===//

#include "GpuRun.h"
#include "Tune.h"

#include "la/runtime/Compiler.h"
#include "la/runtime/Npy.h"
#include "la/runtime/PipelineFlags.h"
#include "la/runtime/Runtime.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <random>

#include <unistd.h>

namespace cl = llvm::cl;

static cl::SubCommand compileCommand("compile", "Compile an entry and print a stage of the lowering");
static cl::SubCommand runCommand("run", "Run an entry on .npy inputs (or random ones) and time it");
static cl::SubCommand signatureCommand("signature",
                                       "Print an entry's arguments and results: names, shapes, dtypes and domains");
// `lac tune` (Tune.cpp) shares run's options for inputs, shapes, threads and the target.

static cl::OptionCategory commonCategory("lac options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<kernel.mlir>"), cl::Required, cl::sub(compileCommand),
                                      cl::sub(runCommand), cl::sub(lac::tuneSubcommand()), cl::sub(signatureCommand));
static cl::opt<std::string> entryName("entry", cl::desc("Function to compile (default: the first public one)"),
                                      cl::sub(compileCommand), cl::sub(runCommand), cl::sub(lac::tuneSubcommand()),
                                      cl::sub(signatureCommand), cl::cat(commonCategory));
static cl::list<std::string> shapes("shape",
                                    cl::desc("Argument shape: ARG=BxHxNxD (ARG an index or %name), or BxHxNxD "
                                             "for every argument (a lower-rank argument takes the leading "
                                             "sizes); with `run --random`, overrides the sizes --random gives "
                                             "that argument"),
                                    cl::sub(compileCommand), cl::sub(runCommand), cl::sub(lac::tuneSubcommand()),
                                    cl::sub(signatureCommand), cl::cat(commonCategory));
static cl::opt<std::string> variantName(
    "variant",
    cl::desc("A state-passing variant of a causal entry (SPEC §8): prefill (the entry's inputs → its outputs, then "
             "the state after the last position), resume (the inputs, then that state → the outputs, then the new "
             "state) or state (the inputs → the state alone); `lac signature --variant` lists the state arguments"),
    cl::sub(compileCommand), cl::sub(runCommand), cl::sub(lac::tuneSubcommand()), cl::sub(signatureCommand),
    cl::cat(commonCategory));
static cl::opt<int64_t> alignedTo(
    "aligned-to",
    cl::desc("With --variant: every stretch the variant runs starts at a multiple of this many positions, which "
             "lets a contraction masked by blocks of a size that divides it carry state (flash_causal: 256, as "
             "its GPU pieces run). The caller keeps to it: a resume inside a block is wrong, not refused"),
    cl::init(1), cl::sub(compileCommand), cl::sub(runCommand), cl::sub(lac::tuneSubcommand()),
    cl::sub(signatureCommand), cl::cat(commonCategory));
static cl::opt<std::string> emit("emit",
                                 cl::desc("Stage to print: la, fused, linalg; for the CPU llvm-dialect, llvm, asm, "
                                          "obj; for CUDA gpu, nvvm, ptx, cubin, and h and c, the header and "
                                          "source of an ahead-of-time C launcher la_<entry> (write the header as "
                                          "la_<entry>.h beside the source); or pipeline, the textual pass "
                                          "pipeline (la-opt --pass-pipeline=...), and program, the program it "
                                          "runs on (the file, with --variant its declarations appended)"),
                                 cl::init("linalg"), cl::sub(compileCommand), cl::cat(commonCategory));
static cl::opt<std::string> targetName("target",
                                       cl::desc("compile: cpu, or cuda (NVIDIA GPUs, one thread block per "
                                                "batch×head slice; --arch picks sm_80 or sm_90). run: cpu, cuda "
                                                "(a GPU through the CUDA driver, libcuda.so.1 or $LA_CUDA_DRIVER), "
                                                "or cuda-emu (the CUDA kernels on the GPU emulator)"),
                                       cl::init("cpu"), cl::sub(compileCommand), cl::sub(runCommand),
                                       cl::sub(lac::tuneSubcommand()), cl::cat(commonCategory));
static cl::opt<int> cudaDevice("cuda-device",
                               cl::desc("run --target cuda: the ordinal of the device to run on, as the driver "
                                        "numbers them after CUDA_VISIBLE_DEVICES"),
                               cl::init(0), cl::sub(runCommand), cl::cat(commonCategory));
static cl::opt<std::string> outputFile("o", cl::desc("Output file (default: stdout)"), cl::init("-"),
                                       cl::sub(compileCommand));

static cl::list<std::string> inputs("input", cl::desc("A .npy file per argument, in argument order"),
                                    cl::sub(runCommand), cl::sub(lac::tuneSubcommand()), cl::cat(commonCategory));
static cl::list<std::string> outputs("output", cl::desc("A .npy file per result, in result order"), cl::sub(runCommand),
                                     cl::cat(commonCategory));
static cl::opt<std::string> randomDims(
    "random",
    cl::desc("Seeded uniform(-1,1) inputs (cut to an argument's declared domain); B,H,N,D fill each argument's "
             "dimensions in order"),
    cl::sub(runCommand), cl::sub(lac::tuneSubcommand()), cl::cat(commonCategory));
static cl::opt<uint64_t> seed("seed", cl::desc("Seed of --random (and of tune's search)"), cl::init(0),
                              cl::sub(runCommand), cl::sub(lac::tuneSubcommand()));
static cl::opt<std::string> elementDType("dtype",
                                         cl::desc("Element type the f32 arguments are specialised to: f32, f16 or "
                                                  "bf16 (half types compute in f32, results come back in that "
                                                  "type). run: the type of the --random inputs"),
                                         cl::init("f32"), cl::sub(compileCommand), cl::sub(runCommand),
                                         cl::sub(lac::tuneSubcommand()), cl::sub(signatureCommand),
                                         cl::cat(commonCategory));
static cl::opt<std::string> u2As("u2-as",
                                 cl::desc("Read '<u2' .npy inputs as bf16 or f16 bit patterns (NumPy has no bf16: "
                                          "save bf16 arrays with .view(np.uint16))"),
                                 cl::init(""), cl::sub(runCommand), cl::sub(lac::tuneSubcommand()),
                                 cl::cat(commonCategory));
static cl::opt<unsigned> repeat("repeat", cl::desc("Timed runs after one warm-up run"), cl::init(0),
                                cl::sub(runCommand), cl::cat(commonCategory));
static cl::opt<unsigned> threads("threads", cl::desc("Worker threads (0: one per hardware thread)"), cl::init(0),
                                 cl::sub(runCommand), cl::sub(lac::tuneSubcommand()), cl::cat(commonCategory));
static cl::opt<bool> splitSequences(
    "split-sequences",
    cl::desc("Run a causal entry on pieces of its sequence: two threads per slice where the slices are at most "
             "half the threads, else one per slice from 16384 positions on (la::RuntimeOptions::splitSequences); "
             "=false: each slice's sequence whole on one thread, outputs that repeat bit for bit"),
    cl::init(true), cl::sub(runCommand), cl::cat(commonCategory));
static cl::opt<bool> json("json", cl::desc("Print one JSON object with the figures"), cl::sub(runCommand),
                          cl::sub(lac::tuneSubcommand()), cl::sub(signatureCommand), cl::cat(commonCategory));
static cl::opt<bool> check("check",
                           cl::desc("Also run the entry's fp64 reference and report each output's max and "
                                    "relative-RMS error and its first NaN/Inf; exit 1 if an output is off"),
                           cl::sub(runCommand), cl::cat(commonCategory));
static cl::opt<std::string> tuningDb("tuning-db",
                                     cl::desc("Look up each kernel's configuration in this tuning database (a "
                                              "JSON-lines file or redis://HOST:PORT that `lac tune --db` wrote; "
                                              "default: $LA_TUNING_DB); options given as flags override the "
                                              "record's"),
                                     cl::sub(runCommand), cl::cat(commonCategory));
static cl::opt<std::string> remoteCache("remote-cache",
                                        cl::desc("A kernel cache shared by several machines, redis://HOST:PORT, "
                                                 "behind the local one (default: $LA_REMOTE_CACHE)"),
                                        cl::sub(runCommand), cl::sub(lac::tuneSubcommand()), cl::cat(commonCategory));
static cl::opt<std::string> cacheDir("cache-dir", cl::desc("Kernel cache directory ('none': memory only)"),
                                     cl::sub(runCommand), cl::sub(lac::tuneSubcommand()), cl::cat(commonCategory));

namespace {

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "lac") << message << "\n";
  return 1;
}

int fail(llvm::Error err) { return fail(llvm::toString(std::move(err))); }

int failNumerics(const la::NumericsReport &report) {
  return fail(report.inputs.empty() ? "numerics check failed"
                                    : "numerics check failed: an input lies outside its argument's domain");
}

llvm::Expected<llvm::SmallVector<int64_t, 4>> parseDims(llvm::StringRef text, char separator) {
  llvm::SmallVector<int64_t, 4> dims;
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, separator);
  for (llvm::StringRef part : parts) {
    int64_t size;
    if (part.trim().getAsInteger(10, size) || size < 0)
      return llvm::createStringError("'%s' is not a list of non-negative sizes (at '%s')", text.str().c_str(),
                                     part.str().c_str());
    dims.push_back(size);
  }
  return dims;
}

/// `--dtype`, the element type the declared-f32 arguments take.
llvm::Expected<la::DType> parseElementDType() {
  std::optional<la::DType> dtype = la::parseDType(elementDType);
  if (!dtype || *dtype == la::DType::F64)
    return llvm::createStringError("--dtype " + elementDType + ": expected f32, f16 or bf16");
  return *dtype;
}

/// Resolves `--shape` options against the signature into full argument specs. The bare form (`--shape
/// BxHxNxD`) sizes the first `bareArguments` arguments: with `--variant resume` the entry's own, since the
/// states' shapes follow from those (fillStateShapes).
llvm::Expected<std::vector<la::TensorSpec>> resolveShapes(const la::EntryInfo &info, llvm::StringRef source,
                                                          size_t bareArguments) {
  std::vector<la::TensorSpec> specs(info.signature.arguments.begin(), info.signature.arguments.end());
  std::vector<std::string> names = la::entryArgumentNames(source, info.name);
  for (const std::string &option : shapes) {
    auto [lhs, rhs] = llvm::StringRef(option).split('=');
    llvm::StringRef dimsText = rhs.empty() ? lhs : rhs;
    auto dims = parseDims(dimsText, 'x');
    if (!dims)
      return llvm::createStringError("--shape %s: %s", option.c_str(), llvm::toString(dims.takeError()).c_str());
    std::vector<size_t> targets;
    if (rhs.empty()) {
      for (size_t i = 0; i < std::min(specs.size(), bareArguments); ++i)
        targets.push_back(i);
    } else {
      llvm::StringRef arg = lhs.ltrim('%');
      size_t index;
      if (!arg.getAsInteger(10, index) && index < specs.size()) {
        targets.push_back(index);
      } else {
        auto it = llvm::find(names, arg.str());
        if (it == names.end())
          return llvm::createStringError("--shape %s: '%s' has no argument '%s' (arguments: %%%s)", option.c_str(),
                                         info.name.c_str(), arg.str().c_str(), llvm::join(names, ", %").c_str());
        targets.push_back(it - names.begin());
      }
    }
    for (size_t i : targets) {
      // The bare form fills each argument's leading dimensions in order, as --random does (retention's
      // [B, H, T] gate takes BxHxN of BxHxNxD); a later named --shape overrides one argument.
      if (rhs.empty() && specs[i].shape.size() < dims->size()) {
        specs[i].shape.assign(dims->begin(), dims->begin() + specs[i].shape.size());
        continue;
      }
      if (dims->size() != specs[i].shape.size())
        return llvm::createStringError("--shape %s: argument #%zu has rank %zu, not %zu", option.c_str(), i,
                                       specs[i].shape.size(), dims->size());
      specs[i].shape = *dims;
    }
  }
  return specs;
}

llvm::Expected<std::string> readSource(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "%s: cannot read the file: %s", path.str().c_str(),
                                   buffer.getError().message().c_str());
  return (*buffer)->getBuffer().str();
}

/// The entry to compile or run: `--entry`, or with `--variant V` the derived entry `<entry>.V`.
std::string selectedEntryName() { return variantName.empty() ? std::string(entryName) : entryName + "." + variantName; }

/// The program text: the file, and with `--variant` the declarations of every variant appended
/// (la/runtime/Compiler.h, withStateVariants), so that the variant is an entry like the others. All, as
/// la::Decoder declares them: resume needs prefill for its state shapes, and the program (whose hash keys the
/// kernel cache and the tuning records) is then the one a decode loop in C++ compiles.
llvm::Expected<std::string> programSource() {
  static std::optional<std::string> cached;
  if (cached)
    return *cached;
  auto source = readSource(inputFile);
  if (!source)
    return source.takeError();
  if (variantName.empty() && alignedTo != 1)
    return llvm::createStringError("--aligned-to applies to a --variant's stretches; give --variant too");
  if (!variantName.empty()) {
    if (entryName.empty())
      return llvm::createStringError("--variant " + variantName + " needs --entry: the causal entry to derive it from");
    if (variantName != "prefill" && variantName != "resume" && variantName != "state")
      return llvm::createStringError("--variant " + variantName + ": expected prefill, resume or state");
    if (alignedTo < 1)
      return llvm::createStringError("--aligned-to " + std::to_string(alignedTo) +
                                     ": stretches start at multiples of a positive number of positions");
    auto declared = la::withStateVariants(*source, inputFile, entryName, alignedTo);
    if (!declared)
      return llvm::createStringError("--variant " + variantName + ": " + llvm::toString(declared.takeError()));
    *source = std::move(*declared);
  }
  cached = *source;
  return *cached;
}

/// Whether the selected variant takes states after the entry's own arguments (resume, state).
bool variantTakesStates() { return variantName == "resume" || variantName == "state"; }

/// How many leading arguments of the selected entry are the `--entry`'s own: all of them, except with
/// `--variant resume` or `state`, whose states follow.
size_t ownArgumentCount(const std::vector<la::EntryInfo> &entries, const la::EntryInfo &selected) {
  if (!variantTakesStates())
    return selected.signature.arguments.size();
  for (const la::EntryInfo &info : entries)
    if (info.name == entryName)
      return info.signature.arguments.size();
  return selected.signature.arguments.size();
}

/// With `--variant resume` or `state`, gives each state argument that `--shape` left open the shape of the state
/// prefill ends with for the entry's own arguments (`ownCount` of them, which must be shaped by then).
llvm::Error fillStateShapes(la::Runtime &runtime, const la::Program &program, size_t ownCount,
                            std::vector<la::TensorSpec> &specs) {
  auto isOpen = [](const la::TensorSpec &spec) { return !spec.hasStaticShape(); };
  if (!variantTakesStates() || std::none_of(specs.begin() + ownCount, specs.end(), isOpen))
    return llvm::Error::success();
  for (size_t i = 0; i < ownCount; ++i)
    if (isOpen(specs[i]))
      return llvm::createStringError(llvm::formatv("--variant {0}: the states' shapes follow from the entry's "
                                                   "own arguments, but argument #{1} is {2}; pass --shape",
                                                   variantName, i, la::toMLIRTypeString(specs[i]))
                                         .str());
  llvm::SmallVector<la::TensorSpec> own(specs.begin(), specs.begin() + ownCount);
  auto prefill = runtime.resultSpecs(program, entryName + ".prefill", own);
  if (!prefill)
    return prefill.takeError();
  auto ownSignature = runtime.signature(program, entryName);
  if (!ownSignature)
    return ownSignature.takeError();
  size_t firstState = ownSignature->results.size();
  for (size_t i = ownCount; i < specs.size(); ++i)
    if (isOpen(specs[i]) && firstState + (i - ownCount) < prefill->size())
      specs[i].shape = (*prefill)[firstState + (i - ownCount)].shape;
  return llvm::Error::success();
}

/// fillStateShapes for `compile` and `signature`, which have no runtime of their own: one for the CPU with
/// no disk cache compiles prefill to learn the shapes.
llvm::Error fillStateShapes(llvm::StringRef source, size_t ownCount, std::vector<la::TensorSpec> &specs) {
  if (!variantTakesStates())
    return llvm::Error::success();
  la::RuntimeOptions options;
  options.cacheDir = "none";
  auto runtime = la::Runtime::create(options);
  if (!runtime)
    return runtime.takeError();
  auto program = (*runtime)->loadSource(source, inputFile);
  if (!program)
    return program.takeError();
  return fillStateShapes(**runtime, **program, ownCount, specs);
}

const la::EntryInfo *findEntry(const std::vector<la::EntryInfo> &entries, llvm::StringRef name) {
  if (name.empty())
    return entries.empty() ? nullptr : &entries.front();
  for (const la::EntryInfo &info : entries)
    if (info.name == name)
      return &info;
  return nullptr;
}

std::string listEntries(const std::vector<la::EntryInfo> &entries) {
  std::vector<std::string> names;
  for (const la::EntryInfo &info : entries)
    names.push_back(info.name);
  return llvm::join(names, ", ");
}

/// Refuses a tensor this machine cannot hold, before trying to allocate it (an allocation failure aborts).
llvm::Error checkAllocatable(const la::TensorSpec &spec) {
  std::optional<int64_t> bytes = spec.checkedNumBytes();
  uint64_t memory = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGE_SIZE));
  if (!bytes || uint64_t(*bytes) > memory)
    return llvm::createStringError(llvm::formatv("{0} needs {1} bytes, more than this machine's {2:f1} GiB of memory",
                                                 spec.str(), bytes ? std::to_string(*bytes) : std::string("over 2^63"),
                                                 memory / double(1 << 30))
                                       .str());
  return llvm::Error::success();
}

/// One flag per registry option, in both subcommands (la/runtime/PipelineFlags.h).
const la::PipelineFlags &pipelineFlags() {
  static cl::SubCommandGroup both{&compileCommand, &runCommand, &lac::tuneSubcommand()};
  static const la::PipelineFlags flags(both, commonCategory);
  return flags;
}

/// The entry `compile` and `signature` describe: the program text (with `--variant`'s declaration), the
/// entry, and its argument specs with `--shape` and `--dtype` applied. With `--variant resume` the states take
/// the shapes prefill ends with, once the entry's own arguments are all shaped.
struct ShapedEntry {
  std::string source;
  la::EntryInfo info;
  std::vector<la::TensorSpec> arguments;
};

llvm::Expected<ShapedEntry> shapeSelectedEntry() {
  auto source = programSource();
  if (!source)
    return source.takeError();
  auto entries = la::inspectProgram(*source, inputFile);
  if (!entries)
    return entries.takeError();
  const la::EntryInfo *info = findEntry(*entries, selectedEntryName());
  if (!info)
    return llvm::createStringError(inputFile + ": no entry named '" + entryName +
                                   "' (entries: " + listEntries(*entries) + ")");
  size_t ownCount = ownArgumentCount(*entries, *info);
  auto specs = resolveShapes(*info, *source, ownCount);
  if (!specs)
    return specs.takeError();
  if (std::all_of(specs->begin(), specs->begin() + ownCount,
                  [](const la::TensorSpec &spec) { return spec.hasStaticShape(); }))
    if (llvm::Error err = fillStateShapes(*source, ownCount, *specs))
      return std::move(err);
  auto dtype = parseElementDType();
  if (!dtype)
    return dtype.takeError();
  for (la::TensorSpec &spec : *specs)
    if (spec.dtype == la::DType::F32)
      spec.dtype = *dtype;
  return ShapedEntry{std::move(*source), *info, std::move(*specs)};
}

/// Writes what `compile` made to `-o` (standard output by default), kept only once written whole.
int writeOutput(llvm::StringRef text, bool binary) {
  std::error_code ec;
  llvm::ToolOutputFile out(outputFile, ec, binary ? llvm::sys::fs::OF_None : llvm::sys::fs::OF_Text);
  if (ec)
    return fail(outputFile + ": " + ec.message());
  out.os() << text;
  out.keep();
  return 0;
}

/// `compile --emit=h|c`: the ahead-of-time C launcher of the call, from a runtime that launches nothing (the
/// emulator's target needs no driver; its kernels are the CUDA target's).
int writeCudaLauncher(const la::CompileOptions &compile) {
  if (compile.target != mlir::la::PipelineTarget::CUDA)
    return fail("--emit=" + emit + ": an ahead-of-time C launcher is the CUDA target's; add --target cuda");
  auto shaped = shapeSelectedEntry();
  if (!shaped)
    return fail(shaped.takeError());
  for (auto [i, spec] : llvm::enumerate(shaped->arguments))
    if (!spec.hasStaticShape())
      return fail("--emit=" + emit + " needs static shapes: argument #" + llvm::Twine(i) + " of '" + shaped->info.name +
                  "' is " + la::toMLIRTypeString(spec) + "; pass --shape");
  la::RuntimeOptions options;
  options.target = la::RuntimeTarget::CUDAEmulator;
  options.cacheDir = "none";
  options.compile = compile;
  auto runtime = la::Runtime::create(options);
  if (!runtime)
    return fail(runtime.takeError());
  auto program = (*runtime)->loadSource(shaped->source, inputFile);
  if (!program)
    return fail(program.takeError());
  auto text =
      (*runtime)->emitCudaLauncher(**program, shaped->info.name, shaped->arguments,
                                   emit == "h" ? la::Runtime::LauncherPart::Header : la::Runtime::LauncherPart::Source);
  if (!text)
    return fail(text.takeError());
  return writeOutput(*text, /*binary=*/false);
}

int runCompile() {
  auto options = pipelineFlags().get();
  if (!options)
    return fail(options.takeError());
  if (targetName == "cuda")
    options->target = mlir::la::PipelineTarget::CUDA;
  else if (targetName != "cpu")
    return fail("--target=" + targetName + ": unknown target (choose cpu, cuda)");
  if (emit == "h" || emit == "c")
    return writeCudaLauncher(*options);
  if (emit == "program") {
    // What the pipeline runs on: the file, and with --variant the variants' declarations appended (the
    // input `la-opt --pass-pipeline=<--emit=pipeline>` needs to reproduce a variant's stages).
    auto source = programSource();
    if (!source)
      return fail(source.takeError());
    return writeOutput(*source, /*binary=*/false);
  }
  bool printPipeline = emit == "pipeline";
  std::optional<la::Stage> stage = printPipeline ? la::Stage::Linalg : la::parseStage(emit);
  std::string choices = "(choose " + llvm::join(la::getStageNames(options->target), ", ") +
                        (options->target == mlir::la::PipelineTarget::CUDA ? ", h, c" : "") + ", pipeline, program)";
  if (!stage)
    return fail("--emit=" + emit + ": unknown stage " + choices);
  mlir::la::PipelineTarget owner = la::getStageTarget(*stage);
  if (owner != mlir::la::PipelineTarget::Common && owner != options->target && !printPipeline)
    return fail("--emit=" + emit + " is a stage of the " + mlir::la::getTargetName(owner) + " target, not of the " +
                mlir::la::getTargetName(options->target) + " target " + choices);
  auto shaped = shapeSelectedEntry();
  if (!shaped)
    return fail(shaped.takeError());
  const std::string &source = shaped->source;
  const la::EntryInfo &info = shaped->info;
  std::vector<la::TensorSpec> &specs = shaped->arguments;
  bool allStatic = llvm::all_of(specs, [](const la::TensorSpec &spec) { return spec.hasStaticShape(); });
  std::vector<la::TensorSpec> arguments;
  if (allStatic)
    arguments = specs;
  else if (*stage > la::Stage::Fused)
    for (auto [i, spec] : llvm::enumerate(specs))
      if (!spec.hasStaticShape())
        return fail("--emit=" + emit + " needs static shapes: argument #" + llvm::Twine(i) + " of '" + info.name +
                    "' is " + la::toMLIRTypeString(spec) + "; pass --shape");
  auto text = printPipeline ? la::getPipelineText(source, inputFile, info.name, arguments, *options)
                            : la::emitStage(source, inputFile, info.name, arguments, *options, *stage);
  if (!text)
    return fail(text.takeError());
  return writeOutput(*text, la::isBinaryStage(*stage));
}

/// The inputs of `run` and `tune`: `--random` tensors (seeded, `--shape` and `--dtype` applied) or `--input`
/// files, checked against `entry`'s signature.
llvm::Expected<std::vector<la::HostTensor>> makeInputs(la::Runtime &runtime, const la::Program &program,
                                                       const std::string &entry, const la::EntrySignature &signature) {
  auto makeError = [](const llvm::Twine &message) { return llvm::createStringError(message.str()); };
  std::vector<la::HostTensor> inputTensors;
  if (!randomDims.empty()) {
    if (!inputs.empty())
      return makeError("--random and --input are exclusive");
    auto dims = parseDims(randomDims, ',');
    if (!dims)
      return makeError("--random: " + llvm::toString(dims.takeError()));
    std::vector<la::TensorSpec> declaredSpecs(signature.arguments.begin(), signature.arguments.end());
    size_t ownCount = declaredSpecs.size();
    if (variantTakesStates()) {
      auto own = runtime.signature(program, entryName);
      if (!own)
        return own.takeError();
      ownCount = own->arguments.size();
    }
    if (!shapes.empty()) {
      // Argument names (`--shape %w=..`) come from the source text.
      auto source = programSource();
      if (!source)
        return source.takeError();
      auto shaped = resolveShapes(la::EntryInfo{entry, signature, 0}, *source, ownCount);
      if (!shaped)
        return shaped.takeError();
      declaredSpecs = std::move(*shaped);
    }
    auto dtype = parseElementDType();
    if (!dtype)
      return dtype.takeError();
    // --random sizes the entry's own arguments; resume's states take the shapes prefill ends with.
    std::vector<la::TensorSpec> specs;
    for (auto [i, declared] : llvm::enumerate(declaredSpecs)) {
      if (declared.shape.size() > dims->size())
        return makeError("--random " + randomDims + ": argument #" + llvm::Twine(i) + " has rank " +
                         llvm::Twine(declared.shape.size()) + ", give at least that many sizes");
      la::TensorSpec spec = declared;
      if (i < ownCount)
        for (size_t d = 0; d < spec.shape.size(); ++d)
          spec.shape[d] = declared.shape[d] >= 0 ? declared.shape[d] : (*dims)[d];
      specs.push_back(spec);
    }
    if (llvm::Error err = fillStateShapes(runtime, program, ownCount, specs))
      return std::move(err);
    std::mt19937_64 generator(seed);
    for (auto [i, shaped] : llvm::enumerate(specs)) {
      auto [low, high] =
          la::samplingInterval(i < signature.argumentDomains.size() ? signature.argumentDomains[i] : std::nullopt);
      std::uniform_real_distribution<double> uniform(low, high);
      la::TensorSpec spec = shaped;
      // --dtype stores the entry's own inputs in a half type; resume's states stay f32 (`la.state`).
      if (spec.dtype == la::DType::F32 && i < ownCount)
        spec.dtype = *dtype;
      if (llvm::Error err = checkAllocatable(spec))
        return makeError("--random " + randomDims + ": argument #" + llvm::Twine(i) + ": " +
                         llvm::toString(std::move(err)));
      la::HostTensor tensor(spec);
      for (int64_t e = 0; e < tensor.numElements(); ++e)
        tensor.set(e, uniform(generator));
      inputTensors.push_back(std::move(tensor));
    }
  } else {
    if (!shapes.empty())
      return makeError("--shape sets the sizes of --random inputs; .npy inputs carry their own shapes");
    if (inputs.size() != signature.arguments.size())
      return makeError("'" + entry + "' takes " + llvm::Twine(signature.arguments.size()) + " arguments but " +
                       llvm::Twine(inputs.size()) + " --input files were given (or use --random B,H,N,D)");
    for (auto [i, path] : llvm::enumerate(inputs)) {
      std::optional<la::DType> reinterpret;
      if (signature.arguments[i].dtype == la::DType::BF16)
        reinterpret = la::DType::BF16;
      if (!u2As.empty()) {
        reinterpret = la::parseDType(u2As);
        if (reinterpret != la::DType::BF16 && reinterpret != la::DType::F16)
          return makeError("--u2-as " + u2As + ": expected bf16 or f16");
      }
      auto tensor = la::readNpy(path, reinterpret);
      if (!tensor)
        return makeError("--input #" + llvm::Twine(i) + ": " + llvm::toString(tensor.takeError()));
      inputTensors.push_back(std::move(*tensor));
    }
  }
  return std::move(inputTensors);
}

/// The runtime options of `run` and `tune`: threads, cache, compile options, target and device.
llvm::Expected<la::RuntimeOptions> makeRuntimeOptions() {
  la::RuntimeOptions options;
  options.numThreads = threads;
  options.splitSequences = splitSequences;
  options.cacheDir = cacheDir;
  options.remoteCache = remoteCache.getNumOccurrences() ? std::string(remoteCache)
                                                        : llvm::sys::Process::GetEnv("LA_REMOTE_CACHE").value_or("");
  auto compileOptions = pipelineFlags().get();
  if (!compileOptions)
    return compileOptions.takeError();
  options.compile = *compileOptions;
  auto target = la::parseRuntimeTarget(targetName);
  if (!target)
    return llvm::createStringError("--target: " + llvm::toString(target.takeError()));
  options.target = *target;
  if (cudaDevice.getNumOccurrences() && options.target != la::RuntimeTarget::CUDA)
    return llvm::createStringError("--cuda-device picks the device of --target cuda, not of --target " + targetName);
  options.cudaDevice = cudaDevice;
  return options;
}

/// The entry to run (`--entry`, else the program's first) and its signature.
llvm::Expected<std::pair<std::string, la::EntrySignature>> selectEntry(la::Runtime &runtime,
                                                                       const la::Program &program) {
  std::string entry = selectedEntryName();
  if (entry.empty()) {
    llvm::SmallVector<std::string> names = program.entries();
    if (names.empty())
      return llvm::createStringError(inputFile + ": no public function to run");
    entry = names.front();
  }
  auto signature = runtime.signature(program, entry);
  if (!signature)
    return signature.takeError();
  return std::make_pair(entry, std::move(*signature));
}

int runTune() {
  auto options = makeRuntimeOptions();
  if (!options)
    return fail(options.takeError());
  // The program and its signature, read with the CPU runtime: a GPU target's runtime needs a device, and
  // `tune --target cuda` prunes its space before it says that measuring needs one.
  la::RuntimeOptions readerOptions = *options;
  readerOptions.target = la::RuntimeTarget::CPU;
  readerOptions.compile.target = mlir::la::PipelineTarget::CPU;
  auto runtime = la::Runtime::create(readerOptions);
  if (!runtime)
    return fail(runtime.takeError());
  auto source = programSource();
  if (!source)
    return fail(source.takeError());
  auto program = (*runtime)->loadSource(*source, inputFile);
  if (!program)
    return fail(program.takeError());
  auto selected = selectEntry(**runtime, **program);
  if (!selected)
    return fail(selected.takeError());
  auto madeInputs = makeInputs(**runtime, **program, selected->first, selected->second);
  if (!madeInputs)
    return fail(madeInputs.takeError());
  lac::TuneRequest request{*options,        pipelineFlags().given(), inputFile, *source,
                           selected->first, std::move(*madeInputs),  seed,      json};
  return lac::runTune(request);
}

int runRun() {
  auto madeOptions = makeRuntimeOptions();
  if (!madeOptions)
    return fail(madeOptions.takeError());
  la::RuntimeOptions options = std::move(*madeOptions);
  std::string database = tuningDb;
  if (database.empty())
    database = llvm::sys::Process::GetEnv("LA_TUNING_DB").value_or("");
  if (!database.empty()) {
    options.tuning = la::TuningMode::Lookup;
    options.tuningDatabase = database;
    options.pinnedOptions = pipelineFlags().given();
  }
  auto runtime = la::Runtime::create(options);
  if (!runtime)
    return fail(runtime.takeError());
  auto source = programSource();
  if (!source)
    return fail(source.takeError());
  auto program = (*runtime)->loadSource(*source, inputFile);
  if (!program)
    return fail(program.takeError());
  auto selected = selectEntry(**runtime, **program);
  if (!selected)
    return fail(selected.takeError());
  const std::string &entry = selected->first;
  const la::EntrySignature *signature = &selected->second;

  auto madeInputs = makeInputs(**runtime, **program, entry, *signature);
  if (!madeInputs)
    return fail(madeInputs.takeError());
  std::vector<la::HostTensor> inputTensors = std::move(*madeInputs);
  if (!outputs.empty() && outputs.size() != signature->results.size())
    return fail("'" + entry + "' has " + llvm::Twine(signature->results.size()) + " results but " +
                llvm::Twine(outputs.size()) + " --output files were given");

  std::vector<la::TensorRef> refs;
  for (la::HostTensor &tensor : inputTensors)
    refs.push_back(tensor.ref());
  la::CallStats stats;
  auto results = (*runtime)->run(**program, entry, refs, &stats);
  if (!results) {
    // The runtime counts arguments; say which file each one came from.
    std::string message = llvm::toString(results.takeError());
    if (!inputs.empty()) {
      message += "\n  (arguments:";
      for (auto [i, path] : llvm::enumerate(inputs))
        message += (i ? ", #" : " #") + std::to_string(i) + " = " + path;
      message += ")";
    }
    return fail(message);
  }

  // Wall time of each call; with --target cuda also the kernel's device time (CUDA events), which leaves out
  // the copies between host and device that a call on host tensors makes.
  std::vector<double> times, kernelTimes;
  if (repeat > 0) {
    std::vector<la::TensorRef> outRefs;
    for (la::HostTensor &tensor : *results)
      outRefs.push_back(tensor.ref());
    if (llvm::Error err = (*runtime)->call(**program, entry, refs, outRefs)) // warm-up
      return fail(std::move(err));
    for (unsigned r = 0; r < repeat; ++r) {
      la::CallStats repeatStats;
      auto start = std::chrono::steady_clock::now();
      if (llvm::Error err = (*runtime)->call(**program, entry, refs, outRefs, &repeatStats))
        return fail(std::move(err));
      times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      if (repeatStats.gpu && repeatStats.gpu->kernelMs)
        kernelTimes.push_back(*repeatStats.gpu->kernelMs);
    }
  }
  std::optional<la::NumericsReport> report;
  if (check) {
    std::vector<la::TensorRef> outRefs;
    for (la::HostTensor &tensor : *results)
      outRefs.push_back(tensor.ref());
    auto checked = (*runtime)->checkNumerics(**program, entry, refs, outRefs);
    if (!checked)
      return fail(checked.takeError());
    report = std::move(*checked);
  }
  for (auto [i, path] : llvm::enumerate(outputs))
    if (llvm::Error err = la::writeNpy(path, (*results)[i]))
      return fail("--output #" + llvm::Twine(i) + ": " + llvm::toString(std::move(err)));

  auto medianOf = [](std::vector<double> &values) {
    std::sort(values.begin(), values.end());
    return values.empty()      ? 0
           : values.size() % 2 ? values[values.size() / 2]
                               : (values[values.size() / 2 - 1] + values[values.size() / 2]) / 2;
  };
  double median = medianOf(times);
  double min = times.empty() ? 0 : times.front();
  unsigned usedThreads = (*runtime)->options().numThreads;
  // The least global traffic any kernel needs: every input read once and every output written once. The
  // emulator's count over it is the CUDA backend's traffic ratio (DESIGN.md, performance evidence).
  uint64_t minimumTraffic = 0;
  for (const la::HostTensor &tensor : llvm::concat<const la::HostTensor>(inputTensors, *results))
    minimumTraffic += tensor.spec().numBytes();
  double trafficRatio = 0;
  if (stats.gpu && stats.gpu->counters && minimumTraffic > 0)
    trafficRatio =
        double(stats.gpu->counters->globalBytesLoaded + stats.gpu->counters->globalBytesStored) / minimumTraffic;
  if (json) {
    llvm::json::Array outSpecs;
    for (const la::HostTensor &tensor : *results)
      outSpecs.push_back(tensor.spec().str());
    llvm::json::Object object{{"file", inputFile},
                              {"entry", entry},
                              {"compile_ms", stats.compileMs},
                              {"cache", la::cacheSourceName(stats.cache)},
                              {"config", stats.config},
                              {"tuned", stats.tuned},
                              {"repeat", static_cast<int64_t>(repeat)},
                              {"threads", static_cast<int64_t>(usedThreads)},
                              {"sequence_pieces", stats.sequencePieces},
                              {"sequence_threads_per_slice", stats.sequenceThreadsPerSlice},
                              {"slices_per_call", stats.slicesPerCall},
                              {"outputs", std::move(outSpecs)}};
    if (!times.empty()) {
      object["median_ms"] = median;
      object["min_ms"] = min;
    } else {
      object["median_ms"] = nullptr;
      object["min_ms"] = nullptr;
    }
    if (report)
      object["check"] = report->toJSON();
    if (!kernelTimes.empty())
      object["kernel_median_ms"] = medianOf(kernelTimes);
    if (stats.gpu) {
      llvm::json::Value gpu = stats.gpu->toJSON();
      if (stats.gpu->counters) {
        gpu.getAsObject()->insert({"min_global_bytes", minimumTraffic});
        gpu.getAsObject()->insert({"traffic_ratio", trafficRatio});
      }
      object["gpu"] = std::move(gpu);
    }
    llvm::outs() << llvm::json::Value(std::move(object)) << "\n";
    return report && !report->passed() ? failNumerics(*report) : 0;
  }
  llvm::outs() << entry << ": " << (*results).size() << " result(s)";
  for (const la::HostTensor &tensor : *results)
    llvm::outs() << " " << tensor.spec().str();
  llvm::outs() << llvm::formatv("; kernel {0} ({1:f1} ms)", la::cacheSourceName(stats.cache), stats.compileMs);
  if (stats.sequencePieces > 0 && stats.gpu)
    llvm::outs() << llvm::formatv("; sequence in {0} pieces, a block each", stats.sequencePieces);
  else if (stats.sequencePieces > 0)
    llvm::outs() << llvm::formatv("; sequence in {0} pieces, {1} thread{2} per slice", stats.sequencePieces,
                                  stats.sequenceThreadsPerSlice, stats.sequenceThreadsPerSlice == 1 ? "" : "s");
  llvm::outs() << "\n";
  if (stats.gpu) {
    const la::emu::Dim3 &grid = stats.gpu->grid;
    llvm::outs() << llvm::formatv("gpu: grid {0}x{1}x{2} ({3} blocks) of {4} threads", grid.x, grid.y, grid.z,
                                  grid.count(), stats.gpu->blockThreads);
    if (stats.gpu->launches > 1)
      llvm::outs() << llvm::formatv(" in the widest of {0} launches", stats.gpu->launches);
    if (const std::optional<la::emu::Counters> &counters = stats.gpu->counters)
      llvm::outs() << llvm::formatv("; emulator counted {0} global bytes, {1:f2}x the minimum {2} (inputs read "
                                    "once, outputs written once); {3} mma.sync, {4} FMA",
                                    counters->globalBytesLoaded + counters->globalBytesStored, trafficRatio,
                                    minimumTraffic, counters->mmaSync, counters->fma);
    llvm::outs() << "\n";
  }
  if (!times.empty())
    llvm::outs() << llvm::formatv("time over {0} runs, {1} threads: median {2:f3} ms, min {3:f3} ms\n", repeat,
                                  usedThreads, median, min);
  if (!kernelTimes.empty())
    llvm::outs() << llvm::formatv("device time of the kernel over {0} runs (CUDA events): median {1:f3} ms\n",
                                  kernelTimes.size(), medianOf(kernelTimes));
  if (report) {
    llvm::outs() << "check against the fp64 reference:\n";
    llvm::SmallVector<llvm::StringRef> lines;
    std::string text = report->str();
    llvm::StringRef(text).split(lines, '\n');
    for (llvm::StringRef line : lines)
      llvm::outs() << "  " << line << "\n";
    if (!report->passed())
      return failNumerics(*report);
  }
  return 0;
}

} // namespace

/// `lac signature`: each argument's index, `%name`, shape (`--shape` applied; -1 where still dynamic), dtype
/// and declared domain, then each result's. With every argument shape known, the result shapes are the
/// compiled kernel's (they may depend on the inputs'); otherwise the declared ones.
int runSignature() {
  auto shaped = shapeSelectedEntry();
  if (!shaped)
    return fail(shaped.takeError());
  const std::string &source = shaped->source;
  const la::EntryInfo &info = shaped->info;
  std::vector<la::TensorSpec> &arguments = shaped->arguments;
  std::vector<la::TensorSpec> results(info.signature.results.begin(), info.signature.results.end());
  bool allStatic = llvm::all_of(arguments, [](const la::TensorSpec &spec) { return spec.hasStaticShape(); });
  if (allStatic) {
    la::RuntimeOptions options;
    options.cacheDir = "none";
    auto runtime = la::Runtime::create(options);
    if (!runtime)
      return fail(runtime.takeError());
    auto program = (*runtime)->loadSource(source, inputFile);
    if (!program)
      return fail(program.takeError());
    auto specs = (*runtime)->resultSpecs(**program, info.name, arguments);
    if (!specs)
      return fail(specs.takeError());
    results.assign(specs->begin(), specs->end());
  }
  std::vector<std::string> names = la::entryArgumentNames(source, info.name);
  // json::Value keeps a StringRef without copying it: every string here is an owned std::string.
  auto describe = [&](size_t index, const la::TensorSpec &spec, const std::string &name,
                      const std::optional<la::ValueDomain> &domain) {
    llvm::json::Object object{{"index", static_cast<int64_t>(index)},
                              {"name", name},
                              {"shape", llvm::json::Array(spec.shape)},
                              {"dtype", la::dtypeName(spec.dtype).str()}};
    if (domain)
      object["domain"] = domain->describe(name);
    return object;
  };
  llvm::json::Array argumentArray, resultArray;
  for (auto [i, spec] : llvm::enumerate(arguments))
    argumentArray.push_back(
        describe(i, spec, i < names.size() ? names[i] : "arg" + std::to_string(i),
                 i < info.signature.argumentDomains.size() ? info.signature.argumentDomains[i] : std::nullopt));
  for (auto [i, spec] : llvm::enumerate(results))
    resultArray.push_back(describe(i, spec, "result" + std::to_string(i), std::nullopt));
  if (json) {
    llvm::outs() << llvm::formatv("{0}\n", llvm::json::Value(llvm::json::Object{{"entry", std::string(info.name)},
                                                                                {"arguments", std::move(argumentArray)},
                                                                                {"results", std::move(resultArray)}}));
    return 0;
  }
  auto print = [](llvm::StringRef title, const llvm::json::Array &array) {
    llvm::outs() << title << ":\n";
    for (const llvm::json::Value &value : array) {
      const llvm::json::Object &object = *value.getAsObject();
      std::vector<std::string> dims;
      for (const llvm::json::Value &size : *object.getArray("shape"))
        dims.push_back(*size.getAsInteger() < 0 ? "?" : std::to_string(*size.getAsInteger()));
      llvm::outs() << llvm::formatv("  #{0} {1}: {2}[{3}]", *object.getInteger("index"), *object.getString("name"),
                                    *object.getString("dtype"), llvm::join(dims, "x"));
      if (std::optional<llvm::StringRef> domain = object.getString("domain"))
        llvm::outs() << "  (" << *domain << ")";
      llvm::outs() << "\n";
    }
  };
  llvm::outs() << info.name << "\n";
  print("arguments", argumentArray);
  print("results", resultArray);
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  pipelineFlags(); // registers the flags before parsing
  cl::HideUnrelatedOptions({&commonCategory, &lac::gpuRunCategory(), &lac::tuneCategory()});
  cl::ParseCommandLineOptions(
      argc, argv,
      "lac: compile and run la kernels\n\n"
      "  lac compile FILE --emit=STAGE [--entry E] [--shape [ARG=]BxHxNxD]\n"
      "  lac run FILE [--entry E [--variant prefill|resume|state]] (--input A.npy ... | --random "
      "B,H,N,D) [--repeat N] [--check] [--tuning-db PATH]\n"
      "  lac tune FILE [--entry E [--variant prefill|resume|state]] (--input A.npy ... | --random B,H,N,D) [--strategy "
      "S] "
      "[--budget N] [--time SECONDS] [--db PATH|redis://HOST:PORT] [--log TRACE.jsonl] "
      "[--json]\n"
      "  lac tune-db export|import [FILE] --db PATH|redis://HOST:PORT\n"
      "  lac signature FILE [--entry E [--variant prefill|resume|state]] [--shape [ARG=]BxHxNxD ...] [--dtype T] "
      "[--json]\n"
      "  lac gpu-run FILE --kernel MODULE::FUNC --grid X,Y,Z --block X,Y,Z --arg A.npy ... "
      "[--out I=PATH.npy] [--seed N] [--json]\n");
  if (compileCommand)
    return runCompile();
  if (runCommand)
    return runRun();
  if (lac::tuneSubcommand())
    return runTune();
  if (signatureCommand)
    return runSignature();
  if (lac::tuneDbSubcommand())
    return lac::runTuneDb();
  if (lac::gpuRunSelected())
    return lac::runGpuRun();
  return fail("choose a subcommand: lac compile ..., lac run ..., lac tune ..., lac signature ... or lac gpu-run ... "
              "(see lac --help)");
}
