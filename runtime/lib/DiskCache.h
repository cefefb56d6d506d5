//===- DiskCache.h - compiled kernels on disk, published atomically -*- C++ -*-===//
//
// Internal to the runtime. One file per cache key, `<dir>/<128-bit key hash>.lak`:
//
//   "LAKERNEL" | u32 format version | u32 metadata bytes | u64 object bytes | u64 xxh3 of (metadata ‖ object)
//   | metadata (JSON: the full key, entry, argument/result types, sliced dims) | object file
//
// Entries are written to a unique temporary file in the same directory and renamed into place, so a reader
// sees either no entry or a whole one, however many processes compile the same key at once. A truncated,
// corrupted, wrong-version or colliding entry is reported as a miss and removed.
//
// With a remote (a Redis server shared by a cluster), every entry stored is also set there, as the same bytes
// under `la:kernel:<key hash>`, and a local miss asks the remote: an entry that passes the same checks is
// published locally and used, a damaged one deleted. So a cluster compiles each kernel once.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_LIB_DISKCACHE_H
#define LA_RUNTIME_LIB_DISKCACHE_H

#include "la/runtime/Compiler.h"

#include <memory>

#include <optional>
#include <string>

namespace la {

/// The cache directory: `requested`, else `$LA_CACHE_DIR`, else `~/.cache/la`; empty (no disk cache) when
/// the chosen value is "none", wherever it came from. The tuning database's default file lives there too.
std::string resolveCacheDirectory(const std::string &requested);

class RedisClient;

class DiskCache {
public:
  /// `directory` empty disables the local cache; `remote` null means none.
  explicit DiskCache(std::string directory, std::shared_ptr<RedisClient> remote = nullptr)
      : directory(std::move(directory)), remote(std::move(remote)) {}

  bool enabled() const { return !directory.empty(); }
  const std::string &path() const { return directory; }

  /// The entry for `key`, or nullopt on a miss (including a damaged entry, which is removed).
  std::optional<CompiledKernel> load(llvm::StringRef key) const;
  /// Removes the entry for `key`: for entries that parse but turn out unusable later (an object that does
  /// not load), which `load` cannot see.
  void discard(llvm::StringRef key) const;
  /// Publishes `kernel` under `key`, locally and on the remote.
  llvm::Error store(llvm::StringRef key, const CompiledKernel &kernel) const;
  /// After a local miss: the remote's entry for `key`, checked like a local one and published locally; a
  /// damaged one is deleted there. A remote that fails is an error (the caller warns and goes on).
  llvm::Expected<std::optional<CompiledKernel>> loadRemote(llvm::StringRef key) const;
  bool hasRemote() const { return remote != nullptr; }

  /// The file an entry for `key` lives in.
  std::string entryPath(llvm::StringRef key) const;

  /// The complete bytes of the entry file for `key` and `kernel` (what `store` publishes).
  static std::string serializeEntry(llvm::StringRef key, const CompiledKernel &kernel);
  /// Decodes the bytes of an entry file looked up for `key`; touches no file, so the fuzzer
  /// (fuzz/FuzzCacheEntry.cpp) can call it on any bytes. On nullopt, `damaged` says whether the entry is
  /// truncated, corrupt or of another format version (`load` removes it) rather than one for a different
  /// key whose hash collides with this one (left alone).
  static std::optional<CompiledKernel> parseEntry(llvm::StringRef bytes, llvm::StringRef key, bool &damaged);

private:
  llvm::Error publishLocally(llvm::StringRef key, llvm::StringRef bytes) const;

  std::string directory;
  std::shared_ptr<RedisClient> remote;
};

} // namespace la

#endif // LA_RUNTIME_LIB_DISKCACHE_H
