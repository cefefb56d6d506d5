//===- RedisClient.h - a small synchronous Redis client over hiredis -*- C++ -*-===//
//
// Internal to the runtime: what the tuning database and the kernel cache need from Redis, over one
// hiredis connection. Commands go as argument vectors (binary-safe: kernel objects are bytes) and replies
// come back as plain values. A client is thread-safe (a mutex serialises the connection); a command on a
// broken connection reconnects once before it fails.
//
//===----------------------------------------------------------------------===//
#ifndef LA_RUNTIME_LIB_REDISCLIENT_H
#define LA_RUNTIME_LIB_REDISCLIENT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

struct redisContext;

namespace la {

/// One reply: nil, a status or string, an integer, or an array of replies.
struct RedisReply {
  enum class Kind { Nil, String, Integer, Array };
  Kind kind = Kind::Nil;
  std::string text;
  long long integer = 0;
  std::vector<RedisReply> elements;

  bool isNil() const { return kind == Kind::Nil; }
};

class RedisClient {
public:
  /// Connects to `redis://host:port` (port 6379 when omitted), waiting at most `timeoutSeconds`. The error
  /// names the address and what failed.
  static llvm::Expected<std::unique_ptr<RedisClient>> connect(llvm::StringRef url, double timeoutSeconds = 2.0);
  ~RedisClient();

  /// Runs one command (`{"HGET", key, field}`); a Redis error reply is an llvm::Error with its text.
  llvm::Expected<RedisReply> command(llvm::ArrayRef<llvm::StringRef> arguments);

  /// "redis://host:port".
  const std::string &url() const { return address; }

private:
  RedisClient(std::string address, std::string host, int port, double timeoutSeconds)
      : address(std::move(address)), host(std::move(host)), port(port), timeoutSeconds(timeoutSeconds) {}
  llvm::Error reconnect();

  std::string address, host;
  int port;
  double timeoutSeconds;
  std::mutex mutex;
  redisContext *context = nullptr;
};

/// Whether `location` names a Redis server (`redis://...`).
inline bool isRedisURL(llvm::StringRef location) { return location.starts_with("redis://"); }

} // namespace la

#endif // LA_RUNTIME_LIB_REDISCLIENT_H
