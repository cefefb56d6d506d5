//===- StandaloneDriver.cpp - replay fuzz inputs without libFuzzer --------===//
//
// The `main` a fuzz target gets in a build without LA_ENABLE_FUZZERS (gcc, no sanitizers): it runs
// `LLVMFuzzerTestOneInput` once on every file named on the command line, and on every file inside every
// directory named there, so `ctest` replays the seed corpus and every past crash without clang. Arguments
// starting with '-' are libFuzzer flags (the same test command works with either main) and are ignored.
// A target reports a violated invariant by aborting, which fails the test.
//
//===----------------------------------------------------------------------===//

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg.starts_with("-"))
      continue;
    if (!llvm::sys::fs::is_directory(arg)) {
      files.push_back(arg.str());
      continue;
    }
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(arg, ec), end; it != end && !ec; it.increment(ec))
      if (llvm::sys::fs::is_regular_file(it->path()))
        files.push_back(it->path());
    if (ec) {
      llvm::errs() << arg << ": " << ec.message() << "\n";
      return 1;
    }
  }
  // A fixed order, so that a failure names the same file on every run.
  std::sort(files.begin(), files.end());
  for (const std::string &file : files) {
    auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/false, /*RequiresNullTerminator=*/false);
    if (!buffer) {
      llvm::errs() << file << ": " << buffer.getError().message() << "\n";
      return 1;
    }
    // Like libFuzzer, hand over an exactly-sized heap copy (never a null pointer, even when empty), not a
    // mapping with readable bytes after it.
    llvm::StringRef bytes = (*buffer)->getBuffer();
    std::unique_ptr<uint8_t[]> copy(new uint8_t[bytes.size()]);
    std::copy(bytes.begin(), bytes.end(), copy.get());
    llvm::errs() << "running " << file << " (" << bytes.size() << " bytes)\n";
    LLVMFuzzerTestOneInput(copy.get(), bytes.size());
  }
  llvm::errs() << "ran " << files.size() << " inputs\n";
  return 0;
}
