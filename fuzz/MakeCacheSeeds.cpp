//===- MakeCacheSeeds.cpp - write the seed corpus of la-fuzz-cache-entry ---===//
//
//   la-fuzz-cache-seeds fuzz/corpus/cache-entry
//
// Compiles a one-op kernel with the real compiler and writes it with the real writer
// (`DiskCache::serializeEntry`), so the seeds are what the runtime actually stores, plus the damaged forms
// the loader must reject: truncated, another format version, another key, and metadata that is JSON but
// not an entry. Run it again when the entry format changes.
//
//===----------------------------------------------------------------------===//

#include "DiskCache.h"
#include "FuzzCacheKey.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

using namespace la;

static const char kSource[] = R"mlir(
func.func @relu2(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = la.map relu2 %x : tensor<?xf32> -> tensor<?xf32>
  return %y : tensor<?xf32>
}
)mlir";

static bool writeSeed(llvm::StringRef directory, llvm::StringRef name, llvm::StringRef bytes) {
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, name);
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    llvm::errs() << path << ": " << ec.message() << "\n";
    return false;
  }
  os << bytes;
  return true;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    llvm::errs() << "usage: la-fuzz-cache-seeds DIRECTORY\n";
    return 2;
  }
  llvm::StringRef directory = argv[1];
  TensorSpec spec{DType::F32, {4}};
  llvm::Expected<CompiledKernel> kernel =
      compileKernel(kSource, "seed.mlir", "relu2", {spec}, CompileOptions(), la::SliceLayout());
  if (!kernel) {
    llvm::errs() << llvm::toString(kernel.takeError()) << "\n";
    return 1;
  }
  if (std::error_code ec = llvm::sys::fs::create_directories(directory)) {
    llvm::errs() << directory << ": " << ec.message() << "\n";
    return 1;
  }
  std::string valid = DiskCache::serializeEntry(kFuzzKey, *kernel);
  std::string truncated = valid.substr(0, valid.size() / 2);
  std::string wrongVersion = valid;
  llvm::support::endian::write32le(&wrongVersion[8], 2);
  std::string otherKey = DiskCache::serializeEntry("another key with the same hash", *kernel);
  // JSON that is an object for this key but not an entry, with a valid checksum.
  std::string notEntry = valid.substr(0, 32) + R"({"key":"la-fuzz key","entry":1})";
  llvm::support::endian::write32le(&notEntry[12], notEntry.size() - 32);
  llvm::support::endian::write64le(&notEntry[16], 0);
  llvm::support::endian::write64le(
      &notEntry[24], llvm::xxh3_64bits(llvm::arrayRefFromStringRef(llvm::StringRef(notEntry).drop_front(32))));
  bool ok = writeSeed(directory, "valid.lak", valid) && writeSeed(directory, "truncated.lak", truncated) &&
            writeSeed(directory, "wrong-version.lak", wrongVersion) &&
            writeSeed(directory, "other-key.lak", otherKey) && writeSeed(directory, "not-an-entry.lak", notEntry);
  return ok ? 0 : 1;
}
