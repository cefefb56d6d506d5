//===- Tune.h - `lac tune` and `lac tune-db` -------------------*- C++ -*-===//
#ifndef LA_TOOLS_LAC_TUNE_H
#define LA_TOOLS_LAC_TUNE_H

#include "la/runtime/Runtime.h"

#include "llvm/Support/CommandLine.h"

#include <string>
#include <vector>

namespace lac {

/// The `tune` subcommand; lac.cpp adds the options it shares with `run` (inputs, shapes, threads, target).
llvm::cl::SubCommand &tuneSubcommand();
/// The category of tune's own options (so `lac tune --help` lists them).
llvm::cl::OptionCategory &tuneCategory();

/// What lac.cpp parsed for `lac tune`.
struct TuneRequest {
  la::RuntimeOptions runtime;
  /// The compile options given on the command line: they stay fixed.
  std::vector<std::string> pinned;
  std::string file;
  /// The program: the file's text, with `--variant`'s declarations appended.
  std::string source;
  std::string entry;
  std::vector<la::HostTensor> inputs;
  uint64_t seed = 0;
  bool json = false;
};

/// Runs `lac tune`; returns the exit code.
int runTune(TuneRequest &request);

/// The `tune-db` subcommand, and running it (`lac tune-db export|import [FILE] --db DB`).
llvm::cl::SubCommand &tuneDbSubcommand();
int runTuneDb();

} // namespace lac

#endif // LA_TOOLS_LAC_TUNE_H
