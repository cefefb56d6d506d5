//===- PipelineFlags.h - command-line flags for every pipeline option -*- C++ -*-===//
//
// One `llvm::cl` flag per option of the option registry (compiler/Pipelines/PipelineOptions.def), for any
// program that compiles kernels from its command line: `lac`, `la-bench`, a host program. The flags take
// exactly what `la-opt -la-cpu-pipeline` and `CompileOptions::set` take, because the registry parses them.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_PIPELINEFLAGS_H
#define LA_RUNTIME_PIPELINEFLAGS_H

#include "la/runtime/Runtime.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace la {

/// Registers `--chunk-size=...`, `--fuse[=false]`, ... for the given subcommands (for a program without
/// subcommands: `{&llvm::cl::SubCommand::getTopLevel()}`). Construct it before `ParseCommandLineOptions`
/// and keep it alive while the flags are read. A bare boolean flag means true.
class PipelineFlags {
public:
  PipelineFlags(llvm::cl::SubCommandGroup &subcommands, llvm::cl::OptionCategory &category);
  ~PipelineFlags();

  /// The registry defaults overridden by the flags given. An error names the flag and the value.
  llvm::Expected<CompileOptions> get() const;
  /// The options given on the command line, by registry name (a tuner keeps them fixed).
  std::vector<std::string> given() const;

private:
  struct Flag;
  std::vector<std::unique_ptr<Flag>> flags;
};

} // namespace la

#endif // LA_RUNTIME_PIPELINEFLAGS_H
