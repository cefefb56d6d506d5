//===- GpuRun.cpp - `lac gpu-run`: a gpu.module kernel on the GPU emulator -===//
//
//   lac gpu-run FILE.mlir --kernel MODULE::FUNC --grid X,Y,Z --block X,Y,Z --arg A.npy|NUMBER ...
//           [--out I=PATH.npy ...] [--seed N] [--threads T] [--json]
//
// Option parsing, argument files and printing only: compilation and launch are la/runtime/GpuEmulator.h.
//
//===----------------------------------------------------------------------===//

#include "GpuRun.h"

#include "la/runtime/GpuEmulator.h"
#include "la/runtime/Npy.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

namespace cl = llvm::cl;

namespace lac {

cl::OptionCategory &gpuRunCategory() {
  static cl::OptionCategory category("lac gpu-run options");
  return category;
}

namespace {

cl::SubCommand gpuRunCommand("gpu-run", "Run a gpu.module kernel on the GPU emulator, with race, bounds and "
                                        "barrier checks (docs/gpu-emulator.md)");
cl::opt<std::string> file(cl::Positional, cl::desc("<kernels.mlir>"), cl::Required, cl::sub(gpuRunCommand));
cl::opt<std::string> kernelName("kernel", cl::desc("The kernel, MODULE::FUNC (or FUNC when it is unique)"),
                                cl::sub(gpuRunCommand), cl::cat(gpuRunCategory()));
cl::opt<std::string> gridText("grid", cl::desc("Blocks in the grid: X[,Y[,Z]]"), cl::init("1"), cl::sub(gpuRunCommand),
                              cl::cat(gpuRunCategory()));
cl::opt<std::string> blockText("block",
                               cl::desc("Threads in a block: X[,Y[,Z]] (default: the kernel's known_block_size)"),
                               cl::sub(gpuRunCommand), cl::cat(gpuRunCategory()));
cl::list<std::string> args("arg",
                           cl::desc("One per kernel argument, in order: a .npy file for a memref (dtype and "
                                    "shape must match), a number for a scalar"),
                           cl::sub(gpuRunCommand), cl::cat(gpuRunCategory()));
cl::list<std::string> outs("out", cl::desc("I=PATH.npy: write memref argument I after the launch"),
                           cl::sub(gpuRunCommand), cl::cat(gpuRunCategory()));
cl::opt<uint64_t> seed("seed",
                       cl::desc("Scheduling order of each block's threads (0: thread order); reproduces an "
                                "order-dependent result"),
                       cl::init(0), cl::sub(gpuRunCommand), cl::cat(gpuRunCategory()));
cl::opt<unsigned> threads("threads", cl::desc("OS threads running blocks (0: one per hardware thread)"), cl::init(0),
                          cl::sub(gpuRunCommand), cl::cat(gpuRunCategory()));
cl::opt<bool> json("json", cl::desc("Print the launch report (counters and findings) as JSON on stdout"),
                   cl::sub(gpuRunCommand), cl::cat(gpuRunCategory()));

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "lac gpu-run") << message << "\n";
  return 1;
}

llvm::Expected<la::emu::Dim3> parseDim3(llvm::StringRef option, llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef, 3> parts;
  text.split(parts, ',');
  uint32_t values[3] = {1, 1, 1};
  if (parts.size() > 3)
    return llvm::createStringError(llvm::formatv("--{0}={1}: at most three sizes, X,Y,Z", option, text));
  for (auto [i, part] : llvm::enumerate(parts))
    if (part.trim().getAsInteger(10, values[i]) || values[i] == 0)
      return llvm::createStringError(llvm::formatv("--{0}={1}: '{2}' is not a positive size", option, text, part));
  return la::emu::Dim3{values[0], values[1], values[2]};
}

/// A scalar argument's bytes, from its text.
llvm::Error parseScalar(const la::EmulatedArgument &argument, llvm::StringRef text, uint64_t &storage) {
  llvm::StringRef type = argument.elementType;
  storage = 0;
  if (type == "f32" || type == "f64") {
    double value;
    if (text.getAsDouble(value))
      return llvm::createStringError(llvm::formatv("'{0}' is not a number", text));
    if (type == "f32") {
      float f = float(value);
      std::memcpy(&storage, &f, sizeof f);
    } else {
      std::memcpy(&storage, &value, sizeof value);
    }
    return llvm::Error::success();
  }
  if (type == "index" || type.starts_with("i")) {
    int64_t value;
    if (text.getAsInteger(0, value))
      return llvm::createStringError(llvm::formatv("'{0}' is not an integer", text));
    std::memcpy(&storage, &value, argument.elementBytes); // little-endian: the low bytes
    return llvm::Error::success();
  }
  return llvm::createStringError(llvm::formatv("scalars of type {0} cannot be given on the command line", type));
}

} // namespace

bool gpuRunSelected() { return bool(gpuRunCommand); }

int runGpuRun() {
  auto source = llvm::MemoryBuffer::getFile(file);
  if (!source)
    return fail(file + ": " + source.getError().message());
  auto program = la::EmulatedProgram::compile((*source)->getBuffer(), file);
  if (!program)
    return fail(llvm::toString(program.takeError()));

  const la::EmulatedKernel *kernel = nullptr;
  std::vector<std::string> names;
  for (const la::EmulatedKernel &k : (*program)->kernels())
    names.push_back(k.name);
  if (kernelName.empty() && names.size() == 1)
    kernel = &(*program)->kernels().front();
  else if (kernelName.empty())
    return fail(llvm::formatv("{0} has {1} kernels: choose one with --kernel ({2})", file, names.size(),
                              llvm::join(names, ", ")));
  else if (!(kernel = (*program)->find(kernelName)))
    return fail(llvm::formatv("{0} has no kernel '{1}' (it has {2})", file, kernelName, llvm::join(names, ", ")));

  if (args.size() != kernel->arguments.size()) {
    std::vector<std::string> expected;
    for (const la::EmulatedArgument &argument : kernel->arguments)
      expected.push_back(argument.str());
    return fail(llvm::formatv("kernel '{0}' takes {1} arguments ({2}); {3} --arg given", kernel->name, expected.size(),
                              llvm::join(expected, ", "), args.size()));
  }

  std::vector<la::HostTensor> buffers(args.size());
  std::vector<void *> bufferPointers(args.size(), nullptr);
  std::vector<uint64_t> scalars(args.size(), 0);
  std::vector<void *> values(args.size(), nullptr);
  for (auto [i, argument] : llvm::enumerate(kernel->arguments)) {
    if (!argument.isBuffer) {
      if (llvm::Error err = parseScalar(argument, args[i], scalars[i]))
        return fail(llvm::formatv("--arg #{0} ({1}): {2}", i, argument.str(), llvm::toString(std::move(err))));
      values[i] = &scalars[i];
      continue;
    }
    std::optional<la::DType> dtype = la::parseDType(argument.elementType);
    if (!dtype)
      return fail(llvm::formatv("argument #{0} is {1}: gpu-run reads .npy files of f16, bf16, f32 or f64 only", i,
                                argument.str()));
    auto tensor = la::readNpy(args[i], dtype == la::DType::BF16 ? std::optional(la::DType::BF16) : std::nullopt);
    if (!tensor)
      return fail(llvm::formatv("--arg #{0}: {1}", i, llvm::toString(tensor.takeError())));
    if (tensor->dtype() != *dtype || tensor->shape() != llvm::ArrayRef<int64_t>(argument.shape)) {
      la::EmulatedArgument given = argument;
      given.elementType = la::dtypeName(tensor->dtype()).str();
      given.shape.assign(tensor->shape().begin(), tensor->shape().end());
      return fail(llvm::formatv("--arg #{0} ({1}) holds {2}, but the kernel's argument #{0} is {3}", i, args[i],
                                given.str(), argument.str()));
    }
    buffers[i] = std::move(*tensor);
    bufferPointers[i] = buffers[i].data();
    values[i] = &bufferPointers[i];
  }

  std::vector<std::pair<size_t, std::string>> outputs;
  for (const std::string &out : outs) {
    auto [indexText, path] = llvm::StringRef(out).split('=');
    size_t index;
    if (path.empty() || indexText.getAsInteger(10, index) || index >= args.size() || !kernel->arguments[index].isBuffer)
      return fail(llvm::formatv("--out {0}: expected I=PATH.npy with I the index of a memref argument (0..{1})", out,
                                args.size() - 1));
    outputs.emplace_back(index, path.str());
  }

  la::emu::LaunchConfig config;
  auto grid = parseDim3("grid", gridText);
  if (!grid)
    return fail(llvm::toString(grid.takeError()));
  config.grid = *grid;
  if (blockText.empty() && !kernel->blockSize)
    return fail(llvm::formatv("kernel '{0}' declares no known_block_size: give --block X,Y,Z", kernel->name));
  if (blockText.empty()) {
    config.block = *kernel->blockSize;
  } else {
    auto block = parseDim3("block", blockText);
    if (!block)
      return fail(llvm::toString(block.takeError()));
    config.block = *block;
  }
  config.seed = seed;
  config.numThreads = threads;
  auto report = (*program)->launch(*kernel, values, config);
  if (!report)
    return fail(llvm::toString(report.takeError()));

  for (auto &[index, path] : outputs)
    if (llvm::Error err = la::writeNpy(path, buffers[index]))
      return fail(llvm::formatv("--out {0}={1}: {2}", index, path, llvm::toString(std::move(err))));
  if (json)
    llvm::outs() << llvm::formatv("{0:2}", report->toJSON()) << "\n";
  if (llvm::Error findings = report->takeError()) {
    llvm::errs() << llvm::toString(std::move(findings)) << "\n";
    return fail(llvm::formatv("kernel '{0}': {1} finding(s)", kernel->name, report->findings.size()));
  }
  return 0;
}

} // namespace lac
