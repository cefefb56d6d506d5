//===- DiskCacheIntegrityTest.cpp - damaged or unusable kernel caches -----===//
//
// A cache entry (runtime/lib/DiskCache.h) that is truncated, corrupted, of another format version or not
// loadable is discarded and recompiled, and the fresh entry replaces it; a cache directory that cannot be
// created or written leaves the runtime working from memory with one warning. Each case checks the result
// of the call against a run without any cache.
//
//===----------------------------------------------------------------------===//

#include "la/runtime/Runtime.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <gtest/gtest.h>

#include <functional>

namespace {

constexpr const char *kProgram = R"mlir(
func.func @softmax_rows(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %e = la.map exp %x : tensor<?x?xf32> -> tensor<?x?xf32>
  %n = la.normalize sum %e along 1 : tensor<?x?xf32> -> tensor<?x?xf32>
  return %n : tensor<?x?xf32>
}
)mlir";

class DiskCacheIntegrity : public testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> dir;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("la-cache-test", dir));
    cacheDir = std::string(dir);
    input = la::HostTensor(la::TensorSpec{la::DType::F32, {3, 5}});
    for (int64_t i = 0; i < input.numElements(); ++i)
      input.set(i, 0.1 * i - 0.7);
    expected = runOnce("none", nullptr);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(cacheDir); }

  /// Runs `entry` of `source` with a fresh runtime of `threads` threads on the cache `dir` and returns its
  /// first result.
  static la::HostTensor runWithCache(const std::string &dir, unsigned threads, const char *source, const char *name,
                                     const char *entry, std::vector<la::TensorRef> inputs, la::CallStats *stats) {
    la::RuntimeOptions options;
    options.cacheDir = dir;
    options.numThreads = threads;
    auto runtime = la::Runtime::create(options);
    EXPECT_TRUE(bool(runtime));
    auto program = (*runtime)->loadSource(source, name);
    EXPECT_TRUE(bool(program)) << llvm::toString(program.takeError());
    auto results = (*runtime)->run(**program, entry, inputs, stats);
    EXPECT_TRUE(bool(results)) << llvm::toString(results.takeError());
    return std::move((*results)[0]);
  }

  /// Runs the entry with a fresh runtime on `dir` and returns its output.
  la::HostTensor runOnce(const std::string &dir, la::CallStats *stats) {
    return runWithCache(dir, 1, kProgram, "softmax_rows.mlir", "softmax_rows", {input.ref()}, stats);
  }

  void expectEqualToUncached(const la::HostTensor &output) {
    ASSERT_EQ(output.spec(), expected.spec());
    for (int64_t i = 0; i < output.numElements(); ++i)
      EXPECT_EQ(output.get(i), expected.get(i)) << "element " << i;
  }

  /// The cache's files (entries and anything else).
  std::vector<std::string> files() {
    std::vector<std::string> paths;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(cacheDir, ec), end; it != end && !ec; it.increment(ec))
      paths.push_back(it->path());
    return paths;
  }

  /// Compiles into the cache (or finds the entry a previous round repaired), then rewrites its single
  /// entry with `damage`.
  std::string compileAndDamage(const std::function<void(std::string &)> &damage) {
    runOnce(cacheDir, nullptr);
    std::vector<std::string> entries = files();
    EXPECT_EQ(entries.size(), 1u);
    auto buffer = llvm::MemoryBuffer::getFile(entries[0], /*IsText=*/false);
    EXPECT_TRUE(bool(buffer));
    std::string bytes = (*buffer)->getBuffer().str();
    damage(bytes);
    std::error_code ec;
    llvm::raw_fd_ostream os(entries[0], ec);
    os << bytes;
    return entries[0];
  }

  /// After damage: a fresh runtime recompiles (a miss, not an error), gets the right answer, and leaves
  /// a good entry that the next runtime loads.
  void expectRecompiledAndRepaired() {
    la::CallStats stats;
    la::HostTensor output = runOnce(cacheDir, &stats);
    EXPECT_EQ(stats.cache, la::CacheSource::Miss);
    expectEqualToUncached(output);
    EXPECT_EQ(files().size(), 1u);
    runOnce(cacheDir, &stats);
    EXPECT_EQ(stats.cache, la::CacheSource::Disk);
  }

  std::string cacheDir;
  la::HostTensor input;
  la::HostTensor expected;
};

// Header layout (DiskCache.h): "LAKERNEL" | u32 version | u32 metadata bytes | u64 object bytes | u64 xxh3.
constexpr size_t kVersionAt = 8, kMetadataSizeAt = 12, kObjectSizeAt = 16, kChecksumAt = 24, kHeaderBytes = 32;

TEST_F(DiskCacheIntegrity, EntryRoundTrip) {
  la::CallStats stats;
  runOnce(cacheDir, &stats);
  EXPECT_EQ(stats.cache, la::CacheSource::Miss);
  expectEqualToUncached(runOnce(cacheDir, &stats));
  EXPECT_EQ(stats.cache, la::CacheSource::Disk);
}

TEST_F(DiskCacheIntegrity, TruncatedEntries) {
  for (size_t keep : {size_t(0), size_t(7), size_t(kHeaderBytes - 1), size_t(kHeaderBytes + 10)}) {
    SCOPED_TRACE("kept " + std::to_string(keep) + " bytes");
    compileAndDamage([&](std::string &bytes) { bytes.resize(keep); });
    expectRecompiledAndRepaired();
  }
  compileAndDamage([](std::string &bytes) { bytes.resize(bytes.size() - 1); });
  expectRecompiledAndRepaired();
}

TEST_F(DiskCacheIntegrity, CorruptedBytes) {
  // A flipped byte in the magic, the metadata or the object is caught by the magic or the checksum.
  struct Place {
    const char *name;
    std::function<size_t(size_t)> offset;
  };
  for (const Place &place :
       {Place{"magic", [](size_t) { return size_t(0); }}, Place{"metadata", [](size_t) { return kHeaderBytes + 3; }},
        Place{"object", [](size_t size) { return size - 40; }}}) {
    SCOPED_TRACE(place.name);
    compileAndDamage([&](std::string &bytes) { bytes[place.offset(bytes.size())] ^= 0x5a; });
    expectRecompiledAndRepaired();
  }
}

TEST_F(DiskCacheIntegrity, WrongFormatVersion) {
  compileAndDamage([](std::string &bytes) { llvm::support::endian::write32le(&bytes[kVersionAt], 999); });
  expectRecompiledAndRepaired();
}

TEST_F(DiskCacheIntegrity, LyingSizeFields) {
  compileAndDamage([](std::string &bytes) { llvm::support::endian::write64le(&bytes[kObjectSizeAt], ~0ull); });
  expectRecompiledAndRepaired();
  compileAndDamage([](std::string &bytes) { llvm::support::endian::write32le(&bytes[kMetadataSizeAt], ~0u); });
  expectRecompiledAndRepaired();
}

TEST_F(DiskCacheIntegrity, ValidChecksumButUnloadableObject) {
  // A well-formed entry whose object file is garbage (as an entry from another LLVM could be): the checksum
  // is recomputed so only the loader can notice.
  compileAndDamage([](std::string &bytes) {
    uint32_t metadataBytes = llvm::support::endian::read32le(&bytes[kMetadataSizeAt]);
    size_t objectAt = kHeaderBytes + metadataBytes;
    for (size_t i = objectAt; i < bytes.size(); ++i)
      bytes[i] = char(i * 37);
    llvm::StringRef payload = llvm::StringRef(bytes).drop_front(kHeaderBytes);
    llvm::support::endian::write64le(&bytes[kChecksumAt], llvm::xxh3_64bits(llvm::arrayRefFromStringRef(payload)));
  });
  expectRecompiledAndRepaired();
}

TEST_F(DiskCacheIntegrity, UnwritableDirectoryFallsBackToMemoryWithOneWarning) {
  // A directory under a regular file can be neither created nor written, even by root (for whom a
  // read-only mode bit would not stop the write).
  std::string blocker = cacheDir + "/not-a-directory";
  {
    std::error_code ec;
    llvm::raw_fd_ostream(blocker, ec) << "x";
  }
  la::RuntimeOptions options;
  options.cacheDir = blocker + "/cache";
  options.numThreads = 1;
  auto runtime = la::Runtime::create(options);
  ASSERT_TRUE(bool(runtime));
  auto program = (*runtime)->loadSource(kProgram, "softmax_rows.mlir");
  ASSERT_TRUE(bool(program));
  testing::internal::CaptureStderr();
  la::CallStats first, second;
  auto results = (*runtime)->run(**program, "softmax_rows", {input.ref()}, &first);
  ASSERT_TRUE(bool(results)) << llvm::toString(results.takeError());
  // Another shape: a second miss whose store fails too, but warns no more.
  la::HostTensor other(la::TensorSpec{la::DType::F32, {2, 2}});
  auto otherResults = (*runtime)->run(**program, "softmax_rows", {other.ref()}, &second);
  ASSERT_TRUE(bool(otherResults)) << llvm::toString(otherResults.takeError());
  std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_EQ(first.cache, la::CacheSource::Miss);
  EXPECT_EQ(second.cache, la::CacheSource::Miss);
  expectEqualToUncached((*results)[0]);
  EXPECT_NE(warnings.find("la: warning: cannot create the kernel cache directory '" + blocker + "/cache'"),
            std::string::npos)
      << warnings;
  EXPECT_NE(warnings.find("continuing with the memory cache only"), std::string::npos) << warnings;
  EXPECT_EQ(warnings.find("warning", warnings.find("warning") + 1), std::string::npos) << "warned more than once:\n"
                                                                                       << warnings;
  // The memory cache still serves repeats.
  la::CallStats third;
  ASSERT_TRUE(bool((*runtime)->run(**program, "softmax_rows", {input.ref()}, &third)));
  EXPECT_EQ(third.cache, la::CacheSource::Memory);
}

TEST_F(DiskCacheIntegrity, MissingDirectoryIsCreated) {
  std::string nested = cacheDir + "/a/b/c";
  la::CallStats stats;
  runOnce(nested, &stats);
  EXPECT_EQ(stats.cache, la::CacheSource::Miss);
  expectEqualToUncached(runOnce(nested, &stats));
  EXPECT_EQ(stats.cache, la::CacheSource::Disk);
}

} // namespace

namespace {

// A kernel whose bias has no batch dimension runs slice by slice with the bias read whole by every slice
// (Analysis/BatchSlicing.h). The cache entry keeps that layout: a kernel loaded from disk must not step the
// bias per slice, or every slice after the first would read past it.
constexpr const char *kSharedBiasProgram = R"mlir(
func.func @add_bias(%x: tensor<?x?x?xf32>, %w: tensor<?x?xf32>) -> tensor<?x?x?xf32> {
  %y = la.map add "btd,td->btd" %x, %w : tensor<?x?x?xf32>, tensor<?x?xf32> -> tensor<?x?x?xf32>
  return %y : tensor<?x?x?xf32>
}
)mlir";

TEST_F(DiskCacheIntegrity, SharedArgumentLayoutSurvivesTheCache) {
  la::HostTensor x(la::TensorSpec{la::DType::F32, {4, 3, 5}});
  la::HostTensor w(la::TensorSpec{la::DType::F32, {3, 5}});
  for (int64_t i = 0; i < x.numElements(); ++i)
    x.set(i, 0.25 * i);
  for (int64_t i = 0; i < w.numElements(); ++i)
    w.set(i, -1.0 - i);
  for (la::CacheSource wanted : {la::CacheSource::Miss, la::CacheSource::Disk}) {
    la::CallStats stats;
    la::HostTensor y =
        runWithCache(cacheDir, 2, kSharedBiasProgram, "add_bias.mlir", "add_bias", {x.ref(), w.ref()}, &stats);
    EXPECT_EQ(stats.cache, wanted);
    for (int64_t b = 0; b < 4; ++b)
      for (int64_t i = 0; i < 15; ++i)
        EXPECT_EQ(y.get(b * 15 + i), x.get(b * 15 + i) + w.get(i)) << "batch " << b << ", element " << i;
  }
}

} // namespace
