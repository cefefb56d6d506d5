//===- Runtime.h - JIT-compile and run `la` kernels from C++ ----*- C++ -*-===//
//
// The public entry point for host programs. A `Runtime` loads `la` programs (from a file, from source text,
// or from a module built with the C++ builder API), compiles an entry for the concrete shapes and dtypes it
// is called with, caches the native code in memory and on disk, and runs it on the caller's buffers:
//
//   auto runtime = la::Runtime::create();                  // llvm::Expected<std::unique_ptr<Runtime>>
//   auto program = (*runtime)->loadFile("kernels/flow_attention.mlir");
//   llvm::Error err = (*runtime)->call(**program, "flow_attention", {q, k, v}, {out});
//
// Every failure is returned as an `llvm::Error` whose message names what is wrong (the entry, the argument
// index, the dimension); nothing aborts on bad input. A `Runtime` is thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_RUNTIME_H
#define LA_RUNTIME_RUNTIME_H

#include "la/emulator/LaunchReport.h"
#include "la/runtime/NumericsCheck.h"
#include "la/runtime/Tensor.h"

#include "Pipelines/PipelineConfig.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace la {

/// How kernels are compiled: every option of the compilation pipeline (one typed field each, declared once in
/// compiler/Pipelines/PipelineOptions.def: chunkSize, fuse, groupSweeps, registerTile, approximateMath,
/// targetCPU, targetFeatures; `lac --help` and `la-opt --help` list them with their descriptions), plus how
/// the runtime runs a kernel. All of them are part of every cache key.
struct CompileOptions : mlir::la::PipelineConfig {
  /// Compile once per (batch, head) slice and spread slices over the thread pool when the entry allows it.
  bool sliceBatchHeads = true;
  /// The pipeline that compiles: the CPU's, or the CUDA target's (one thread block per slice).
  mlir::la::PipelineTarget target = mlir::la::PipelineTarget::CPU;
};

/// Where the runtime runs kernels.
enum class RuntimeTarget {
  CPU,         ///< this machine's cores: one compiled slice per (batch, head), spread over the thread pool
  CUDA,        ///< an NVIDIA GPU through the CUDA driver (libcuda.so.1, opened at run time): one block per slice
  CUDAEmulator ///< the CUDA target's kernels, on the SIMT emulator (docs/gpu-emulator.md): one block per slice
};
/// Parses "cpu", "cuda" or "cuda-emu"; the error lists the choices.
llvm::Expected<RuntimeTarget> parseRuntimeTarget(llvm::StringRef name);

/// Whether kernels take their configuration from a tuning database.
enum class TuningMode {
  Off,       ///< always `RuntimeOptions::compile`
  Lookup,    ///< the database's record for the kernel's key where there is one
  TuneOnMiss ///< that record; without one, tune the kernel at once (RuntimeOptions::onMiss), store and use it
};

/// How much a kernel compiled under TuningMode::TuneOnMiss may be tuned before its first call.
struct OnMissTuning {
  /// Candidates evaluated by annealing, the default included.
  unsigned budget = 12;
  /// Wall-clock limit of the search, in seconds: the first call of a new shape waits this long at most
  /// (plus the final timing round).
  double seconds = 20;
  /// Milliseconds of calls timed per candidate.
  double measureMs = 50;
};

struct RuntimeOptions {
  /// Where kernels run; CUDA and CUDAEmulator compile with the CUDA target whatever `compile.target` says.
  /// With CUDA, `Runtime::create` fails (naming what is missing) where the driver cannot be loaded or sees
  /// no device; `$LA_CUDA_DRIVER` names a library to load instead of libcuda.so.1.
  RuntimeTarget target = RuntimeTarget::CPU;
  /// The CUDA device (ordinal) the cuda target runs on; its architecture must match `compile.arch`.
  int cudaDevice = 0;
  /// Directory of the on-disk kernel cache. Empty means `$LA_CACHE_DIR`, else `~/.cache/la`; "none" (here
  /// or in `$LA_CACHE_DIR`) turns the disk cache off.
  std::string cacheDir;
  /// A kernel cache shared by several machines, `redis://host:port`, behind the disk cache: kernels compiled
  /// here are stored there too, and a disk-cache miss asks it before compiling (entries carry a checksum,
  /// checked on load). Empty: none. A server that cannot be reached is warned about once and ignored.
  std::string remoteCache;
  /// Worker threads for batch×head slices; 0 means one per hardware thread.
  unsigned numThreads = 0;
  /// How long a worker thread spins, watching for the next call, before it sleeps. A sleeping worker costs
  /// the next call a kernel wake-up (tens of µs here, the size of a whole decode step); a spinning one keeps
  /// a core busy for this long after each call. 0: sleep at once.
  unsigned workerSpinMicroseconds = 100;
  /// Causal entries on the CPU, and their prefill and resume variants, run on pieces of their sequence from
  /// 64 positions on (the entry's derived variants, runtime/lib/SequencePieces.h). The pieces' lengths come
  /// from a fixed set (1, 2, 3, then two per octave: 4, 6, 8, 12, 16, 24, ...), so no kernel is compiled for a
  /// call's own length: a server that sees a new prompt length on every request compiles a piece length at
  /// most once (1000 positions are 768 + 192 + 32 + 8, and 992 or 968 then compile nothing); within 5% of the
  /// kernel compiled for the length (docs/BENCHMARKS.md, session 33). Where a call has at most half as many
  /// batch×head slices as threads, each slice runs on two threads, one from the start and one from a later
  /// piece that it reaches first by computing the state alone (sequences of four pieces of 256 positions or
  /// more); otherwise each slice on its thread piece by piece: the longest piece within the sequence first,
  /// and from 16384 positions on pieces of 1024, since a piece's tensors stay in cache where the whole
  /// sequence's passes stream from memory. Linear attention at B = H = 1, N = 65536: 23.5 ms whole on one
  /// thread, 17.0 ms in pieces on one, 11.3 ms on two; at B = 2, H = 8, N = 16384 1.25× faster in pieces
  /// (docs/BENCHMARKS.md). A shape the tuning database has a record for runs whole, as it was tuned.
  /// Where the second thread takes over depends on timing, so two calls may differ at rounding level (as
  /// prefill + resumes differ from the whole-sequence kernel: ≤ 1e-5 relative); off, every call runs each
  /// slice's sequence whole on one thread with a kernel for its length, and repeats bit for bit.
  bool splitSequences = true;
  CompileOptions compile;
  /// Tuned configurations (la/runtime/TuningDatabase.h): where they are, and whether kernels use them.
  /// With Lookup, a kernel compiled for new shapes takes the configuration of the database's record for its
  /// key (the exact key, else the nearest sequence bucket), except for the options in `pinnedOptions`, which
  /// keep their value from `compile`; without a record it compiles with `compile`.
  /// With TuneOnMiss, a kernel without a record is tuned then and there (la/runtime/Tuner.h, on seeded
  /// random inputs of the call's shapes: the caller's tensors are not touched), within `onMiss`; the record
  /// is stored, so other processes and later runs find it. Where another process holds the key's lease (it
  /// is tuning the same kernel) this one does not wait: it compiles with `compile`. The cuda-emu target
  /// only looks up (the emulator's time says nothing about a GPU's).
  TuningMode tuning = TuningMode::Off;
  OnMissTuning onMiss;
  /// A file path, or empty for `<cache dir>/tuning.jsonl`.
  std::string tuningDatabase;
  /// Registry names of options set on purpose (`lac run --chunk-size=32`): a record does not override them.
  std::vector<std::string> pinnedOptions;
  /// The numerics guard: every `call` also runs the entry's fp64 reference (la/runtime/NumericsCheck.h),
  /// puts the comparison in `CallStats::numerics`, and fails with an error naming the output, the first
  /// NaN/Inf index and the errors when an output is off. Several times the cost of a call; for debugging.
  bool checkNumerics = false;
};

/// Where the native code of a call came from.
enum class CacheSource { Memory, Disk, Remote, Miss };
/// "memory", "disk", "remote", "miss".
llvm::StringRef cacheSourceName(CacheSource source);

/// How a call ran on the GPU (the cuda and cuda-emu targets).
struct GpuLaunchStats {
  /// Blocks: (heads, batches, 1) for a [B, H, ...] entry.
  emu::Dim3 grid;
  unsigned blockThreads = 0;
  /// With cuda-emu: what the emulator counted over the whole launch (global and shared bytes, mma.sync and
  /// FMA instructions, shuffles, barriers; la/emulator/LaunchReport.h). A device counts nothing.
  std::optional<emu::Counters> counters;
  /// With cuda, a call on host tensors: the launch's device time in milliseconds, between two CUDA events
  /// (copies and allocations excluded). `callOnDevice` returns before the kernel runs and measures nothing.
  std::optional<double> kernelMs;
  /// Kernel launches of the call: 1, or 3 for a causal entry's chunk-parallel call (CallStats::sequencePieces
  /// pieces per slice), which `grid` and `blockThreads` describe by its widest launch.
  unsigned launches = 1;
  /// {"grid": [x, y, z], "block": n, "launches": l, "counters": {..}, "kernel_ms": t}
  llvm::json::Value toJSON() const;
};

/// What a call cost beyond running the kernel.
struct CallStats {
  CacheSource cache = CacheSource::Miss;
  /// Time to obtain the native code: compile (miss), load (disk) or look up (memory), in milliseconds.
  double compileMs = 0;
  /// With `RuntimeOptions::checkNumerics`: each output against the fp64 reference.
  std::optional<NumericsReport> numerics;
  /// With a GPU target: the launch's grid and, on the emulator, its counters.
  std::optional<GpuLaunchStats> gpu;
  /// A hash (xxh3) of the code that ran: the object file (cpu) or the `gpu` stage (cuda, cuda-emu). Two
  /// configurations with equal hashes compiled to the same code; the tuner times only one of them.
  uint64_t codeHash = 0;
  /// The configuration the kernel was compiled with (canonical text, PipelineConfig::str for its target).
  std::string config;
  /// Whether that configuration came from a tuning-database record (even one equal to the default).
  bool tuned = false;
  /// A call that ran a causal entry on pieces of its sequence (RuntimeOptions::splitSequences): the pieces
  /// each slice was cut into, and the threads that ran each slice (2: a sequence-parallel call); 0 pieces
  /// for a call that ran each slice's sequence whole. Such a call's `cache` is its pieces' worst (a miss
  /// where any piece's kernel was compiled) and `compileMs` their sum.
  int64_t sequencePieces = 0;
  int sequenceThreadsPerSlice = 0;
  /// A CPU call of a [B, H, ...] entry whose slices are small (a decode step's) runs several consecutive heads
  /// per kernel call: how many (1: a slice per call, as every larger call runs).
  int64_t slicesPerCall = 1;
};

/// A parsed and verified `la` program: a module of `func.func` entries. Immutable once loaded.
class Program {
public:
  virtual ~Program();
  /// Names of the public functions, in file order.
  virtual llvm::SmallVector<std::string> entries() const = 0;
  /// A hash of the program text (the kernel part of cache keys).
  virtual llvm::StringRef contentHash() const = 0;
  /// The file name or buffer name it was loaded from (used in error messages).
  virtual llvm::StringRef name() const = 0;
  /// The program text (for a module built with the C++ API, as printed when it was loaded).
  virtual llvm::StringRef source() const = 0;
};

/// The argument and result types of an entry, `?` dimensions as -1.
struct EntrySignature {
  llvm::SmallVector<TensorSpec> arguments;
  llvm::SmallVector<TensorSpec> results;
  /// One per argument: its declared domain, or none.
  llvm::SmallVector<std::optional<ValueDomain>> argumentDomains;
};

class Runtime {
public:
  static llvm::Expected<std::unique_ptr<Runtime>> create(RuntimeOptions options = {});
  virtual ~Runtime();

  /// Parses and verifies a `.mlir` file. Errors carry `file:line:col` diagnostics.
  virtual llvm::Expected<std::shared_ptr<Program>> loadFile(llvm::StringRef path) = 0;
  /// Same for source text; `bufferName` stands in for the file name in diagnostics.
  virtual llvm::Expected<std::shared_ptr<Program>> loadSource(llvm::StringRef source, llvm::StringRef bufferName) = 0;
  /// Takes a module built with the C++ builder API (`la/IR`); it is verified and printed to text so it hashes
  /// and caches like a file.
  virtual llvm::Expected<std::shared_ptr<Program>> loadModule(mlir::ModuleOp module, llvm::StringRef name) = 0;

  /// The declared signature of `entry`.
  virtual llvm::Expected<EntrySignature> signature(const Program &program, llvm::StringRef entry) = 0;
  /// The result types `entry` produces for inputs of these types (compiling it if needed).
  virtual llvm::Expected<llvm::SmallVector<TensorSpec>> resultSpecs(const Program &program, llvm::StringRef entry,
                                                                    llvm::ArrayRef<TensorSpec> inputs,
                                                                    CallStats *stats = nullptr) = 0;

  /// Runs `entry` on `inputs`, writing `outputs` (one per result, shapes from `resultSpecs`; an output may
  /// not overlap any input or other output). Compiles on
  /// first use for these shapes and dtypes; later calls hit the memory cache, later processes the disk cache.
  virtual llvm::Error call(const Program &program, llvm::StringRef entry, llvm::ArrayRef<TensorRef> inputs,
                           llvm::ArrayRef<TensorRef> outputs, CallStats *stats = nullptr) = 0;

  /// With the cuda target: runs `entry` on tensors already on the device (each `TensorRef::data` a device
  /// pointer, a CUdeviceptr cast to void *) on `stream` (a CUstream; null for the default stream), and
  /// returns once the launch is queued. The kernel's scratch is allocated and freed in stream order.
  virtual llvm::Error callOnDevice(const Program &program, llvm::StringRef entry, llvm::ArrayRef<TensorRef> inputs,
                                   llvm::ArrayRef<TensorRef> outputs, void *stream, CallStats *stats = nullptr) = 0;

  /// Runs the fp64 reference of `entry` on `inputs` and compares each of `outputs` (the kernel's results for
  /// those inputs) with it; la/runtime/NumericsCheck.h says how. The reference is compiled on first use and
  /// cached like any kernel. Fails when no reference can be built (a program that relies on a narrow type).
  virtual llvm::Expected<NumericsReport> checkNumerics(const Program &program, llvm::StringRef entry,
                                                       llvm::ArrayRef<TensorRef> inputs,
                                                       llvm::ArrayRef<TensorRef> outputs) = 0;

  /// The half of an ahead-of-time C launcher (`lac compile --target cuda --emit=h|c`) to write.
  enum class LauncherPart { Header, Source };
  /// The ahead-of-time C launcher of `entry` for `arguments` (static shapes; B and H become the launcher's
  /// own) on the CUDA target of `options().compile`: the header `la_<entry>.h`, or the source that embeds the
  /// cubins and includes it (compiler/Target/CUDA/CUDAAot.h). It launches what `call` launches for these
  /// arguments: a causal entry in pieces of its sequence where the call qualifies (GpuPiecesPlan.h), any
  /// other one block per batch×head slice. Nothing is loaded or run; the kernels are compiled afresh.
  virtual llvm::Expected<std::string> emitCudaLauncher(const Program &program, llvm::StringRef entry,
                                                       llvm::ArrayRef<TensorSpec> arguments, LauncherPart part) = 0;

  /// Allocates the outputs, runs, and returns them.
  llvm::Expected<llvm::SmallVector<HostTensor>> run(const Program &program, llvm::StringRef entry,
                                                    llvm::ArrayRef<TensorRef> inputs, CallStats *stats = nullptr);

  /// The options this runtime compiles with.
  virtual const RuntimeOptions &options() const = 0;
};

} // namespace la

#endif // LA_RUNTIME_RUNTIME_H
