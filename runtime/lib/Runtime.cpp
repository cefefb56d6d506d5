//===- Runtime.cpp - JIT-compile, cache and run la kernels ----------------===//
//
// A call goes: memory cache (key = program hash, entry, argument types, options) → on a miss, check the
// arguments against the signature, decide the slice shape, disk cache (key = the same with slice shapes,
// host CPU and compiler version) → on a miss, compile. Each memory-cache slot compiles at most once however
// many threads ask for it at the same time. Slices (batch×head) run on a team of worker threads (ForkJoinTeam.h).
//
//===----------------------------------------------------------------------===//

#include "la/runtime/Runtime.h"

#include "CpuJit.h"
#include "CudaLauncher.h"
#include "DiskCache.h"
#include "ForkJoinTeam.h"
#include "GpuPiecesPlan.h"
#include "RedisClient.h"
#include "ReferenceRunner.h"
#include "RuntimeOnTeam.h"
#include "SequencePieces.h"
#include "SliceCall.h"
#include "la/runtime/Compiler.h"
#include "la/runtime/Tuner.h"
#include "la/runtime/TuningDatabase.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <atomic>
#include <chrono>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <shared_mutex>

namespace la {

llvm::StringRef cacheSourceName(CacheSource source) {
  switch (source) {
  case CacheSource::Memory:
    return "memory";
  case CacheSource::Disk:
    return "disk";
  case CacheSource::Remote:
    return "remote";
  case CacheSource::Miss:
    return "miss";
  }
  return "miss";
}

llvm::json::Value GpuLaunchStats::toJSON() const {
  llvm::json::Object object{
      {"grid", llvm::json::Array{grid.x, grid.y, grid.z}}, {"block", blockThreads}, {"launches", launches}};
  if (counters)
    object["counters"] = counters->toJSON();
  if (kernelMs)
    object["kernel_ms"] = *kernelMs;
  return object;
}

llvm::Expected<RuntimeTarget> parseRuntimeTarget(llvm::StringRef name) {
  if (name == "cpu")
    return RuntimeTarget::CPU;
  if (name == "cuda")
    return RuntimeTarget::CUDA;
  if (name == "cuda-emu")
    return RuntimeTarget::CUDAEmulator;
  return llvm::createStringError(llvm::formatv("'{0}' is not a runtime target (choose cpu; cuda, a GPU through the "
                                               "CUDA driver; or cuda-emu, the CUDA kernels on the GPU emulator)",
                                               name)
                                     .str());
}

Program::~Program() = default;
Runtime::~Runtime() = default;

llvm::Expected<llvm::SmallVector<HostTensor>> Runtime::run(const Program &program, llvm::StringRef entry,
                                                           llvm::ArrayRef<TensorRef> inputs, CallStats *stats) {
  llvm::SmallVector<TensorSpec> inputSpecs;
  for (const TensorRef &input : inputs)
    inputSpecs.push_back(input.spec);
  auto specs = resultSpecs(program, entry, inputSpecs, stats);
  if (!specs)
    return specs.takeError();
  llvm::SmallVector<HostTensor> outputs;
  llvm::SmallVector<TensorRef> refs;
  for (const TensorSpec &spec : *specs)
    outputs.emplace_back(spec);
  for (HostTensor &output : outputs)
    refs.push_back(output.ref());
  CallStats callStats;
  if (llvm::Error err = call(program, entry, inputs, refs, &callStats))
    return std::move(err);
  if (stats) {
    stats->numerics = std::move(callStats.numerics);
    stats->gpu = std::move(callStats.gpu);
    stats->codeHash = callStats.codeHash;
    stats->config = callStats.config;
    stats->tuned = callStats.tuned;
    stats->sequencePieces = callStats.sequencePieces;
    stats->sequenceThreadsPerSlice = callStats.sequenceThreadsPerSlice;
    stats->slicesPerCall = callStats.slicesPerCall;
    stats->compileMs += callStats.compileMs;
  }
  return std::move(outputs);
}

namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

class ProgramImpl : public Program {
public:
  ProgramImpl(std::string text, std::string programName, std::vector<EntryInfo> infos)
      : text(std::move(text)), programName(std::move(programName)), infos(std::move(infos)) {
    llvm::XXH128_hash_t hash = llvm::xxh3_128bits(llvm::arrayRefFromStringRef(this->text));
    hashText = llvm::formatv("{0:x-16}{1:x-16}", hash.high64, hash.low64).str();
  }

  llvm::SmallVector<std::string> entries() const override {
    return llvm::map_to_vector(infos, [](const EntryInfo &info) { return info.name; });
  }
  llvm::StringRef contentHash() const override { return hashText; }
  llvm::StringRef name() const override { return programName; }
  llvm::StringRef source() const override { return text; }

  const EntryInfo *lookup(llvm::StringRef entry) const {
    for (const EntryInfo &info : infos)
      if (info.name == entry)
        return &info;
    return nullptr;
  }
  llvm::Error unknownEntry(llvm::StringRef entry) const {
    std::string known;
    for (const EntryInfo &info : infos)
      known += (known.empty() ? "" : ", ") + info.name;
    return makeError(programName + ": no entry named '" + entry + "' (entries: " + known + ")");
  }

  std::string text;
  std::string programName;
  std::string hashText;
  std::vector<EntryInfo> infos;
};

/// One memory-cache entry; `mutex` serialises its compilation. `owner` is written once, under `mutex`;
/// `ready` publishes it to the lock-free fast path of later calls (a plain read of `owner` there would race
/// with the write of the thread still compiling).
struct KernelSlot {
  std::mutex mutex;
  std::unique_ptr<LoadedKernel> owner;
  std::atomic<LoadedKernel *> ready{nullptr};
  /// The configuration `owner` was compiled with, and whether a tuning record chose it (CallStats).
  std::string config;
  bool tuned = false;
};

/// Checks the inputs against the declared signature: count, dtype, rank, static dimensions, and equal
/// leading batch dimensions when the kernel is sliced.
llvm::Error checkInputs(const ProgramImpl &program, const EntryInfo &info, llvm::ArrayRef<TensorSpec> inputs,
                        const SliceLayout &slicing) {
  const auto &declared = info.signature.arguments;
  std::string where = (program.name() + ": entry '" + info.name + "'").str();
  size_t batchSource = slicing.firstSlicedArgument();
  if (inputs.size() != declared.size())
    return makeError(where + " takes " + llvm::Twine(declared.size()) + " arguments but " + llvm::Twine(inputs.size()) +
                     " were given");
  for (auto [i, input] : llvm::enumerate(inputs)) {
    const TensorSpec &want = declared[i];
    // f32 entries also take f16/bf16 tensors: they compute in f32 and return results in that half type.
    bool halfStorage = want.dtype == DType::F32 && (input.dtype == DType::F16 || input.dtype == DType::BF16);
    if (input.dtype != want.dtype && !halfStorage)
      return makeError(where + ": argument #" + llvm::Twine(i) + " has dtype " + dtypeName(input.dtype) +
                       " but the signature declares " + dtypeName(want.dtype));
    if (input.shape.size() != want.shape.size())
      return makeError(where + ": argument #" + llvm::Twine(i) + " has rank " + llvm::Twine(input.shape.size()) + " (" +
                       input.str() + ") but the signature declares rank " + llvm::Twine(want.shape.size()) + " (" +
                       want.str() + ")");
    for (auto [d, size] : llvm::enumerate(input.shape)) {
      if (size < 0)
        return makeError(where + ": argument #" + llvm::Twine(i) + " dimension " + llvm::Twine(d) +
                         " has negative size " + llvm::Twine(size));
      if (want.shape[d] >= 0 && want.shape[d] != size)
        return makeError(where + ": argument #" + llvm::Twine(i) + " dimension " + llvm::Twine(d) + " is " +
                         llvm::Twine(size) + " but the signature declares " + llvm::Twine(want.shape[d]));
      if (static_cast<int64_t>(d) < slicing.dims && !slicing.isShared(i) && size != inputs[batchSource].shape[d])
        return makeError(where + ": argument #" + llvm::Twine(i) + " dimension " + llvm::Twine(d) + " is " +
                         llvm::Twine(size) + " but argument #" + llvm::Twine(batchSource) + " has " +
                         llvm::Twine(inputs[batchSource].shape[d]) + " (batch dimensions must agree)");
    }
    // Byte offsets of the kernels are 64-bit: a shape whose byte size overflows them cannot be addressed.
    if (!input.checkedNumBytes())
      return makeError(where + ": argument #" + llvm::Twine(i) + " " + input.str() +
                       " has more bytes than a 64-bit offset can address");
  }
  return llvm::Error::success();
}

class RuntimeImpl : public Runtime {
public:
  /// `optionsText`: the compile options with the host resolved (getResolvedOptionsText); `driver`: the
  /// device of the cuda target, null for the others.
  RuntimeImpl(RuntimeOptions opts, std::string optionsText, cuda::Driver *driver,
              std::unique_ptr<TuningDatabase> tuningDatabase, std::shared_ptr<RedisClient> remoteCache,
              std::shared_ptr<ForkJoinTeam> team)
      : runtimeOptions(std::move(opts)), driver(driver), optionsText(std::move(optionsText)),
        disk(resolveCacheDirectory(runtimeOptions.cacheDir), std::move(remoteCache)),
        tuningDatabase(std::move(tuningDatabase)), team(std::move(team)), reference(runtimeOptions) {
    runtimeOptions.numThreads = resolvedThreadCount(runtimeOptions);
  }

  llvm::Expected<std::shared_ptr<Program>> loadFile(llvm::StringRef path) override {
    auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
    if (!buffer)
      return makeError(path + ": cannot read the file: " + buffer.getError().message());
    return loadSource((*buffer)->getBuffer(), path);
  }

  llvm::Expected<std::shared_ptr<Program>> loadSource(llvm::StringRef source, llvm::StringRef bufferName) override {
    auto infos = inspectProgram(source, bufferName);
    if (!infos)
      return infos.takeError();
    return std::make_shared<ProgramImpl>(source.str(), bufferName.str(), std::move(*infos));
  }

  llvm::Expected<std::shared_ptr<Program>> loadModule(mlir::ModuleOp module, llvm::StringRef name) override {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    return loadSource(text, name);
  }

  llvm::Expected<EntrySignature> signature(const Program &program, llvm::StringRef entry) override {
    const auto &impl = static_cast<const ProgramImpl &>(program);
    const EntryInfo *info = impl.lookup(entry);
    if (!info)
      return impl.unknownEntry(entry);
    return info->signature;
  }

  llvm::Expected<llvm::SmallVector<TensorSpec>> resultSpecs(const Program &program, llvm::StringRef entry,
                                                            llvm::ArrayRef<TensorSpec> inputs,
                                                            CallStats *stats) override {
    // A call that runs in pieces compiles no kernel for its own length, nor do its result specs.
    const auto &impl = static_cast<const ProgramImpl &>(program);
    if (std::optional<SequencePlan> plan = planSequenceCall(impl, entry, inputs)) {
      auto kernels = getPieceKernels(*plan, inputs, stats);
      if (kernels)
        return kernels->results;
      llvm::consumeError(kernels.takeError()); // as a call would, the kernel for the whole length answers
    }
    auto kernel = getKernel(impl, entry, inputs, stats);
    if (!kernel)
      return kernel.takeError();
    return fullResultSpecs((*kernel)->info(), inputs);
  }

  /// The kernel of `entry` for `inputs` (compiled or found in a cache), once `outputs` match what it produces:
  /// count, types, a data pointer each, and no output overlapping another tensor.
  llvm::Expected<LoadedKernel *> prepareCall(const Program &program, llvm::StringRef entry,
                                             llvm::ArrayRef<TensorRef> inputs, llvm::ArrayRef<TensorRef> outputs,
                                             CallStats *stats) {
    // Inline room for a state variant's arguments (Flow-Attention's resume takes 10): a decode step makes
    // this call every step, and a heap allocation is a noticeable part of it.
    llvm::SmallVector<TensorSpec, 16> inputSpecs;
    for (const TensorRef &input : inputs)
      inputSpecs.push_back(input.spec);
    auto kernel = getKernel(static_cast<const ProgramImpl &>(program), entry, inputSpecs, stats);
    if (!kernel)
      return kernel.takeError();
    const CompiledKernel &info = (*kernel)->info();
    if (outputs.size() != info.results.size())
      return makeError(program.name() + ": entry '" + entry + "' has " + llvm::Twine(info.results.size()) +
                       " results but " + llvm::Twine(outputs.size()) + " outputs were given");
    for (auto [i, output] : llvm::enumerate(outputs))
      if (!producesResult(info, inputSpecs, i, output.spec))
        return makeError(program.name() + ": entry '" + entry + "': output #" + llvm::Twine(i) + " is " +
                         output.spec.str() + " but the kernel produces " + fullResultSpecs(info, inputSpecs)[i].str());
    if (llvm::Error err = checkOutputBuffers(program, entry, inputs, outputs))
      return std::move(err);
    return *kernel;
  }

  /// Every tensor has a data pointer where it has bytes, and no output overlaps another tensor (kernels take
  /// their arguments as noalias).
  static llvm::Error checkOutputBuffers(const Program &program, llvm::StringRef entry, llvm::ArrayRef<TensorRef> inputs,
                                        llvm::ArrayRef<TensorRef> outputs) {
    // The bytes each tensor spans, computed once: a decode step checks every pair below on every call.
    struct Extent {
      const char *begin, *end;
    };
    llvm::SmallVector<Extent, 16> extents;
    for (const TensorRef &ref : llvm::concat<const TensorRef>(inputs, outputs)) {
      int64_t bytes = ref.spec.numBytes();
      if (!ref.data && bytes > 0)
        return makeError(program.name() + ": entry '" + entry + "': a tensor has no data pointer");
      extents.push_back({static_cast<const char *>(ref.data), static_cast<const char *>(ref.data) + bytes});
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      const Extent &output = extents[inputs.size() + i];
      if (output.begin == output.end)
        continue;
      for (auto [j, other] : llvm::enumerate(extents))
        if (j != inputs.size() + i && other.begin != other.end && output.begin < other.end && other.begin < output.end)
          return makeError(program.name() + ": entry '" + entry + "': output #" + llvm::Twine(i) +
                           " overlaps another argument; outputs need their own buffers");
    }
    return llvm::Error::success();
  }

  llvm::Error callOnDevice(const Program &program, llvm::StringRef entry, llvm::ArrayRef<TensorRef> inputs,
                           llvm::ArrayRef<TensorRef> outputs, void *stream, CallStats *stats) override {
    if (runtimeOptions.target != RuntimeTarget::CUDA)
      return makeError(program.name() + ": entry '" + entry +
                       "': callOnDevice takes device pointers, which only the cuda runtime target has");
    auto kernel = prepareCall(program, entry, inputs, outputs, stats);
    if (!kernel)
      return kernel.takeError();
    llvm::SmallVector<cuda::DevicePointer, 8> pointers;
    for (const TensorRef &ref : llvm::concat<const TensorRef>(inputs, outputs))
      pointers.push_back(reinterpret_cast<cuda::DevicePointer>(ref.data));
    if (llvm::Error err = launchCallOnDevice(static_cast<const ProgramImpl &>(program), entry, **kernel, inputs,
                                             pointers, stream, stats, /*timed=*/false))
      return makeError(program.name() + ": entry '" + entry + "' on " + driver->describe() + ": " +
                       llvm::toString(std::move(err)));
    return llvm::Error::success();
  }

  /// A call with the kernel compiled for its own shapes: on the emulator, the device, or this machine's
  /// threads a slice (or a block of slices) at a time.
  llvm::Error callWhole(const ProgramImpl &program, llvm::StringRef entry, llvm::ArrayRef<TensorRef> inputs,
                        llvm::ArrayRef<TensorRef> outputs, CallStats *stats) {
    auto kernel = prepareCall(program, entry, inputs, outputs, stats);
    if (!kernel)
      return kernel.takeError();
    if ((*kernel)->emulatedKernel()) {
      if (llvm::Error err = executeOnEmulatorInPieces(program, entry, **kernel, inputs, outputs, stats))
        return makeError(program.name() + ": entry '" + entry +
                         "' on the GPU emulator: " + llvm::toString(std::move(err)));
    } else if ((*kernel)->deviceKernel()) {
      if (llvm::Error err = executeOnDevice(program, entry, **kernel, inputs, outputs, stats))
        return makeError(program.name() + ": entry '" + entry + "' on " + driver->describe() + ": " +
                         llvm::toString(std::move(err)));
    } else {
      execute(**kernel, inputs, outputs);
      if (stats) {
        stats->sequencePieces = 0;
        stats->slicesPerCall = sliceBlockOf((*kernel)->info());
      }
    }
    return llvm::Error::success();
  }

  llvm::Error call(const Program &program, llvm::StringRef entry, llvm::ArrayRef<TensorRef> inputs,
                   llvm::ArrayRef<TensorRef> outputs, CallStats *stats) override {
    const auto &impl = static_cast<const ProgramImpl &>(program);
    auto pieced = callInPieces(impl, entry, inputs, outputs, stats);
    if (!pieced)
      return pieced.takeError();
    if (!*pieced) {
      if (llvm::Error err = callWhole(impl, entry, inputs, outputs, stats))
        return err;
    }
    if (!runtimeOptions.checkNumerics)
      return llvm::Error::success();
    auto report = checkNumerics(program, entry, inputs, outputs);
    if (!report)
      return report.takeError();
    bool passed = report->passed();
    std::string text = report->str();
    if (stats)
      stats->numerics = std::move(*report);
    if (!passed)
      return makeError(program.name() + ": entry '" + entry + "': numerics check failed:\n" + text);
    return llvm::Error::success();
  }

  llvm::Expected<std::string> emitCudaLauncher(const Program &program, llvm::StringRef entry,
                                               llvm::ArrayRef<TensorSpec> arguments, LauncherPart part) override {
    const auto &impl = static_cast<const ProgramImpl &>(program);
    const EntryInfo *info = impl.lookup(entry);
    if (!info)
      return impl.unknownEntry(entry);
    const CompileOptions &options = runtimeOptions.compile;
    if (options.target != mlir::la::PipelineTarget::CUDA)
      return makeError("an AOT C launcher is the CUDA target's; this runtime compiles for the " +
                       mlir::la::getTargetName(options.target) + " target");
    for (auto [i, spec] : llvm::enumerate(arguments))
      if (!spec.hasStaticShape())
        return makeError(program.name() + ": entry '" + entry + "': an AOT launcher needs static shapes, argument #" +
                         llvm::Twine(i) + " is " + spec.str());
    SliceLayout slicing = options.sliceBatchHeads ? info->slicing : SliceLayout();
    if (llvm::Error err = checkInputs(impl, *info, arguments, slicing))
      return std::move(err);
    auto results = inferResultSpecs(impl.source(), impl.name(), entry, arguments);
    if (!results)
      return results.takeError();
    auto pieces = planPiecesCall(impl, *info, slicing, arguments, *results);
    if (!pieces)
      return pieces.takeError();
    const std::optional<GpuPiecesPlan> &inPieces = **pieces;
    GpuPiecesPlan plan = inPieces ? *inPieces : planWholeCall(impl, entry, arguments, *results);
    std::vector<LauncherKernel> kernels;
    for (const PlanKernel &kernel : plan.kernels) {
      const auto &of = static_cast<const ProgramImpl &>(*kernel.program);
      const EntryInfo *kernelInfo = of.lookup(kernel.entry);
      if (!kernelInfo)
        return of.unknownEntry(kernel.entry);
      SliceLayout kernelSlicing = options.sliceBatchHeads ? kernelInfo->slicing : SliceLayout();
      if (kernelSlicing.dims > 0)
        kernelSlicing.pieces = kernel.slicePieces;
      auto compiled = compileKernel(of.source(), of.name(), kernel.entry,
                                    sliceArguments(kernel.arguments, kernelSlicing), options, kernelSlicing);
      if (!compiled)
        return compiled.takeError();
      auto image = buildDeviceImage(*compiled, options, /*assemble=*/part == LauncherPart::Source);
      if (!image)
        return image.takeError();
      kernels.push_back({std::move(*image), kernelSlicing});
    }
    auto launcher = describeLauncher(entry, slicing, arguments, *results, plan, kernels);
    if (!launcher)
      return launcher.takeError();
    return part == LauncherPart::Header ? mlir::la::emitAotHeader(*launcher, options.arch)
                                        : mlir::la::emitAotSource(*launcher, options.arch);
  }

  llvm::Expected<NumericsReport> checkNumerics(const Program &program, llvm::StringRef entry,
                                               llvm::ArrayRef<TensorRef> inputs,
                                               llvm::ArrayRef<TensorRef> outputs) override {
    auto references = reference.run(program, entry, inputs);
    if (!references)
      return references.takeError();
    if (references->size() != outputs.size())
      return makeError(program.name() + ": entry '" + entry + "' has " + llvm::Twine(references->size()) +
                       " results but " + llvm::Twine(outputs.size()) + " outputs were given to check");
    NumericsReport report;
    // Inputs outside their declared domains first, so that a failure is not blamed on the kernel.
    if (const EntryInfo *info = static_cast<const ProgramImpl &>(program).lookup(entry))
      for (auto [i, domain] : llvm::enumerate(info->signature.argumentDomains))
        if (domain && i < inputs.size())
          if (std::optional<DomainViolation> violation = checkDomain(i, inputs[i], *domain))
            report.inputs.push_back(std::move(*violation));
    for (auto [i, output] : llvm::enumerate(outputs)) {
      HostTensor &expected = (*references)[i];
      if (output.spec.shape != expected.spec().shape)
        return makeError(program.name() + ": entry '" + entry + "': output #" + llvm::Twine(i) + " is " +
                         output.spec.str() + " but the reference produces " + expected.spec().str());
      report.outputs.push_back(compareWithReference(i, output, expected.ref(), leastPreciseDType(inputs)));
    }
    return report;
  }

  const RuntimeOptions &options() const override { return runtimeOptions; }

private:
  /// Size `d` of result `index` of the whole call: a leading (sliced) dimension comes from the first sliced
  /// input, the others from the kernel's own result.
  static int64_t fullResultSize(const CompiledKernel &kernel, llvm::ArrayRef<TensorSpec> inputs, size_t index,
                                int64_t d) {
    if (d < kernel.slicing.dims)
      return inputs[kernel.slicing.firstSlicedArgument()].shape[d];
    return kernel.results[index].shape[d];
  }

  /// Whether `output` is the spec of result `index` for `inputs`: fullResultSpecs without building them,
  /// since every call checks its outputs.
  static bool producesResult(const CompiledKernel &kernel, llvm::ArrayRef<TensorSpec> inputs, size_t index,
                             const TensorSpec &output) {
    const TensorSpec &result = kernel.results[index];
    if (output.dtype != result.dtype || output.shape.size() != result.shape.size())
      return false;
    for (auto [d, size] : llvm::enumerate(output.shape))
      if (size != fullResultSize(kernel, inputs, index, d))
        return false;
    return true;
  }

  /// Result specs of the whole call (fullResultSize).
  static llvm::SmallVector<TensorSpec> fullResultSpecs(const CompiledKernel &kernel,
                                                       llvm::ArrayRef<TensorSpec> inputs) {
    llvm::SmallVector<TensorSpec> specs(kernel.results.begin(), kernel.results.end());
    for (auto [index, spec] : llvm::enumerate(specs))
      for (auto [d, size] : llvm::enumerate(spec.shape))
        size = fullResultSize(kernel, inputs, index, d);
    return specs;
  }

  /// The memory cache's key of `entry` of `program` for `inputs` (and whether calls run blocks of slices):
  /// the program's content hash, the entry, then each input's dtype, rank and sizes as raw bytes. Built on
  /// the stack without formatting a number, since a decode step looks its kernel up on every call.
  static void memoryKey(const ProgramImpl &program, llvm::StringRef entry, llvm::ArrayRef<TensorSpec> inputs,
                        bool sliceBlocks, llvm::SmallVectorImpl<char> &key, int64_t slicePieces = 1) {
    auto appendRaw = [&](auto value) {
      key.append(reinterpret_cast<const char *>(&value), reinterpret_cast<const char *>(&value) + sizeof(value));
    };
    key.clear();
    llvm::StringRef hash = program.contentHash();
    key.append(hash.begin(), hash.end());
    key.push_back('/');
    key.append(entry.begin(), entry.end());
    key.push_back('\0');
    appendRaw(sliceBlocks);
    appendRaw(slicePieces);
    for (const TensorSpec &spec : inputs) {
      appendRaw(spec.dtype);
      appendRaw(spec.shape.size());
      for (int64_t size : spec.shape)
        appendRaw(size);
    }
  }

  /// The kernel of `entry` for `inputs`, from memory, the disk cache or the compiler. `sliceBlocks` lets a
  /// call of small slices run a block of them per kernel call (chooseSliceBlock); a caller that runs the
  /// kernel slice by slice itself (a sequence-parallel call's pieces) asks for one slice per call.
  /// `slicePieces` > 1 compiles for a GPU call in that many pieces per slice (SliceLayout::pieces).
  llvm::Expected<LoadedKernel *> getKernel(const ProgramImpl &program, llvm::StringRef entry,
                                           llvm::ArrayRef<TensorSpec> inputs, CallStats *stats, bool sliceBlocks = true,
                                           int64_t slicePieces = 1) {
    // Timed only for the caller's statistics: a decode step's lookups go without the clock.
    auto start = stats ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    llvm::SmallString<256> key;
    memoryKey(program, entry, inputs, sliceBlocks, key, slicePieces);
    std::shared_ptr<KernelSlot> slot;
    {
      std::shared_lock lock(memoryMutex);
      auto it = memory.find(key);
      if (it != memory.end())
        slot = it->second;
    }
    if (LoadedKernel *kernel = slot ? slot->ready.load(std::memory_order_acquire) : nullptr) {
      if (stats) {
        stats->cache = CacheSource::Memory;
        stats->codeHash = kernel->codeHash;
        stats->config = slot->config;
        stats->tuned = slot->tuned;
        stats->compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      }
      return kernel;
    }
    if (!slot) {
      std::unique_lock lock(memoryMutex);
      std::shared_ptr<KernelSlot> &entrySlot = memory[key];
      if (!entrySlot)
        entrySlot = std::make_shared<KernelSlot>();
      slot = entrySlot;
    }
    std::lock_guard compileLock(slot->mutex);
    CacheSource source = CacheSource::Memory;
    if (!slot->owner) {
      auto loaded = compileOrLoad(program, entry, inputs, source, *slot, sliceBlocks, slicePieces);
      if (!loaded)
        return loaded.takeError();
      slot->owner = std::move(*loaded);
      slot->ready.store(slot->owner.get(), std::memory_order_release);
    }
    if (stats) {
      stats->cache = source;
      stats->codeHash = slot->owner->codeHash;
      stats->config = slot->config;
      stats->tuned = slot->tuned;
      stats->compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    }
    return slot->owner.get();
  }

  /// The options a kernel for `inputs` compiles with: the database's record for its key where there is one
  /// (the pinned options kept), else the runtime's. A database that cannot be read is warned about once.
  CompileOptions chooseOptions(const ProgramImpl &program, llvm::StringRef entry, llvm::ArrayRef<TensorSpec> inputs,
                               KernelSlot &slot) {
    const CompileOptions &own = runtimeOptions.compile;
    if (!tuningDatabase)
      return own;
    TuningKey key = makeTuningKey(program.contentHash(), entry, inputs, runtimeOptions.numThreads,
                                  getTargetFingerprint(own.target, own), getCompilerVersion());
    auto record = tuningDatabase->lookup(key);
    if (!record) {
      reportTuningProblem(record.takeError());
      return own;
    }
    if (!*record && runtimeOptions.tuning == TuningMode::TuneOnMiss &&
        runtimeOptions.target != RuntimeTarget::CUDAEmulator)
      *record = tuneNow(program, entry, inputs, key);
    if (!*record)
      return own;
    auto config = mlir::la::PipelineConfig::parse((*record)->config);
    if (!config) {
      reportTuningProblem(config.takeError());
      return own;
    }
    CompileOptions tuned = own;
    static_cast<mlir::la::PipelineConfig &>(tuned) = *config;
    for (const std::string &name : runtimeOptions.pinnedOptions)
      if (llvm::Error err = tuned.set(name, own.get(name)))
        reportTuningProblem(std::move(err));
    slot.tuned = true;
    return tuned;
  }

  /// TuneOnMiss: tunes the kernel of `key` now on seeded random inputs, stores the record and returns it;
  /// nothing where another process holds the key's lease or the search fails (warned once).
  std::optional<TuningRecord> tuneNow(const ProgramImpl &program, llvm::StringRef entry,
                                      llvm::ArrayRef<TensorSpec> inputs, const TuningKey &key) {
    const OnMissTuning &limits = runtimeOptions.onMiss;
    auto attempt = tuningDatabase->lease(key, describeThisProcess(), limits.seconds * 2 + 60);
    if (!attempt) {
      reportTuningProblem(attempt.takeError());
      return std::nullopt;
    }
    if (!attempt->lease)
      return std::nullopt;
    const CompileOptions &own = runtimeOptions.compile;
    auto space = mlir::la::TuningSpace::build(own, own.target, tuningSizes(inputs), runtimeOptions.pinnedOptions);
    if (!space) {
      reportTuningProblem(space.takeError());
      return std::nullopt;
    }
    // The inputs `lac run --random` would make (seed 0): the caller's tensors are not at hand, nor touched.
    std::mt19937_64 generator(0);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    std::vector<HostTensor> tensors;
    std::vector<TensorRef> refs;
    for (const TensorSpec &spec : inputs) {
      HostTensor &tensor = tensors.emplace_back(spec);
      for (int64_t i = 0; i < tensor.numElements(); ++i)
        tensor.set(i, uniform(generator));
    }
    for (HostTensor &tensor : tensors)
      refs.push_back(tensor.ref());
    RuntimeOptions tunerRuntime = runtimeOptions;
    tunerRuntime.tuning = TuningMode::Off;
    TunerOptions options;
    options.strategy = SearchStrategy::Anneal;
    options.budget = limits.budget;
    options.timeLimitSeconds = limits.seconds;
    options.measureMs = limits.measureMs;
    auto result = tune(tunerRuntime, program.source(), program.name(), entry, refs, *space, options);
    if (!result) {
      reportTuningProblem(result.takeError());
      return std::nullopt;
    }
    TuningRecord record = makeTuningRecord(key, *result, options, llvm::json::Object{{"tool", "tune-on-miss"}});
    if (llvm::Error err = tuningDatabase->store(record))
      reportTuningProblem(std::move(err));
    return record;
  }

  void reportTuningProblem(llvm::Error err) {
    std::string message = llvm::toString(std::move(err));
    std::call_once(tuningWarning, [&] {
      llvm::errs() << "la: warning: tuning database " << tuningDatabase->describe() << ": " << message
                   << "; compiling with the runtime's options\n";
    });
  }

  llvm::Expected<std::unique_ptr<LoadedKernel>> compileOrLoad(const ProgramImpl &program, llvm::StringRef entry,
                                                              llvm::ArrayRef<TensorSpec> inputs, CacheSource &source,
                                                              KernelSlot &slot, bool sliceBlocks, int64_t slicePieces) {
    const EntryInfo *info = program.lookup(entry);
    if (!info)
      return program.unknownEntry(entry);
    SliceLayout slicing = runtimeOptions.compile.sliceBatchHeads ? info->slicing : SliceLayout();
    if (slicing.dims > 0)
      slicing.pieces = slicePieces;
    if (llvm::Error err = checkInputs(program, *info, inputs, slicing))
      return std::move(err);
    // A zero-size batch has no slice to compile for; compile the unsliced kernel instead.
    for (int64_t d = 0; d < slicing.dims; ++d)
      if (inputs[slicing.firstSlicedArgument()].shape[d] == 0)
        slicing = SliceLayout();

    std::vector<TensorSpec> compiledArgs =
        sliceArguments(inputs, slicing, sliceBlocks ? chooseSliceBlock(inputs, slicing) : 1);
    CompileOptions compile = chooseOptions(program, entry, inputs, slot);
    slot.config = compile.str(compile.target);
    std::string resolvedOptions = optionsText;
    if (slot.tuned) {
      auto resolved = getResolvedOptionsText(compile);
      if (!resolved)
        return resolved.takeError();
      resolvedOptions = std::move(*resolved);
    }

    std::string diskKey = diskCacheKey(program, entry, compiledArgs, slicing, resolvedOptions);
    if (std::optional<CompiledKernel> cached = disk.load(diskKey)) {
      // An entry that passed its checksum but does not link (written by a different LLVM under the same
      // version string, say) is discarded like a corrupt one and compiled afresh.
      auto loaded = load(std::move(*cached), diskKey);
      if (loaded) {
        source = CacheSource::Disk;
        return loaded;
      }
      llvm::consumeError(loaded.takeError());
      disk.discard(diskKey);
    } else if (std::optional<CompiledKernel> shared = loadRemote(diskKey)) {
      auto loaded = load(std::move(*shared), diskKey);
      if (loaded) {
        source = CacheSource::Remote;
        return loaded;
      }
      llvm::consumeError(loaded.takeError());
      disk.discard(diskKey);
    }
    source = CacheSource::Miss;
    auto fresh = compileKernel(program.source(), program.name(), entry, compiledArgs, compile, slicing);
    if (!fresh)
      return fresh.takeError();
    if (llvm::Error err = disk.store(diskKey, *fresh))
      reportDiskCacheProblem(std::move(err));
    return load(std::move(*fresh), diskKey);
  }

  llvm::Expected<std::unique_ptr<LoadedKernel>> load(CompiledKernel kernel, llvm::StringRef diskKey) {
    uint64_t codeHash =
        llvm::xxh3_64bits(llvm::arrayRefFromStringRef(llvm::StringRef(kernel.object.data(), kernel.object.size())));
    llvm::Expected<std::unique_ptr<LoadedKernel>> loaded =
        runtimeOptions.target == RuntimeTarget::CUDAEmulator ? LoadedKernel::loadOnEmulator(std::move(kernel))
        : runtimeOptions.target == RuntimeTarget::CUDA       ? loadOnDevice(std::move(kernel), diskKey)
                                                             : LoadedKernel::load(std::move(kernel));
    if (loaded)
      (*loaded)->codeHash = codeHash;
    return loaded;
  }

  /// The cubin has its own disk-cache entry beside the `gpu` stage's (its key: the stage's, whose options
  /// carry the architecture, plus "cubin"), so a process that finds both skips ptxas (100-300 ms a kernel).
  /// A cached cubin the driver rejects is discarded and assembled afresh.
  llvm::Expected<std::unique_ptr<LoadedKernel>> loadOnDevice(CompiledKernel kernel, llvm::StringRef diskKey) {
    std::string cubinKey = (diskKey + "\ncubin").str();
    std::vector<char> cubin;
    std::optional<CompiledKernel> cached = disk.load(cubinKey);
    if (!cached)
      cached = loadRemote(cubinKey);
    if (cached) {
      CompiledKernel stage = kernel;
      auto loaded = LoadedKernel::loadOnDevice(std::move(stage), *driver, runtimeOptions.compile, cached->object);
      if (loaded)
        return loaded;
      llvm::consumeError(loaded.takeError());
      disk.discard(cubinKey);
    }
    auto loaded = LoadedKernel::loadOnDevice(std::move(kernel), *driver, runtimeOptions.compile, cubin);
    if (!loaded)
      return loaded.takeError();
    // The entry's metadata is the kernel's (the loaded kernel keeps it, without the stage text).
    CompiledKernel assembled = (*loaded)->info();
    assembled.object = std::move(cubin);
    if (llvm::Error err = disk.store(cubinKey, assembled))
      reportDiskCacheProblem(std::move(err));
    return loaded;
  }

  /// The remote cache's entry for `key` after a local miss; a remote that fails is warned about (once).
  std::optional<CompiledKernel> loadRemote(llvm::StringRef key) {
    auto shared = disk.loadRemote(key);
    if (!shared) {
      reportDiskCacheProblem(shared.takeError());
      return std::nullopt;
    }
    return std::move(*shared);
  }

  /// A cache that cannot be written is not fatal: warn once and keep compiling in memory.
  void reportDiskCacheProblem(llvm::Error err) {
    std::string message = llvm::toString(std::move(err));
    std::call_once(diskWarning,
                   [&] { llvm::errs() << "la: warning: " << message << "; continuing with the memory cache only\n"; });
  }

  /// Everything the object code of a disk-cache entry depends on, as JSON (llvm::json prints object keys
  /// sorted, so the text is canonical). The options text carries the target CPU and its features.
  std::string diskCacheKey(const ProgramImpl &program, llvm::StringRef entry, llvm::ArrayRef<TensorSpec> arguments,
                           const SliceLayout &slicing, llvm::StringRef resolvedOptions) const {
    llvm::json::Array argumentTypes;
    for (const TensorSpec &spec : arguments)
      argumentTypes.push_back(spec.str());
    llvm::json::Object key{{"program", program.contentHash()},
                           {"entry", entry},
                           {"arguments", std::move(argumentTypes)},
                           {"slicedDims", slicing.dims},
                           {"options", resolvedOptions},
                           {"compiler", getCompilerVersion()}};
    // Only where some argument is shared, so the keys of every other kernel stay as they were.
    if (llvm::is_contained(slicing.sharedArguments, true))
      key["sharedArguments"] = llvm::json::Array(std::vector<bool>(slicing.sharedArguments));
    if (slicing.pieces != 1)
      key["slicePieces"] = slicing.pieces;
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::json::Value(std::move(key));
    return text;
  }

  /// Runs a CUDA kernel on the emulator: one block per slice, block (x, y) = (head, batch); its scratch
  /// buffer (temporaries, CUDATarget.h) allocated here. A finding of the emulator (a race, an out-of-bounds
  /// access, a divergent barrier) fails the call.
  llvm::Error executeOnEmulator(const LoadedKernel &kernel, llvm::ArrayRef<TensorRef> inputs,
                                llvm::ArrayRef<TensorRef> outputs, CallStats *stats) {
    const CompiledKernel &info = kernel.info();
    const EmulatedKernel &gpu = *kernel.emulatedKernel();
    emu::LaunchConfig config;
    config.grid = sliceGrid(info, inputs);
    if (config.grid.count() == 0)
      return llvm::Error::success();
    if (!gpu.blockSize)
      return makeError("kernel '" + gpu.name + "' declares no block size");
    config.block = *gpu.blockSize;
    llvm::SmallVector<void *, 8> pointers;
    for (const TensorRef &ref : llvm::concat<const TensorRef>(inputs, outputs))
      pointers.push_back(ref.data);
    // calloc, not a vector: a scratch larger than the machine (gau's [T, T] scores per block at a long T)
    // is an error for the caller, not LLVM's out-of-memory abort.
    std::unique_ptr<void, decltype(&std::free)> scratch(nullptr, &std::free);
    if (gpu.arguments.size() == pointers.size() + 1) {
      uint64_t perBlock = gpu.arguments.back().sliceBytes, blocks = config.grid.count();
      double totalGiB = double(perBlock) * double(blocks) / double(1ull << 30);
      if (totalGiB < 1e6) // far beyond any machine; also keeps the product below 2^64
        scratch.reset(std::calloc(perBlock * blocks, 1));
      if (!scratch)
        return makeError(llvm::formatv("kernel '{0}' needs {1:f1} GiB of global scratch for its temporaries ({2} "
                                       "bytes per block × {3} blocks), more than this machine can allocate; "
                                       "`lac compile --emit=gpu` shows them (the views of its last argument)",
                                       gpu.name, totalGiB, perBlock, blocks)
                             .str());
      pointers.push_back(scratch.get());
    }
    if (gpu.arguments.size() != pointers.size())
      return makeError("kernel '" + gpu.name + "' takes " + llvm::Twine(gpu.arguments.size()) + " arguments, not " +
                       llvm::Twine(pointers.size()));
    llvm::SmallVector<void *, 8> arguments;
    for (void *&pointer : pointers)
      arguments.push_back(&pointer);
    auto report = kernel.emulatedProgram()->launch(gpu, arguments, config);
    if (!report)
      return report.takeError();
    if (stats)
      stats->gpu = GpuLaunchStats{config.grid, static_cast<unsigned>(config.block.count()), report->counters};
    return report->takeError();
  }

  /// Where a GPU call's launches run and their memory lives: the emulator on host memory, or a device.
  struct GpuPlace {
    /// `bytes` of memory there, f32s all `fill` (states: every state is f32), released once the call is over.
    llvm::function_ref<llvm::Expected<void *>(size_t bytes, float fill)> allocate;
    /// Launches `kernel` over tensors whose data is there.
    llvm::function_ref<llvm::Error(const LoadedKernel &kernel, llvm::ArrayRef<TensorRef> inputs,
                                   llvm::ArrayRef<TensorRef> outputs)>
        launch;
  };

  /// Runs a call of a causal entry whose states combine piece by piece as launches over pieces of its
  /// sequence (GpuPiecesPlan.h), every tensor where `place` keeps it: every kernel compiled, then every
  /// buffer allocated, before the first launch. Returns the pieces per slice, or 0 where the call does not
  /// qualify and nothing ran.
  llvm::Expected<int64_t> executePiecesOnGpu(const ProgramImpl &program, llvm::StringRef entry,
                                             const LoadedKernel &whole, llvm::ArrayRef<TensorRef> inputs,
                                             llvm::ArrayRef<TensorRef> outputs, const GpuPlace &place,
                                             CallStats *stats) {
    const EntryInfo *declared = program.lookup(entry);
    if (!declared)
      return 0;
    auto planned = planPiecesCall(program, *declared, whole.info().slicing, specsOf(inputs), specsOf(outputs));
    if (!planned)
      return planned.takeError();
    const std::optional<GpuPiecesPlan> &plan = **planned;
    if (!plan)
      return 0;
    llvm::SmallVector<LoadedKernel *, 8> kernels;
    for (const PlanKernel &kernel : plan->kernels) {
      CallStats own;
      // The piece kernels read a slice's position along H as their coordinate / pieces (SliceLayout::pieces).
      auto loaded = getKernel(static_cast<const ProgramImpl &>(*kernel.program), kernel.entry, kernel.arguments, &own,
                              /*sliceBlocks=*/true, kernel.slicePieces);
      if (!loaded)
        return loaded.takeError();
      if (stats)
        stats->compileMs += own.compileMs;
      kernels.push_back(*loaded);
    }
    llvm::SmallVector<void *, 16> buffers;
    for (const PlanBuffer &buffer : plan->buffers) {
      auto memory = place.allocate(buffer.spec.numBytes(), buffer.fill);
      if (!memory)
        return memory.takeError();
      buffers.push_back(*memory);
    }
    auto resolve = [&](llvm::ArrayRef<PlanTensor> tensors) {
      llvm::SmallVector<TensorRef, 8> refs;
      for (const PlanTensor &tensor : tensors) {
        void *data = tensor.place == PlanTensor::Place::Input    ? inputs[tensor.index].data
                     : tensor.place == PlanTensor::Place::Output ? outputs[tensor.index].data
                                                                 : buffers[tensor.index];
        refs.push_back({data, tensor.spec});
      }
      return refs;
    };
    for (const PlanLaunch &launch : plan->launches)
      if (llvm::Error err = place.launch(*kernels[launch.kernel], resolve(launch.inputs), resolve(launch.outputs)))
        return std::move(err);
    return plan->pieces.count;
  }

  /// The plan of a GPU call of `declared` in pieces (planGpuPiecesCall), from the runtime's cached variants
  /// and `piece_prefix` programs; none where the call runs whole. Planned once per program, entry and
  /// shapes: planning specialises the variants to learn the states' shapes, milliseconds a GPU call should
  /// not pay each time.
  llvm::Expected<std::shared_ptr<const std::optional<GpuPiecesPlan>>>
  planPiecesCall(const ProgramImpl &program, const EntryInfo &declared, const SliceLayout &slicing,
                 llvm::ArrayRef<TensorSpec> inputs, llvm::ArrayRef<TensorSpec> outputs) {
    std::string key = (program.contentHash() + "/" + declared.name + "/" + llvm::Twine(slicing.dims)).str();
    for (const TensorSpec &spec : llvm::concat<const TensorSpec>(inputs, outputs))
      key += "/" + spec.str();
    {
      std::lock_guard lock(sequenceMutex);
      if (auto it = piecesPlans.find(key); it != piecesPlans.end())
        return it->second;
    }
    auto variantsOf = [&](llvm::StringRef base) { return getSequenceVariants(program, base); };
    auto prefixProgram = [&](llvm::StringRef source) -> llvm::Expected<const Program *> {
      return getPiecePrefixProgram(source);
    };
    auto plan = planGpuPiecesCall(declared, slicing, inputs, outputs, runtimeOptions.compile.sequencePieceLength,
                                  PiecesPlanSources{variantsOf, prefixProgram});
    if (!plan)
      return plan.takeError();
    auto shared = std::make_shared<const std::optional<GpuPiecesPlan>>(std::move(*plan));
    std::lock_guard lock(sequenceMutex);
    return piecesPlans.try_emplace(key, std::move(shared)).first->second;
  }

  /// The `piece_prefix` program of `source` (piecePrefixSource), parsed once per runtime.
  llvm::Expected<const ProgramImpl *> getPiecePrefixProgram(llvm::StringRef source) {
    std::lock_guard lock(sequenceMutex);
    auto it = piecePrefixPrograms.find(source.str());
    if (it == piecePrefixPrograms.end()) {
      auto loaded = loadSource(source, "piece_prefix.mlir");
      if (!loaded)
        return loaded.takeError();
      it = piecePrefixPrograms.try_emplace(source.str(), std::move(*loaded)).first;
    }
    return static_cast<const ProgramImpl *>(it->second.get());
  }

  /// executeOnEmulator, through pieces of the sequence where the call allows it (executePiecesOnGpu), with
  /// the launches' counters summed and the widest launch's grid in `stats`.
  llvm::Error executeOnEmulatorInPieces(const ProgramImpl &program, llvm::StringRef entry, const LoadedKernel &kernel,
                                        llvm::ArrayRef<TensorRef> inputs, llvm::ArrayRef<TensorRef> outputs,
                                        CallStats *stats) {
    std::vector<std::unique_ptr<char[]>> memory;
    auto allocate = [&](size_t bytes, float fill) -> llvm::Expected<void *> {
      memory.push_back(std::make_unique<char[]>(std::max<size_t>(bytes, 1)));
      std::fill_n(reinterpret_cast<float *>(memory.back().get()), bytes / sizeof(float), fill);
      return memory.back().get();
    };
    std::optional<GpuLaunchStats> summed;
    unsigned launches = 0;
    auto launch = [&](const LoadedKernel &piece, llvm::ArrayRef<TensorRef> in,
                      llvm::ArrayRef<TensorRef> out) -> llvm::Error {
      CallStats one;
      if (llvm::Error err = executeOnEmulator(piece, in, out, &one))
        return err;
      ++launches;
      if (!summed || one.gpu->grid.count() >= summed->grid.count()) {
        std::optional<emu::Counters> before = summed ? summed->counters : std::nullopt;
        summed = one.gpu;
        if (before)
          *summed->counters += *before;
      } else {
        *summed->counters += *one.gpu->counters;
      }
      return llvm::Error::success();
    };
    auto pieces = executePiecesOnGpu(program, entry, kernel, inputs, outputs, GpuPlace{allocate, launch}, stats);
    if (!pieces)
      return pieces.takeError();
    if (*pieces == 0)
      return executeOnEmulator(kernel, inputs, outputs, stats);
    if (stats) {
      stats->gpu = summed;
      stats->gpu->launches = launches;
      stats->sequencePieces = *pieces;
    }
    return llvm::Error::success();
  }

  /// The grid of a CUDA kernel: (heads, batches) blocks for a [B, H, ...] entry, (batches, 1) for [B, ...].
  static emu::Dim3 sliceGrid(const CompiledKernel &info, llvm::ArrayRef<TensorRef> inputs) {
    auto size = [&](int64_t d) {
      return static_cast<uint32_t>(inputs[info.slicing.firstSlicedArgument()].spec.shape[d]);
    };
    if (info.slicing.dims == 2)
      return {size(1), size(0), 1};
    if (info.slicing.dims == 1)
      return {size(0), 1, 1};
    return {1, 1, 1};
  }

  /// Launches a device kernel on `stream` over tensors already on the device (`pointers`: inputs, then
  /// outputs), with its scratch allocated and freed in stream order around the launch. `timed`: measure the
  /// launch's device time into `stats` with CUDA events, which waits for it.
  llvm::Error launchOnDevice(const LoadedKernel &kernel, llvm::ArrayRef<TensorRef> inputs,
                             llvm::ArrayRef<cuda::DevicePointer> pointers, cuda::Stream stream, CallStats *stats,
                             bool timed) {
    const DeviceKernel &device = *kernel.deviceKernel();
    emu::Dim3 grid = sliceGrid(kernel.info(), inputs);
    if (stats)
      stats->gpu = GpuLaunchStats{grid, device.blockSize, std::nullopt};
    if (grid.count() == 0)
      return llvm::Error::success();
    llvm::SmallVector<cuda::DevicePointer, 8> arguments(pointers.begin(), pointers.end());
    if (device.scratchBytesPerSlice > 0) {
      auto scratch = driver->allocate(size_t(device.scratchBytesPerSlice) * grid.count(), stream);
      if (!scratch)
        return makeError(llvm::formatv("the kernel's scratch for its temporaries ({0} bytes per block × {1} "
                                       "blocks; `lac compile --emit=gpu` shows them) cannot be allocated: {2}",
                                       device.scratchBytesPerSlice, grid.count(), llvm::toString(scratch.takeError()))
                             .str());
      arguments.push_back(*scratch);
    }
    llvm::SmallVector<void *, 8> parameters;
    for (cuda::DevicePointer &argument : arguments)
      parameters.push_back(&argument);
    auto launch = [&] {
      return device.module->launch({grid.x, grid.y, grid.z}, {device.blockSize, 1, 1}, stream, parameters);
    };
    llvm::Error launched = llvm::Error::success();
    if (timed && stats) {
      auto milliseconds = driver->timeOnStream(stream, launch);
      if (milliseconds)
        stats->gpu->kernelMs = *milliseconds;
      launched = milliseconds.takeError();
    } else {
      launched = launch();
    }
    if (device.scratchBytesPerSlice > 0)
      launched = llvm::joinErrors(std::move(launched), driver->release(arguments.back(), stream));
    return launched;
  }

  /// launchOnDevice for a whole call, through pieces of the sequence where the call allows it
  /// (executePiecesOnGpu): their states in device memory allocated and released in stream order, and with
  /// `timed` the device time of the launches, summed.
  llvm::Error launchCallOnDevice(const ProgramImpl &program, llvm::StringRef entry, const LoadedKernel &kernel,
                                 llvm::ArrayRef<TensorRef> inputs, llvm::ArrayRef<cuda::DevicePointer> pointers,
                                 cuda::Stream stream, CallStats *stats, bool timed) {
    llvm::SmallVector<TensorRef, 8> onDevice;
    for (auto [i, pointer] : llvm::enumerate(pointers))
      onDevice.push_back({reinterpret_cast<void *>(pointer), i < inputs.size() ? inputs[i].spec : TensorSpec()});
    llvm::ArrayRef<TensorRef> deviceInputs = llvm::ArrayRef(onDevice).take_front(inputs.size());
    llvm::SmallVector<TensorRef, 4> deviceOutputs(llvm::drop_begin(onDevice, inputs.size()));
    for (auto [output, spec] : llvm::zip(deviceOutputs, fullResultSpecs(kernel.info(), specsOf(inputs))))
      output.spec = spec;
    std::vector<cuda::DevicePointer> allocated;
    auto allocate = [&](size_t bytes, float fill) -> llvm::Expected<void *> {
      bytes = std::max<size_t>(bytes, 1);
      auto memory = driver->allocate(bytes, stream);
      if (!memory)
        return memory.takeError();
      allocated.push_back(*memory);
      std::vector<float> filled((bytes + sizeof(float) - 1) / sizeof(float), fill);
      if (llvm::Error err = driver->copyToDevice(*memory, filled.data(), bytes, stream))
        return std::move(err);
      return reinterpret_cast<void *>(*memory);
    };
    unsigned launches = 0;
    std::optional<GpuLaunchStats> widest;
    // Timed, each launch waits for its end event: the device time is the sum over the launches.
    std::optional<double> milliseconds;
    auto launch = [&](const LoadedKernel &piece, llvm::ArrayRef<TensorRef> in,
                      llvm::ArrayRef<TensorRef> out) -> llvm::Error {
      llvm::SmallVector<cuda::DevicePointer, 8> arguments;
      for (const TensorRef &ref : llvm::concat<const TensorRef>(in, out))
        arguments.push_back(reinterpret_cast<cuda::DevicePointer>(ref.data));
      CallStats one;
      if (llvm::Error err = launchOnDevice(piece, in, arguments, stream, &one, timed))
        return err;
      ++launches;
      if (one.gpu->kernelMs)
        milliseconds = milliseconds.value_or(0) + *one.gpu->kernelMs;
      if (!widest || one.gpu->grid.count() >= widest->grid.count())
        widest = one.gpu;
      return llvm::Error::success();
    };
    int64_t pieces = 0;
    auto run = [&]() -> llvm::Error {
      auto ran =
          executePiecesOnGpu(program, entry, kernel, deviceInputs, deviceOutputs, GpuPlace{allocate, launch}, stats);
      if (!ran)
        return ran.takeError();
      pieces = *ran;
      return pieces > 0 ? llvm::Error::success() : launch(kernel, deviceInputs, deviceOutputs);
    };
    llvm::Error ran = run();
    for (cuda::DevicePointer pointer : allocated)
      ran = llvm::joinErrors(std::move(ran), driver->release(pointer, stream));
    if (stats && widest) {
      stats->gpu = widest;
      stats->gpu->launches = launches;
      stats->gpu->kernelMs = milliseconds;
      stats->sequencePieces = pieces;
    }
    return ran;
  }

  static llvm::SmallVector<TensorSpec, 8> specsOf(llvm::ArrayRef<TensorRef> refs) {
    llvm::SmallVector<TensorSpec, 8> specs;
    for (const TensorRef &ref : refs)
      specs.push_back(ref.spec);
    return specs;
  }

  /// Runs a device kernel on host tensors: copies in, launches, copies out, on the default stream.
  llvm::Error executeOnDevice(const ProgramImpl &program, llvm::StringRef entry, const LoadedKernel &kernel,
                              llvm::ArrayRef<TensorRef> inputs, llvm::ArrayRef<TensorRef> outputs, CallStats *stats) {
    cuda::Stream stream = nullptr;
    llvm::SmallVector<cuda::DevicePointer, 8> pointers;
    auto releaseAll = [&](llvm::Error err) {
      for (cuda::DevicePointer pointer : pointers)
        err = llvm::joinErrors(std::move(err), driver->release(pointer, stream));
      return llvm::joinErrors(std::move(err), driver->synchronize(stream));
    };
    for (const TensorRef &ref : llvm::concat<const TensorRef>(inputs, outputs)) {
      // One byte for an empty tensor: the kernel gets a valid address it never reads.
      auto pointer = driver->allocate(std::max<size_t>(ref.spec.numBytes(), 1), stream);
      if (!pointer)
        return releaseAll(pointer.takeError());
      pointers.push_back(*pointer);
    }
    for (auto [ref, pointer] : llvm::zip(inputs, pointers))
      if (llvm::Error err = driver->copyToDevice(pointer, ref.data, ref.spec.numBytes(), stream))
        return releaseAll(std::move(err));
    if (llvm::Error err = launchCallOnDevice(program, entry, kernel, inputs, pointers, stream, stats, /*timed=*/true))
      return releaseAll(std::move(err));
    for (auto [ref, pointer] : llvm::zip(outputs, llvm::drop_begin(pointers, inputs.size())))
      if (llvm::Error err = driver->copyToHost(ref.data, pointer, ref.spec.numBytes(), stream))
        return releaseAll(std::move(err));
    return releaseAll(llvm::Error::success());
  }

  /// Slices of at most this many argument bytes are grouped into blocks (chooseSliceBlock).
  static constexpr int64_t kSliceBlockBytes = 128 << 10;

  /// How many consecutive heads one kernel call runs (a divisor of H): 1, unless a slice is small enough
  /// that a call's fixed cost (its descriptors, the kernel's scratch allocations) weighs. A decode step's
  /// slice is a few KiB of state, and calls of one slice each spent more in that cost than in the step
  /// (la-decode-bench's K=V=4 column: 23 against 5.6 µs for Flow at B = 8). A block's arguments stay within
  /// kSliceBlockBytes. Only heads are grouped, and the block follows from the shapes alone: the code a
  /// sequence runs through (and its rounding) does not change with the batch, which a server varies from call
  /// to call, nor with the thread count. CPU only: a GPU grid has a block per slice.
  int64_t chooseSliceBlock(llvm::ArrayRef<TensorSpec> inputs, const SliceLayout &slicing) const {
    if (runtimeOptions.target != RuntimeTarget::CPU || slicing.dims != 2)
      return 1;
    int64_t sliceBytes = 0;
    for (const TensorSpec &spec : sliceArguments(inputs, slicing))
      sliceBytes += static_cast<int64_t>(spec.numBytes());
    int64_t heads = inputs[slicing.firstSlicedArgument()].shape[1];
    int64_t block = 1;
    for (int64_t size = 2; size <= heads && size * sliceBytes <= kSliceBlockBytes; ++size)
      if (heads % size == 0)
        block = size;
    return block;
  }

  /// The slices one call of `info` runs (chooseSliceBlock): the size its kernel was compiled for along the
  /// last sliced dimension.
  static int64_t sliceBlockOf(const CompiledKernel &info) {
    if (info.slicing.dims == 0)
      return 1;
    return info.arguments[info.slicing.firstSlicedArgument()].shape[info.slicing.dims - 1];
  }

  /// Runs every slice of a call, a block of them per kernel call, spread over the team in contiguous ranges
  /// (one per thread).
  void execute(const LoadedKernel &kernel, llvm::ArrayRef<TensorRef> inputs, llvm::ArrayRef<TensorRef> outputs) {
    const CompiledKernel &info = kernel.info();
    int64_t block = sliceBlockOf(info);
    int64_t numCalls = countSlices(info, inputs) / block;
    if (numCalls == 0)
      return;
    llvm::ArrayRef<int64_t> batchShape = inputs[info.slicing.firstSlicedArgument()].spec.shape;
    // Bytes from one call's block of each tensor to the next (none for an argument every slice reads whole),
    // once per call: a decode step's slices do little else than find their data.
    llvm::SmallVector<size_t, 8> argumentStrides, resultStrides;
    for (size_t i = 0; i < inputs.size(); ++i)
      argumentStrides.push_back(info.slicing.isShared(i) ? 0 : info.arguments[i].numBytes());
    for (const TensorSpec &result : info.results)
      resultStrides.push_back(result.numBytes());
    auto runRange = [&](int64_t begin, int64_t end) {
      SliceCall call(kernel);
      llvm::SmallVector<char *, 8> arguments(inputs.size()), results(outputs.size());
      // The coordinates of each call's first slice.
      llvm::SmallVector<int64_t, 2> coordinates(info.slicing.dims);
      getSliceCoordinates(batchShape, begin * block, coordinates);
      for (int64_t c = begin; c < end; ++c, nextSliceCoordinates(batchShape, coordinates, block)) {
        for (auto [i, ref] : llvm::enumerate(inputs))
          arguments[i] = static_cast<char *>(ref.data) + static_cast<size_t>(c) * argumentStrides[i];
        for (auto [i, ref] : llvm::enumerate(outputs))
          results[i] = static_cast<char *>(ref.data) + static_cast<size_t>(c) * resultStrides[i];
        call(arguments, results, coordinates);
      }
    };

    int64_t parts = std::min<int64_t>(runtimeOptions.numThreads, numCalls);
    // A call that finds the team busy with another host thread's call runs its slices on its own thread.
    if (parts <= 1 || !team ||
        !team->tryRun(parts, [&](unsigned p) { runRange(numCalls * p / parts, numCalls * (p + 1) / parts); }))
      runRange(0, numCalls);
  }

  /// The variants of `entry`, derived on first use; null where it has none (it is not causal).
  std::shared_ptr<const SequenceVariants> getSequenceVariants(const ProgramImpl &program, llvm::StringRef entry) {
    // On the stack: every call of a long enough causal entry looks its variants up.
    llvm::SmallString<128> key(program.contentHash());
    key += "/";
    key += entry;
    {
      std::lock_guard lock(sequenceMutex);
      if (auto it = sequenceVariants.find(key); it != sequenceVariants.end())
        return it->second;
    }
    // Not causal (the usual case: nothing to split) or not derivable: calls run the sequence whole.
    std::shared_ptr<SequenceVariants> variants;
    // Block-masked entries (FLASH's) too: a GPU call cuts them in whole blocks; a CPU call runs them whole.
    std::optional<SequenceStates> states =
        llvm::expectedToOptional(getSequenceStates(program.source(), program.name(), entry, kAnyBlockAlignment));
    // A program that declares the variants already (la::Decoder's, `lac --variant`'s) is their program.
    bool declared = program.lookup((entry + ".prefill").str()) && program.lookup((entry + ".resume").str()) &&
                    program.lookup((entry + ".state").str());
    std::optional<std::string> source =
        !states ? std::nullopt
        : declared
            ? std::optional<std::string>(program.source().str())
            : llvm::expectedToOptional(withStateVariants(program.source(), program.name(), entry, states->alignment));
    std::optional<std::shared_ptr<Program>> loaded =
        source ? llvm::expectedToOptional(loadSource(*source, program.name())) : std::nullopt;
    if (loaded) {
      variants = std::make_shared<SequenceVariants>();
      variants->program = std::move(*loaded);
      variants->entry = entry.str();
      variants->prefill = (entry + ".prefill").str();
      variants->resume = (entry + ".resume").str();
      variants->state = (entry + ".state").str();
      variants->sequenceDim = states->dimension;
      variants->additiveStates = states->additive;
      variants->combinableStates = states->combinable;
      variants->alignment = states->alignment;
      variants->combines = states->combines;
      variants->levels = states->levels;
      auto &variantProgram = static_cast<const ProgramImpl &>(*variants->program);
      int levels = states->levels.empty() ? 1 : *llvm::max_element(states->levels);
      for (int level = 1; levels > 1 && level <= levels; ++level)
        variants->levelStates.push_back(variants->state + "." + std::to_string(level));
      if (!llvm::all_of(variants->levelStates, [&](const std::string &name) { return variantProgram.lookup(name); }))
        variants->levelStates.clear();
      variants->numArguments = program.lookup(entry)->signature.arguments.size();
      variants->numResults = program.lookup(entry)->signature.results.size();
    }
    std::lock_guard lock(sequenceMutex);
    return sequenceVariants.try_emplace(key, std::move(variants)).first->second;
  }

  /// A CPU call of a causal entry, or of its prefill or resume variant, that runs on pieces of its sequence
  /// whose lengths come from a fixed set (SequencePieces.h): the kernels it compiles are those pieces', never
  /// one for the call's own length, so a later call of another length finds most or all of them compiled.
  struct SequencePlan {
    std::shared_ptr<const SequenceVariants> variants;
    /// The call's entry is the prefill (its results end with the states after the last position) or the
    /// resume variant (its arguments end with the states before the first) of `variants`' entry.
    bool prefill = false, resume = false;
    SliceLayout slicing;
    int64_t numSlices = 0;
    SequencePieces pieces;
    bool twoThreadsPerSlice = false;
    /// Per argument of the entry's own: whether it runs along the sequence.
    llvm::SmallVector<bool, 8> alongSequence;

    /// Specs of the entry's own arguments for a piece of `positions`, then `states`.
    llvm::SmallVector<TensorSpec, 8> pieceSpecs(llvm::ArrayRef<TensorSpec> arguments, int64_t positions,
                                                llvm::ArrayRef<TensorSpec> states = {}) const {
      llvm::SmallVector<TensorSpec, 8> specs(arguments.take_front(variants->numArguments));
      for (auto [spec, along] : llvm::zip(specs, alongSequence))
        if (along)
          spec.shape[variants->sequenceDim] = positions;
      specs.append(states.begin(), states.end());
      return specs;
    }
  };

  /// Below this many positions a call compiles for its own length: a decode step's (and the few lengths
  /// below it) keep their kernels, which run blocks of heads per call.
  static constexpr int64_t kMinPiecesLength = 64;

  /// How `entry` of `program` runs on `inputs` as pieces, or nothing where it does not (another target, a
  /// short or non-causal call, a shape the tuning database has its own configuration for, ...).
  std::optional<SequencePlan> planSequenceCall(const ProgramImpl &program, llvm::StringRef entry,
                                               llvm::ArrayRef<TensorSpec> inputs) {
    if (!runtimeOptions.splitSequences || runtimeOptions.target != RuntimeTarget::CPU ||
        !runtimeOptions.compile.sliceBatchHeads)
      return std::nullopt;
    // A decode step has nothing to cut: it returns here, before any lookup, which keeps it cheap.
    int64_t longest = 0;
    for (const TensorSpec &spec : inputs)
      for (int64_t size : spec.shape)
        longest = std::max(longest, size);
    if (longest < kMinPiecesLength)
      return std::nullopt;
    const EntryInfo *info = program.lookup(entry);
    if (!info || info->slicing.dims == 0 || llvm::is_contained(info->slicing.sharedArguments, true))
      return std::nullopt;
    SequencePlan plan;
    plan.prefill = info->variantKind == "prefill";
    plan.resume = info->variantKind == "resume";
    if (!info->variantKind.empty() && !plan.prefill && !plan.resume)
      return std::nullopt;
    plan.variants = getSequenceVariants(program, info->variantKind.empty() ? entry : info->variantOf);
    // The pieces' lengths (longestPieceWithin) do not keep to blocks: a block-masked entry runs whole.
    if (!plan.variants || plan.variants->alignment > 1 || plan.variants->sequenceDim != info->slicing.dims ||
        inputs.size() != plan.variants->numArguments + (plan.resume ? plan.variants->numStates() : 0))
      return std::nullopt;
    // Every argument runs along the sequence where it has the dimension (SPEC §8), with the same length.
    int64_t seq = plan.variants->sequenceDim, length = -1;
    for (const TensorSpec &spec : inputs.take_front(plan.variants->numArguments)) {
      bool along = static_cast<int64_t>(spec.shape.size()) > seq;
      plan.alongSequence.push_back(along);
      if (along && length >= 0 && spec.shape[seq] != length)
        return std::nullopt;
      if (along)
        length = spec.shape[seq];
    }
    if (length < kMinPiecesLength || hasTuningRecord(program, entry, inputs))
      return std::nullopt;
    plan.slicing = info->slicing;
    plan.numSlices = 1;
    for (int64_t d = 0; d < plan.slicing.dims; ++d)
      plan.numSlices *= inputs[plan.slicing.firstSlicedArgument()].shape[d];
    if (plan.numSlices == 0)
      return std::nullopt;
    // Two threads on each slice where the slices leave threads idle; else one thread per slice.
    std::optional<SequencePieces> pieces;
    if (team && 2 * plan.numSlices <= static_cast<int64_t>(runtimeOptions.numThreads))
      pieces = planSequencePieces(length, kMinParallelPieceLength);
    plan.twoThreadsPerSlice = pieces.has_value();
    plan.pieces = pieces ? *pieces : planSerialPieces(length, kMinSerialPieceLength, kMinSerialPiecesLength);
    return plan;
  }

  /// Whether the tuning database has a configuration for this very call: a tuned shape keeps the
  /// whole-sequence kernel it was tuned as. Each shape is looked up once.
  bool hasTuningRecord(const ProgramImpl &program, llvm::StringRef entry, llvm::ArrayRef<TensorSpec> inputs) {
    if (!tuningDatabase)
      return false;
    llvm::SmallString<256> key;
    memoryKey(program, entry, inputs, /*sliceBlocks=*/true, key);
    {
      std::lock_guard lock(sequenceMutex);
      if (auto it = tunedShapes.find(key); it != tunedShapes.end())
        return it->second;
    }
    const CompileOptions &own = runtimeOptions.compile;
    auto record = tuningDatabase->lookup(makeTuningKey(program.contentHash(), entry, inputs, runtimeOptions.numThreads,
                                                       getTargetFingerprint(own.target, own), getCompilerVersion()));
    bool found = record && record->has_value();
    if (!record)
      reportTuningProblem(record.takeError());
    std::lock_guard lock(sequenceMutex);
    return tunedShapes.try_emplace(key, found).first->second;
  }

  /// The kernels of a planned call, compiled or from a cache: per piece the one that writes its outputs
  /// (prefill on the first piece unless the call brings the states before it, else resume) and, where a runner
  /// may compute its state alone, the state variant. Their statistics go to `stats` (the worst cache source,
  /// the compile times summed, the first piece kernel's hash and configuration).
  struct PieceKernels {
    std::vector<LoadedKernel *> withOutputs, stateOnly;
    /// The call's result specs: the first piece's, with the call's length along the sequence.
    llvm::SmallVector<TensorSpec> results;
  };
  llvm::Expected<PieceKernels> getPieceKernels(const SequencePlan &plan, llvm::ArrayRef<TensorSpec> inputs,
                                               CallStats *stats) {
    const SequenceVariants &variants = *plan.variants;
    auto &impl = static_cast<const ProgramImpl &>(*variants.program);
    bool first = true;
    auto get = [&](const std::string &name, llvm::ArrayRef<TensorSpec> specs) {
      CallStats own;
      auto kernel = getKernel(impl, name, specs, &own, /*sliceBlocks=*/false);
      if (kernel && stats) {
        stats->compileMs = (first ? 0 : stats->compileMs) + own.compileMs;
        stats->cache = first ? own.cache : std::max(stats->cache, own.cache);
        if (first) {
          stats->codeHash = own.codeHash;
          stats->config = own.config;
          stats->tuned = own.tuned;
        }
      }
      first = false;
      return kernel;
    };
    PieceKernels kernels;
    const SequencePieces &pieces = plan.pieces;
    int64_t count = pieces.count();
    kernels.withOutputs.resize(count);
    kernels.stateOnly.resize(count);
    // The first piece starts from the caller's states (whose types may differ from those the pieces hand on:
    // a bf16 entry's, where every state the derivation returns is f32) or from the initial state.
    llvm::ArrayRef<TensorSpec> initial =
        plan.resume ? inputs.drop_front(variants.numArguments) : llvm::ArrayRef<TensorSpec>();
    llvm::SmallVector<TensorSpec, 8> firstSpecs = plan.pieceSpecs(inputs, pieces.size(0), initial);
    // A whole-entry call in one piece hands no state on: the entry itself, which computes none.
    bool entryAlone = !plan.prefill && !plan.resume && count == 1;
    auto firstKernel = get(entryAlone ? variants.entry : plan.resume ? variants.resume : variants.prefill, firstSpecs);
    if (!firstKernel)
      return firstKernel.takeError();
    kernels.withOutputs[0] = *firstKernel;
    kernels.results = fullResultSpecs((*firstKernel)->info(), firstSpecs);
    llvm::SmallVector<TensorSpec, 4> handedOn(kernels.results.begin() + variants.numResults, kernels.results.end());
    for (TensorSpec &spec : llvm::MutableArrayRef<TensorSpec>(kernels.results).take_front(variants.numResults))
      spec.shape[variants.sequenceDim] = pieces.length;
    if (!plan.prefill && !plan.resume)
      kernels.results.resize(variants.numResults);

    llvm::SmallDenseMap<int64_t, LoadedKernel *, 16> resumes, states;
    for (int64_t piece = 0; piece < count; ++piece) {
      int64_t size = pieces.size(piece);
      // Kernels by size; the first piece's own where it reads the caller's states.
      bool fromCaller = piece == 0 && plan.resume;
      llvm::SmallVector<TensorSpec, 8> specs = plan.pieceSpecs(inputs, size, fromCaller ? initial : handedOn);
      auto lookup = [&](llvm::SmallDenseMap<int64_t, LoadedKernel *, 16> &bySize,
                        const std::string &name) -> llvm::Expected<LoadedKernel *> {
        if (fromCaller)
          return get(name, specs);
        if (LoadedKernel *known = bySize.lookup(size))
          return known;
        auto kernel = get(name, specs);
        if (kernel)
          bySize[size] = *kernel;
        return kernel;
      };
      if (!kernels.withOutputs[piece]) {
        auto resume = lookup(resumes, variants.resume);
        if (!resume)
          return resume.takeError();
        kernels.withOutputs[piece] = *resume;
      }
      // The last piece is only ever run with its outputs.
      if (plan.twoThreadsPerSlice && piece + 1 < count) {
        auto state = lookup(states, variants.state);
        if (!state)
          return state.takeError();
        kernels.stateOnly[piece] = *state;
      }
    }
    return kernels;
  }

  /// Runs a CPU call as planned (planSequenceCall): returns false where it does not qualify and nothing ran.
  llvm::Expected<bool> callInPieces(const ProgramImpl &program, llvm::StringRef entry, llvm::ArrayRef<TensorRef> inputs,
                                    llvm::ArrayRef<TensorRef> outputs, CallStats *stats) {
    llvm::SmallVector<TensorSpec, 16> inputSpecs;
    for (const TensorRef &input : inputs)
      inputSpecs.push_back(input.spec);
    std::optional<SequencePlan> plan = planSequenceCall(program, entry, inputSpecs);
    if (!plan)
      return false;
    auto kernels = getPieceKernels(*plan, inputSpecs, stats);
    // A piece kernel that fails to compile is the compiler's bug, not the caller's: the call still runs, on
    // the kernel for its whole length, and says why once.
    if (!kernels) {
      std::string message = llvm::toString(kernels.takeError());
      std::call_once(piecesWarning, [&] {
        llvm::WithColor::warning(llvm::errs(), "la")
            << program.name() << ": entry '" << entry << "': " << message << "; running the sequence whole\n";
      });
      return false;
    }
    llvm::ArrayRef<TensorSpec> results = kernels->results;
    if (outputs.size() != results.size())
      return makeError(program.name() + ": entry '" + entry + "' has " + llvm::Twine(results.size()) + " results but " +
                       llvm::Twine(outputs.size()) + " outputs were given");
    for (auto [i, output, result] : llvm::enumerate(outputs, results))
      if (!(output.spec == result))
        return makeError(program.name() + ": entry '" + entry + "': output #" + llvm::Twine(i) + " is " +
                         output.spec.str() + " but the kernel produces " + result.str());
    if (llvm::Error err = checkOutputBuffers(program, entry, inputs, outputs))
      return std::move(err);
    const SequenceVariants &variants = *plan->variants;
    size_t numArguments = variants.numArguments, numResults = variants.numResults;
    SequenceCall call{&*plan,
                      *kernels,
                      inputs.take_front(numArguments),
                      outputs.take_front(numResults),
                      plan->resume ? inputs.drop_front(numArguments) : llvm::ArrayRef<TensorRef>(),
                      plan->prefill || plan->resume ? outputs.drop_front(numResults) : llvm::ArrayRef<TensorRef>()};
    bool ran = runSequencePieces(call);
    // A busy team (another host thread's call on it): one thread per slice, on this thread where the team
    // is still busy.
    if (!ran) {
      SequencePlan alone = *plan;
      alone.twoThreadsPerSlice = false;
      call.plan = &alone;
      runSequencePieces(call);
    }
    if (stats) {
      stats->sequencePieces = plan->pieces.count();
      stats->sequenceThreadsPerSlice = ran && plan->twoThreadsPerSlice ? 2 : 1;
      stats->slicesPerCall = 1;
    }
    return true;
  }

  /// A planned call's tensors: the entry's own arguments and results, the states before its first position
  /// (a resume call's; empty: the compiler's initial state) and where those after its last go (a prefill or
  /// resume call's; empty: dropped).
  struct SequenceCall {
    const SequencePlan *plan;
    const PieceKernels &kernels;
    llvm::ArrayRef<TensorRef> inputs, outputs, initialStates, finalStates;
  };

  /// Runs `call`'s pieces: with two threads per slice (SequencePieces.h, PieceHandoff), or each slice's pieces
  /// in order on one thread, the slices spread over the team (or run on the calling thread where it is busy).
  /// Returns false where a two-thread call found the team busy and nothing ran.
  bool runSequencePieces(SequenceCall &call) {
    const SequencePlan &plan = *call.plan;
    const SequencePieces &pieces = plan.pieces;
    const SequenceVariants &variants = *plan.variants;
    int64_t numSlices = plan.numSlices, length = pieces.length;
    // Per slice, the sets of states of PieceWork's slots and a zero one (SPEC §8: sums start from zero).
    const CompiledKernel &firstInfo = call.kernels.withOutputs[0]->info();
    llvm::ArrayRef<TensorSpec> statesAfter =
        llvm::ArrayRef<TensorSpec>(firstInfo.results).drop_front(variants.numResults);
    llvm::SmallVector<size_t, 4> stateOffsets;
    size_t setBytes = 0;
    for (const TensorSpec &spec : statesAfter) {
      stateOffsets.push_back(setBytes);
      setBytes += (spec.numBytes() + 63) / 64 * 64;
    }
    // Two threads on a slice share its sets, zeroed (the zero set, and the padding addStates adds). A thread
    // alone on its slices needs the front's two slots only, written before they are read: a buffer of its
    // own, reused from slice to slice and call to call, so it stays in cache (zeroing a set per slot and slice
    // cost simple GLA at D = 128, 32 slices of 64 KiB states, 12 MiB of memset a call: 10% at N = 1000).
    constexpr int kZeroSet = PieceWork::kSlots, kSets = PieceWork::kSlots + 1;
    std::vector<char> sharedSets(plan.twoThreadsPerSlice ? static_cast<size_t>(numSlices) * kSets * setBytes : 0, 0);
    auto setsOf = [&](int64_t slice) -> char * {
      if (plan.twoThreadsPerSlice)
        return sharedSets.data() + static_cast<size_t>(slice) * kSets * setBytes;
      thread_local std::vector<char> own;
      if (own.size() < 2 * setBytes)
        own.resize(2 * setBytes);
      return own.data();
    };
    auto slotIn = [&](char *sets, int slot) { return sets + (slot < 0 ? kZeroSet : slot) * setBytes; };
    // A tensor's bytes per slice, and per position for those along the sequence.
    auto pieceOf = [&](const TensorRef &ref, bool along, int64_t slice, int64_t piece) {
      size_t sliceBytes = ref.spec.numBytes() / numSlices;
      size_t offset = along ? static_cast<size_t>(pieces.begin(piece)) * (sliceBytes / length) : 0;
      return static_cast<char *>(ref.data) + static_cast<size_t>(slice) * sliceBytes + offset;
    };
    // Slot -1, the state before the first piece: the caller's where it brings one, else the zero set.
    auto statesAt = [&](int64_t slice, char *sets, int slot, llvm::SmallVectorImpl<char *> &into) {
      if (slot == PieceWork::kInitialSlot && !call.initialStates.empty()) {
        for (const TensorRef &state : call.initialStates)
          into.push_back(pieceOf(state, /*along=*/false, slice, 0));
        return;
      }
      char *set = slotIn(sets, slot);
      for (size_t offset : stateOffsets)
        into.push_back(set + offset);
    };
    // States the runner may sum from a later start and add (f32, as the derivation keeps every state).
    bool additive = plan.twoThreadsPerSlice && variants.additiveStates &&
                    llvm::all_of(statesAfter, [](const TensorSpec &spec) { return spec.dtype == DType::F32; });
    size_t setFloats = setBytes / sizeof(float);

    llvm::ArrayRef<int64_t> batchShape = call.inputs[plan.slicing.firstSlicedArgument()].spec.shape;
    int64_t count = pieces.count();
    std::vector<std::unique_ptr<PieceHandoff>> handoffs;
    for (int64_t slice = 0; slice < numSlices; ++slice)
      handoffs.push_back(std::make_unique<PieceHandoff>(count, additive));
    enum class Role { Front, Runner, Alone };
    auto runSlice = [&](int64_t slice, Role role) {
      // A call object per kernel, made when the slice first runs it.
      llvm::SmallDenseMap<LoadedKernel *, std::unique_ptr<SliceCall>, 8> calls;
      auto callOf = [&](LoadedKernel *kernel) -> SliceCall & {
        std::unique_ptr<SliceCall> &made = calls[kernel];
        if (!made)
          made = std::make_unique<SliceCall>(*kernel);
        return *made;
      };
      llvm::SmallVector<int64_t, 2> coordinates(plan.slicing.dims);
      getSliceCoordinates(batchShape, slice, coordinates);
      char *sets = setsOf(slice);
      llvm::SmallVector<char *, 8> arguments, results;
      auto pieceInputs = [&](int64_t piece) {
        arguments.clear();
        for (auto [input, along] : llvm::zip(call.inputs, plan.alongSequence))
          arguments.push_back(pieceOf(input, along, slice, piece));
      };
      auto withOutputs = [&](int64_t piece, int from, int to) {
        pieceInputs(piece);
        bool prefill = from == PieceWork::kInitialSlot && call.initialStates.empty();
        if (!prefill)
          statesAt(slice, sets, from, arguments);
        results.clear();
        for (const TensorRef &output : call.outputs)
          results.push_back(pieceOf(output, /*along=*/true, slice, piece));
        // The last piece's states are the call's where it returns them.
        if (piece + 1 == count && !call.finalStates.empty()) {
          for (const TensorRef &state : call.finalStates)
            results.push_back(pieceOf(state, /*along=*/false, slice, 0));
        } else {
          statesAt(slice, sets, to, results);
        }
        callOf(call.kernels.withOutputs[piece])(arguments, results, coordinates);
      };
      auto stateOnly = [&](int64_t piece, int from, int to) {
        pieceInputs(piece);
        statesAt(slice, sets, from, arguments);
        results.clear();
        statesAt(slice, sets, to, results);
        // The state variant also returns each decay's log-gate total over the piece, which a runner that
        // starts from the state before the piece does not need: written to a buffer of the thread's own.
        LoadedKernel *kernel = call.kernels.stateOnly[piece];
        llvm::ArrayRef<TensorSpec> totals =
            llvm::ArrayRef<TensorSpec>(kernel->info().results).drop_front(results.size());
        thread_local std::vector<char> discarded;
        size_t totalBytes = 0;
        for (const TensorSpec &total : totals)
          totalBytes += (total.numBytes() + 63) / 64 * 64;
        if (discarded.size() < totalBytes)
          discarded.resize(totalBytes);
        size_t offset = 0;
        for (const TensorSpec &total : totals) {
          results.push_back(discarded.data() + offset);
          offset += (total.numBytes() + 63) / 64 * 64;
        }
        callOf(kernel)(arguments, results, coordinates);
      };
      // Padding between the states is zero in every slot, so the whole sets can be added.
      auto addStates = [&](int a, int b, int to) {
        const float *x = reinterpret_cast<const float *>(slotIn(sets, a));
        const float *y = reinterpret_cast<const float *>(slotIn(sets, b));
        float *sum = reinterpret_cast<float *>(slotIn(sets, to));
        for (size_t i = 0; i < setFloats; ++i)
          sum[i] = x[i] + y[i];
      };
      PieceWork work{withOutputs, stateOnly, additive ? llvm::function_ref<void(int, int, int)>(addStates) : nullptr};
      if (role == Role::Runner)
        handoffs[slice]->runRunner(work);
      else
        handoffs[slice]->runFront(work); // alone, no runner takes over: every piece in order
    };
    if (plan.twoThreadsPerSlice)
      return team->tryRun(2 * numSlices,
                          [&](unsigned part) { runSlice(part / 2, part % 2 == 0 ? Role::Front : Role::Runner); });
    auto runRange = [&](int64_t begin, int64_t end) {
      for (int64_t slice = begin; slice < end; ++slice)
        runSlice(slice, Role::Alone);
    };
    int64_t threads = std::min<int64_t>(runtimeOptions.numThreads, numSlices);
    if (threads <= 1 || !team ||
        !team->tryRun(threads, [&](unsigned p) { runRange(numSlices * p / threads, numSlices * (p + 1) / threads); }))
      runRange(0, numSlices);
    return true;
  }

  /// From this many positions on, a slice whose thread is alone runs pieces of kMinSerialPieceLength: a
  /// whole-sequence kernel loses to its pieces once the sequence's passes no longer fit in cache
  /// (docs/BENCHMARKS.md); below it, pieces of the longest power of two (SequencePieces.h).
  static constexpr int64_t kMinSerialPiecesLength = 16384;
  static constexpr int64_t kMinParallelPieceLength = 256, kMinSerialPieceLength = 1024;

  /// The number of batch×head slices of a call of `info` on `inputs`.
  static int64_t countSlices(const CompiledKernel &info, llvm::ArrayRef<TensorRef> inputs) {
    int64_t numSlices = 1;
    const TensorSpec &batched = inputs[info.slicing.firstSlicedArgument()].spec;
    for (int64_t d = 0; d < info.slicing.dims; ++d)
      numSlices *= batched.shape[d];
    return numSlices;
  }

  RuntimeOptions runtimeOptions;
  cuda::Driver *driver;
  const std::string optionsText;
  DiskCache disk;
  std::unique_ptr<TuningDatabase> tuningDatabase;
  std::once_flag tuningWarning;
  /// The threads besides the caller's that run slices (none with one thread); shared by the tuner's
  /// contenders (RuntimeOnTeam.h).
  std::shared_ptr<ForkJoinTeam> team;
  ReferenceRunner reference;
  std::shared_mutex memoryMutex;
  llvm::StringMap<std::shared_ptr<KernelSlot>> memory;
  std::once_flag diskWarning;
  std::once_flag piecesWarning;
  /// getPiecePrefixProgram's programs, by source (under sequenceMutex).
  std::map<std::string, std::shared_ptr<Program>> piecePrefixPrograms;
  /// planPiecesCall's plans, by program, entry and shapes.
  llvm::StringMap<std::shared_ptr<const std::optional<GpuPiecesPlan>>> piecesPlans;
  std::mutex sequenceMutex;
  llvm::StringMap<std::shared_ptr<const SequenceVariants>> sequenceVariants;
  /// Per call shape (memoryKey), whether the tuning database has a record for it (hasTuningRecord).
  llvm::StringMap<bool> tunedShapes;
};

} // namespace

unsigned resolvedThreadCount(const RuntimeOptions &options) {
  return options.numThreads ? options.numThreads : std::max(1u, llvm::hardware_concurrency().compute_thread_count());
}

std::shared_ptr<ForkJoinTeam> makeWorkerTeam(const RuntimeOptions &options) {
  unsigned threads = resolvedThreadCount(options);
  if (threads <= 1)
    return nullptr;
  return std::make_shared<ForkJoinTeam>(threads - 1, std::chrono::microseconds(options.workerSpinMicroseconds));
}

llvm::Expected<std::unique_ptr<Runtime>> Runtime::create(RuntimeOptions options) {
  std::shared_ptr<ForkJoinTeam> team = makeWorkerTeam(options);
  return createRuntimeOnTeam(std::move(options), std::move(team));
}

llvm::Expected<std::unique_ptr<Runtime>> createRuntimeOnTeam(RuntimeOptions options,
                                                             std::shared_ptr<ForkJoinTeam> team) {
  if (options.target != RuntimeTarget::CPU)
    options.compile.target = mlir::la::PipelineTarget::CUDA;
  else if (options.compile.target != mlir::la::PipelineTarget::CPU)
    return makeError("the CUDA target's kernels run on a GPU or the GPU emulator: set RuntimeOptions::target to "
                     "RuntimeTarget::CUDA (cuda) or RuntimeTarget::CUDAEmulator (cuda-emu)");
  auto optionsText = getResolvedOptionsText(options.compile);
  if (!optionsText)
    return optionsText.takeError();
  // The driver is opened up front, so a machine without a GPU fails here, before anything compiles.
  cuda::Driver *driver = nullptr;
  if (options.target == RuntimeTarget::CUDA) {
    auto opened = cuda::Driver::get(options.cudaDevice);
    if (!opened)
      return opened.takeError();
    driver = &*opened;
  }
  std::unique_ptr<TuningDatabase> tuningDatabase;
  if (options.tuning != TuningMode::Off) {
    auto opened = TuningDatabase::open(options.tuningDatabase, options.cacheDir);
    if (!opened)
      return opened.takeError();
    tuningDatabase = std::move(*opened);
  }
  std::shared_ptr<RedisClient> remoteCache;
  if (!options.remoteCache.empty()) {
    auto client = RedisClient::connect(options.remoteCache);
    if (client)
      remoteCache = std::move(*client);
    else if (llvm::StringRef(options.remoteCache).starts_with("redis://"))
      llvm::WithColor::warning(llvm::errs(), "la")
          << "remote kernel cache " << llvm::toString(client.takeError()) << "; compiling with the local cache only\n";
    else
      return makeError("remote kernel cache: " + llvm::toString(client.takeError()));
  }
  return std::make_unique<RuntimeImpl>(std::move(options), std::move(*optionsText), driver, std::move(tuningDatabase),
                                       std::move(remoteCache), std::move(team));
}

} // namespace la
