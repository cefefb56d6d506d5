//===- RedisClient.cpp - a small synchronous Redis client over hiredis ----===//

#include "RedisClient.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <hiredis/hiredis.h>

#include <cmath>

namespace la {
namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

RedisReply convert(const redisReply &reply) {
  RedisReply result;
  switch (reply.type) {
  case REDIS_REPLY_STRING:
  case REDIS_REPLY_STATUS:
    result.kind = RedisReply::Kind::String;
    result.text.assign(reply.str, reply.len);
    break;
  case REDIS_REPLY_INTEGER:
    result.kind = RedisReply::Kind::Integer;
    result.integer = reply.integer;
    break;
  case REDIS_REPLY_ARRAY:
    result.kind = RedisReply::Kind::Array;
    for (size_t i = 0; i < reply.elements; ++i)
      result.elements.push_back(convert(*reply.element[i]));
    break;
  default:
    break;
  }
  return result;
}

} // namespace

llvm::Expected<std::unique_ptr<RedisClient>> RedisClient::connect(llvm::StringRef url, double timeoutSeconds) {
  if (!isRedisURL(url))
    return makeError("'" + url + "' is not a Redis address (redis://host:port)");
  auto [host, portText] = url.drop_front(strlen("redis://")).rtrim('/').split(':');
  int port = 6379;
  if (host.empty() || (!portText.empty() && (portText.getAsInteger(10, port) || port <= 0 || port > 65535)))
    return makeError("'" + url + "' is not a Redis address (redis://host:port)");
  std::unique_ptr<RedisClient> client(
      new RedisClient(llvm::formatv("redis://{0}:{1}", host, port).str(), host.str(), port, timeoutSeconds));
  std::lock_guard lock(client->mutex);
  if (llvm::Error err = client->reconnect())
    return std::move(err);
  return client;
}

RedisClient::~RedisClient() {
  if (context)
    redisFree(context);
}

llvm::Error RedisClient::reconnect() {
  if (context)
    redisFree(context);
  timeval timeout{static_cast<time_t>(timeoutSeconds), static_cast<suseconds_t>(std::fmod(timeoutSeconds, 1.0) * 1e6)};
  context = redisConnectWithTimeout(host.c_str(), port, timeout);
  if (!context)
    return makeError(address + ": cannot allocate a connection");
  if (context->err) {
    std::string message = context->errstr;
    redisFree(context);
    context = nullptr;
    return makeError(address + ": cannot connect: " + message);
  }
  redisSetTimeout(context, timeout);
  return llvm::Error::success();
}

llvm::Expected<RedisReply> RedisClient::command(llvm::ArrayRef<llvm::StringRef> arguments) {
  std::vector<const char *> argv;
  std::vector<size_t> lengths;
  for (llvm::StringRef argument : arguments) {
    argv.push_back(argument.data());
    lengths.push_back(argument.size());
  }
  std::lock_guard lock(mutex);
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!context)
      if (llvm::Error err = reconnect())
        return std::move(err);
    auto *reply = static_cast<redisReply *>(redisCommandArgv(context, int(argv.size()), argv.data(), lengths.data()));
    if (!reply) {
      // The connection broke (the server restarted, a timeout): once more on a fresh one.
      std::string message = context->errstr;
      redisFree(context);
      context = nullptr;
      if (attempt == 1)
        return makeError(address + ": " + arguments.front() + " failed: " + message);
      continue;
    }
    std::unique_ptr<redisReply, decltype(&freeReplyObject)> owned(reply, &freeReplyObject);
    if (reply->type == REDIS_REPLY_ERROR)
      return makeError(address + ": " + arguments.front() + ": " + llvm::StringRef(reply->str, reply->len));
    return convert(*reply);
  }
  return makeError(address + ": unreachable");
}

} // namespace la
