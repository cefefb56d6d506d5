//===- TuningDatabase.cpp - tuned configurations, shared between runs -----===//

#include "la/runtime/TuningDatabase.h"

#include "DiskCache.h"
#include "RedisClient.h"
#include "TuningBackends.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <cmath>

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

} // namespace

std::string TuningKey::family() const { return keyText(*this, /*withBucket=*/false); }
std::string TuningKey::str() const { return keyText(*this, /*withBucket=*/true); }

std::optional<int64_t> sequenceLength(llvm::ArrayRef<TensorSpec> arguments) {
  if (arguments.empty() || arguments.front().shape.size() < 2)
    return std::nullopt;
  const auto &shape = arguments.front().shape;
  return shape[shape.size() - 2];
}

llvm::StringMap<int64_t> tuningSizes(llvm::ArrayRef<TensorSpec> arguments) {
  llvm::StringMap<int64_t> sizes;
  if (std::optional<int64_t> length = sequenceLength(arguments))
    sizes["N"] = *length;
  return sizes;
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
      dims.push_back(length && size == *length ? "N" : std::to_string(size));
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

llvm::Expected<TimingStats> TimingStats::fromJSON(const llvm::json::Object *object, llvm::StringRef field) {
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

llvm::json::Value TimingStats::toJSON() const {
  return llvm::json::Object{
      {"median_ms", medianMs}, {"relative_spread", relativeSpread}, {"min_ms", minMs}, {"runs", runs}};
}

llvm::json::Value TuningRecord::toJSON() const {
  return llvm::json::Object{{"key", llvm::json::Object{{"kernel", key.kernel},
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
                                 target = keyObject->getString("target"), compiler = keyObject->getString("compiler");
  std::optional<int64_t> bucket = keyObject->getInteger("sequence_bucket"), threads = keyObject->getInteger("threads");
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
  auto best = TimingStats::fromJSON(object->getObject("best"), "best");
  if (!best)
    return best.takeError();
  auto baseline = TimingStats::fromJSON(object->getObject("baseline"), "baseline");
  if (!baseline)
    return baseline.takeError();
  record.best = *best;
  record.baseline = *baseline;
  if (const llvm::json::Object *provenance = object->getObject("provenance"))
    record.provenance = *provenance;
  return record;
}

TuningDatabase::~TuningDatabase() = default;
TuningLease::~TuningLease() = default;

bool replacesRecord(const TuningRecord &candidate, const TuningRecord &current) {
  double noise = std::max({0.01, candidate.best.relativeSpread, current.best.relativeSpread});
  return candidate.best.medianMs < current.best.medianMs * (1 - noise);
}

const TuningRecord *findNearestRecord(llvm::ArrayRef<TuningRecord> records, const TuningKey &key) {
  std::string exact = key.str(), family = key.family();
  const TuningRecord *nearest = nullptr;
  double nearestDistance = 0;
  for (const TuningRecord &record : records) {
    if (record.key.str() == exact)
      return &record;
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
  return nearest;
}

std::string hashName(llvm::StringRef text) {
  llvm::XXH128_hash_t hash = llvm::xxh3_128bits(llvm::arrayRefFromStringRef(text));
  return llvm::formatv("{0:x-16}{1:x-16}", hash.high64, hash.low64).str();
}

/// The default local file: `<cache dir>/tuning.jsonl`.
static llvm::Expected<std::string> defaultDatabasePath(llvm::StringRef cacheDirectory) {
  std::string directory = resolveCacheDirectory(cacheDirectory.str());
  if (directory.empty())
    return makeError("no tuning database: the cache directory is 'none' ($LA_CACHE_DIR); give a file path");
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, "tuning.jsonl");
  return std::string(path);
}

llvm::Expected<std::unique_ptr<TuningDatabase>> TuningDatabase::open(llvm::StringRef location,
                                                                     llvm::StringRef cacheDirectory) {
  if (!location.empty() && !isRedisURL(location))
    return openFileTuningDatabase(location.str());
  auto local = defaultDatabasePath(cacheDirectory);
  if (!local)
    return local.takeError();
  if (location.empty())
    return openFileTuningDatabase(*local);
  return openRedisTuningDatabase(location, openFileTuningDatabase(*local));
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
