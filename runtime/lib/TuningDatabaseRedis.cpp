//===- TuningDatabaseRedis.cpp - tuning records on a Redis server ---------===//
//
// Layout (every name under the prefix `la:tuning:`):
//   families              a set of the family hashes below
//   family:<hash>         a hash per key family: field = sequence bucket, value = the record's JSON
//   lease:<hash>          the lease of one key: the holder's description, with an expiry
//
// A record replaces the one of its key only if faster beyond noise, decided by a script on the server so
// that two tuners storing at once cannot both win. When the server cannot be reached, each operation warns
// once and goes to the local fallback file instead, so a run never fails for want of Redis.
//
//===----------------------------------------------------------------------===//

#include "RedisClient.h"
#include "TuningBackends.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <mutex>

namespace la {
namespace {

constexpr llvm::StringLiteral kPrefix = "la:tuning:";

/// KEYS[1] the family hash, KEYS[2] the set of families; ARGV[1] the bucket, ARGV[2] the record. Stores the
/// record unless the current one is as fast within noise (replacesRecord's rule); returns 1 if stored.
constexpr llvm::StringLiteral kStoreScript = R"lua(
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current then
  local old = cjson.decode(current).best
  local new = cjson.decode(ARGV[2]).best
  local noise = math.max(0.01, old.relative_spread, new.relative_spread)
  if new.median_ms >= old.median_ms * (1 - noise) then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SADD', KEYS[2], KEYS[1])
return 1
)lua";

/// KEYS[1] the lease; ARGV[1] the owner, ARGV[2] milliseconds. Extends it if the owner still holds it.
constexpr llvm::StringLiteral kRenewScript = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
)lua";

/// KEYS[1] the lease; ARGV[1] the owner. Deletes it if the owner still holds it.
constexpr llvm::StringLiteral kReleaseScript = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
)lua";

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

std::string familyKey(const TuningKey &key) { return (kPrefix + "family:" + hashName(key.family())).str(); }

llvm::Expected<TuningRecord> parseRecord(llvm::StringRef text, llvm::StringRef where) {
  auto parsed = llvm::json::parse(text);
  if (!parsed)
    return makeError(where + ": " + llvm::toString(parsed.takeError()));
  auto record = TuningRecord::fromJSON(*parsed);
  if (!record)
    return makeError(where + ": " + llvm::toString(record.takeError()));
  return record;
}

class RedisLease : public TuningLease {
public:
  RedisLease(std::shared_ptr<RedisClient> client, std::string key, std::string owner)
      : client(std::move(client)), key(std::move(key)), owner(std::move(owner)) {}
  ~RedisLease() override {
    if (auto reply = client->command({"EVAL", kReleaseScript, "1", key, owner}); !reply)
      llvm::consumeError(reply.takeError()); // it expires anyway
  }
  llvm::Error renew(double seconds) override {
    std::string ms = std::to_string(int64_t(seconds * 1000));
    auto reply = client->command({"EVAL", kRenewScript, "1", key, owner, ms});
    if (!reply)
      return reply.takeError();
    if (reply->integer != 1)
      return makeError(client->url() + ": the lease on " + key + " ran out and another tuner took it");
    return llvm::Error::success();
  }

private:
  std::shared_ptr<RedisClient> client;
  std::string key, owner;
};

class RedisTuningDatabase : public TuningDatabase {
public:
  RedisTuningDatabase(std::shared_ptr<RedisClient> client, std::unique_ptr<TuningDatabase> fallback)
      : client(std::move(client)), fallback(std::move(fallback)) {}

  llvm::Error store(const TuningRecord &record) override {
    std::string json;
    llvm::raw_string_ostream os(json);
    os << record.toJSON();
    std::string bucket = std::to_string(record.key.sequenceBucket);
    auto reply =
        client->command({"EVAL", kStoreScript, "2", familyKey(record.key), (kPrefix + "families").str(), bucket, json});
    if (!reply)
      return useFallback(reply.takeError()).store(record);
    return llvm::Error::success();
  }

  llvm::Expected<std::optional<TuningRecord>> lookup(const TuningKey &key) override {
    auto reply = client->command({"HGETALL", familyKey(key)});
    if (!reply)
      return useFallback(reply.takeError()).lookup(key);
    std::vector<TuningRecord> family;
    for (size_t i = 0; i + 1 < reply->elements.size(); i += 2) {
      auto record = parseRecord(reply->elements[i + 1].text, client->url() + " " + familyKey(key));
      if (!record) {
        llvm::WithColor::warning(llvm::errs(), "la")
            << "damaged tuning record skipped: " << llvm::toString(record.takeError()) << "\n";
        continue;
      }
      family.push_back(std::move(*record));
    }
    if (const TuningRecord *found = findNearestRecord(family, key))
      return *found;
    return std::nullopt;
  }

  llvm::Expected<std::vector<TuningRecord>> records() override {
    auto families = client->command({"SMEMBERS", (kPrefix + "families").str()});
    if (!families)
      return useFallback(families.takeError()).records();
    std::vector<std::string> names;
    for (const RedisReply &name : families->elements)
      names.push_back(name.text);
    llvm::sort(names);
    std::vector<TuningRecord> result;
    for (const std::string &name : names) {
      auto reply = client->command({"HGETALL", name});
      if (!reply)
        return reply.takeError();
      for (size_t i = 0; i + 1 < reply->elements.size(); i += 2) {
        auto record = parseRecord(reply->elements[i + 1].text, client->url() + " " + name);
        if (!record) {
          llvm::WithColor::warning(llvm::errs(), "la")
              << "damaged tuning record skipped: " << llvm::toString(record.takeError()) << "\n";
          continue;
        }
        result.push_back(std::move(*record));
      }
    }
    return result;
  }

  llvm::Expected<LeaseAttempt> lease(const TuningKey &key, llvm::StringRef owner, double seconds) override {
    std::string leaseKey = (kPrefix + "lease:" + hashName(key.str())).str();
    std::string ms = std::to_string(int64_t(seconds * 1000));
    auto reply = client->command({"SET", leaseKey, owner, "NX", "PX", ms});
    if (!reply)
      return useFallback(reply.takeError()).lease(key, owner, seconds);
    LeaseAttempt attempt;
    if (!reply->isNil()) {
      attempt.lease = std::make_unique<RedisLease>(client, leaseKey, owner.str());
      return attempt;
    }
    auto holder = client->command({"GET", leaseKey});
    attempt.holder = holder && !holder->isNil() ? holder->text : "another tuner";
    if (!holder)
      llvm::consumeError(holder.takeError());
    return attempt;
  }

  std::string describe() const override { return client->url(); }

private:
  /// The fallback, after a warning (once) that says why.
  TuningDatabase &useFallback(llvm::Error err) {
    std::string message = llvm::toString(std::move(err));
    std::call_once(warned, [&] {
      llvm::WithColor::warning(llvm::errs(), "la")
          << "tuning database " << message << "; using " << fallback->describe() << " instead\n";
    });
    return *fallback;
  }

  std::shared_ptr<RedisClient> client;
  std::unique_ptr<TuningDatabase> fallback;
  std::once_flag warned;
};

} // namespace

llvm::Expected<std::unique_ptr<TuningDatabase>> openRedisTuningDatabase(llvm::StringRef url,
                                                                        std::unique_ptr<TuningDatabase> fallback) {
  auto client = RedisClient::connect(url);
  if (!client) {
    std::string message = llvm::toString(client.takeError());
    // A malformed address is the caller's mistake; an unreachable server is the fallback's business.
    if (llvm::StringRef(message).contains("is not a Redis address"))
      return makeError("tuning database: " + message);
    llvm::WithColor::warning(llvm::errs(), "la")
        << "tuning database " << message << "; using " << fallback->describe() << " instead\n";
    return std::move(fallback);
  }
  return std::make_unique<RedisTuningDatabase>(std::shared_ptr<RedisClient>(std::move(*client)), std::move(fallback));
}

} // namespace la
