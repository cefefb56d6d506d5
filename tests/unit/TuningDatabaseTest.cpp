//===- TuningDatabaseTest.cpp - the JSON-lines tuning database ------------===//
//
// Keys and buckets, the nearest-bucket lookup, damaged lines, and many processes appending to one file at
// once.
//
//===----------------------------------------------------------------------===//

#include "la/runtime/TuningDatabase.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <sys/wait.h>
#include <unistd.h>

using namespace la;

namespace {

class TuningDatabaseTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("la-tuning-db", directory));
    path = (directory + "/tuning.jsonl").str();
  }
  void TearDown() override { llvm::sys::fs::remove_directories(directory); }

  std::unique_ptr<TuningDatabase> open() {
    auto database = TuningDatabase::open(path);
    EXPECT_TRUE(bool(database)) << (database ? "" : llvm::toString(database.takeError()));
    return database ? std::move(*database) : nullptr;
  }

  static TuningKey keyFor(int64_t n, llvm::StringRef entry = "linear_attention_causal", unsigned threads = 2) {
    TensorSpec q{DType::F32, {2, 8, n, 64}};
    return makeTuningKey("0123abcd", entry, {q, q, q}, threads, "cpu:test:0:2t", "la-compiler test");
  }

  static TuningRecord recordFor(const TuningKey &key, int64_t chunk, double ms) {
    TuningRecord record;
    record.key = key;
    mlir::la::PipelineConfig config;
    config.chunkSize = chunk;
    record.config = config.str();
    record.best = TimingStats::of({ms, ms, ms});
    record.baseline = TimingStats::of({2 * ms});
    return record;
  }

  static int64_t chunkOf(const TuningRecord &record) {
    return cantFail(mlir::la::PipelineConfig::parse(record.config)).chunkSize;
  }

  llvm::SmallString<128> directory;
  std::string path;
};

TEST_F(TuningDatabaseTest, KeysBucketTheSequenceLengthToPowersOfTwo) {
  TuningKey key = keyFor(1000);
  EXPECT_EQ(key.sequenceBucket, 1024);
  EXPECT_EQ(key.arguments.front(), "f32[2x8xNx64]");
  EXPECT_EQ(key.str(), keyFor(1024).str());
  EXPECT_NE(key.str(), keyFor(1025).str());
  EXPECT_EQ(key.family(), keyFor(4096).family());
  EXPECT_NE(key.family(), keyFor(1024, "linear_attention").family());
  EXPECT_NE(key.family(), keyFor(1024, "linear_attention_causal", 1).family());
  TensorSpec q{DType::F32, {2, 8, 1000, 64}};
  EXPECT_EQ(makeTuningKey("h", "e", {q}, 1, "t", "c", SequenceBuckets::Exact).sequenceBucket, 1000);
}

TEST_F(TuningDatabaseTest, LookupTakesTheExactKeyElseTheNearestBucketOfTheFamily) {
  auto database = open();
  ASSERT_TRUE(database);
  EXPECT_FALSE(cantFail(database->lookup(keyFor(1024))).has_value()); // an empty database (no file yet)
  ASSERT_FALSE(database->store(recordFor(keyFor(1024), 32, 1.0)));
  ASSERT_FALSE(database->store(recordFor(keyFor(16384), 64, 1.0)));
  auto lookup = [&](const TuningKey &key) -> std::optional<int64_t> {
    auto record = cantFail(database->lookup(key));
    if (!record)
      return std::nullopt;
    return chunkOf(*record);
  };
  EXPECT_EQ(lookup(keyFor(1000)), 32); // same bucket
  EXPECT_EQ(lookup(keyFor(2048)), 32); // 2× from 1024, 8× from 16384
  EXPECT_EQ(lookup(keyFor(8192)), 64); // 8× from 1024, 2× from 16384
  EXPECT_EQ(lookup(keyFor(4096)), 64); // 4× from both: the larger bucket
  EXPECT_EQ(lookup(keyFor(65536)), 64);
  EXPECT_EQ(lookup(keyFor(1024, "flow_attention")), std::nullopt);
  EXPECT_EQ(lookup(keyFor(1024, "linear_attention_causal", 1)), std::nullopt);
}

TEST_F(TuningDatabaseTest, TheFastestRecordOfAKeyWins) {
  auto database = open();
  ASSERT_TRUE(database);
  ASSERT_FALSE(database->store(recordFor(keyFor(1024), 32, 2.0)));
  ASSERT_FALSE(database->store(recordFor(keyFor(1024), 8, 1.0)));
  ASSERT_FALSE(database->store(recordFor(keyFor(1024), 64, 3.0)));
  auto record = cantFail(database->lookup(keyFor(1024)));
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(chunkOf(*record), 8);
  EXPECT_EQ(cantFail(database->records()).size(), 1u);
}

TEST_F(TuningDatabaseTest, DamagedLinesAreSkippedAndTheOthersStillServe) {
  auto database = open();
  ASSERT_TRUE(database);
  ASSERT_FALSE(database->store(recordFor(keyFor(1024), 32, 1.0)));
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Append);
    ASSERT_FALSE(ec);
    os << "{\"key\":{\"kernel\":\"0123\n";                                                        // a torn write
    os << "[1, 2, 3]\n";                                                                          // not an object
    os << "{\"key\":{},\"config\":\"chunk-size=8\"}\n";                                           // no key fields
    os << "{\"key\":" << keyFor(1024).str() << ",\"config\":\"bogus=1\",\"status\":\"tuned\"}\n"; // a bad config
  }
  ASSERT_FALSE(database->store(recordFor(keyFor(8192), 64, 1.0)));
  auto records = database->records();
  ASSERT_TRUE(bool(records)) << llvm::toString(records.takeError());
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ(chunkOf((*records)[0]), 32);
  EXPECT_EQ(chunkOf((*records)[1]), 64);
}

TEST_F(TuningDatabaseTest, ARecordSurvivesItsJSONRoundTrip) {
  TuningRecord record = recordFor(keyFor(4096), 32, 1.5);
  record.status = "partial";
  record.provenance["strategy"] = "anneal";
  auto parsed = TuningRecord::fromJSON(record.toJSON());
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_EQ(parsed->key.str(), record.key.str());
  EXPECT_EQ(parsed->config, record.config);
  EXPECT_EQ(parsed->status, "partial");
  EXPECT_EQ(parsed->best.medianMs, 1.5);
  EXPECT_EQ(parsed->baseline.medianMs, 3.0);
  EXPECT_EQ(parsed->provenance.getString("strategy"), std::optional<llvm::StringRef>("anneal"));
}

TEST_F(TuningDatabaseTest, ConcurrentWriterProcessesLoseNoRecordAndTearNoLine) {
  constexpr int kWriters = 8, kRecordsEach = 50;
  std::vector<pid_t> children;
  for (int writer = 0; writer < kWriters; ++writer) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto database = TuningDatabase::open(path);
      int failures = database ? 0 : 1;
      for (int i = 0; database && i < kRecordsEach; ++i) {
        // Each record its own key (a bucket per writer and record), with a long provenance so that writes are
        // larger than one page.
        TuningRecord record = recordFor(keyFor(int64_t(1) << (writer + 1), "e" + std::to_string(i)), 16, 1.0);
        record.provenance["padding"] = std::string(6000, 'x');
        if (llvm::Error err = (*database)->store(record)) {
          llvm::consumeError(std::move(err));
          ++failures;
        }
      }
      _exit(failures);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  auto buffer = llvm::MemoryBuffer::getFile(path);
  ASSERT_TRUE(bool(buffer));
  llvm::SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
  EXPECT_EQ(lines.size(), size_t(kWriters * kRecordsEach));
  auto database = open();
  ASSERT_TRUE(database);
  auto records = database->records();
  ASSERT_TRUE(bool(records));
  EXPECT_EQ(records->size(), size_t(kWriters * kRecordsEach));
}

TEST_F(TuningDatabaseTest, AMalformedRedisAddressIsAnErrorAndAServerThatIsDownFallsBackToTheLocalFile) {
  auto malformed = TuningDatabase::open("redis://:6379", directory);
  ASSERT_FALSE(malformed);
  EXPECT_NE(llvm::toString(malformed.takeError()).find("is not a Redis address"), std::string::npos);
  // Port 1 on loopback: nothing listens there.
  auto down = TuningDatabase::open("redis://127.0.0.1:1", directory);
  ASSERT_TRUE(bool(down)) << llvm::toString(down.takeError());
  EXPECT_EQ((*down)->describe(), (directory + "/tuning.jsonl").str());
  ASSERT_FALSE((*down)->store(recordFor(keyFor(1024), 32, 1.0)));
  EXPECT_TRUE(llvm::sys::fs::exists(directory + "/tuning.jsonl"));
}

} // namespace
