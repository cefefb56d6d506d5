//===- DiskCache.cpp - compiled kernels on disk, published atomically -----===//

#include "DiskCache.h"
#include "RedisClient.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

namespace la {
namespace {

constexpr char kMagic[8] = {'L', 'A', 'K', 'E', 'R', 'N', 'E', 'L'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderBytes = 8 + 4 + 4 + 8 + 8;

llvm::json::Array specsToJSON(const std::vector<TensorSpec> &specs) {
  llvm::json::Array array;
  for (const TensorSpec &spec : specs) {
    llvm::json::Array shape;
    for (int64_t size : spec.shape)
      shape.push_back(size);
    array.push_back(llvm::json::Object{{"dtype", dtypeName(spec.dtype)}, {"shape", std::move(shape)}});
  }
  return array;
}

std::optional<std::vector<TensorSpec>> specsFromJSON(const llvm::json::Array *array) {
  if (!array)
    return std::nullopt;
  std::vector<TensorSpec> specs;
  for (const llvm::json::Value &value : *array) {
    const llvm::json::Object *object = value.getAsObject();
    if (!object)
      return std::nullopt;
    std::optional<llvm::StringRef> dtype = object->getString("dtype");
    const llvm::json::Array *shape = object->getArray("shape");
    std::optional<DType> parsed = dtype ? parseDType(*dtype) : std::nullopt;
    if (!parsed || !shape)
      return std::nullopt;
    TensorSpec spec;
    spec.dtype = *parsed;
    for (const llvm::json::Value &size : *shape) {
      std::optional<int64_t> s = size.getAsInteger();
      if (!s)
        return std::nullopt;
      spec.shape.push_back(*s);
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

uint64_t checksum(llvm::StringRef metadata, llvm::ArrayRef<char> object) {
  std::string joined = metadata.str();
  joined.append(object.begin(), object.end());
  return llvm::xxh3_64bits(llvm::arrayRefFromStringRef(joined));
}

} // namespace

std::string resolveCacheDirectory(const std::string &requested) {
  std::string directory = requested;
  if (directory.empty()) {
    if (std::optional<std::string> env = llvm::sys::Process::GetEnv("LA_CACHE_DIR")) {
      directory = *env;
    } else {
      llvm::SmallString<256> home;
      if (!llvm::sys::path::home_directory(home))
        return "";
      llvm::sys::path::append(home, ".cache", "la");
      directory = std::string(home);
    }
  }
  return directory == "none" ? std::string() : directory;
}

std::string DiskCache::entryPath(llvm::StringRef key) const {
  llvm::XXH128_hash_t hash = llvm::xxh3_128bits(llvm::arrayRefFromStringRef(key));
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, llvm::formatv("{0:x-16}{1:x-16}.lak", hash.high64, hash.low64).str());
  return std::string(path);
}

std::optional<CompiledKernel> DiskCache::parseEntry(llvm::StringRef bytes, llvm::StringRef key, bool &damaged) {
  damaged = true;
  if (bytes.size() < kHeaderBytes || !bytes.starts_with(llvm::StringRef(kMagic, 8)))
    return std::nullopt;
  const char *header = bytes.data() + 8;
  uint32_t version = llvm::support::endian::read32le(header);
  uint32_t metadataBytes = llvm::support::endian::read32le(header + 4);
  uint64_t objectBytes = llvm::support::endian::read64le(header + 8);
  uint64_t expectedChecksum = llvm::support::endian::read64le(header + 16);
  // Compare what follows the header rather than summing the sizes: a sum can wrap around to the file
  // size, and the bytes would then be split at an offset past the end of the file.
  if (version != kFormatVersion || metadataBytes > bytes.size() - kHeaderBytes ||
      objectBytes != bytes.size() - kHeaderBytes - metadataBytes)
    return std::nullopt;
  llvm::StringRef metadata = bytes.substr(kHeaderBytes, metadataBytes);
  llvm::StringRef object = bytes.substr(kHeaderBytes + metadataBytes);
  if (checksum(metadata, llvm::ArrayRef<char>(object.data(), object.size())) != expectedChecksum)
    return std::nullopt;

  llvm::Expected<llvm::json::Value> json = llvm::json::parse(metadata);
  if (!json) {
    llvm::consumeError(json.takeError());
    return std::nullopt;
  }
  const llvm::json::Object *root = json->getAsObject();
  if (!root || root->getString("key") != key) {
    damaged = false; // A hash collision with another key: leave that entry alone.
    return std::nullopt;
  }
  CompiledKernel kernel;
  std::optional<llvm::StringRef> entry = root->getString("entry");
  std::optional<int64_t> sliced = root->getInteger("sliced_dims");
  auto arguments = specsFromJSON(root->getArray("arguments"));
  auto results = specsFromJSON(root->getArray("results"));
  if (!entry || !sliced || !arguments || !results)
    return std::nullopt;
  damaged = false;
  kernel.entry = entry->str();
  kernel.arguments = std::move(*arguments);
  kernel.slicing.dims = *sliced;
  // Absent in entries of kernels without shared arguments.
  if (const llvm::json::Array *shared = root->getArray("shared_arguments")) {
    kernel.slicing.sharedArguments.assign(kernel.arguments.size(), false);
    for (const llvm::json::Value &index : *shared) {
      std::optional<int64_t> i = index.getAsInteger();
      if (!i || *i < 0 || *i >= static_cast<int64_t>(kernel.slicing.sharedArguments.size())) {
        damaged = true;
        return std::nullopt;
      }
      kernel.slicing.sharedArguments[*i] = true;
    }
  }
  // Absent unless a GPU call in pieces compiled it (SliceLayout::pieces).
  if (std::optional<int64_t> pieces = root->getInteger("slice_pieces")) {
    if (*pieces < 1) {
      damaged = true;
      return std::nullopt;
    }
    kernel.slicing.pieces = *pieces;
  }
  kernel.results = std::move(*results);
  kernel.object.assign(object.begin(), object.end());
  return kernel;
}

std::optional<CompiledKernel> DiskCache::load(llvm::StringRef key) const {
  if (!enabled())
    return std::nullopt;
  std::string path = entryPath(key);
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return std::nullopt;
  bool damaged = false;
  std::optional<CompiledKernel> kernel = parseEntry((*buffer)->getBuffer(), key, damaged);
  if (!kernel && damaged)
    llvm::sys::fs::remove(path);
  return kernel;
}

void DiskCache::discard(llvm::StringRef key) const {
  if (enabled())
    llvm::sys::fs::remove(entryPath(key));
}

std::string DiskCache::serializeEntry(llvm::StringRef key, const CompiledKernel &kernel) {
  llvm::json::Object root{{"key", key},
                          {"entry", kernel.entry},
                          {"sliced_dims", kernel.slicing.dims},
                          {"arguments", specsToJSON(kernel.arguments)},
                          {"results", specsToJSON(kernel.results)}};
  llvm::json::Array shared;
  for (auto [i, isShared] : llvm::enumerate(kernel.slicing.sharedArguments))
    if (isShared)
      shared.push_back(static_cast<int64_t>(i));
  if (!shared.empty())
    root["shared_arguments"] = std::move(shared);
  if (kernel.slicing.pieces != 1)
    root["slice_pieces"] = kernel.slicing.pieces;
  std::string metadata;
  llvm::raw_string_ostream(metadata) << llvm::json::Value(std::move(root));
  char header[kHeaderBytes];
  std::memcpy(header, kMagic, 8);
  llvm::support::endian::write32le(header + 8, kFormatVersion);
  llvm::support::endian::write32le(header + 12, metadata.size());
  llvm::support::endian::write64le(header + 16, kernel.object.size());
  llvm::support::endian::write64le(header + 24, checksum(metadata, kernel.object));
  std::string bytes(header, kHeaderBytes);
  bytes += metadata;
  bytes.append(kernel.object.begin(), kernel.object.end());
  return bytes;
}

/// The name of `key`'s entry on the remote.
static std::string remoteName(llvm::StringRef key) {
  llvm::XXH128_hash_t hash = llvm::xxh3_128bits(llvm::arrayRefFromStringRef(key));
  return llvm::formatv("la:kernel:{0:x-16}{1:x-16}", hash.high64, hash.low64).str();
}

llvm::Error DiskCache::publishLocally(llvm::StringRef key, llvm::StringRef bytes) const {
  if (!enabled())
    return llvm::Error::success();
  if (std::error_code ec = llvm::sys::fs::create_directories(directory))
    return llvm::createStringError(ec, "cannot create the kernel cache directory '%s': %s", directory.c_str(),
                                   ec.message().c_str());
  std::string path = entryPath(key);
  llvm::SmallString<256> temp;
  int fd;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%%%", fd, temp))
    return llvm::createStringError(ec, "cannot write to the kernel cache '%s': %s", directory.c_str(),
                                   ec.message().c_str());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << bytes;
    os.close();
    if (os.has_error()) {
      std::error_code ec = os.error();
      os.clear_error();
      llvm::sys::fs::remove(temp);
      return llvm::createStringError(ec, "writing the kernel cache entry '%s' failed: %s", temp.c_str(),
                                     ec.message().c_str());
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(temp, path)) {
    llvm::sys::fs::remove(temp);
    return llvm::createStringError(ec, "publishing the kernel cache entry '%s' failed: %s", path.c_str(),
                                   ec.message().c_str());
  }
  return llvm::Error::success();
}

llvm::Error DiskCache::store(llvm::StringRef key, const CompiledKernel &kernel) const {
  if (!enabled() && !remote)
    return llvm::Error::success();
  std::string bytes = serializeEntry(key, kernel);
  llvm::Error local = publishLocally(key, bytes);
  if (!remote)
    return local;
  auto reply = remote->command({"SET", remoteName(key), bytes});
  return llvm::joinErrors(std::move(local), reply ? llvm::Error::success() : reply.takeError());
}

llvm::Expected<std::optional<CompiledKernel>> DiskCache::loadRemote(llvm::StringRef key) const {
  if (!remote)
    return std::nullopt;
  std::string name = remoteName(key);
  auto reply = remote->command({"GET", name});
  if (!reply)
    return reply.takeError();
  if (reply->isNil())
    return std::nullopt;
  bool damaged = false;
  std::optional<CompiledKernel> kernel = parseEntry(reply->text, key, damaged);
  if (!kernel) {
    if (damaged)
      if (auto deleted = remote->command({"DEL", name}); !deleted)
        return deleted.takeError();
    return std::nullopt;
  }
  if (llvm::Error err = publishLocally(key, reply->text))
    return std::move(err);
  return kernel;
}

} // namespace la
