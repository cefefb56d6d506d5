//===- FuzzCacheEntry.cpp - libFuzzer target for the disk-cache entry loader ===//
//
// Cache entries are files in a shared directory ($LA_CACHE_DIR) that other processes, other versions of
// the compiler or a full disk may have left in any state, so `DiskCache::parseEntry` must turn any bytes
// into a kernel, a damaged entry or a collision, never a crash. Every input is parsed as it is, and again
// with its checksum recomputed: a random mutation almost never keeps the xxh3 of the body right, so
// without the second pass the fuzzer would not get past the checksum to the header sizes and the JSON.
// A kernel that parses must describe exactly the bytes it came from and survive `serializeEntry`.
// The seeds (fuzz/corpus/cache-entry) are entries for kFuzzKey, written by la-fuzz-cache-seeds.
//
//===----------------------------------------------------------------------===//

#include "DiskCache.h"
#include "FuzzCacheKey.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/xxhash.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace la;

namespace {

/// Header layout, as DiskCache.h documents it: magic, version, metadata size, object size, checksum.
constexpr size_t kHeaderBytes = 32;
constexpr size_t kChecksumOffset = 24;

void check(bool condition, const char *what) {
  if (condition)
    return;
  fprintf(stderr, "la-fuzz-cache-entry: invariant violated: %s\n", what);
  abort();
}

bool sameKernel(const CompiledKernel &a, const CompiledKernel &b) {
  return a.entry == b.entry && a.arguments == b.arguments && a.results == b.results && a.slicing == b.slicing &&
         a.object == b.object;
}

void parseAndCheck(llvm::StringRef bytes) {
  bool damaged = false;
  std::optional<CompiledKernel> kernel = DiskCache::parseEntry(bytes, kFuzzKey, damaged);
  if (!kernel)
    return;
  check(!damaged, "a kernel was returned for a damaged entry");
  uint32_t metadataBytes = llvm::support::endian::read32le(bytes.data() + 12);
  uint64_t objectBytes = llvm::support::endian::read64le(bytes.data() + 16);
  check(kernel->object.size() == objectBytes, "the object size differs from the header's");
  check(kHeaderBytes + uint64_t(metadataBytes) + kernel->object.size() == bytes.size(),
        "header, metadata and object do not add up to the entry");

  std::string rewritten = DiskCache::serializeEntry(kFuzzKey, *kernel);
  bool damagedAgain = false;
  std::optional<CompiledKernel> again = DiskCache::parseEntry(rewritten, kFuzzKey, damagedAgain);
  check(again.has_value(), "a re-serialized entry does not parse");
  check(sameKernel(*kernel, *again), "a re-serialized entry parses to a different kernel");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  parseAndCheck(bytes);
  if (size < kHeaderBytes)
    return 0;
  // The checksum covers everything after the header, whatever sizes the header declares.
  std::string patched = bytes.str();
  llvm::support::endian::write64le(&patched[kChecksumOffset],
                                   llvm::xxh3_64bits(llvm::arrayRefFromStringRef(bytes.drop_front(kHeaderBytes))));
  parseAndCheck(patched);
  return 0;
}
