//===- TuningDatabase.cpp - tuned configurations, shared between runs -----===//

#include "la/runtime/TuningDatabase.h"

#include "DiskCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <unistd.h>

namespace la {
namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

llvm::json::Array toArray(const std::vector<std::string> &items) {
  llvm::json::Array array;
  for (const std::string &item : items)
    array.push_back(item);
  return array;
}

/// The key's JSON, with or without the sequence bucket (llvm::json prints object keys sorted, so the text is
/// canonical).
std::string keyText(const TuningKey &key, bool withBucket) {
  llvm::json::Object object{{"kernel", key.kernel},   {"entry", key.entry},   {"arguments", toArray(key.arguments)},
                            {"threads", key.threads}, {"target", key.target}, {"compiler", key.compiler}};
  if (withBucket)
    object["sequence_bucket"] = key.sequenceBucket;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(object));
  return text;
}

llvm::Expected<TimingStats> timingFromJSON(const llvm::json::Object *object, llvm::StringRef field) {
  if (!object)
    return makeError("'" + field + "' is not an object");
  TimingStats stats;
  std::optional<double> median = object->getNumber("median_ms"), spread = object->getNumber("relative_spread"),
                        min = object->getNumber("min_ms");
  std::optional<int64_t> runs = object->getInteger("runs");
  if (!median || !spread || !min || !runs || *runs < 0)
    return makeError("'" + field + "' lacks median_ms, relative_spread, min_ms or runs");
  stats.medianMs = *median;
  stats.relativeSpread = *spread;
  stats.minMs = *min;
  stats.runs = unsigned(*runs);
  return stats;
}

/// Of two records for one key, whether `candidate` replaces `current`: it is faster (ties: the later wins).
bool replaces(const TuningRecord &candidate, const TuningRecord &current) {
  return candidate.best.medianMs <= current.best.medianMs;
}

/// The JSON-lines backend.
class FileTuningDatabase : public TuningDatabase {
public:
  explicit FileTuningDatabase(std::string path) : path(std::move(path)) {}

  llvm::Error store(const TuningRecord &record) override {
    llvm::SmallString<128> directory(path);
    llvm::sys::path::remove_filename(directory);
    if (!directory.empty())
      if (std::error_code ec = llvm::sys::fs::create_directories(directory))
        return makeError("tuning database " + path + ": cannot create its directory: " + ec.message());
    std::string line;
    llvm::raw_string_ostream os(line);
    os << record.toJSON() << "\n";
    int fd;
    if (std::error_code ec = llvm::sys::fs::openFileForWrite(path, fd, llvm::sys::fs::CD_OpenAlways,
                                                             llvm::sys::fs::OF_Append | llvm::sys::fs::OF_Text))
      return makeError("tuning database " + path + ": cannot open it for writing: " + ec.message());
    // One write under an exclusive lock: concurrent writers append whole lines, one after the other.
    std::error_code ec = llvm::sys::fs::lockFile(fd);
    if (!ec) {
      size_t written = 0;
      while (written < line.size()) {
        ssize_t n = ::write(fd, line.data() + written, line.size() - written);
        if (n < 0) {
          if (errno == EINTR)
            continue;
          ec = std::error_code(errno, std::generic_category());
          break;
        }
        written += size_t(n);
      }
      llvm::sys::fs::unlockFile(fd);
    }
    ::close(fd);
    if (ec)
      return makeError("tuning database " + path + ": cannot append a record: " + ec.message());
    return llvm::Error::success();
  }

  llvm::Expected<std::optional<TuningRecord>> lookup(const TuningKey &key) override {
    auto all = records();
    if (!all)
      return all.takeError();
    std::string exact = key.str(), family = key.family();
    const TuningRecord *nearest = nullptr;
    double nearestDistance = 0;
    for (const TuningRecord &record : *all) {
      if (record.key.str() == exact)
        return record;
      if (record.key.family() != family || key.sequenceBucket <= 0 || record.key.sequenceBucket <= 0)
        continue;
      double distance = std::fabs(std::log2(double(record.key.sequenceBucket) / double(key.sequenceBucket)));
      bool nearer = !nearest || distance < nearestDistance ||
                    (distance == nearestDistance && record.key.sequenceBucket > nearest->key.sequenceBucket);
      if (nearer) {
        nearest = &record;
        nearestDistance = distance;
      }
    }
    if (!nearest)
      return std::nullopt;
    return *nearest;
  }

  llvm::Expected<std::vector<TuningRecord>> records() override {
    std::vector<TuningRecord> result;
    if (!llvm::sys::fs::exists(path))
      return result;
    auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
    if (!buffer)
      return makeError("tuning database " + path + ": cannot read it: " + buffer.getError().message());
    std::map<std::string, size_t> indexOfKey;
    llvm::SmallVector<llvm::StringRef> lines;
    (*buffer)->getBuffer().split(lines, '\n');
    for (auto [number, line] : llvm::enumerate(lines)) {
      if (line.trim().empty())
        continue;
      auto parsed = llvm::json::parse(line);
      llvm::Expected<TuningRecord> record =
          parsed ? TuningRecord::fromJSON(*parsed) : llvm::Expected<TuningRecord>(parsed.takeError());
      if (!record) {
        llvm::WithColor::warning(llvm::errs(), "la")
            << path << ":" << number + 1 << ": damaged tuning record skipped: " << llvm::toString(record.takeError())
            << "\n";
        continue;
      }
      auto [it, inserted] = indexOfKey.try_emplace(record->key.str(), result.size());
      if (inserted)
        result.push_back(std::move(*record));
      else if (replaces(*record, result[it->second]))
        result[it->second] = std::move(*record);
    }
    return result;
  }

  std::string describe() const override { return path; }

private:
  std::string path;
};

} // namespace

std::string TuningKey::family() const { return keyText(*this, /*withBucket=*/false); }
std::string TuningKey::str() const { return keyText(*this, /*withBucket=*/true); }

std::optional<int64_t> sequenceLength(llvm::ArrayRef<TensorSpec> arguments) {
  if (arguments.empty() || arguments.front().shape.size() < 2)
    return std::nullopt;
  const auto &shape = arguments.front().shape;
  return shape[shape.size() - 2];
}

TuningKey makeTuningKey(llvm::StringRef kernelHash, llvm::StringRef entry, llvm::ArrayRef<TensorSpec> arguments,
                        unsigned threads, llvm::StringRef target, llvm::StringRef compiler, SequenceBuckets buckets) {
  TuningKey key;
  key.kernel = kernelHash.str();
  key.entry = entry.str();
  key.threads = threads;
  key.target = target.str();
  key.compiler = compiler.str();
  std::optional<int64_t> length = sequenceLength(arguments);
  if (length && *length > 0)
    key.sequenceBucket = buckets == SequenceBuckets::Exact ? *length : int64_t(llvm::PowerOf2Ceil(*length));
  for (const TensorSpec &spec : arguments) {
    // Every dimension equal to N is the sequence (the N of q, k, v, of a [B, H, N] gate, both of a [N, N] bias).
    std::vector<std::string> dims;
    for (int64_t size : spec.shape)
      dims.push_back(length && size == *length ? "~" + std::to_string(key.sequenceBucket) : std::to_string(size));
    key.arguments.push_back((dtypeName(spec.dtype) + "[" + llvm::join(dims, "x") + "]").str());
  }
  return key;
}

TimingStats TimingStats::of(std::vector<double> times) {
  TimingStats stats;
  if (times.empty())
    return stats;
  std::sort(times.begin(), times.end());
  auto quantile = [&](double q) {
    double at = q * double(times.size() - 1);
    size_t low = size_t(at);
    size_t high = std::min(low + 1, times.size() - 1);
    return times[low] + (at - double(low)) * (times[high] - times[low]);
  };
  stats.medianMs = quantile(0.5);
  stats.relativeSpread = stats.medianMs > 0 ? (quantile(0.75) - quantile(0.25)) / 2 / stats.medianMs : 0;
  stats.minMs = times.front();
  stats.runs = unsigned(times.size());
  return stats;
}

llvm::json::Value TimingStats::toJSON() const {
  return llvm::json::Object{
      {"median_ms", medianMs}, {"relative_spread", relativeSpread}, {"min_ms", minMs}, {"runs", runs}};
}

llvm::json::Value TuningRecord::toJSON() const {
  return llvm::json::Object{{"key",
                             llvm::json::Object{{"kernel", key.kernel},
                                                {"entry", key.entry},
                                                {"arguments", toArray(key.arguments)},
                                                {"sequence_bucket", key.sequenceBucket},
                                                {"threads", key.threads},
                                                {"target", key.target},
                                                {"compiler", key.compiler}}},
                            {"config", config},
                            {"best", best.toJSON()},
                            {"baseline", baseline.toJSON()},
                            {"status", status},
                            {"provenance", llvm::json::Object(provenance)}};
}

llvm::Expected<TuningRecord> TuningRecord::fromJSON(const llvm::json::Value &value) {
  const llvm::json::Object *object = value.getAsObject();
  if (!object)
    return makeError("not a JSON object");
  const llvm::json::Object *keyObject = object->getObject("key");
  if (!keyObject)
    return makeError("no 'key' object");
  TuningRecord record;
  std::optional<llvm::StringRef> kernel = keyObject->getString("kernel"), entry = keyObject->getString("entry"),
                                 target = keyObject->getString("target"),
                                 compiler = keyObject->getString("compiler");
  std::optional<int64_t> bucket = keyObject->getInteger("sequence_bucket"),
                         threads = keyObject->getInteger("threads");
  const llvm::json::Array *arguments = keyObject->getArray("arguments");
  if (!kernel || !entry || !target || !compiler || !bucket || !threads || *threads < 1 || !arguments)
    return makeError("the key lacks kernel, entry, arguments, sequence_bucket, threads, target or compiler");
  record.key.kernel = kernel->str();
  record.key.entry = entry->str();
  record.key.target = target->str();
  record.key.compiler = compiler->str();
  record.key.sequenceBucket = *bucket;
  record.key.threads = unsigned(*threads);
  for (const llvm::json::Value &argument : *arguments) {
    std::optional<llvm::StringRef> text = argument.getAsString();
    if (!text)
      return makeError("an argument of the key is not a string");
    record.key.arguments.push_back(text->str());
  }
  std::optional<llvm::StringRef> config = object->getString("config"), status = object->getString("status");
  if (!config || !status)
    return makeError("no 'config' or 'status' string");
  if (auto parsed = mlir::la::PipelineConfig::parse(*config); !parsed)
    return makeError("config '" + *config + "': " + llvm::toString(parsed.takeError()));
  record.config = config->str();
  record.status = status->str();
  auto best = timingFromJSON(object->getObject("best"), "best");
  if (!best)
    return best.takeError();
  auto baseline = timingFromJSON(object->getObject("baseline"), "baseline");
  if (!baseline)
    return baseline.takeError();
  record.best = *best;
  record.baseline = *baseline;
  if (const llvm::json::Object *provenance = object->getObject("provenance"))
    record.provenance = *provenance;
  return record;
}

TuningDatabase::~TuningDatabase() = default;

llvm::Expected<std::unique_ptr<TuningDatabase>> TuningDatabase::open(llvm::StringRef location) {
  if (location.starts_with("redis://"))
    return makeError("tuning database " + location + ": this build has no Redis backend yet; give a file path");
  if (!location.empty())
    return std::make_unique<FileTuningDatabase>(location.str());
  std::string directory = resolveCacheDirectory("");
  if (directory.empty())
    return makeError("no tuning database: the cache directory is 'none' ($LA_CACHE_DIR); give a file path");
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, "tuning.jsonl");
  return std::make_unique<FileTuningDatabase>(std::string(path));
}

std::string getTargetFingerprint(mlir::la::PipelineTarget target, const mlir::la::PipelineConfig &config) {
  if (target == mlir::la::PipelineTarget::CUDA)
    return "cuda:" + config.arch;
  std::string cpu = config.targetCPU == "host" ? llvm::sys::getHostCPUName().str() : config.targetCPU;
  std::string features = config.targetFeatures;
  if (features == "host") {
    std::vector<std::string> enabled;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      if (feature.getValue())
        enabled.push_back(feature.getKey().str());
    llvm::sort(enabled);
    features = llvm::join(enabled, ",");
  }
  return llvm::formatv("cpu:{0}:{1:x-8}:{2}t", cpu, uint32_t(llvm::xxh3_64bits(features)),
                       llvm::hardware_concurrency().compute_thread_count())
      .str();
}

} // namespace la
