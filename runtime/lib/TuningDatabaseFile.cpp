//===- TuningDatabaseFile.cpp - tuning records in a JSON-lines file -------===//
//
// Appends go through one write(2) under an exclusive lock of the file; reads take the file as it is and skip
// damaged lines. A lease is an exclusive lock on `<file>.leases/<key hash>`, held while the tuner lives, with
// the holder's description inside.
//
//===----------------------------------------------------------------------===//

#include "TuningBackends.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

#include <unistd.h>

namespace la {
namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

/// write(2) until all of `bytes` is out.
std::error_code writeAll(int fd, llvm::StringRef bytes) {
  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return std::error_code(errno, std::generic_category());
    }
    written += size_t(n);
  }
  return {};
}

/// A lock file held open and locked.
class FileLease : public TuningLease {
public:
  explicit FileLease(int fd) : fd(fd) {}
  ~FileLease() override {
    llvm::sys::fs::unlockFile(fd);
    ::close(fd);
  }
  llvm::Error renew(double) override { return llvm::Error::success(); }

private:
  int fd;
};

class FileTuningDatabase : public TuningDatabase {
public:
  explicit FileTuningDatabase(std::string path) : path(std::move(path)) {}

  llvm::Error store(const TuningRecord &record) override {
    if (llvm::Error err = createParent(path))
      return err;
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
      ec = writeAll(fd, line);
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
    if (const TuningRecord *found = findNearestRecord(*all, key))
      return *found;
    return std::nullopt;
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
      else if (replacesRecord(*record, result[it->second]))
        result[it->second] = std::move(*record);
    }
    return result;
  }

  llvm::Expected<LeaseAttempt> lease(const TuningKey &key, llvm::StringRef owner, double) override {
    std::string lockPath = path + ".leases/" + hashName(key.str());
    if (llvm::Error err = createParent(lockPath))
      return std::move(err);
    int fd;
    if (std::error_code ec =
            llvm::sys::fs::openFileForReadWrite(lockPath, fd, llvm::sys::fs::CD_OpenAlways, llvm::sys::fs::OF_None))
      return makeError("tuning database " + path + ": cannot open the lease " + lockPath + ": " + ec.message());
    LeaseAttempt attempt;
    if (llvm::sys::fs::tryLockFile(fd)) {
      // Held: the holder wrote who it is.
      char text[512] = {};
      ssize_t n = ::pread(fd, text, sizeof(text) - 1, 0);
      attempt.holder = n > 0 ? std::string(text, size_t(n)) : "another process";
      ::close(fd);
      return attempt;
    }
    if (::ftruncate(fd, 0) != 0 || writeAll(fd, owner)) {
      // Unable to say who holds it; the lock still works.
    }
    attempt.lease = std::make_unique<FileLease>(fd);
    return attempt;
  }

  std::string describe() const override { return path; }

private:
  static llvm::Error createParent(llvm::StringRef file) {
    llvm::SmallString<128> directory(file);
    llvm::sys::path::remove_filename(directory);
    if (directory.empty())
      return llvm::Error::success();
    if (std::error_code ec = llvm::sys::fs::create_directories(directory))
      return makeError("tuning database: cannot create the directory " + directory + ": " + ec.message());
    return llvm::Error::success();
  }

  std::string path;
};

} // namespace

std::unique_ptr<TuningDatabase> openFileTuningDatabase(std::string path) {
  return std::make_unique<FileTuningDatabase>(std::move(path));
}

} // namespace la
